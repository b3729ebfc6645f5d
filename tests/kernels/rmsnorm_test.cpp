// Tests for src/kernels/rmsnorm.h: the scalar reference against hand-computed
// rows and torch values, then the xsimd kernel against the reference at sizes
// around the vector width (W = 4 or 8) and its 2W unroll, several rows with
// padded strides, with and without weight, in place, magnitudes from 1e-20
// to 1e15, several eps; bitwise where the sum of squares is exact (which
// pins torch's order (x * r) * weight); NaN / inf / overflow as float32
// torch; nothing outside the (rows, n) region is written.
#include "kernels/rmsnorm.h"

#include <gtest/gtest.h>

#include "../kernel_test_util.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace aw::kernels {
namespace {

using namespace test;

// Row lengths: below, equal to, above and multiples of 4 and 8 and of 2W,
// SmolLM2's 576 and 768.
const size_t kSizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 65, 127, 129, 576, 768};

// Tolerance, |simd - ref| <= tol(n, ref):
//   FLT_EPSILON |ref| ((n / 8 + 20) / 4 + 3) + 1e-44
// The two differ only in the sum of the float squares: the reference's is
// exact to double, the kernel's a float sum in 2W lanes, whose relative error
// is at most (n / 2W + 2W + 4) u for positive terms (u = FLT_EPSILON / 2;
// n / 8 + 20 covers W = 4 and W = 8); r = 1 / sqrt(mean + eps) halves it, and
// the roundings of r, x·r and ·weight on both sides add 6 u. 1e-44: a few
// subnormal steps, for outputs in the subnormal range. A worst-case bound:
// the measured worst is printed (|simd - ref| / tol).
double tol_elem(size_t n, double ref) {
  return FLT_EPSILON * std::fabs(ref) * ((double(n) / 8.0 + 20.0) / 4.0 + 3.0) + 1e-44;
}

struct Worst {
  double abs = 0.0, ratio = 0.0;
};

void report(const char* what, const Worst& w) {
  std::printf("[  worst   ] %s: max |simd-ref| = %.3g, max |simd-ref|/tol = %.3g\n", what, w.abs, w.ratio);
}

struct Case {
  size_t rows, n, ldx, ldy;
  bool weight, in_place;
  float eps;
};

std::string describe(const Case& c) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "rows=%zu n=%zu ldx=%zu ldy=%zu weight=%d in_place=%d eps=%g", c.rows, c.n, c.ldx,
                c.ldy, int(c.weight), int(c.in_place), double(c.eps));
  return buf;
}

// Reference (out of place) and kernel (in place or not) on x; element by
// element within tol_elem (bitwise when `exact`); NaN matches NaN only.
void check(const Case& c0, const std::vector<float>& x, const std::vector<float>& w, Worst* worst,
           bool exact = false) {
  Case c = c0;
  if (c.in_place) c.ldy = c.ldx;
  SCOPED_TRACE(describe(c));
  const float* wp = c.weight ? w.data() : nullptr;
  std::vector<float> want(span(c.rows, c.n, c.ldy) + kGuard, kSentinel);
  f32_rmsnorm_ref(c.rows, c.n, want.data(), c.ldy, x.data(), c.ldx, wp, c.eps);
  std::vector<float> got(span(c.rows, c.n, c.ldy) + kGuard, kSentinel);
  if (c.in_place) {
    for (size_t i = 0; i < c.rows; ++i)
      std::copy(x.begin() + i * c.ldx, x.begin() + i * c.ldx + c.n, got.begin() + i * c.ldx);
    f32_rmsnorm(c.rows, c.n, got.data(), c.ldx, got.data(), c.ldx, wp, c.eps);
  } else {
    f32_rmsnorm(c.rows, c.n, got.data(), c.ldy, x.data(), c.ldx, wp, c.eps);
  }
  size_t bad = 0;
  std::ostringstream msg;
  for (size_t i = 0; i < c.rows; ++i) {
    for (size_t j = 0; j < c.n; ++j) {
      const float g = got[i * c.ldy + j], v = want[i * c.ldy + j];
      bool ok;
      double err = 0.0, tol = 0.0;
      if (std::isnan(g) || std::isnan(v)) {
        ok = std::isnan(g) && std::isnan(v);
      } else if (exact) {
        ok = std::memcmp(&g, &v, sizeof g) == 0;
      } else {
        err = std::fabs(double(g) - double(v));
        tol = tol_elem(c.n, v);
        ok = err <= tol;
        if (worst) {
          worst->abs = std::max(worst->abs, err);
          worst->ratio = std::max(worst->ratio, err / tol);
        }
      }
      if (!ok && bad++ < 8)
        msg << "\n  (" << i << ", " << j << "): x=" << x[i * c.ldx + j] << " simd=" << g << " ref=" << v
            << " |diff|=" << err << " tol=" << tol;
    }
  }
  if (bad) ADD_FAILURE() << bad << " of " << c.rows * c.n << " elements differ" << msg.str();
  EXPECT_TRUE(untouched(got, c.rows, c.n, c.ldy));
}

