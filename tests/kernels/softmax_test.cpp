// Tests for src/kernels/softmax.h: the scalar reference against hand-computed
// rows and a double-precision softmax; then the xsimd kernels (online update +
// finish, as the attention core computes a row's weights) against the
// reference at sizes around the vector width (W = 4 or 8) and the 64-score
// blocks, with large magnitudes, masked (-inf) entries, fully masked rows,
// single finite values, NaN / +inf propagation and the exp underflow
// boundary; then the online update alone against its reference.
#include "kernels/softmax.h"

#include <gtest/gtest.h>

#include "../kernel_test_util.h"

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

using test::kInf;
using test::kNaN;
using test::kSentinel;
constexpr size_t kGuard = 8;  // sentinel cells after each row

// Row lengths: below, equal to, above and multiples of 4 and 8, plus long rows.
const size_t kSizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 64, 65,
                         100, 127, 128, 129, 257, 1000};

// Tolerance, |simd - ref| <= atol + rtol(n) * |ref|, per element:
// - rtol(n) = (4 + sqrt(n)) eps. Both sides compute the same fl(x - max), so
//   that (dominant, ~|x - max| u) error cancels. What differs:
//   * elementwise, ~4 eps: exp_nonpos (Cephes polynomial) vs libm expf are
//     each within ~1 ulp, and multiply-by-1/sum vs divide adds ~1.5 ulp;
//   * the row sum: n positive terms added lane-wise vs in index order. The
//     relative error of each sum, which scales every output of the row, grows
//     like sqrt(n) u for such data (a random walk; the worst case (n-1) u is
//     never approached). Measured simd-vs-ref: ~2 eps at n = 8, ~4 at 65,
//     ~12 at 1000, and it is the sequential reference that drifts (vs a double
//     softmax: ref 15 eps, simd 6 eps at n = 1000).
//   So rows up to 16 long must agree within 8 ulp.
// - atol = FLT_MIN. exp_nonpos returns exactly 0 for arguments < -87.34,
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

// The softmax of a row the way the attention core computes it (ops/
// attention.cpp): f32_softmax_online over blocks of 64 scores, then
// f32_softmax_finish with the final maximum and sum. The tests below hold
// this SIMD path against the scalar f32_softmax_inplace_ref.
void softmax_simd(size_t n, float* x) {
  constexpr size_t kBlock = 64;
  float m = -kInf, l = 0.0f, alpha = 0.0f;
  std::vector<float> p(kGemmMR * kBlock);
  for (size_t j0 = 0; j0 < n; j0 += kBlock)
    f32_softmax_online(1, std::min(kBlock, n - j0), x + j0, kBlock, &m, &l, &alpha, p.data());
  f32_softmax_finish(n, x, m, l);
}

// Runs both on a copy of `row` (followed by a sentinel guard) and compares;
// also checks that the guard is untouched.
void check_row(const std::vector<float>& row, Worst* worst) {
  const size_t n = row.size();
  std::vector<float> got(n + kGuard, kSentinel);
  std::copy(row.begin(), row.end(), got.begin());
  std::vector<float> want(got);
  f32_softmax_inplace_ref(n, want.data());
  softmax_simd(n, got.data());
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
    softmax_simd(n, x.data());
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
        softmax_simd(n, x.data());
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
        softmax_simd(n, x.data());
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
      softmax_simd(n, y.data());
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
    softmax_simd(n, x.data());
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
  softmax_simd(0, x);
  f32_softmax_inplace_ref(0, x);
  EXPECT_EQ(x[0], kSentinel);
}

// ---------------------------------------------------------------------------
// f32_softmax_online: the flash-attention update, against its reference, over
// several blocks per row; and that the blocks together give f32_softmax_inplace.

// Runs blocks of widths `widths` through both kernels (same inputs) and
// compares m (exact: both take the same max), alpha and l (relative), and p
// (per element, like close_1d) after every block.
void check_online(size_t rows, const std::vector<size_t>& widths, std::mt19937& rng, float lo, float hi,
                  double neg_inf_share, Worst* worst) {
  std::ostringstream what;
  what << "rows=" << rows << " widths=";
  for (size_t w : widths) what << w << ",";
  SCOPED_TRACE(what.str());
  std::uniform_real_distribution<float> dist(lo, hi), u(0.0f, 1.0f);
  std::vector<float> m_ref(rows, -kInf), l_ref(rows, 0.0f), m_simd(m_ref), l_simd(l_ref);
  for (size_t n : widths) {
    const size_t lds = n + 3;
    std::vector<float> sc(rows * lds);
    for (float& x : sc) x = u(rng) < neg_inf_share ? -kInf : dist(rng);
    const size_t padded = (rows + kGemmMR - 1) / kGemmMR * kGemmMR;
    std::vector<float> p_ref(padded * n + kGuard, kSentinel), p_simd(p_ref);
    std::vector<float> a_ref(rows, kSentinel), a_simd(rows, kSentinel);
    f32_softmax_online_ref(rows, n, sc.data(), lds, m_ref.data(), l_ref.data(), a_ref.data(), p_ref.data());
    f32_softmax_online(rows, n, sc.data(), lds, m_simd.data(), l_simd.data(), a_simd.data(), p_simd.data());
    for (size_t i = 0; i < rows; ++i) {
      ASSERT_TRUE(m_ref[i] == m_simd[i] || (std::isnan(m_ref[i]) && std::isnan(m_simd[i]))) << "m[" << i << "]";
      ASSERT_TRUE(close_1d(1, &a_simd[i], &a_ref[i], worst)) << "alpha[" << i << "]";
      // l: a sum of up to n terms per block, in another order: rtol(n) as p.
      const double tol = kAtol + rtol(n + 1) * std::fabs(double(l_ref[i]));
      ASSERT_TRUE(std::fabs(double(l_simd[i]) - l_ref[i]) <= tol || (std::isnan(l_simd[i]) && std::isnan(l_ref[i])))
          << "l[" << i << "] simd " << l_simd[i] << " ref " << l_ref[i];
    }
    ASSERT_TRUE(close_1d(padded * n, p_simd.data(), p_ref.data(), worst));
    for (size_t g = padded * n; g < p_simd.size(); ++g) ASSERT_EQ(p_simd[g], kSentinel) << "written past p";
  }
}

