// Tests for src/kernels/gemm.h: the scalar references against hand-computed
// examples, then the xsimd kernels against the references at awkward sizes
// (below / equal to / above / multiples of the vector width W = 4 or 8, of
// the 4-row micro-tile, the 8-column panel and the cache blocks), padded and
// strided leading dimensions, bias null and not, alpha != 1, row scales,
// large magnitudes; and that nothing outside C's (m, n) region is written.
#include "kernels/gemm.h"
#include "kernels/pack.h"
#include "kernels/convert.h"

#include <gtest/gtest.h>

#include "../kernel_test_util.h"

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

using test::kSentinel;
using test::random_vec;
using test::span;
using test::untouched;

// Sizes for every dimension: below, equal to, above and multiples of 4 and 8
// (the vector width is 8 natively with AVX2 and 4 in the sse4.1/wasm build).
// As row counts, 1, 2, 5, 6, 9, 17, 30, 33 and 65 end in the 2-row tile (a
// last 1 or 2 rows), 2 and 6 filling it, 3, 7, 15 and 31 in a 4-row one.
const size_t kSizes[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 30, 31, 33, 64, 65};

// A value the kernels never produce from the test data; cells that must not be
// written are filled with it and compared bitwise afterwards.

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

void report(const char* what, const Worst& w) {
  std::printf("[  worst   ] %s: max |simd-ref| = %.3g, max |simd-ref|/tol = %.3g\n", what, w.abs, w.ratio);
}

// ---------------------------------------------------------------------------
// References against hand-computed examples.

// The references read B through the packed layout: pack a hand-written B with
// the reference packer, then check the products by hand.
TEST(GemmRef, NtHandComputed) {
  // A(2, 3) with lda = 4 and B(2, 3) with ldb = 5; the padding holds values
  // that would show up in C if read. C(2, 2) with ldc = 3.
  const float a[] = {1, 2, 3, 999,  //
                     4, 5, 6};
  const float b[] = {1, 0, -1, 999, 999,  //
                     2, 1, 0};
  const float bias[] = {10, 20};
  std::vector<float> bp(f32_gemm_packed_floats(2, 3));
  f32_gemm_pack_nt_ref(2, 3, b, 5, bp.data());
  // A·B^T = [[-2, 4], [-2, 13]]; * 0.5 + bias = [[9, 22], [9, 26.5]].
  float c[6] = {kSentinel, kSentinel, kSentinel, kSentinel, kSentinel, kSentinel};
  f32_gemm_packed_ref(2, 2, 3, c, 3, a, 4, bp.data(), bias, 0.5f);
  EXPECT_EQ(c[0], 9.0f);
  EXPECT_EQ(c[1], 22.0f);
  EXPECT_EQ(c[2], kSentinel);
  EXPECT_EQ(c[3], 9.0f);
  EXPECT_EQ(c[4], 26.5f);
  EXPECT_EQ(c[5], kSentinel);

  // No bias, alpha = 1.
  f32_gemm_packed_ref(2, 2, 3, c, 3, a, 4, bp.data(), nullptr, 1.0f);
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
  std::vector<float> bp(f32_gemm_packed_floats(3, 2));
  f32_gemm_pack_nn_ref(3, 2, b, 4, bp.data());
  // A·B = [[9, 12, 15], [19, 26, 33], [29, 40, 51]]; then C·diag(2, 1, 0) + A·B.
  float c[12];
  std::fill(std::begin(c), std::end(c), kSentinel);
  for (size_t i = 0; i < 3; ++i)
    for (size_t j = 0; j < 3; ++j) c[i * 4 + j] = 1.0f;
  // A packed by hand (MR-row panels), as f32_gemm_pp_ref reads it.
  std::vector<float> ap((3 + kGemmMR - 1) / kGemmMR * kGemmMR * 2, 0.0f);
  for (size_t i = 0; i < 3; ++i)
    for (size_t p = 0; p < 2; ++p) ap[(i / kGemmMR) * 2 * kGemmMR + p * kGemmMR + i % kGemmMR] = a[i * 3 + p];
  const float row_scale[] = {2, 1, 0};
  f32_gemm_pp_ref(3, 3, 2, c, 4, ap.data(), bp.data(), 2, row_scale, true);
  const float want[12] = {11, 14, 17, kSentinel,  //
                          20, 27, 34, kSentinel,  //
                          29, 40, 51, kSentinel};
  for (size_t t = 0; t < 12; ++t) EXPECT_EQ(c[t], want[t]) << "at offset " << t;
  // Overwriting: A·B alone.
  f32_gemm_pp_ref(3, 3, 2, c, 4, ap.data(), bp.data(), 2, nullptr, false);
  EXPECT_EQ(c[0], 9.0f);
  EXPECT_EQ(c[6], 33.0f);
  EXPECT_EQ(c[10], 51.0f);
}