// Random rows; the padding holds values that would wreck the sum if read.
std::vector<float> make_x(std::mt19937& rng, const Case& c, float lo, float hi) {
  return test::random_rows(rng, c.rows, c.n, c.ldx, lo, hi);
}

// ---------------------------------------------------------------------------
// Reference against hand-computed values and torch.

TEST(RmsNormRef, HandComputed) {
  {
    // [3, 4]: mean of squares 12.5; eps 0: r = 1 / sqrt(12.5).
    const float x[] = {3, 4};
    float y[2];
    f32_rmsnorm_ref(1, 2, y, 2, x, 2, nullptr, 0.0f);
    EXPECT_FLOAT_EQ(y[0], 3.0 / std::sqrt(12.5));
    EXPECT_FLOAT_EQ(y[1], 4.0 / std::sqrt(12.5));
  }
  {
    // A constant row c with eps 0 gives sign(c) exactly, then times the weight.
    const float x[] = {-2, -2, -2, -2}, w[] = {1.5f, -1, 0, 0.25f};
    float y[4];
    f32_rmsnorm_ref(1, 4, y, 4, x, 4, w, 0.0f);
    EXPECT_EQ(y[0], -1.5f);
    EXPECT_EQ(y[1], 1.0f);
    EXPECT_EQ(y[2], -0.0f);
    EXPECT_EQ(y[3], -0.25f);
    f32_rmsnorm(1, 4, y, 4, x, 4, w, 0.0f);
    EXPECT_EQ(y[0], -1.5f);
    EXPECT_EQ(y[3], -0.25f);
  }
  {
    // eps dominates a tiny row: x = 1e-4 everywhere, eps = 1: r = 1 / sqrt(1 + 1e-8).
    const float x[] = {1e-4f, 1e-4f, 1e-4f};
    float y[3];
    f32_rmsnorm_ref(1, 3, y, 3, x, 3, nullptr, 1.0f);
    EXPECT_FLOAT_EQ(y[0], 1e-4f);
  }
  {
    // Two rows with strides; padding untouched.
    const float xs[] = {3, 4, 999, 6, 8};
    float y[6] = {kSentinel, kSentinel, kSentinel, kSentinel, kSentinel, kSentinel};
    f32_rmsnorm_ref(2, 2, y, 4, xs, 3, nullptr, 0.0f);
    EXPECT_FLOAT_EQ(y[0], 3.0 / std::sqrt(12.5));
    EXPECT_EQ(y[2], kSentinel);
    EXPECT_EQ(y[3], kSentinel);
    EXPECT_FLOAT_EQ(y[4], 6.0 / std::sqrt(50.0));
    EXPECT_FLOAT_EQ(y[5], 8.0 / std::sqrt(50.0));
  }
}

// tools/causal_lm.py RMSNorm(7, eps=1e-6) with weight [1, 1.1, …, 1.6] in
// float32 torch 1.13.1, and the same module in float64 (the exact values for
// these float inputs). Row 1 has |x| ~ 1e3 and one small element.
const float kTorchX[2][7] = {
    {0.30000001192092896f, 1.98294198513031f, 2.1185948848724365f, 0.5822400450706482f, -1.2136050462722778f,
     -1.617848515510559f, -0.2588309943675995f},
    {1001.0f, -999.010009765625f, 1000.9600219726562f, 999.0888671875f, -1000.8438720703125f, 999.2402954101562f,
     0.003000000026077032f}};
