// Tests for src/kernels/gemm.h: the scalar references against hand-computed
// examples, then the xsimd kernels against the references at awkward sizes
// (below / equal to / above / multiples of the vector width W = 4 or 8 and of
// the 4-row tile), padded and strided leading dimensions, bias null and not,
// alpha != 1, large magnitudes; and that nothing outside C's (m, n) region is
// written.
#include "kernels/gemm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace aw::kernels {
namespace {

// Sizes for every dimension: below, equal to, above and multiples of 4 and 8
// (the vector width is 8 natively with AVX2 and 4 in the sse4.1/wasm build).
const size_t kSizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 64, 65};

// A value the kernels never produce from the test data; cells that must not be
// written are filled with it and compared bitwise afterwards.
constexpr float kSentinel = -12345.5f;

std::vector<float> random_vec(std::mt19937& rng, size_t count, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(count);
  for (float& x : v) x = dist(rng);
  return v;
}

// Elements a (rows, cols) matrix with row stride ld spans; exact, so that
// AddressSanitizer flags any read past the last row's last column.
size_t span(size_t rows, size_t cols, size_t ld) { return rows == 0 ? 0 : (rows - 1) * ld + cols; }

struct Worst {
  double abs = 0.0;    // max |simd - ref|
  double ratio = 0.0;  // max |simd - ref| / tolerance
};

// |got - want| <= tol(i, j) for every (i, j) of an (m, n) region with row
// stride ld; NaN matches NaN only. On failure lists the first mismatches.
template <class Tol>
::testing::AssertionResult close_2d(size_t m, size_t n, const float* got, const float* want,
                                    size_t ld, Tol tol, Worst* worst) {
  size_t bad = 0;
  std::ostringstream msg;
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < n; ++j) {
      const float g = got[i * ld + j], w = want[i * ld + j];
      bool ok;
      double err = 0.0, t = tol(i, j);
      if (std::isnan(g) || std::isnan(w)) {
        ok = std::isnan(g) && std::isnan(w);
      } else {
        err = std::fabs(double(g) - double(w));
        ok = err <= t;
        if (worst) {
          worst->abs = std::max(worst->abs, err);
          if (t > 0) worst->ratio = std::max(worst->ratio, err / t);
        }
      }
      if (!ok && bad++ < 8) {
        msg << "\n  (" << i << ", " << j << "): simd=" << g << " ref=" << w << " |diff|=" << err
            << " tol=" << t;
      }
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << m * n << " elements differ" << msg.str();
}