TEST(GemmRef, EmptyK) {
  // k = 0: the sum is empty, C = alpha * 0 + bias.
  const float bias[] = {1.5f, -2.0f};
  float c[2] = {7, 7};
  f32_gemm_packed_ref(1, 2, 0, c, 2, nullptr, 0, nullptr, bias, 3.0f);
  EXPECT_EQ(c[0], 1.5f);
  EXPECT_EQ(c[1], -2.0f);
  c[0] = c[1] = 7;
  f32_gemm_pp_ref(1, 2, 0, c, 2, nullptr, nullptr, 0, nullptr, false);
  EXPECT_EQ(c[0], 0.0f);
  EXPECT_EQ(c[1], 0.0f);
}

// ---------------------------------------------------------------------------
// Packed B (gemm.h): packing against its reference, then the packed
// multiplies against theirs at awkward sizes, including sizes that cross the
// cache blocks of gemm_simd.cpp (k blocks of 512, row blocks of 72).

// Where fma is a multiply and an add (no FMA instructions: the sse4.1 build
// of these tests, like the baseline wasm modules), the packed kernels add the
// same products in the same order as the references: bit-identical results.
// With a real FMA (-mfma natively) and in the relaxed-SIMD wasm build
// (f32x4.relaxed_madd, which the engine fuses where the CPU has FMA and not
// elsewhere; the kernel says which build it is) each product is added with
// one rounding instead of two: the results then differ from the references'
// in the last bits, and are compared within the dot-product bound (dot_atol:
// a fused sum obeys the same forward-error bound, so the tolerance needs no
// extra slack for it).
#ifdef __FMA__
constexpr bool kHostFma = true;
#else
constexpr bool kHostFma = false;
#endif
const bool kExactPacked = !kHostFma && !f32_gemm_relaxed_madd();

TEST(GemmPacked, PackingMatchesReference) {
  std::mt19937 rng(11);
  for (size_t n : {1, 3, 4, 7, 8, 9, 16, 17, 33})
    for (size_t k : {0, 1, 3, 4, 5, 8, 13, 64, 513, 1100}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " k=" + std::to_string(k));
      const size_t ld = std::max<size_t>(n, k) + 3;
      const std::vector<float> b = random_vec(rng, ld * (std::max(n, k) + 1), -1, 1);
      const size_t floats = f32_gemm_packed_floats(n, k);
      EXPECT_EQ(floats, (n + 7) / 8 * 8 * k);
      std::vector<float> got(floats + kGuard, kSentinel), want(got);
      f32_gemm_pack_nt_ref(n, k, b.data(), ld, want.data());
      f32_gemm_pack_nt(n, k, b.data(), ld, got.data());
      EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float))) << "nt";
      f32_gemm_pack_nn_ref(n, k, b.data(), ld, want.data());
      f32_gemm_pack_nn(n, k, b.data(), ld, got.data());
      EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float))) << "nn";
      // The layout itself (gemm.h): B[p][j] of the nn packing, zero past n;
      // k in blocks of kGemmKC, each block's panels one after the other.
      const size_t np = (n + 7) / 8 * 8;
      for (size_t p = 0; p < k; ++p)
        for (size_t j = 0; j < np; ++j) {
          const size_t b0 = p / kGemmKC * kGemmKC, kc = std::min(kGemmKC, k - b0);
          ASSERT_EQ(want[b0 * np + (j / 8) * kc * 8 + (p - b0) * 8 + j % 8], j < n ? b[p * ld + j] : 0.0f) << p << ", " << j;
        }
      for (size_t g = floats; g < got.size(); ++g) ASSERT_EQ(got[g], kSentinel) << "written past the packed B";
    }
}