const float kTorchW[7] = {1.0f, 1.1f, 1.2f, 1.3f, 1.4f, 1.5f, 1.6f};
const double kTorchF32[2][7] = {
    {0.22008244693279266, 1.6001726388931274, 1.8650621175765991, 0.5552768111228943, -1.2464346885681152,
     -1.7803001403808594, -0.3038088381290436},
    {1.0811773538589478, -1.1869308948516846, 1.297361135482788, 1.4028470516204834, -1.5134122371673584,
     1.61891508102417, 5.184466772334417e-06}};
const double kExact[2][7] = {
    {0.22008245651621414, 1.6001726962252547, 1.865062266501647, 0.5552768416399705, -1.2464347684234978,
     -1.7803003070805927, -0.303808851457256},
    {1.0811773410782837, -1.1869307796479969, 1.297361044657857, 1.4028470198772474, -1.5134121650511838,
     1.618915033501246, 5.1844668927251015e-06}};

TEST(RmsNormRef, MatchesTorch) {
  for (bool simd : {false, true}) {
    float y[14];
    (simd ? f32_rmsnorm : f32_rmsnorm_ref)(2, 7, y, 7, &kTorchX[0][0], 7, kTorchW, 1e-6f);
    for (size_t i = 0; i < 2; ++i)
      for (size_t j = 0; j < 7; ++j) {
        // Four float roundings after an (almost) exact mean: within 3 ulp of
        // the exact value; and torch (float32) within 1e-6 relative.
        EXPECT_NEAR(y[i * 7 + j], kExact[i][j], 3 * FLT_EPSILON * std::fabs(kExact[i][j])) << simd << i << j;
        EXPECT_NEAR(y[i * 7 + j], kTorchF32[i][j], 1e-6 * std::fabs(kTorchF32[i][j])) << simd << i << j;
      }
  }
}

// ---------------------------------------------------------------------------
// SIMD against reference.

TEST(RmsNormSimd, RandomRowsWithAndWithoutWeight) {
  std::mt19937 rng(41);
  Worst worst;
  for (size_t n : kSizes)
    for (bool weight : {false, true}) {
      const Case c{3, n, n, n, weight, false, 1e-6f};
      const std::vector<float> w = random_vec(rng, n, -1.5f, 1.5f);
      check(c, make_x(rng, c, -2.0f, 2.0f), w, &worst);
      check(c, make_x(rng, c, -3.0f, 4.0f), w, &worst);
    }
  report("rmsnorm order-1 rows", worst);
}

TEST(RmsNormSimd, StridedAndInPlace) {
  std::mt19937 rng(42);
  Worst worst;
  for (size_t n : kSizes) {
    for (auto [ldx, ldy] : {std::pair<size_t, size_t>{n + 3, n + 5}, {n + 1, n}, {n, n + 7}, {2 * n + 1, n + 2}}) {
      const Case c{4, n, ldx, ldy, true, false, 1e-5f};
      check(c, make_x(rng, c, -1.0f, 1.0f), random_vec(rng, n, 0.5f, 1.5f), &worst);
    }
    for (size_t ld : {n, n + 3})
      for (bool weight : {false, true}) {
        const Case c{3, n, ld, ld, weight, true, 1e-5f};
        check(c, make_x(rng, c, -1.5f, 1.5f), random_vec(rng, n, -1.0f, 1.0f), &worst);
      }
  }
  report("rmsnorm strided / in place", worst);
}

TEST(RmsNormSimd, MagnitudesAndEps) {
  std::mt19937 rng(43);
  Worst worst;
  for (size_t n : kSizes) {
    const std::vector<float> w = random_vec(rng, n, 0.5f, 1.5f);
    for (float scale : {1e-20f, 1e-3f, 3e-4f, 1.0f, 1e3f, 1e15f})
      for (float eps : {0.0f, 1.1920929e-07f, 1e-6f, 1e-5f, 1.0f}) {
        const Case c{2, n, n + 1, n, true, false, eps};
        check(c, make_x(rng, c, -scale, scale), w, &worst);
        // An offset (no cancellation in a sum of squares, unlike LayerNorm's
        // variance); up to 1e3 only, so that n squares stay below FLT_MAX.
        if (scale <= 1e3f) check(c, make_x(rng, c, 1000.0f * scale, 1001.0f * scale), w, &worst);
      }
  }
  report("rmsnorm |x| 1e-20 .. 1e15, eps 0 .. 1", worst);
}

