// Tests for src/kernels/qgemm.h: the quantized layout (a row packed and unpacked gives q · s with
// |w − q·s| ≤ s/2, hand-made groups), the int16 activations (SIMD = reference bit for bit, zero and
// non-finite rows), the products (SIMD = reference bit for bit, at awkward m, n, k around the tile (4), the
// panel (8), the group (32) and the packed block of A (512); windows of whole panels; bias and alpha), the
// one-row product equal to the GEMM's row, and the products against the float product of the dequantized
// operands (the arithmetic tools/causal_lm.py reproduces).
#include "kernels/gemm.h"
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

const char* Name(QBits b) { return b == QBits::kQ8 ? "q8" : "q4"; }

// B (n, k) quantized row by row.
std::vector<uint8_t> Pack(QBits b, size_t n, size_t k, const std::vector<float>& w) {
  std::vector<uint8_t> bp(q_packed_bytes(b, n, k), 0);
  for (size_t r = 0; r < n; ++r) q_pack_row(b, n, k, r, w.data() + r * k, bp.data());
  return bp;
}

TEST(QGemm, PackedRowsUnpackToQTimesScale) {
  std::mt19937 rng(3001);
  for (QBits b : {QBits::kQ8, QBits::kQ4})
    for (size_t k : {1, 5, 31, 32, 33, 100}) {
      SCOPED_TRACE(std::string(Name(b)) + " k=" + std::to_string(k));
      const size_t n = 11;
      std::vector<float> w = random_vec(rng, n * k, -2, 2);
      for (size_t kk = 0; kk < k; ++kk) w[3 * k + kk] = 0.0f;  // a row of zeros: scale 0, q 0
      const std::vector<uint8_t> bp = Pack(b, n, k, w);
      const float qmax = b == QBits::kQ8 ? 127.0f : 7.0f;
      std::vector<float> back(k);
      for (size_t r = 0; r < n; ++r) {
        q_unpack_row(b, n, k, r, bp.data(), back.data());
        for (size_t g = 0; g * kQGroup < k; ++g) {
          float amax = 0.0f;
          for (size_t kk = g * kQGroup; kk < std::min(k, (g + 1) * kQGroup); ++kk) amax = std::max(amax, std::fabs(w[r * k + kk]));
          const float s = amax / qmax;
          for (size_t kk = g * kQGroup; kk < std::min(k, (g + 1) * kQGroup); ++kk) {
            ASSERT_LE(std::fabs(back[kk] - w[r * k + kk]), s / 2 + 1e-7f) << "r " << r << " k " << kk;
            const float q = std::nearbyint(back[kk] / (s > 0 ? s : 1.0f));
            ASSERT_EQ(back[kk], q * s);  // an integer q times the group's scale
            ASSERT_LE(std::fabs(q), qmax);
          }
        }
      }
    }
  // A group whose largest |w| is Q: scale 1, every w an integer kept exactly; ties round to even.
  std::vector<float> w(32);
  for (size_t i = 0; i < 32; ++i) w[i] = float(int(i) - 16);
  w[0] = 127.0f;
  w[1] = 2.5f;  // → 2 (even)
  w[2] = -3.5f;  // → -4 (even)
  const std::vector<uint8_t> bp = Pack(QBits::kQ8, 1, 32, w);
  std::vector<float> back(32);
  q_unpack_row(QBits::kQ8, 1, 32, 0, bp.data(), back.data());
  EXPECT_EQ(back[0], 127.0f);
  EXPECT_EQ(back[1], 2.0f);
  EXPECT_EQ(back[2], -4.0f);
  for (size_t i = 3; i < 32; ++i) EXPECT_EQ(back[i], w[i]);
}