// f32_gemm_packed (nt form: B(n, k) is packed with f32_gemm_pack_nt) against
// its reference; exact where kExactPacked, else within the dot-product bound.
void check_packed(const Case& c, std::mt19937& rng, Worst* worst) {
  SCOPED_TRACE(describe(c));
  const std::vector<float> a = random_vec(rng, span(c.m, c.k, c.lda), -c.scale, c.scale);
  const std::vector<float> b = random_vec(rng, span(c.n, c.k, c.ldb), -c.scale, c.scale);
  const std::vector<float> bias = random_vec(rng, c.n, -c.scale, c.scale);
  const float* bias_p = c.bias ? bias.data() : nullptr;
  std::vector<float> bp(f32_gemm_packed_floats(c.n, c.k) + 1);
  f32_gemm_pack_nt(c.n, c.k, b.data(), c.ldb, bp.data());
  std::vector<float> got(span(c.m, c.n, c.ldc) + kGuard, kSentinel);
  std::vector<float> want(got);
  f32_gemm_packed_ref(c.m, c.n, c.k, want.data(), c.ldc, a.data(), c.lda, bp.data(), bias_p, c.alpha);
  f32_gemm_packed(c.m, c.n, c.k, got.data(), c.ldc, a.data(), c.lda, bp.data(), bias_p, c.alpha);
  auto tol = [&](size_t i, size_t j) {
    if (kExactPacked) return 0.0;
    double abs_dot = 0.0;
    for (size_t p = 0; p < c.k; ++p) abs_dot += std::fabs(double(a[i * c.lda + p]) * b[j * c.ldb + p]);
    const double abs_bias = c.bias ? std::fabs(double(bias[j])) : 0.0;
    return dot_atol(c.k, abs_dot, abs_bias, c.alpha) + kRtol * std::fabs(double(want[i * c.ldc + j]));
  };
  EXPECT_TRUE(close_2d(c.m, c.n, got.data(), want.data(), c.ldc, tol, worst));
  EXPECT_TRUE(untouched(got, c.m, c.n, c.ldc));
  // Bit-identical where exact (close_2d with tolerance 0 still lets -0 == +0 pass).
  if (kExactPacked)
    for (size_t i = 0; i < c.m; ++i)
      ASSERT_EQ(0, std::memcmp(&got[i * c.ldc], &want[i * c.ldc], c.n * sizeof(float))) << "row " << i;
}

// The accumulating product of attention's P·V: A packed by f32_gemm_pack_a,
// B(k, n) by f32_gemm_pack_nn, f32_gemm_pp with and without row scales on a
// C that starts with values.
void check_packed_acc(const Case& c, bool scaled, std::mt19937& rng, Worst* worst) {
  SCOPED_TRACE(describe(c) + (scaled ? " row_scale" : " row_scale=null"));
  const std::vector<float> a = random_vec(rng, span(c.m, c.k, c.lda), -c.scale, c.scale);
  const std::vector<float> b = random_vec(rng, span(c.k, c.n, c.ldb), -c.scale, c.scale);
  const std::vector<float> rs = random_vec(rng, c.m, 0.0f, 1.0f);
  std::vector<float> bp(f32_gemm_packed_floats(c.n, c.k) + 1);
  f32_gemm_pack_nn(c.n, c.k, b.data(), c.ldb, bp.data());
  std::vector<float> want(span(c.m, c.n, c.ldc) + kGuard, kSentinel);
  const std::vector<float> c0 = random_vec(rng, want.size(), -c.scale, c.scale);
  for (size_t i = 0; i < c.m; ++i)
    for (size_t j = 0; j < c.n; ++j) want[i * c.ldc + j] = c0[i * c.ldc + j];
  std::vector<float> got(want);
  std::vector<float> ap((c.m + kGemmMR - 1) / kGemmMR * kGemmMR * c.k + 1);
  f32_gemm_pack_a(c.m, c.k, a.data(), c.lda, 1.0f, ap.data());
  f32_gemm_pp_ref(c.m, c.n, c.k, want.data(), c.ldc, ap.data(), bp.data(), c.k, scaled ? rs.data() : nullptr, true);
  f32_gemm_pp(c.m, c.n, c.k, got.data(), c.ldc, ap.data(), bp.data(), c.k, scaled ? rs.data() : nullptr, true);
  auto tol = [&](size_t i, size_t j) {
    if (kExactPacked) return 0.0;
    double abs_dot = std::fabs(double(c0[i * c.ldc + j]) * (scaled ? rs[i] : 1.0f));
    for (size_t p = 0; p < c.k; ++p) abs_dot += std::fabs(double(a[i * c.lda + p]) * b[p * c.ldb + j]);
    return dot_atol(c.k + 1, abs_dot, 0.0, 1.0f) + kRtol * std::fabs(double(want[i * c.ldc + j]));
  };
  EXPECT_TRUE(close_2d(c.m, c.n, got.data(), want.data(), c.ldc, tol, worst));
  EXPECT_TRUE(untouched(got, c.m, c.n, c.ldc));
  if (kExactPacked)
    for (size_t i = 0; i < c.m; ++i)
      ASSERT_EQ(0, std::memcmp(&got[i * c.ldc], &want[i * c.ldc], c.n * sizeof(float))) << "row " << i;
}

TEST(GemmPacked, AllSizesPaddedStridesBiasAlpha) {
  std::mt19937 rng(2024);
  Worst worst;
  for (size_t m : kSizes)
    for (size_t n : kSizes)
      for (size_t k : kSizes) {
        check_packed({m, n, k, k + 3, k + 5, n + 7, true, 0.37f, 1.0f}, rng, &worst);
        check_packed({m, n, k, k, k, n, false, 1.0f, 1.0f}, rng, &worst);
        if (::testing::Test::HasFailure()) return;
      }
  report("gemm_packed", worst);
}