TEST(SoftmaxOnline, MatchesReferenceAtAwkwardSizes) {
  std::mt19937 rng(31);
  Worst worst;
  for (size_t rows : {1, 2, 3, 4, 5, 7, 8, 9, 13})
    for (size_t n : {1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 33, 64, 65, 129}) {
      check_online(rows, {n}, rng, -5.0f, 5.0f, 0.0, &worst);
      check_online(rows, {n, 3, n + 4, 1}, rng, -5.0f, 5.0f, 0.2, &worst);
      if (::testing::Test::HasFailure()) return;
    }
  std::printf("[  worst   ] softmax_online: max |simd-ref| = %.3g, max rel = %.3g eps\n", worst.abs, worst.rel);
}

TEST(SoftmaxOnline, LargeMagnitudesAndRisingMaxima) {
  std::mt19937 rng(32);
  Worst worst;
  // Later blocks with larger scores: alpha rescales what came before.
  for (size_t rows : {1, 4, 6}) {
    check_online(rows, {8, 8, 8}, rng, -1000.0f, 1000.0f, 0.1, &worst);
    check_online(rows, {5, 40, 3}, rng, -90.0f, 90.0f, 0.0, &worst);
  }
}

// Rows masked so far: p = 0, alpha = 1, (m, l) = (-inf, 0); a later block
// with a finite score starts them normally.
TEST(SoftmaxOnline, FullyMaskedBlocksThenLive) {
  const size_t n = 6;
  std::vector<float> s(2 * n, -kInf);
  float m[2] = {-kInf, -kInf}, l[2] = {0, 0}, a[2] = {kSentinel, kSentinel};
  std::vector<float> p(kGemmMR * n, kSentinel);
  f32_softmax_online(2, n, s.data(), n, m, l, a, p.data());
  for (float x : p) EXPECT_EQ(x, 0.0f);
  EXPECT_EQ(a[0], 1.0f);
  EXPECT_EQ(m[0], -kInf);
  EXPECT_EQ(l[0], 0.0f);
  s[3] = 2.0f;  // row 0 gets one live key
  f32_softmax_online(2, n, s.data(), n, m, l, a, p.data());
  EXPECT_EQ(m[0], 2.0f);
  EXPECT_EQ(l[0], 1.0f);
  EXPECT_EQ(p[3 * kGemmMR + 0], 1.0f);
  EXPECT_EQ(a[0], 0.0f);  // exp(-inf - 2): nothing before to rescale
  EXPECT_EQ(m[1], -kInf);
  EXPECT_EQ(l[1], 0.0f);
}

TEST(SoftmaxOnline, NaNOrPlusInfPoisonsTheRowSum) {
  for (float bad : {kNaN, kInf}) {
    for (bool others_masked : {false, true}) {
      const size_t n = 9;
      std::vector<float> s(n, others_masked ? -kInf : 0.5f);
      s[7] = bad;
      float m = -kInf, l = 0, a = 0;
      std::vector<float> p(kGemmMR * n);
      f32_softmax_online(1, n, s.data(), n, &m, &l, &a, p.data());
      EXPECT_TRUE(std::isnan(l)) << bad << " others masked " << others_masked;
    }
  }
}