TEST(RmsNormSimd, ExactSumsAreBitIdentical) {
  // Small integers: every square and every partial sum is exact in float, so
  // the kernel's mean equals the reference's, and the rest (r, x·r, ·weight)
  // must be the same operations in the same order: equal bit for bit.
  std::mt19937 rng(44);
  std::uniform_int_distribution<int> small(-8, 8);
  for (size_t n : kSizes)
    for (bool weight : {false, true}) {
      const Case c{3, n, n + 2, n, weight, false, 1e-6f};
      std::vector<float> x(span(3, n, n + 2));
      for (float& v : x) v = float(small(rng));
      check(c, x, random_vec(rng, n, -2.0f, 2.0f), nullptr, /*exact=*/true);
    }
}

TEST(RmsNormSimd, NonFiniteAndOverflowAsTorch) {
  std::mt19937 rng(45);
  for (size_t n : kSizes) {
    const std::vector<float> w = random_vec(rng, n, 0.5f, 1.5f);
    for (size_t pos = 0; pos < n; pos += (n > 40 ? 13 : 1)) {
      for (float bad : {kNaN, kInf, -kInf, 1e20f, -3e19f}) {
        const Case c{3, n, n + 2, n, true, false, 1e-6f};
        std::vector<float> x = make_x(rng, c, -1.0f, 1.0f);
        x[1 * c.ldx + pos] = bad;
        std::vector<float> y(span(3, n, n) + kGuard, kSentinel);
        f32_rmsnorm(3, n, y.data(), n, x.data(), c.ldx, w.data(), 1e-6f);
        for (size_t j = 0; j < n; ++j) {
          const float v = y[n + j];
          if (std::isnan(bad)) {
            ASSERT_TRUE(std::isnan(v)) << "NaN row: n=" << n << " j=" << j;
          } else if (j == pos && std::isinf(bad)) {
            ASSERT_TRUE(std::isnan(v)) << "inf * (r = 0): n=" << n;
          } else {
            // The sum of squares overflows float: r = 0, the row is 0 (as float32 torch).
            ASSERT_EQ(v, 0.0f) << "n=" << n << " pos=" << pos << " bad=" << bad << " j=" << j;
          }
          ASSERT_FALSE(std::isnan(y[j]) || std::isnan(y[2 * n + j])) << "other rows: n=" << n;
        }
        check(c, x, w, nullptr);  // the reference agrees
      }
    }
  }
  // eps = 0 on an all-zero row: 0 * (1 / sqrt(0)) = NaN on both sides, as torch.
  const float z[] = {0, 0, 0};
  float y[3], yr[3];
  f32_rmsnorm(1, 3, y, 3, z, 3, nullptr, 0.0f);
  f32_rmsnorm_ref(1, 3, yr, 3, z, 3, nullptr, 0.0f);
  for (size_t j = 0; j < 3; ++j) EXPECT_TRUE(std::isnan(y[j]) && std::isnan(yr[j])) << j;
}

TEST(RmsNormSimd, EmptyIsANoOp) {
  float x[2] = {1, 2}, y[2] = {kSentinel, kSentinel};
  f32_rmsnorm(0, 2, y, 2, x, 2, nullptr, 1e-5f);
  f32_rmsnorm(3, 0, y, 0, x, 0, nullptr, 1e-5f);
  f32_rmsnorm_ref(0, 2, y, 2, x, 2, nullptr, 1e-5f);
  f32_rmsnorm_ref(3, 0, y, 0, x, 0, nullptr, 1e-5f);
  EXPECT_EQ(y[0], kSentinel);
  EXPECT_EQ(y[1], kSentinel);
}

}  // namespace
}  // namespace aw::kernels