TEST(GemmPacked, PpAccumulateAllSizesWithAndWithoutRowScale) {
  std::mt19937 rng(2025);
  Worst worst;
  for (size_t m : kSizes)
    for (size_t n : kSizes)
      for (size_t k : kSizes) {
        check_packed_acc({m, n, k, k + 1, n + 3, n + 5, false, 1.0f, 1.0f}, true, rng, &worst);
        check_packed_acc({m, n, k, k, n, n, false, 1.0f, 1.0f}, false, rng, &worst);
        if (::testing::Test::HasFailure()) return;
      }
  report("gemm_packed_acc", worst);
}

// Sizes on both sides of the cache blocks: k of 512 (the k split loads C
// back between blocks), rows of 72.
TEST(GemmPacked, AcrossCacheBlocks) {
  std::mt19937 rng(2026);
  Worst worst;
  for (size_t k : {255, 511, 512, 513, 1100})
    for (size_t m : {71, 72, 73, 145})
      for (size_t n : {255, 257}) {
        check_packed({m, n, k, k + 1, k, n + 2, true, 0.5f, 1.0f}, rng, &worst);
        if (::testing::Test::HasFailure()) return;
      }
  for (size_t k : {300, 600})
    for (size_t m : {72, 77}) check_packed_acc({m, 260, k, k, 261, 262, false, 1.0f, 1.0f}, true, rng, &worst);
  report("gemm_packed across cache blocks", worst);
}

TEST(GemmPacked, LargeMagnitudes) {
  std::mt19937 rng(2027);
  Worst worst;
  for (size_t k : {1, 7, 8, 9, 33, 64, 65, 200})
    for (size_t mn : {3, 5, 9, 17}) {
      check_packed({mn, mn + 1, k, k + 1, k + 2, mn + 4, true, -0.125f, 1000.0f}, rng, &worst);
      check_packed_acc({mn + 1, mn, k, k + 2, mn + 1, mn + 3, false, 1.0f, 1000.0f}, true, rng, &worst);
    }
  report("gemm_packed large magnitudes", worst);
}

// A window of columns [j0, j0 + w) of a packed B, as the threads split it,
// gives bit for bit the same columns as the whole product.
TEST(GemmPacked, WindowsEqualTheWholeProduct) {
  std::mt19937 rng(2028);
  for (size_t k : {5, 512, 700})
    for (size_t n : {9, 40, 67}) {
      SCOPED_TRACE("k=" + std::to_string(k) + " n=" + std::to_string(n));
      const size_t m = 13;
      const std::vector<float> a = random_vec(rng, m * k, -1, 1), b = random_vec(rng, n * k, -1, 1);
      const std::vector<float> bias = random_vec(rng, n, -1, 1);
      std::vector<float> bp(f32_gemm_packed_floats(n, k));
      f32_gemm_pack_nt(n, k, b.data(), k, bp.data());
      std::vector<float> whole(m * n), parts(m * n, kSentinel);
      f32_gemm_packed(m, n, k, whole.data(), n, a.data(), k, bp.data(), bias.data(), 0.5f);
      for (size_t j0 = 0; j0 < n; j0 += 16) {
        const size_t w = std::min<size_t>(16, n - j0);
        f32_gemm_packed_window(m, w, k, parts.data() + j0, n, a.data(), k, bp.data(), n, j0, bias.data() + j0, 0.5f);
      }
      EXPECT_EQ(0, std::memcmp(whole.data(), parts.data(), whole.size() * sizeof(float)));
    }
}