// Blocks of one row, together: l and the rescaled p give the row's softmax.
TEST(SoftmaxOnline, BlocksTogetherGiveTheSoftmax) {
  std::mt19937 rng(33);
  std::uniform_real_distribution<float> dist(-8.0f, 8.0f);
  const size_t n = 77;
  std::vector<float> row(n);
  for (float& x : row) x = dist(rng);
  std::vector<float> want(row);
  f32_softmax_inplace_ref(n, want.data());
  float m = -kInf, l = 0;
  std::vector<double> got(n);
  std::vector<float> p(kGemmMR * n);
  for (size_t j0 = 0; j0 < n; j0 += 20) {
    const size_t w = std::min<size_t>(20, n - j0);
    float a = 0;
    f32_softmax_online(1, w, row.data() + j0, w, &m, &l, &a, p.data());
    for (size_t j = 0; j < j0; ++j) got[j] *= a;
    for (size_t j = 0; j < w; ++j) got[j0 + j] = p[j * kGemmMR];
  }
  // Each earlier block's p was rescaled by up to 3 alphas (each within ~2 ulp
  // of exact), on top of the usual softmax error: 32 eps relative.
  for (size_t j = 0; j < n; ++j) EXPECT_NEAR(got[j] / l, want[j], 32 * FLT_EPSILON * want[j] + FLT_MIN) << j;
}

// f32_log_softmax_f64: log-probabilities in double (the families' vocabulary
// and class rows): they sum to 1 after exp, keep their order, equal
// x − logsumexp(x) computed in long double to 1e-12, and NaN / +inf poison
// the row as torch's log_softmax does.
TEST(LogSoftmaxF64, MatchesLongDoubleAndNormalises) {
  std::mt19937 rng(31);
  std::uniform_real_distribution<float> dist(-30.0f, 30.0f);
  for (size_t n : {size_t(1), size_t(2), size_t(7), size_t(98), size_t(1000), size_t(49152)}) {
    std::vector<float> x(n);
    for (float& v : x) v = dist(rng);
    std::vector<double> lp(n);
    f32_log_softmax_f64(n, x.data(), lp.data());
    long double mx = x[0], sum = 0;
    for (float v : x) mx = std::max<long double>(mx, v);
    for (float v : x) sum += std::exp((long double)v - mx);
    const long double lse = mx + std::log(sum);
    double total = 0;
    for (size_t j = 0; j < n; ++j) {
      ASSERT_NEAR(lp[j], double((long double)x[j] - lse), 1e-12) << "n=" << n << " j=" << j;
      total += std::exp(lp[j]);
    }
    EXPECT_NEAR(total, 1.0, 1e-12) << n;
    const size_t am = size_t(std::max_element(x.begin(), x.end()) - x.begin());
    EXPECT_EQ(size_t(std::max_element(lp.begin(), lp.end()) - lp.begin()), am) << n;
  }
  for (float poison : {std::numeric_limits<float>::quiet_NaN(), kInf}) {
    std::vector<float> x = {1.0f, poison, -2.0f};
    std::vector<double> lp(3);
    f32_log_softmax_f64(3, x.data(), lp.data());
    for (double v : lp) EXPECT_TRUE(std::isnan(v));
  }
}

// f32_log_softmax (beam search's rows, in place): the reference is exactly f32_log_softmax_f64 rounded to float;
// the SIMD version within 3e-7 + 1 ulp of it (its float exps move lse by at most ~3e-7), at awkward sizes (tails of
// every lane count, a vocabulary's 58 101), on spreads that put the sum in one term or in thousands; the
// arg-max kept; NaN / +inf poison the row; a row of -inf is NaN as in the reference.
TEST(LogSoftmax, SimdWithinBoundOfDouble) {
  std::mt19937 rng(47);
  for (float spread : {3.0f, 30.0f}) {
    std::uniform_real_distribution<float> dist(-spread, spread);
    for (size_t n : {size_t(1), size_t(2), size_t(3), size_t(5), size_t(7), size_t(9), size_t(17), size_t(98),
                     size_t(1001), size_t(58101)}) {
      std::vector<float> x(n);
      for (float& v : x) v = dist(rng) + 12.0f;
      std::vector<double> lp(n);
      f32_log_softmax_f64(n, x.data(), lp.data());
      std::vector<float> ref = x, got = x;
      f32_log_softmax_ref(n, ref.data());
      f32_log_softmax(n, got.data());
      for (size_t j = 0; j < n; ++j) {
        ASSERT_EQ(ref[j], float(lp[j])) << "n=" << n << " j=" << j;
        ASSERT_NEAR(got[j], ref[j], 3e-7 + std::abs(ref[j]) * FLT_EPSILON) << "n=" << n << " j=" << j;
      }
      EXPECT_EQ(std::max_element(got.begin(), got.end()) - got.begin(), std::max_element(x.begin(), x.end()) - x.begin());
    }
  }
  for (float poison : {std::numeric_limits<float>::quiet_NaN(), kInf}) {
    for (size_t at : {size_t(0), size_t(5), size_t(10)}) {
      std::vector<float> x(11, 1.5f);
      x[at] = poison;
      f32_log_softmax(x.size(), x.data());
      for (float v : x) EXPECT_TRUE(std::isnan(v)) << at;
    }
  }
  std::vector<float> all(6, -kInf), all_ref = all;
  f32_log_softmax(all.size(), all.data());
  f32_log_softmax_ref(all_ref.size(), all_ref.data());
  for (size_t j = 0; j < all.size(); ++j) EXPECT_TRUE(std::isnan(all[j]) && std::isnan(all_ref[j]));
}

}  // namespace
}  // namespace aw::kernels
