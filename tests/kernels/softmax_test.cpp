// Tests for src/kernels/softmax.h: the scalar reference against hand-computed
// rows and a double-precision softmax, then the xsimd kernel against the
// reference at sizes around the vector width (W = 4 or 8), with large
// magnitudes, masked (-inf) entries, fully masked rows, single finite values,
// NaN / +inf propagation and the exp underflow boundary.
#include "kernels/softmax.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace aw::kernels {
namespace {

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kSentinel = -12345.5f;
constexpr size_t kGuard = 8;  // sentinel cells after each row

// Row lengths: below, equal to, above and multiples of 4 and 8, plus long rows.
const size_t kSizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 64, 65,
                         100, 127, 128, 129, 257, 1000};

// Tolerance, |simd - ref| <= atol + rtol(n) * |ref|, per element:
// - rtol(n) = (4 + sqrt(n)) eps. Both sides compute the same fl(x - max), so
//   that (dominant, ~|x - max| u) error cancels. What differs:
//   * elementwise, ~4 eps: xsimd::exp (Cephes polynomial) vs libm expf are
//     each within ~1 ulp, and multiply-by-1/sum vs divide adds ~1.5 ulp;
//   * the row sum: n positive terms added lane-wise vs in index order. The
//     relative error of each sum, which scales every output of the row, grows
//     like sqrt(n) u for such data (a random walk; the worst case (n-1) u is
//     never approached). Measured simd-vs-ref: ~2 eps at n = 8, ~4 at 65,
//     ~12 at 1000, and it is the sequential reference that drifts (vs a double
//     softmax: ref 15 eps, simd 6 eps at n = 1000).
//   So rows up to 16 long must agree within 8 ulp.
// - atol = FLT_MIN. xsimd::exp returns exactly 0 for arguments <= -88.38,
//   where libm still returns subnormals (< FLT_MIN). Probabilities below the
//   smallest normal float are irrelevant, and the slack is invisible for every
//   normal output.
double rtol(size_t n) { return (4.0 + std::sqrt(double(n))) * FLT_EPSILON; }
constexpr double kAtol = FLT_MIN;

struct Worst {
  double abs = 0.0;    // max |simd - ref|
  double rel = 0.0;    // max |simd - ref| / |ref| over normal ref values, in eps
  double ratio = 0.0;  // max |simd - ref| / tolerance
};