// f32_gemv_packed_window (M = 1, a decoding step): bit-identical to the
// GEMM's row (f32_gemm_packed_window with m = 1: the same multiply-adds in
// the same order, whatever the multiply-add is: mul + add or fused), over
// awkward widths (panel groups and their remainders), depths across cache
// blocks, windows and bias / alpha; against the scalar reference exactly
// where kExactPacked, else within the dot-product bound; nothing written
// outside the window.
TEST(GemmPacked, GemvEqualsTheGemmRow) {
  std::mt19937 rng(2031);
  Worst worst;
  for (size_t k : {1, 3, 8, 9, 31, 512, 513, 1100})
    for (size_t n : {1, 7, 8, 9, 31, 32, 33, 40, 63, 100}) {
      SCOPED_TRACE("k=" + std::to_string(k) + " n=" + std::to_string(n));
      const std::vector<float> a = random_vec(rng, k, -1, 1), b = random_vec(rng, n * k, -1, 1);
      const std::vector<float> bias = random_vec(rng, n, -1, 1);
      std::vector<float> bp(f32_gemm_packed_floats(n, k));
      f32_gemm_pack_nt(n, k, b.data(), k, bp.data());
      for (bool with_bias : {false, true}) {
        const float* bias_p = with_bias ? bias.data() : nullptr;
        const float alpha = with_bias ? 0.75f : 1.0f;
        std::vector<float> gemm(n + kGuard, kSentinel), gemv(n + kGuard, kSentinel), ref(n + kGuard, kSentinel);
        f32_gemm_packed_window(1, n, k, gemm.data(), n, a.data(), k, bp.data(), n, 0, bias_p, alpha);
        f32_gemv_packed_window(n, k, gemv.data(), a.data(), bp.data(), n, 0, bias_p, alpha);
        ASSERT_EQ(0, std::memcmp(gemm.data(), gemv.data(), n * sizeof(float))) << "bias " << with_bias;
        ASSERT_TRUE(test::guard_intact(gemv.data() + n));
        f32_gemm_packed_ref(1, n, k, ref.data(), n, a.data(), k, bp.data(), bias_p, alpha);
        auto tol = [&](size_t, size_t j) {
          if (kExactPacked) return 0.0;
          double abs_dot = 0.0;
          for (size_t p = 0; p < k; ++p) abs_dot += std::fabs(double(a[p]) * b[j * k + p]);
          return dot_atol(k, abs_dot, with_bias ? std::fabs(double(bias[j])) : 0.0, alpha) + kRtol * std::fabs(double(ref[j]));
        };
        EXPECT_TRUE(close_2d(1, n, gemv.data(), ref.data(), n, tol, &worst));
      }
      // A window of whole panels from the middle: the same columns as the whole row.
      if (n > 16) {
        std::vector<float> whole(n), part(n, kSentinel);
        f32_gemv_packed_window(n, k, whole.data(), a.data(), bp.data(), n, 0, bias.data(), 1.0f);
        f32_gemv_packed_window(n - 8, k, part.data() + 8, a.data(), bp.data(), n, 8, bias.data() + 8, 1.0f);
        ASSERT_EQ(0, std::memcmp(whole.data() + 8, part.data() + 8, (n - 8) * sizeof(float)));
        for (size_t j = 0; j < 8; ++j) ASSERT_EQ(part[j], kSentinel);
      }
    }
  report("gemv_packed", worst);
}