TEST(QGemm, Int16ActivationsSimdEqualsReference) {
  std::mt19937 rng(3002);
  for (size_t k : {1, 3, 7, 8, 9, 31, 32, 33, 100, 512, 1100}) {
    SCOPED_TRACE("k=" + std::to_string(k));
    const size_t m = 6, lda = k + 3, kq = q_padded_k(k);
    std::vector<float> a = random_vec(rng, m * lda, -3, 3);
    for (size_t kk = 0; kk < k; ++kk) a[1 * lda + kk] = 0.0f;                       // a zero row
    a[2 * lda + k / 2] = std::numeric_limits<float>::quiet_NaN();                   // a NaN row
    a[3 * lda + k - 1] = std::numeric_limits<float>::infinity();                    // an inf row
    a[4 * lda] = 1e30f;                                                              // a huge value
    std::vector<int16_t> x(m * kq, 7), xr(m * kq, 9);
    std::vector<float> t(m), tr(m);
    i16_quantize_rows(m, k, a.data(), lda, x.data(), t.data());
    i16_quantize_rows_ref(m, k, a.data(), lda, xr.data(), tr.data());
    ASSERT_EQ(x, xr);
    ASSERT_TRUE(test::same_bits(m, t.data(), tr.data()));
    EXPECT_EQ(t[1], 0.0f);
    EXPECT_TRUE(std::isnan(t[2]) && std::isnan(t[3]));
    for (size_t i = 0; i < m; ++i)
      for (size_t kk = k; kk < kq; ++kk) ASSERT_EQ(x[i * kq + kk], 0);  // the padding
    // Row 0: x · t within half a step of a.
    for (size_t kk = 0; kk < k; ++kk) ASSERT_LE(std::fabs(x[kk] * t[0] - a[kk]), t[0] * 0.5f + std::fabs(a[kk]) * 1e-6f);
  }
}

TEST(QGemm, SimdEqualsReferenceAtAwkwardSizes) {
  std::mt19937 rng(3003);
  for (QBits b : {QBits::kQ8, QBits::kQ4})
    for (size_t k : {1, 31, 32, 33, 64, 512, 513, 1100})
      for (size_t n : {1, 7, 8, 9, 17, 65})
        for (size_t m : {1, 2, 3, 4, 5, 13}) {
          SCOPED_TRACE(std::string(Name(b)) + " k=" + std::to_string(k) + " n=" + std::to_string(n) + " m=" + std::to_string(m));
          const size_t ldc = n + 2;
          const std::vector<float> w = random_vec(rng, n * k, -1, 1), a = random_vec(rng, m * k, -2, 2);
          const std::vector<float> bias = random_vec(rng, n, -1, 1);
          const std::vector<uint8_t> bp = Pack(b, n, k, w);
          for (bool with_bias : {false, true}) {
            const float* bias_p = with_bias ? bias.data() : nullptr;
            const float alpha = with_bias ? 0.5f : 1.0f;
            std::vector<float> got(m * ldc + test::kGuard, kSentinel), want(m * ldc + test::kGuard, kSentinel);
            q_gemm(b, m, n, k, got.data(), ldc, a.data(), k, bp.data(), n, 0, bias_p, alpha);
            q_gemm_ref(b, m, n, k, want.data(), ldc, a.data(), k, bp.data(), n, 0, bias_p, alpha);
            if (f32_gemm_relaxed_madd()) {
              // The relaxed build: each element the bits of the fused reference, or of the unfused one on an
              // engine that does not fuse relaxed_madd.
              std::vector<float> fused(want.size(), kSentinel);
              q_gemm_ref(b, m, n, k, fused.data(), ldc, a.data(), k, bp.data(), n, 0, bias_p, alpha, true);
              for (size_t i = 0; i < m; ++i)
                for (size_t j = 0; j < n; ++j) {
                  const size_t e = i * ldc + j;
                  ASSERT_TRUE(test::same_bits(1, &got[e], &fused[e]) || test::same_bits(1, &got[e], &want[e]))
                      << "row " << i << " col " << j << ": " << got[e] << " vs fused " << fused[e];
                }
            } else {
              for (size_t i = 0; i < m; ++i) ASSERT_TRUE(test::same_bits(n, got.data() + i * ldc, want.data() + i * ldc)) << "row " << i;
            }
            ASSERT_TRUE(test::untouched(got, m, n, ldc));
            // Each row alone (a decoding step) gives the GEMM's row.
            for (size_t i = 0; i < m; ++i) {
              std::vector<float> row(n + test::kGuard, kSentinel);
              q_gemm(b, 1, n, k, row.data(), n, a.data() + i * k, k, bp.data(), n, 0, bias_p, alpha);
              ASSERT_TRUE(test::same_bits(n, row.data(), got.data() + i * ldc)) << "row " << i << " alone";
              ASSERT_TRUE(test::guard_intact(row.data() + n));
            }
          }
          if (n > 8) {  // a window of whole panels
            std::vector<float> whole(m * n), part(m * n, kSentinel);
            q_gemm(b, m, n, k, whole.data(), n, a.data(), k, bp.data(), n, 0, bias.data(), 1.0f);
            q_gemm(b, m, n - 8, k, part.data() + 8, n, a.data(), k, bp.data(), n, 8, bias.data() + 8, 1.0f);
            for (size_t i = 0; i < m; ++i)
              ASSERT_EQ(0, std::memcmp(whole.data() + i * n + 8, part.data() + i * n + 8, (n - 8) * sizeof(float)));
          }
        }
}

