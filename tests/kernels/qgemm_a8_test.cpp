// Tests for q4_gemm_a8 and i8_quantize_rows (src/kernels/qgemm.h, qgemm_a8_simd.cpp): the int8 activations per
// group (SIMD = reference bit for bit, zero, tiny and non-finite groups, ties to even), the product (SIMD =
// reference bit for bit in every build, at awkward m, n, k around the tile (4), the panel (8), the group (32) and
// the block (512); windows of whole panels; bias and alpha; each row alone = the GEMM's row), the int16 lanes at
// their bound (every x = ±127, every nibble 15 or 1), a row quantized once and its windows (q4_a8_quantize_row,
// q4_gemv_a8: the GEMM's row), and the product against the float64 product of the
// dequantized operands (what tools/causal_lm.py's twin computes).
#include "kernels/pack.h"
#include "kernels/qgemm.h"

#include <gtest/gtest.h>

#include "../kernel_test_util.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace aw::kernels {
namespace {

using test::kSentinel;
using test::random_vec;

std::vector<uint8_t> PackQ4(size_t n, size_t k, const std::vector<float>& w) {
  std::vector<uint8_t> bp(q_packed_bytes(QBits::kQ4, n, k), 0);
  q_pack_rows_ref(QBits::kQ4, n, k, 0, n, w.data(), k, bp.data());
  return bp;
}

TEST(Q4GemmA8, Int8ActivationsSimdEqualsReference) {
  std::mt19937 rng(4301);
  for (size_t k : {1, 3, 7, 8, 9, 31, 32, 33, 64, 100, 512, 1100}) {
    SCOPED_TRACE("k=" + std::to_string(k));
    const size_t m = 7, lda = k + 3, kq = q_padded_k(k), G = kq / kQGroup;
    std::vector<float> a = random_vec(rng, m * lda, -3, 3);
    for (size_t kk = 0; kk < k; ++kk) a[1 * lda + kk] = 0.0f;                      // a zero row
    a[2 * lda + k / 2] = std::numeric_limits<float>::quiet_NaN();                  // a NaN in one group
    a[3 * lda + k - 1] = -std::numeric_limits<float>::infinity();                  // an inf in the last group
    a[4 * lda] = 1e30f;                                                             // a huge value
    for (size_t kk = 0; kk < std::min<size_t>(k, 32); ++kk) a[5 * lda + kk] = 1e-38f * float(kk % 3);  // tiny group
    for (size_t kk = 0; kk < std::min<size_t>(k, 32); ++kk) a[6 * lda + kk] = 0.5f * float(int(kk % 9) - 4);  // ties
    a[6 * lda] = 127.0f * 0.5f;  // max |a| = 63.5 → inv = 2: a = ±0.5 → ±1, ±1.5 → ±3 … exactly, no ties at ±0.25
    std::vector<int8_t> x(m * kq, 7), xr(m * kq, 9);
    std::vector<float> t(m * G), tr(m * G);
    i8_quantize_rows(m, k, a.data(), lda, x.data(), t.data());
    i8_quantize_rows_ref(m, k, a.data(), lda, xr.data(), tr.data());
    ASSERT_EQ(x, xr);
    ASSERT_TRUE(test::same_bits(m * G, t.data(), tr.data()));
    for (size_t g = 0; g < G; ++g) EXPECT_EQ(t[1 * G + g], 0.0f);
    EXPECT_TRUE(std::isnan(t[2 * G + (k / 2) / 32]));
    EXPECT_TRUE(std::isnan(t[3 * G + G - 1]));
    EXPECT_EQ(t[5 * G], k > 1 ? 0.0f : t[5 * G]);  // max 2e-38: 127 / max|a| overflows, the group is zeros
    if (k > 1) for (size_t kk = 0; kk < std::min<size_t>(k, 32); ++kk) EXPECT_EQ(x[5 * kq + kk], 0);
    for (size_t i = 0; i < m; ++i)
      for (size_t kk = k; kk < kq; ++kk) ASSERT_EQ(x[i * kq + kk], 0);  // the padding
    // Row 0: x · t within half a step of a; |x| ≤ 127 with 127 reached in every group.
    for (size_t g = 0; g < G; ++g) {
      int xmax = 0;
      for (size_t kk = g * 32; kk < std::min(k, g * 32 + 32); ++kk) {
        ASSERT_LE(std::fabs(x[kk] * t[g] - a[kk]), t[g] * 0.5f + std::fabs(a[kk]) * 1e-6f);
        xmax = std::max(xmax, std::abs(int(x[kk])));
      }
      EXPECT_EQ(xmax, 127);
    }
  }
  // Ties round to even: a group of max 127 has inv = 1; 2.5 → 2, 3.5 → 4, −0.5 → 0.
  std::vector<float> a(32, 0.0f);
  a[0] = 127.0f, a[1] = 2.5f, a[2] = 3.5f, a[3] = -0.5f, a[4] = -1.5f;
  std::vector<int8_t> x(32);
  float t = 0;
  i8_quantize_rows(1, 32, a.data(), 32, x.data(), &t);
  EXPECT_EQ(t, 1.0f);
  EXPECT_EQ(x[0], 127);
  EXPECT_EQ(x[1], 2);
  EXPECT_EQ(x[2], 4);
  EXPECT_EQ(x[3], 0);
  EXPECT_EQ(x[4], -2);
}

TEST(Q4GemmA8, SimdEqualsReferenceAtAwkwardSizes) {
  std::mt19937 rng(4302);
  for (size_t k : {1, 31, 32, 33, 64, 100, 512, 513, 1100})
    for (size_t n : {1, 7, 8, 9, 17, 65})
      for (size_t m : {1, 2, 3, 4, 5, 13}) {
        SCOPED_TRACE("k=" + std::to_string(k) + " n=" + std::to_string(n) + " m=" + std::to_string(m));
        const size_t ldc = n + 2, lda = k + 1;
        const std::vector<float> w = random_vec(rng, n * k, -1, 1), bias = random_vec(rng, n, -1, 1);
        std::vector<float> a = random_vec(rng, m * lda, -2, 2);
        if (m > 2) for (size_t kk = 0; kk < k; kk += 7) a[2 * lda + kk] *= 40.0f;  // a row with large values
        const std::vector<uint8_t> bp = PackQ4(n, k, w);
        for (bool with_bias : {false, true}) {
          const float* bias_p = with_bias ? bias.data() : nullptr;
          const float alpha = with_bias ? 0.5f : 1.0f;
          std::vector<float> got(m * ldc + test::kGuard, kSentinel), want(m * ldc + test::kGuard, kSentinel);
          q4_gemm_a8(m, n, k, got.data(), ldc, a.data(), lda, bp.data(), n, 0, bias_p, alpha);
          q4_gemm_a8_ref(m, n, k, want.data(), ldc, a.data(), lda, bp.data(), n, 0, bias_p, alpha);
          for (size_t i = 0; i < m; ++i) ASSERT_TRUE(test::same_bits(n, got.data() + i * ldc, want.data() + i * ldc)) << "row " << i;
          ASSERT_TRUE(test::untouched(got, m, n, ldc));
          for (size_t i = 0; i < m; ++i) {  // each row alone (a decoding step) gives the GEMM's row
            std::vector<float> row(n + test::kGuard, kSentinel);
            q4_gemm_a8(1, n, k, row.data(), n, a.data() + i * lda, lda, bp.data(), n, 0, bias_p, alpha);
            ASSERT_TRUE(test::same_bits(n, row.data(), got.data() + i * ldc)) << "row " << i << " alone";
            ASSERT_TRUE(test::guard_intact(row.data() + n));
          }
        }
        if (n > 8) {  // a window of whole panels
          std::vector<float> whole(m * n), part(m * n, kSentinel);
          q4_gemm_a8(m, n, k, whole.data(), n, a.data(), lda, bp.data(), n, 0, bias.data(), 1.0f);
          q4_gemm_a8(m, n - 8, k, part.data() + 8, n, a.data(), lda, bp.data(), n, 8, bias.data() + 8, 1.0f);
          for (size_t i = 0; i < m; ++i)
            ASSERT_EQ(0, std::memcmp(whole.data() + i * n + 8, part.data() + i * n + 8, (n - 8) * sizeof(float)));
        }
      }
}

// A row quantized once (q4_a8_quantize_row) and its product by windows of panels (q4_gemv_a8): the GEMM's row,
// bit for bit, for every window.
TEST(Q4GemmA8, RowQuantizedOnceEqualsTheGemmRow) {
  std::mt19937 rng(4304);
  for (size_t k : {1, 31, 32, 33, 100, 512, 513, 1100})
    for (size_t n : {1, 8, 9, 17, 65}) {
      SCOPED_TRACE("k=" + std::to_string(k) + " n=" + std::to_string(n));
      const std::vector<float> w = random_vec(rng, n * k, -1, 1), bias = random_vec(rng, n, -1, 1);
      std::vector<float> a = random_vec(rng, k, -2, 2);
      a[k / 3] *= 50.0f;
      const std::vector<uint8_t> bp = PackQ4(n, k, w);
      std::vector<uint8_t> row(q4_a8_row_bytes(k) + 16);
      uint8_t* r16 = row.data() + (16 - reinterpret_cast<uintptr_t>(row.data()) % 16) % 16;
      q4_a8_quantize_row(k, a.data(), r16);
      std::vector<float> want(n + test::kGuard, kSentinel);
      q4_gemm_a8(1, n, k, want.data(), n, a.data(), k, bp.data(), n, 0, bias.data(), 0.5f);
      for (size_t j0 = 0; j0 < n; j0 += 8) {
        const size_t cols = n - j0;
        std::vector<float> got(cols + test::kGuard, kSentinel);
        q4_gemv_a8(cols, k, got.data(), r16, bp.data(), n, j0, bias.data() + j0, 0.5f);
        ASSERT_TRUE(test::same_bits(cols, got.data(), want.data() + j0)) << "window from " << j0;
        ASSERT_TRUE(test::guard_intact(got.data() + cols));
      }
    }
}

// The int16 lanes of the relaxed build at their bound: every x = ±127 and every nibble 15 (q = 7) or 1 (q = −7),
// each lane summing 16 products of 127 · 15. A lane that overflowed would wrap and differ from the reference.
TEST(Q4GemmA8, LargestSumsExact) {
  const size_t n = 16, k = 1100, m = 5;
  std::vector<float> w(n * k), a(m * k);
  for (size_t j = 0; j < n; ++j)
    for (size_t kk = 0; kk < k; ++kk) w[j * k + kk] = (j % 2 ? -1.0f : 1.0f) * (j % 4 < 2 ? 1.0f : (kk % 2 ? 1.0f : -1.0f));
  for (size_t i = 0; i < m; ++i)
    for (size_t kk = 0; kk < k; ++kk) a[i * k + kk] = i % 2 ? -3.0f : (i == 2 && kk % 3 ? -3.0f : 3.0f);
  const std::vector<uint8_t> bp = PackQ4(n, k, w);
  std::vector<float> got(m * n), want(m * n);
  q4_gemm_a8(m, n, k, got.data(), n, a.data(), k, bp.data(), n, 0, nullptr, 1.0f);
  q4_gemm_a8_ref(m, n, k, want.data(), n, a.data(), k, bp.data(), n, 0, nullptr, 1.0f);
  ASSERT_TRUE(test::same_bits(m * n, got.data(), want.data()));
  // Row 0 (all +3) against output 0 (all +1): 1100 products of (127 · 3/127) · (7 · 1/7) = 3300 (up to the float32
  // rounding of s · t and the group steps).
  EXPECT_NEAR(got[0], 3300.0f, 3300.0f * 1e-5f);
  EXPECT_NEAR(got[1], -3300.0f, 3300.0f * 1e-5f);
}

// Against (x · t) · (q · s) summed in float64, the operands rounded as the kernel rounds them: the difference is
// the float32 rounding of the group steps (1e-6 relative), far inside the models' tolerances.
TEST(Q4GemmA8, ProductOfTheDequantizedOperands) {
  std::mt19937 rng(4303);
  double worst = 0;
  for (size_t k : {64, 576, 1536}) {
    const size_t m = 3, n = 24, kq = q_padded_k(k), G = kq / kQGroup;
    const std::vector<float> w = random_vec(rng, n * k, -1, 1), a = random_vec(rng, m * k, -2, 2);
    const std::vector<uint8_t> bp = PackQ4(n, k, w);
    std::vector<int8_t> x(m * kq);
    std::vector<float> t(m * G), c(m * n), wq(k);
    i8_quantize_rows(m, k, a.data(), k, x.data(), t.data());
    q4_gemm_a8(m, n, k, c.data(), n, a.data(), k, bp.data(), n, 0, nullptr, 1.0f);
    for (size_t j = 0; j < n; ++j) {
      q_unpack_row(QBits::kQ4, n, k, j, bp.data(), wq.data());
      for (size_t i = 0; i < m; ++i) {
        double want = 0, scale = 0;
        for (size_t kk = 0; kk < k; ++kk) {
          const double p = double(x[i * kq + kk]) * double(t[i * G + kk / 32]) * double(wq[kk]);
          want += p;
          scale += std::fabs(p);
        }
        const double err = std::fabs(double(c[i * n + j]) - want) / (scale + 1e-30);
        worst = std::max(worst, err);
        ASSERT_LT(err, 1e-5) << "k " << k << " (" << i << ", " << j << ")";
      }
    }
  }
  std::printf("[  worst   ] q4 a8 product vs the dequantized operands' float64 product: %.3g relative\n", worst);
}

TEST(Q4GemmA8, NonFiniteWeightsOrActivationsGiveNaN) {
  const size_t n = 8, k = 64;
  std::vector<float> w(n * k, 0.25f), a(2 * k, 0.5f);
  w[3 * k + 40] = std::numeric_limits<float>::infinity();
  a[k + 7] = std::numeric_limits<float>::quiet_NaN();
  const std::vector<uint8_t> bp = PackQ4(n, k, w);
  std::vector<float> c(2 * n);
  q4_gemm_a8(2, n, k, c.data(), n, a.data(), k, bp.data(), n, 0, nullptr, 1.0f);
  for (size_t j = 0; j < n; ++j) {
    EXPECT_EQ(std::isnan(c[j]), j == 3) << j;  // row 0: only output 3 (its group has the inf)
    EXPECT_TRUE(std::isnan(c[n + j])) << j;    // row 1: the NaN activation's group scale is NaN
  }
}

}  // namespace
}  // namespace aw::kernels