// B stored as BF16 or F16 (h16_*): bit-identical to the float32 kernels on the widened B, GEMM and GEMV, at
// awkward widths (panel groups of the widening: 8 panels, and their remainders), depths across cache blocks,
// windows, bias and alpha; B holding subnormals, ±inf and NaN; nothing written outside the output.
TEST(GemmPacked, HalfStoredBGivesTheBitsOfTheWidenedB) {
  std::mt19937 rng(2040);
  for (Half h : {Half::kBF16, Half::kF16})
    for (size_t k : {1, 7, 33, 512, 530, 1100})
      for (size_t n : {1, 8, 9, 63, 64, 65, 137})
        for (size_t m : {1, 3, 4, 13, 80}) {
          SCOPED_TRACE("k=" + std::to_string(k) + " n=" + std::to_string(n) + " m=" + std::to_string(m) +
                       (h == Half::kBF16 ? " bf16" : " f16"));
          const std::vector<float> a = random_vec(rng, m * k, -1, 1), bias = random_vec(rng, n, -1, 1);
          // B's values: random patterns of the format, mostly ordinary numbers, some special.
          std::vector<uint16_t> b16(n * k);
          for (size_t i = 0; i < b16.size(); ++i) {
            const uint32_t r = rng();
            uint16_t v = h == Half::kBF16 ? f32_to_bf16(std::ldexp(float(int(r % 2001) - 1000) / 1000.0f, int(rng() % 9) - 4))
                                          : f32_to_f16(std::ldexp(float(int(r % 2001) - 1000) / 1000.0f, int(rng() % 9) - 4));
            if (i % 997 == 5) v = h == Half::kBF16 ? 0x0003 : 0x0003;   // a subnormal
            if (i % 1999 == 7) v = h == Half::kBF16 ? 0x7F80 : 0x7C00;  // +inf
            b16[i] = v;
          }
          std::vector<float> b32(n * k);
          for (size_t i = 0; i < b16.size(); ++i) b32[i] = h == Half::kBF16 ? bf16_to_f32(b16[i]) : f16_to_f32(b16[i]);
          // The f32 B with the float packer, the 16-bit B by bit patterns where h16_index puts them.
          std::vector<float> bp32(f32_gemm_packed_floats(n, k));
          f32_gemm_pack_nt(n, k, b32.data(), k, bp32.data());
          std::vector<uint16_t> bp16(h16_packed_count(n, k), 0);
          for (size_t r = 0; r < n; ++r)
            for (size_t p = 0; p < k; ++p) bp16[h16_index(n, k, r, p)] = b16[r * k + p];
          // The widening reads each k block's pairs back as the float32 layout of their panels.
          for (size_t b0 = 0; b0 < k; b0 += kGemmKC) {
            const size_t kc = std::min(kGemmKC, k - b0), pairs = h16_packed_cols(n) / kH16Cols;
            std::vector<float> wide(2 * pairs * kc * kGemmNR), simd(wide.size());
            h16_widen_ref(h, kc, pairs, bp16.data() + b0 * h16_packed_cols(n), wide.data());
            h16_widen(h, kc, pairs, bp16.data() + b0 * h16_packed_cols(n), simd.data());
            // The float layout's panels (past them, the last pair's second panel may be padding).
            const size_t valid = f32_gemm_packed_cols(n) * kc;
            ASSERT_EQ(0, std::memcmp(wide.data(), bp32.data() + b0 * f32_gemm_packed_cols(n), valid * sizeof(float)));
            ASSERT_EQ(0, std::memcmp(wide.data(), simd.data(), wide.size() * sizeof(float)));
          }
          for (bool with_bias : {false, true}) {
            const float* bias_p = with_bias ? bias.data() : nullptr;
            const float alpha = with_bias ? 0.5f : 1.0f;
            std::vector<float> want(m * n + kGuard, kSentinel), got(m * n + kGuard, kSentinel);
            f32_gemm_packed_window(m, n, k, want.data(), n, a.data(), k, bp32.data(), n, 0, bias_p, alpha);
            h16_gemm_packed_window(h, m, n, k, got.data(), n, a.data(), k, bp16.data(), n, 0, bias_p, alpha);
            ASSERT_TRUE(test::same_bits(m * n, got.data(), want.data()));
            ASSERT_TRUE(test::guard_intact(got.data() + m * n));
            std::vector<float> gv(n + kGuard, kSentinel);
            h16_gemv_packed_window(h, n, k, gv.data(), a.data(), bp16.data(), n, 0, bias_p, alpha);
            ASSERT_TRUE(test::same_bits(n, gv.data(), want.data()));  // row 0
            ASSERT_TRUE(test::guard_intact(gv.data() + n));
          }
          if (n > kH16Cols) {  // a window of whole panel pairs from the middle, GEMM and GEMV
            const size_t j0 = kH16Cols;
            std::vector<float> whole(m * n), part(m * n, kSentinel), row(n, kSentinel);
            h16_gemm_packed_window(h, m, n, k, whole.data(), n, a.data(), k, bp16.data(), n, 0, bias.data(), 1.0f);
            h16_gemm_packed_window(h, m, n - j0, k, part.data() + j0, n, a.data(), k, bp16.data(), n, j0, bias.data() + j0, 1.0f);
            for (size_t i = 0; i < m; ++i)
              ASSERT_EQ(0, std::memcmp(whole.data() + i * n + j0, part.data() + i * n + j0, (n - j0) * sizeof(float)));
            h16_gemv_packed_window(h, n - j0, k, row.data() + j0, a.data(), bp16.data(), n, j0, bias.data() + j0, 1.0f);
            ASSERT_EQ(0, std::memcmp(whole.data() + j0, row.data() + j0, (n - j0) * sizeof(float)));
          }
        }
}