// Compares n elements; NaN matches NaN only. Lists the first mismatches.
::testing::AssertionResult close_1d(size_t n, const float* got, const float* want, Worst* worst) {
  size_t bad = 0;
  std::ostringstream msg;
  for (size_t j = 0; j < n; ++j) {
    const float g = got[j], w = want[j];
    bool ok;
    double err = 0.0;
    const double tol = kAtol + rtol(n) * std::fabs(double(w));
    if (std::isnan(g) || std::isnan(w)) {
      ok = std::isnan(g) && std::isnan(w);
    } else {
      err = std::fabs(double(g) - double(w));
      ok = err <= tol;
      if (worst) {
        worst->abs = std::max(worst->abs, err);
        if (std::fabs(w) >= FLT_MIN) worst->rel = std::max(worst->rel, err / std::fabs(w) / FLT_EPSILON);
        worst->ratio = std::max(worst->ratio, err / tol);
      }
    }
    if (!ok && bad++ < 8) {
      msg << "\n  [" << j << "]: simd=" << g << " ref=" << w << " |diff|=" << err << " tol=" << tol;
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << n << " elements differ" << msg.str();
}

// Runs both kernels on a copy of `row` (followed by a sentinel guard) and
// compares; also checks that the guard is untouched.
void check_row(const std::vector<float>& row, Worst* worst) {
  const size_t n = row.size();
  std::vector<float> got(n + kGuard, kSentinel);
  std::copy(row.begin(), row.end(), got.begin());
  std::vector<float> want(got);
  f32_softmax_inplace_ref(n, want.data());
  f32_softmax_inplace(n, got.data());
  EXPECT_TRUE(close_1d(n, got.data(), want.data(), worst));
  for (size_t g = n; g < n + kGuard; ++g) {
    EXPECT_EQ(std::memcmp(&got[g], &kSentinel, sizeof(float)), 0) << "guard cell " << g - n << " written";
  }
}

void report(const char* what, const Worst& w) {
  std::printf("[  worst   ] %s: max |simd-ref| = %.3g, max rel = %.3g eps, max |simd-ref|/tol = %.3g\n",
              what, w.abs, w.rel, w.ratio);
}

std::vector<float> uniform_row(std::mt19937& rng, size_t n, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

bool all_nan(const std::vector<float>& v, size_t n) {
  for (size_t j = 0; j < n; ++j)
    if (!std::isnan(v[j])) return false;
  return true;
}

// ---------------------------------------------------------------------------
// Reference against hand-computed values and a double-precision softmax.

TEST(SoftmaxRef, HandComputed) {
  {
    // exp(0) : exp(ln 2) : exp(ln 3) = 1 : 2 : 3, sum 6.
    float x[] = {0.0f, std::log(2.0f), std::log(3.0f)};
    f32_softmax_inplace_ref(3, x);
    EXPECT_NEAR(x[0], 1.0 / 6.0, 1e-7);
    EXPECT_NEAR(x[1], 2.0 / 6.0, 1e-7);
    EXPECT_NEAR(x[2], 3.0 / 6.0, 1e-7);
  }
  {
    float x[] = {1, 1, 1, 1};
    f32_softmax_inplace_ref(4, x);
    for (float v : x) EXPECT_EQ(v, 0.25f);
  }
  {
    // Shift invariance; a reference that skipped the max would overflow.
    float x[] = {1000.0f, 1000.0f};
    f32_softmax_inplace_ref(2, x);
    EXPECT_EQ(x[0], 0.5f);
    EXPECT_EQ(x[1], 0.5f);
  }
  {
    float x[] = {42.0f};
    f32_softmax_inplace_ref(1, x);
    EXPECT_EQ(x[0], 1.0f);
  }
  {
    float x[] = {-kInf, 3.0f, -kInf};
    f32_softmax_inplace_ref(3, x);
    EXPECT_EQ(x[0], 0.0f);
    EXPECT_EQ(x[1], 1.0f);
    EXPECT_EQ(x[2], 0.0f);
  }
}

TEST(SoftmaxRef, FullyMaskedRowIsZeros) {
  float x[] = {-kInf, -kInf, -kInf};
  f32_softmax_inplace_ref(3, x);
  for (float v : x) {
    EXPECT_EQ(v, 0.0f);
    EXPECT_FALSE(std::signbit(v));
  }
}

TEST(SoftmaxRef, NaNAndPlusInfPropagate) {
  const std::vector<std::vector<float>> rows = {
      {1.0f, kNaN, 2.0f}, {kNaN, 1.0f}, {1.0f, kInf}, {kInf, kInf}, {-kInf, kNaN}, {kNaN, -kInf}, {-kInf, kInf}};
  for (const auto& r : rows) {
    std::vector<float> x(r);
    f32_softmax_inplace_ref(x.size(), x.data());
    EXPECT_TRUE(all_nan(x, x.size())) << "row starting with " << r[0] << ", " << r[1];
  }
}

TEST(SoftmaxRef, MatchesDoublePrecision) {
  std::mt19937 rng(3);
  for (size_t n : {1, 5, 33, 257}) {
    std::vector<float> x = uniform_row(rng, n, -10.0f, 10.0f);
    double mx = -INFINITY, sum = 0.0;
    for (float v : x) mx = std::max(mx, double(v));
    std::vector<double> e(n);
    for (size_t j = 0; j < n; ++j) sum += (e[j] = std::exp(double(x[j]) - mx));
    f32_softmax_inplace_ref(n, x.data());
    // float reference vs exact: exp and divide ~1 ulp each, sum <= (n-1)u relative.
    for (size_t j = 0; j < n; ++j) {
      const double want = e[j] / sum;
      EXPECT_NEAR(x[j], want, 1e-37 + (4.0 + double(n)) * FLT_EPSILON * want) << "n=" << n << " j=" << j;
    }
  }
}

// ---------------------------------------------------------------------------
// SIMD against reference.

TEST(SoftmaxSimd, RandomRows) {
  std::mt19937 rng(11);
  Worst worst;
  for (size_t n : kSizes) {
    SCOPED_TRACE("n=" + std::to_string(n));
    for (int rep = 0; rep < 4; ++rep) check_row(uniform_row(rng, n, -5.0f, 5.0f), &worst);
  }
  report("softmax uniform[-5,5]", worst);
}

TEST(SoftmaxSimd, LargeMagnitudes) {
  std::mt19937 rng(12);
  Worst worst;
  for (size_t n : kSizes) {
    SCOPED_TRACE("n=" + std::to_string(n));
    // Wide spread: most entries underflow to 0, a few near the max matter.
    check_row(uniform_row(rng, n, -1000.0f, 1000.0f), &worst);
    // Large offset, moderate spread: x - max must be formed before exp.
    check_row(uniform_row(rng, n, 980.0f, 1020.0f), &worst);
    check_row(uniform_row(rng, n, -1020.0f, -980.0f), &worst);
  }
  report("softmax magnitudes ~1e3", worst);
}

TEST(SoftmaxSimd, MaskedEntries) {
  std::mt19937 rng(13);
  std::bernoulli_distribution masked(0.6);
  Worst worst;
  for (size_t n : kSizes) {
    SCOPED_TRACE("n=" + std::to_string(n));
    for (int rep = 0; rep < 4; ++rep) {
      std::vector<float> x = uniform_row(rng, n, -8.0f, 8.0f);
      for (float& v : x)
        if (masked(rng)) v = -kInf;
      check_row(x, &worst);
    }
  }
  report("softmax with -inf entries", worst);
}

TEST(SoftmaxSimd, FullyMaskedRowsAreZeros) {
  for (size_t n : kSizes) {
    std::vector<float> x(n + kGuard, kSentinel);
    std::fill(x.begin(), x.begin() + n, -kInf);
    f32_softmax_inplace(n, x.data());
    for (size_t j = 0; j < n; ++j) ASSERT_EQ(x[j], 0.0f) << "n=" << n << " j=" << j;
    for (size_t j = n; j < n + kGuard; ++j) ASSERT_EQ(x[j], kSentinel) << "n=" << n << " guard " << j - n;
  }
}

TEST(SoftmaxSimd, SingleFiniteValueIsOneHot) {
  // exp(0) = 1, sum = 1, 1 * (1 / 1) = 1: exact on both sides.
  for (size_t n : kSizes) {
    for (size_t pos = 0; pos < n; pos += (n > 40 ? 7 : 1)) {
      for (float v : {0.0f, -3.5f, 1000.0f, -1000.0f, 3e38f}) {
        std::vector<float> x(n, -kInf);
        x[pos] = v;
        f32_softmax_inplace(n, x.data());
        for (size_t j = 0; j < n; ++j)
          ASSERT_EQ(x[j], j == pos ? 1.0f : 0.0f) << "n=" << n << " pos=" << pos << " v=" << v << " j=" << j;
      }
    }
  }
}

TEST(SoftmaxSimd, NaNPropagatesFromAnyPosition) {
  std::mt19937 rng(14);
  for (size_t n : kSizes) {
    for (size_t pos = 0; pos < n; pos += (n > 40 ? 5 : 1)) {
      SCOPED_TRACE("n=" + std::to_string(n) + " pos=" + std::to_string(pos));
      // NaN among finite values, among -inf values, and next to +inf.
      std::vector<float> finite = uniform_row(rng, n, -5.0f, 5.0f);
      std::vector<float> masked(n, -kInf);
      std::vector<float> with_inf = uniform_row(rng, n, -5.0f, 5.0f);
      for (auto* row : {&finite, &masked, &with_inf}) (*row)[pos] = kNaN;
      with_inf[(pos + 1) % n] = kInf;
      for (auto* row : {&finite, &masked, &with_inf}) {
        std::vector<float> x(*row);
        f32_softmax_inplace(n, x.data());
        ASSERT_TRUE(all_nan(x, n));
        check_row(*row, nullptr);  // the reference agrees
      }
    }
  }
}

TEST(SoftmaxSimd, PlusInfGivesNaN) {
  // torch.softmax([.., inf, ..]) is all NaN (inf - inf), and so is ours.
  std::mt19937 rng(15);
  for (size_t n : kSizes) {
    for (size_t pos = 0; pos < n; pos += (n > 40 ? 5 : 1)) {
      std::vector<float> x = uniform_row(rng, n, -5.0f, 5.0f);
      x[pos] = kInf;
      if (n > 2) x[(pos + 2) % n] = -kInf;
      std::vector<float> y(x);
      f32_softmax_inplace(n, y.data());
      ASSERT_TRUE(all_nan(y, n)) << "n=" << n << " pos=" << pos;
      check_row(x, nullptr);
    }
  }
}

TEST(SoftmaxSimd, ExpUnderflowBoundary) {
  // x - max sweeps [-120, 0] so many entries land around exp's underflow
  // (-87.3: smallest normal, -103.3: smallest subnormal); see kAtol.
  Worst worst;
  for (size_t n : {7, 8, 9, 65, 241}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    std::vector<float> x(n);
    for (size_t j = 0; j < n; ++j) x[j] = -120.0f * float(j) / float(n - 1);
    check_row(x, &worst);
    for (float& v : x) v += 500.0f;
    check_row(x, &worst);
  }
  report("softmax exp underflow sweep", worst);
}

TEST(SoftmaxSimd, RowsSumToOne) {
  std::mt19937 rng(16);
  for (size_t n : kSizes) {
    std::vector<float> x = uniform_row(rng, n, -20.0f, 20.0f);
    f32_softmax_inplace(n, x.data());
    double sum = 0.0;
    for (float v : x) {
      ASSERT_GE(v, 0.0f);
      ASSERT_LE(v, 1.0f);
      sum += v;
    }
    // Each output is within ~(6 + sqrt(n)) eps relative of the exact softmax
    // (fl(x - max) and the sum order, see rtol), so the total is too.
    EXPECT_NEAR(sum, 1.0, (8.0 + std::sqrt(double(n))) * FLT_EPSILON) << "n=" << n;
  }
}

TEST(SoftmaxSimd, EmptyRowIsANoOp) {
  float x[1] = {kSentinel};
  f32_softmax_inplace(0, x);
  f32_softmax_inplace_ref(0, x);
  EXPECT_EQ(x[0], kSentinel);
}

}  // namespace
}  // namespace aw::kernels