// Every element of buf outside the (m, n) region with row stride ldc (row
// padding and the trailing guard) still holds kSentinel.
::testing::AssertionResult untouched(const std::vector<float>& buf, size_t m, size_t n, size_t ldc) {
  size_t bad = 0;
  std::ostringstream msg;
  for (size_t idx = 0; idx < buf.size(); ++idx) {
    const size_t i = idx / ldc, j = idx % ldc;
    if (i < m && j < n) continue;
    if (std::memcmp(&buf[idx], &kSentinel, sizeof(float)) != 0 && bad++ < 8) {
      msg << "\n  offset " << idx << " (row " << i << ", col " << j << ") = " << buf[idx];
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " cells outside C were written" << msg.str();
}

// Tolerance for one element of a dot-product kernel. Both sides compute the
// same k products and sums in a different order (SIMD lanes + tail vs k
// order; fma vs mul+add), so neither is "the" exact value and |ref| is no
// scale (cancellation can make it ~0). The forward-error bound for a k-term
// dot product in any order is gamma_k * sum_p |a_p b_p| (Higham, 3.1); two
// results, plus alpha's and the bias' roundings, differ by at most
// 2 * gamma_{k+2} * (|alpha| sum_p |a_p b_p| + |bias|). That is the atol
// (with eps = 2u for gamma's u, a 2x margin); rtol = eps covers the store.
// Still tight: dropping or doubling any one term of the sum is ~1e4x larger.
constexpr double kRtol = FLT_EPSILON;
double dot_atol(size_t k, double abs_dot, double abs_bias, float alpha) {
  return 2.0 * double(k + 2) * FLT_EPSILON * (std::fabs(double(alpha)) * abs_dot + abs_bias);
}

struct Case {
  size_t m, n, k;
  size_t lda, ldb, ldc;
  bool bias;
  float alpha;  // nt only
  float scale;  // inputs uniform in [-scale, scale]
};

std::string describe(const Case& c) {
  char buf[200];
  std::snprintf(buf, sizeof buf, "m=%zu n=%zu k=%zu lda=%zu ldb=%zu ldc=%zu bias=%d alpha=%g scale=%g",
                c.m, c.n, c.k, c.lda, c.ldb, c.ldc, int(c.bias), double(c.alpha), double(c.scale));
  return buf;
}

constexpr size_t kGuard = 16;  // sentinel cells after C's last row

// Runs f32_gemm_nt and its reference on random data for one case and compares.
void check_nt(const Case& c, std::mt19937& rng, Worst* worst) {
  SCOPED_TRACE(describe(c));
  const std::vector<float> a = random_vec(rng, span(c.m, c.k, c.lda), -c.scale, c.scale);
  const std::vector<float> b = random_vec(rng, span(c.n, c.k, c.ldb), -c.scale, c.scale);
  const std::vector<float> bias = random_vec(rng, c.n, -c.scale, c.scale);
  const float* bias_p = c.bias ? bias.data() : nullptr;
  std::vector<float> got(span(c.m, c.n, c.ldc) + kGuard, kSentinel);
  std::vector<float> want(got);

  f32_gemm_nt_ref(c.m, c.n, c.k, want.data(), c.ldc, a.data(), c.lda, b.data(), c.ldb, bias_p, c.alpha);
  f32_gemm_nt(c.m, c.n, c.k, got.data(), c.ldc, a.data(), c.lda, b.data(), c.ldb, bias_p, c.alpha);

  auto tol = [&](size_t i, size_t j) {
    double abs_dot = 0.0;
    for (size_t p = 0; p < c.k; ++p) abs_dot += std::fabs(double(a[i * c.lda + p]) * b[j * c.ldb + p]);
    const double abs_bias = c.bias ? std::fabs(double(bias[j])) : 0.0;
    return dot_atol(c.k, abs_dot, abs_bias, c.alpha) + kRtol * std::fabs(double(want[i * c.ldc + j]));
  };
  EXPECT_TRUE(close_2d(c.m, c.n, got.data(), want.data(), c.ldc, tol, worst));
  EXPECT_TRUE(untouched(got, c.m, c.n, c.ldc));
  EXPECT_TRUE(untouched(want, c.m, c.n, c.ldc));
}

// Runs f32_gemm_nn and its reference on random data for one case and compares.
void check_nn(const Case& c, std::mt19937& rng, Worst* worst) {
  SCOPED_TRACE(describe(c));
  const std::vector<float> a = random_vec(rng, span(c.m, c.k, c.lda), -c.scale, c.scale);
  const std::vector<float> b = random_vec(rng, span(c.k, c.n, c.ldb), -c.scale, c.scale);
  const std::vector<float> bias = random_vec(rng, c.n, -c.scale, c.scale);
  const float* bias_p = c.bias ? bias.data() : nullptr;
  std::vector<float> got(span(c.m, c.n, c.ldc) + kGuard, kSentinel);
  std::vector<float> want(got);

  f32_gemm_nn_ref(c.m, c.n, c.k, want.data(), c.ldc, a.data(), c.lda, b.data(), c.ldb, bias_p);
  f32_gemm_nn(c.m, c.n, c.k, got.data(), c.ldc, a.data(), c.lda, b.data(), c.ldb, bias_p);

  auto tol = [&](size_t i, size_t j) {
    double abs_dot = 0.0;
    for (size_t p = 0; p < c.k; ++p) abs_dot += std::fabs(double(a[i * c.lda + p]) * b[p * c.ldb + j]);
    const double abs_bias = c.bias ? std::fabs(double(bias[j])) : 0.0;
    return dot_atol(c.k, abs_dot, abs_bias, 1.0f) + kRtol * std::fabs(double(want[i * c.ldc + j]));
  };
  EXPECT_TRUE(close_2d(c.m, c.n, got.data(), want.data(), c.ldc, tol, worst));
  EXPECT_TRUE(untouched(got, c.m, c.n, c.ldc));
  EXPECT_TRUE(untouched(want, c.m, c.n, c.ldc));
}

void report(const char* what, const Worst& w) {
  std::printf("[  worst   ] %s: max |simd-ref| = %.3g, max |simd-ref|/tol = %.3g\n", what, w.abs, w.ratio);
}

// ---------------------------------------------------------------------------
// References against hand-computed examples.

TEST(GemmRef, NtHandComputed) {
  // A(2, 3) with lda = 4 and B(2, 3) with ldb = 5; the padding holds values
  // that would show up in C if read. C(2, 2) with ldc = 3.
  const float a[] = {1, 2, 3, 999,  //
                     4, 5, 6};
  const float b[] = {1, 0, -1, 999, 999,  //
                     2, 1, 0};
  const float bias[] = {10, 20};
  // A·B^T = [[-2, 4], [-2, 13]]; * 0.5 + bias = [[9, 22], [9, 26.5]].
  float c[6] = {kSentinel, kSentinel, kSentinel, kSentinel, kSentinel, kSentinel};
  f32_gemm_nt_ref(2, 2, 3, c, 3, a, 4, b, 5, bias, 0.5f);
  EXPECT_EQ(c[0], 9.0f);
  EXPECT_EQ(c[1], 22.0f);
  EXPECT_EQ(c[2], kSentinel);
  EXPECT_EQ(c[3], 9.0f);
  EXPECT_EQ(c[4], 26.5f);
  EXPECT_EQ(c[5], kSentinel);

  // No bias, alpha = 1.
  f32_gemm_nt_ref(2, 2, 3, c, 3, a, 4, b, 5, nullptr, 1.0f);
  EXPECT_EQ(c[0], -2.0f);
  EXPECT_EQ(c[1], 4.0f);
  EXPECT_EQ(c[3], -2.0f);
  EXPECT_EQ(c[4], 13.0f);
}

TEST(GemmRef, NnHandComputed) {
  // A(3, 2) with lda = 3, B(2, 3) with ldb = 4, C(3, 3) with ldc = 4.
  const float a[] = {1, 2, 999,  //
                     3, 4, 999,  //
                     5, 6};
  const float b[] = {1, 2, 3, 999,  //
                     4, 5, 6};
  const float bias[] = {1, -1, 0.5f};
  // A·B = [[9, 12, 15], [19, 26, 33], [29, 40, 51]].
  float c[12];
  std::fill(std::begin(c), std::end(c), kSentinel);
  f32_gemm_nn_ref(3, 3, 2, c, 4, a, 3, b, 4, bias);
  const float want[12] = {10, 11, 15.5f, kSentinel,  //
                          20, 25, 33.5f, kSentinel,  //
                          30, 39, 51.5f, kSentinel};
  for (size_t t = 0; t < 12; ++t) EXPECT_EQ(c[t], want[t]) << "at offset " << t;

  f32_gemm_nn_ref(3, 3, 2, c, 4, a, 3, b, 4, nullptr);
  EXPECT_EQ(c[0], 9.0f);
  EXPECT_EQ(c[6], 33.0f);
  EXPECT_EQ(c[10], 51.0f);
}

TEST(GemmRef, EmptyK) {
  // k = 0: the sum is empty, C = alpha * 0 + bias.
  const float bias[] = {1.5f, -2.0f};
  float c[2] = {7, 7};
  f32_gemm_nt_ref(1, 2, 0, c, 2, nullptr, 0, nullptr, 0, bias, 3.0f);
  EXPECT_EQ(c[0], 1.5f);
  EXPECT_EQ(c[1], -2.0f);
  c[0] = c[1] = 7;
  f32_gemm_nn_ref(1, 2, 0, c, 2, nullptr, 0, nullptr, 2, nullptr);
  EXPECT_EQ(c[0], 0.0f);
  EXPECT_EQ(c[1], 0.0f);
}

// ---------------------------------------------------------------------------
// SIMD against reference.

TEST(GemmSimd, NtAllSizesPaddedStridesBiasAlpha) {
  std::mt19937 rng(1234);
  Worst worst;
  for (size_t m : kSizes)
    for (size_t n : kSizes)
      for (size_t k : kSizes) {
        // Odd paddings so rows start at unaligned addresses.
        check_nt({m, n, k, k + 3, k + 5, n + 7, true, 0.37f, 1.0f}, rng, &worst);
        if (::testing::Test::HasFailure()) return;
      }
  report("gemm_nt padded, bias, alpha=0.37", worst);
}

TEST(GemmSimd, NtAllSizesTightNoBias) {
  std::mt19937 rng(99);
  Worst worst;
  for (size_t m : kSizes)
    for (size_t n : kSizes)
      for (size_t k : kSizes) {
        check_nt({m, n, k, k, k, n, false, 1.0f, 1.0f}, rng, &worst);
        if (::testing::Test::HasFailure()) return;
      }
  report("gemm_nt tight, no bias", worst);
}

TEST(GemmSimd, NtLargeMagnitudes) {
  std::mt19937 rng(7);
  Worst worst;
  for (size_t k : {1, 7, 8, 9, 33, 64, 65, 200})
    for (size_t mn : {3, 5, 9, 17}) {
      check_nt({mn, mn + 1, k, k + 1, k + 2, mn + 4, true, -0.125f, 1000.0f}, rng, &worst);
      check_nt({mn, mn + 1, k, k, k, mn + 1, false, 1.0f / std::sqrt(float(k)), 1000.0f}, rng, &worst);
    }
  report("gemm_nt large magnitudes", worst);
}

TEST(GemmSimd, NtEmptyK) {
  const float bias[] = {1.5f, -2.0f, 3.0f};
  float c[6];
  std::fill(std::begin(c), std::end(c), kSentinel);
  const float dummy = 0.0f;
  f32_gemm_nt(2, 3, 0, c, 3, &dummy, 0, &dummy, 0, bias, 2.0f);
  for (size_t i = 0; i < 2; ++i)
    for (size_t j = 0; j < 3; ++j) EXPECT_EQ(c[i * 3 + j], bias[j]) << "(" << i << ", " << j << ")";
}

TEST(GemmSimd, NtZeroRowsOrColsWritesNothing) {
  std::vector<float> c(64, kSentinel);
  const std::vector<float> a(64, 1.0f), b(64, 1.0f);
  f32_gemm_nt(0, 5, 8, c.data(), 8, a.data(), 8, b.data(), 8, nullptr, 1.0f);
  f32_gemm_nt(5, 0, 8, c.data(), 8, a.data(), 8, b.data(), 8, nullptr, 1.0f);
  EXPECT_TRUE(untouched(c, 0, 0, 8));
}

// Q·K^T for one head of interleaved (L, E) buffers: A = Q + h*hd and
// B = K + h*hd with lda = ldb = E, C a column window of a wider score buffer.
TEST(GemmSimd, NtHeadSliceOfInterleavedBuffers) {
  std::mt19937 rng(42);
  Worst worst;
  const size_t L = 13, S = 19, H = 3;
  for (size_t hd : {4, 8, 12, 16, 17}) {
    const size_t E = H * hd;
    const std::vector<float> q = random_vec(rng, L * E, -1, 1);
    const std::vector<float> kk = random_vec(rng, S * E, -1, 1);
    const size_t ldc = S + 9, col0 = 3;  // C = scores + col0, n = S columns of ldc
    for (size_t h = 0; h < H; ++h) {
      SCOPED_TRACE("hd=" + std::to_string(hd) + " h=" + std::to_string(h));
      std::vector<float> got(L * ldc, kSentinel), want(got);
      const float alpha = 1.0f / std::sqrt(float(hd));
      f32_gemm_nt_ref(L, S, hd, want.data() + col0, ldc, q.data() + h * hd, E, kk.data() + h * hd, E, nullptr, alpha);
      f32_gemm_nt(L, S, hd, got.data() + col0, ldc, q.data() + h * hd, E, kk.data() + h * hd, E, nullptr, alpha);
      auto tol = [&](size_t i, size_t j) {
        double abs_dot = 0.0;
        for (size_t p = 0; p < hd; ++p) abs_dot += std::fabs(double(q[i * E + h * hd + p]) * kk[j * E + h * hd + p]);
        return dot_atol(hd, abs_dot, 0.0, alpha) + kRtol * std::fabs(double(want[i * ldc + col0 + j]));
      };
      EXPECT_TRUE(close_2d(L, S, got.data() + col0, want.data() + col0, ldc, tol, &worst));
      // Columns [0, col0) and [col0 + S, ldc) of every row are outside C.
      for (size_t i = 0; i < L; ++i)
        for (size_t j = 0; j < ldc; ++j)
          if (j < col0 || j >= col0 + S) {
            ASSERT_EQ(got[i * ldc + j], kSentinel) << "(" << i << ", " << j << ")";
          }
    }
  }
  report("gemm_nt head slices", worst);
}

TEST(GemmSimd, NnAllSizesPaddedStridesBias) {
  std::mt19937 rng(4321);
  Worst worst;
  for (size_t m : kSizes)
    for (size_t n : kSizes)
      for (size_t k : kSizes) {
        check_nn({m, n, k, k + 3, n + 5, n + 7, true, 1.0f, 1.0f}, rng, &worst);
        if (::testing::Test::HasFailure()) return;
      }
  report("gemm_nn padded, bias", worst);
}

TEST(GemmSimd, NnAllSizesTightNoBias) {
  std::mt19937 rng(77);
  Worst worst;
  for (size_t m : kSizes)
    for (size_t n : kSizes)
      for (size_t k : kSizes) {
        check_nn({m, n, k, k, n, n, false, 1.0f, 1.0f}, rng, &worst);
        if (::testing::Test::HasFailure()) return;
      }
  report("gemm_nn tight, no bias", worst);
}

TEST(GemmSimd, NnLargeMagnitudes) {
  std::mt19937 rng(8);
  Worst worst;
  for (size_t k : {1, 7, 8, 9, 33, 64, 65, 200})
    for (size_t mn : {3, 5, 9, 17, 24}) {
      check_nn({mn, mn + 1, k, k + 1, mn + 3, mn + 4, true, 1.0f, 1000.0f}, rng, &worst);
      check_nn({mn + 2, mn, k, k, mn, mn, false, 1.0f, 1000.0f}, rng, &worst);
    }
  report("gemm_nn large magnitudes", worst);
}

TEST(GemmSimd, NnEmptyK) {
  const float bias[] = {1.5f, -2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f, 8.0f, 9.0f};
  float c[2 * 9];
  std::fill(std::begin(c), std::end(c), kSentinel);
  const float dummy = 0.0f;
  f32_gemm_nn(2, 9, 0, c, 9, &dummy, 0, &dummy, 9, bias);
  for (size_t i = 0; i < 2; ++i)
    for (size_t j = 0; j < 9; ++j) EXPECT_EQ(c[i * 9 + j], bias[j]) << "(" << i << ", " << j << ")";
  f32_gemm_nn(2, 9, 0, c, 9, &dummy, 0, &dummy, 9, nullptr);
  for (float v : c) EXPECT_EQ(v, 0.0f);
}

// P·V for one head: A = P (L, S) rows of a padded score buffer, B = V + h*hd
// with ldb = E, C = out + h*hd with ldc = E (the interleaved (L, E) output):
// the other heads' columns must stay untouched.
TEST(GemmSimd, NnHeadSliceOfInterleavedBuffers) {
  std::mt19937 rng(43);
  Worst worst;
  const size_t L = 11, S = 21, H = 3, lda = S + 2;
  for (size_t hd : {4, 8, 12, 16, 17, 24}) {
    const size_t E = H * hd;
    const std::vector<float> p = random_vec(rng, L * lda, 0, 1);
    const std::vector<float> v = random_vec(rng, S * E, -1, 1);
    for (size_t h = 0; h < H; ++h) {
      SCOPED_TRACE("hd=" + std::to_string(hd) + " h=" + std::to_string(h));
      std::vector<float> got(L * E, kSentinel), want(got);
      f32_gemm_nn_ref(L, hd, S, want.data() + h * hd, E, p.data(), lda, v.data() + h * hd, E, nullptr);
      f32_gemm_nn(L, hd, S, got.data() + h * hd, E, p.data(), lda, v.data() + h * hd, E, nullptr);
      auto tol = [&](size_t i, size_t j) {
        double abs_dot = 0.0;
        for (size_t t = 0; t < S; ++t) abs_dot += std::fabs(double(p[i * lda + t]) * v[t * E + h * hd + j]);
        return dot_atol(S, abs_dot, 0.0, 1.0f) + kRtol * std::fabs(double(want[i * E + h * hd + j]));
      };
      EXPECT_TRUE(close_2d(L, hd, got.data() + h * hd, want.data() + h * hd, E, tol, &worst));
      for (size_t i = 0; i < L; ++i)
        for (size_t j = 0; j < E; ++j)
          if (j < h * hd || j >= (h + 1) * hd) {
            ASSERT_EQ(got[i * E + j], kSentinel) << "(" << i << ", " << j << ")";
          }
    }
  }
  report("gemm_nn head slices", worst);
}

// Non-finite inputs flow through like in the reference (no special casing).
TEST(GemmSimd, NonFinitePropagates) {
  const size_t m = 5, n = 9, k = 17;
  std::mt19937 rng(5);
  std::vector<float> a = random_vec(rng, m * k, -1, 1);
  std::vector<float> b = random_vec(rng, n * k, -1, 1);
  a[2 * k + 16] = std::numeric_limits<float>::quiet_NaN();  // row 2, in the k tail for W = 4 and 8
  b[4 * k + 3] = std::numeric_limits<float>::infinity();    // row 4 of B, in the vector part
  std::vector<float> got(m * n), want(m * n);
  f32_gemm_nt_ref(m, n, k, want.data(), n, a.data(), k, b.data(), k, nullptr, 1.0f);
  f32_gemm_nt(m, n, k, got.data(), n, a.data(), k, b.data(), k, nullptr, 1.0f);
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < n; ++j) {
      const float g = got[i * n + j], w = want[i * n + j];
      EXPECT_EQ(std::isnan(g), std::isnan(w)) << "(" << i << ", " << j << ")";
      if (std::isinf(w)) {
        EXPECT_EQ(g, w) << "(" << i << ", " << j << ")";
      }
    }
  EXPECT_TRUE(std::isnan(got[2 * n + 0]));  // row 2 meets the NaN everywhere
  EXPECT_TRUE(std::isinf(got[0 * n + 4]) || std::isnan(got[0 * n + 4]));
}

}  // namespace
}  // namespace aw::kernels