// f32_gemm_pp (A packed by the caller) against its reference, overwrite and
// accumulate; A packed from a row-major A by hand in the documented layout.
TEST(GemmPacked, PrePackedAAgainstReference) {
  std::mt19937 rng(2029);
  Worst worst;
  for (size_t m : {1, 3, 4, 5, 8, 9, 17})
    for (size_t n : {1, 7, 8, 9, 24, 33})
      for (size_t k : {0, 1, 5, 16, 33, 600}) {
        SCOPED_TRACE("m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k));
        const std::vector<float> a = random_vec(rng, m * k, -1, 1), b = random_vec(rng, k * n, -1, 1);
        const size_t mp = (m + kGemmMR - 1) / kGemmMR * kGemmMR;
        std::vector<float> ap(mp * k + 1, 0.0f);
        for (size_t i = 0; i < m; ++i)
          for (size_t p = 0; p < k; ++p) ap[(i / kGemmMR) * k * kGemmMR + p * kGemmMR + i % kGemmMR] = a[i * k + p];
        std::vector<float> bp(f32_gemm_packed_floats(n, k) + 1);
        f32_gemm_pack_nn(n, k, b.data(), n, bp.data());
        const std::vector<float> rs = random_vec(rng, m, 0, 1);
        const size_t ldc = n + 2;
        for (int mode = 0; mode < 3; ++mode) {  // overwrite, accumulate, accumulate scaled
          std::vector<float> want = random_vec(rng, span(m, n, ldc) + kGuard, -1, 1);
          for (size_t g = span(m, n, ldc); g < want.size(); ++g) want[g] = kSentinel;
          for (size_t i = 0; i < m; ++i) want[i * ldc + n] = want[i * ldc + n + 1] = kSentinel;
          const std::vector<float> c0 = want;
          std::vector<float> got(want);
          f32_gemm_pp_ref(m, n, k, want.data(), ldc, ap.data(), bp.data(), k, mode == 2 ? rs.data() : nullptr, mode > 0);
          f32_gemm_pp(m, n, k, got.data(), ldc, ap.data(), bp.data(), k, mode == 2 ? rs.data() : nullptr, mode > 0);
          auto tol = [&](size_t i, size_t j) {
            if (kExactPacked) return 0.0;
            double abs_dot = mode > 0 ? std::fabs(double(c0[i * ldc + j])) : 0.0;
            for (size_t p = 0; p < k; ++p) abs_dot += std::fabs(double(a[i * k + p]) * b[p * n + j]);
            return dot_atol(k + 1, abs_dot, 0.0, 1.0f) + kRtol * std::fabs(double(want[i * ldc + j]));
          };
          EXPECT_TRUE(close_2d(m, n, got.data(), want.data(), ldc, tol, &worst)) << "mode " << mode;
          EXPECT_TRUE(untouched(got, m, n, ldc));
          if (::testing::Test::HasFailure()) return;
        }
      }
  report("gemm_pp", worst);
}

// The first k rows of a B packed with depth bk > k (attention's live keys of
// a chunk) give the product with those rows only.
TEST(GemmPacked, PrePackedAWithAShallowerK) {
  std::mt19937 rng(2030);
  for (size_t bk : {8, 64, 200})
    for (size_t k = 0; k <= bk; k += bk / 4 + 1) {
      const size_t m = 7, n = 19;
      const std::vector<float> a = random_vec(rng, m * k + 1, -1, 1), b = random_vec(rng, bk * n, -1, 1);
      std::vector<float> ap((m + kGemmMR - 1) / kGemmMR * kGemmMR * k + 1, 0.0f);
      for (size_t i = 0; i < m; ++i)
        for (size_t p = 0; p < k; ++p) ap[(i / kGemmMR) * k * kGemmMR + p * kGemmMR + i % kGemmMR] = a[i * k + p];
      std::vector<float> deep(f32_gemm_packed_floats(n, bk)), shallow(f32_gemm_packed_floats(n, k) + 1);
      f32_gemm_pack_nn(n, bk, b.data(), n, deep.data());
      f32_gemm_pack_nn(n, k, b.data(), n, shallow.data());  // the same first k rows, packed on their own
      std::vector<float> got(m * n, kSentinel), want(m * n, kSentinel);
      f32_gemm_pp(m, n, k, got.data(), n, ap.data(), deep.data(), bk, nullptr, false);
      f32_gemm_pp(m, n, k, want.data(), n, ap.data(), shallow.data(), k, nullptr, false);
      EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float))) << "bk=" << bk << " k=" << k;
      f32_gemm_pp_ref(m, n, k, got.data(), n, ap.data(), deep.data(), bk, nullptr, false);
      if (kExactPacked) {
        EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float))) << "ref, bk=" << bk << " k=" << k;
      } else {  // a fused multiply-add in the kernel only: within the dot-product bound
        auto tol = [&](size_t i, size_t j) {
          double abs_dot = 0.0;
          for (size_t p = 0; p < k; ++p) abs_dot += std::fabs(double(a[i * k + p]) * b[p * n + j]);
          return dot_atol(k, abs_dot, 0.0, 1.0f) + kRtol * std::fabs(double(got[i * n + j]));
        };
        EXPECT_TRUE(close_2d(m, n, want.data(), got.data(), n, tol, nullptr)) << "ref, bk=" << bk << " k=" << k;
      }
    }
}

TEST(GemmPacked, EmptyKGivesBiasOrScaledC) {
  const float bias[] = {1.5f, -2.0f, 3.0f};
  float c[6];
  std::fill(std::begin(c), std::end(c), kSentinel);
  const float dummy = 0.0f;
  f32_gemm_packed(2, 3, 0, c, 3, &dummy, 0, &dummy, bias, 2.0f);
  for (size_t i = 0; i < 2; ++i)
    for (size_t j = 0; j < 3; ++j) EXPECT_EQ(c[i * 3 + j], bias[j]) << "(" << i << ", " << j << ")";
  const float rs[] = {2.0f, -1.0f};
  f32_gemm_pp(2, 3, 0, c, 3, &dummy, &dummy, 0, rs, true);
  for (size_t i = 0; i < 2; ++i)
    for (size_t j = 0; j < 3; ++j) EXPECT_EQ(c[i * 3 + j], bias[j] * rs[i]) << "(" << i << ", " << j << ")";
}