// The product against the float product of the dequantized operands, (x · t) · (q · s) summed in double: what a
// twin with W = q · s and the activations rounded the same way computes. The difference is float32 rounding
// of the group sums (1e-6 relative here), far inside the models' 1e-4.
TEST(QGemm, ProductOfTheDequantizedOperands) {
  std::mt19937 rng(3004);
  double worst = 0;
  for (QBits b : {QBits::kQ8, QBits::kQ4})
    for (size_t k : {64, 576, 1536}) {
      const size_t m = 3, n = 24, kq = q_padded_k(k);
      const std::vector<float> w = random_vec(rng, n * k, -1, 1), a = random_vec(rng, m * k, -2, 2);
      const std::vector<uint8_t> bp = Pack(b, n, k, w);
      std::vector<int16_t> x(m * kq);
      std::vector<float> t(m), c(m * n), wq(k);
      i16_quantize_rows(m, k, a.data(), k, x.data(), t.data());
      q_gemm(b, m, n, k, c.data(), n, a.data(), k, bp.data(), n, 0, nullptr, 1.0f);
      for (size_t j = 0; j < n; ++j) {
        q_unpack_row(b, n, k, j, bp.data(), wq.data());
        for (size_t i = 0; i < m; ++i) {
          double want = 0, scale = 0;
          for (size_t kk = 0; kk < k; ++kk) {
            want += double(x[i * kq + kk]) * double(t[i]) * double(wq[kk]);
            scale += std::fabs(double(x[i * kq + kk]) * double(t[i]) * double(wq[kk]));
          }
          const double err = std::fabs(double(c[i * n + j]) - want) / (scale + 1e-30);
          worst = std::max(worst, err);
          ASSERT_LT(err, 1e-5) << Name(b) << " k " << k << " (" << i << ", " << j << ")";
        }
      }
    }
  std::printf("[  worst   ] quantized product vs the dequantized operands' float64 product: %.3g relative\n", worst);
}

TEST(QGemm, NonFiniteWeightsOrActivationsGiveNaN) {
  for (QBits b : {QBits::kQ8, QBits::kQ4}) {
    const size_t n = 8, k = 64, kq = q_padded_k(k);
    std::vector<float> w(n * k, 0.25f), a(2 * k, 0.5f);
    w[3 * k + 40] = std::numeric_limits<float>::infinity();
    a[k + 7] = std::numeric_limits<float>::quiet_NaN();
    const std::vector<uint8_t> bp = Pack(b, n, k, w);
    std::vector<int16_t> x(2 * kq);
    std::vector<float> t(2), c(2 * n);
    i16_quantize_rows(2, k, a.data(), k, x.data(), t.data());
    q_gemm(b, 2, n, k, c.data(), n, a.data(), k, bp.data(), n, 0, nullptr, 1.0f);
    for (size_t j = 0; j < n; ++j) {
      EXPECT_EQ(std::isnan(c[j]), j == 3) << j;  // row 0: only output 3 (its group has the inf)
      EXPECT_TRUE(std::isnan(c[n + j])) << j;    // row 1: the NaN activation
    }
  }
}

}  // namespace
}  // namespace aw::kernels