TEST(GemmPacked, ZeroRowsOrColsWritesNothing) {
  std::vector<float> c(64, kSentinel);
  const std::vector<float> a(64, 1.0f), bp(64, 1.0f);
  f32_gemm_packed(0, 5, 8, c.data(), 8, a.data(), 8, bp.data(), nullptr, 1.0f);
  f32_gemm_packed(5, 0, 8, c.data(), 8, a.data(), 8, bp.data(), nullptr, 1.0f);
  f32_gemm_pp(0, 5, 8, c.data(), 8, a.data(), bp.data(), 8, nullptr, true);
  EXPECT_TRUE(untouched(c, 0, 0, 8));
}

TEST(GemmPacked, NonFinitePropagates) {
  const size_t m = 5, n = 9, k = 17;
  std::mt19937 rng(6);
  std::vector<float> a = random_vec(rng, m * k, -1, 1);
  std::vector<float> b = random_vec(rng, n * k, -1, 1);
  a[2 * k + 16] = std::numeric_limits<float>::quiet_NaN();
  b[4 * k + 3] = std::numeric_limits<float>::infinity();
  std::vector<float> bp(f32_gemm_packed_floats(n, k));
  f32_gemm_pack_nt(n, k, b.data(), k, bp.data());
  std::vector<float> got(m * n), want(m * n);
  f32_gemm_packed_ref(m, n, k, want.data(), n, a.data(), k, bp.data(), nullptr, 1.0f);
  f32_gemm_packed(m, n, k, got.data(), n, a.data(), k, bp.data(), nullptr, 1.0f);
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < n; ++j) {
      const float g = got[i * n + j], w = want[i * n + j];
      EXPECT_EQ(std::isnan(g), std::isnan(w)) << "(" << i << ", " << j << ")";
      if (std::isinf(w)) EXPECT_EQ(g, w) << "(" << i << ", " << j << ")";
    }
  EXPECT_TRUE(std::isnan(got[2 * n + 0]));
}

// Rows one at a time (a loading checkpoint, an embedding lookup): put, the packers' layouts exactly; get, the
// rows back — across k blocks, at widths that end inside a panel and inside a panel pair.
TEST(GemmPacked, RowsPutOneAtATimeMatchThePackers) {
  std::mt19937 rng(2051);
  for (size_t k : {1, 5, 512, 513, 1100})
    for (size_t n : {1, 7, 8, 9, 16, 17, 40}) {
      SCOPED_TRACE("k=" + std::to_string(k) + " n=" + std::to_string(n));
      const std::vector<float> w = random_vec(rng, n * k, -1, 1);
      std::vector<float> packed(f32_gemm_packed_floats(n, k)), rows(packed.size(), 0.0f), back(k);
      f32_gemm_pack_nt(n, k, w.data(), k, packed.data());
      for (size_t r = 0; r < n; ++r) f32_packed_put_row(n, k, r, w.data() + r * k, rows.data());
      ASSERT_EQ(0, std::memcmp(rows.data(), packed.data(), packed.size() * sizeof(float)));
      for (size_t r = 0; r < n; ++r) {
        f32_packed_get_row(n, k, r, rows.data(), back.data());
        ASSERT_EQ(0, std::memcmp(back.data(), w.data() + r * k, k * sizeof(float)));
      }
      for (Half h : {Half::kBF16, Half::kF16}) {
        std::vector<uint16_t> want(h16_packed_count(n, k), 0), got(want.size(), 0);
        for (size_t r = 0; r < n; ++r)
          for (size_t p = 0; p < k; ++p)
            want[h16_index(n, k, r, p)] = h == Half::kBF16 ? f32_to_bf16(w[r * k + p]) : f32_to_f16(w[r * k + p]);
        for (size_t r = 0; r < n; ++r) h16_packed_put_row(h, n, k, r, w.data() + r * k, got.data());
        ASSERT_EQ(want, got);
        // From a file's bytes (little-endian patterns, an odd address): the same layout.
        std::vector<uint8_t> file(1 + n * k * 2);
        for (size_t i = 0; i < n * k; ++i) {
          const uint16_t v = h == Half::kBF16 ? f32_to_bf16(w[i]) : f32_to_f16(w[i]);
          file[1 + 2 * i] = uint8_t(v & 0xFF);
          file[2 + 2 * i] = uint8_t(v >> 8);
        }
        std::vector<uint16_t> raw(want.size(), 0);
        for (size_t r = 0; r < n; ++r) h16_packed_put_row_bits(n, k, r, file.data() + 1 + r * k * 2, raw.data());
        ASSERT_EQ(want, raw);
        for (size_t r = 0; r < n; ++r) {
          h16_packed_get_row(h, n, k, r, got.data(), back.data());
          for (size_t p = 0; p < k; ++p)
            ASSERT_EQ(f32_bits(back[p]), f32_bits(h == Half::kBF16 ? bf16_to_f32(f32_to_bf16(w[r * k + p]))
                                                                    : f16_to_f32(f32_to_f16(w[r * k + p]))));
        }
      }
    }
}

}  // namespace
}  // namespace aw::kernels
