// Tests for src/kernels/activation.h: the scalar references against values
// computed independently (Python's math.erfc / math.exp in double), against
// the textbook formulas (std::erf, std::tanh) and against torch; then the
// xsimd kernels against the references at lengths around the vector width
// (W = 4 or 8), at unaligned starts, with a sentinel guard after the data,
// over dense sweeps of [-20, 20], at large |x| (no NaN may appear), at the
// special values (+-0, +-inf, NaN, FLT_MAX, subnormals).
// relu does no rounding, so SIMD and reference agree bitwise.
#include "kernels/activation.h"

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

using namespace test;

constexpr double kSqrt2_Pi = 0.79788456080286535588;  // sqrt(2 / pi)

const size_t kSizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 64, 65, 127, 129, 768};

// ---------------------------------------------------------------------------
// GELU tolerance.
//
// Both GELUs are badly conditioned for negative x: the output is tiny while
// the input is not, so rounding x (or x / sqrt 2, or x^3) by eps/2 moves the
// output by eps/2 * s(x) relative, where s is the relative sensitivity
//   s(x) = 1 + |x d/dx ln(f(x) / x)|
//   gelu:       f = x Phi(x),      s = 1 + |x| phi(x) / Phi(x)            (~ x^2 for x << 0, -> 1 for x >> 0)
//   gelu_tanh:  f = x sigma(2u),   s = 1 + |2 x u'(x)| (1 - sigma(2u))   (~ 0.2 x^4 for x << 0)
// Any float evaluation has to pay that; the double reference does not. So
//   |simd - ref| <= kAtol + kGeluRtol * s(x) * |ref|
// - kGeluRtol = 6 eps: xsimd's erfc / exp are within a few ulp, and the
//   kernel's own roundings (x / sqrt 2, the products, 1 + e, the divide) are
//   each within s(x) eps / 2. Measured worst |simd - ref| / tol: 0.29 (gelu),
//   0.41 (gelu_tanh), on both arches. A kernel evaluating the textbook
//   1 + erf(..) in float fails this by ~4e4 near x = -5.5.
// - kAtol = 1e-37: xsimd::exp returns exactly 0 below e^-88.4 (about 4e-39)
//   where the reference still returns x e^-88.4 ~ 3e-38 for x ~ -8.3 (tanh
//   form); outputs below 1e-37 in magnitude count as zero.
constexpr double kGeluRtol = 6.0 * FLT_EPSILON;
constexpr double kAtol = 1e-37;

double gelu_sensitivity(double x) {
  if (x < -37.0) return 2.0 + x * x;  // Phi underflows; Mills ratio: phi / Phi < |x| + 1 / |x|
  const double phi = std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
  const double Phi = 0.5 * std::erfc(-x / std::sqrt(2.0));
  return 1.0 + std::fabs(x) * phi / Phi;
}

double gelu_tanh_sensitivity(double x) {
  const double u = kSqrt2_Pi * (x + 0.044715 * x * x * x);
  const double du = kSqrt2_Pi * (1.0 + 3.0 * 0.044715 * x * x);
  return 1.0 + std::fabs(2.0 * x * du) / (1.0 + std::exp(2.0 * u));  // exp -> inf gives 1
}

struct Worst {
  double abs = 0.0;    // max |simd - ref|
  double ratio = 0.0;  // max |simd - ref| / tolerance
  double at = 0.0;     // the x of the max ratio
};

void report(const char* what, const Worst& w) {
  std::printf("[  worst   ] %s: max |simd-ref| = %.3g, max |simd-ref|/tol = %.3g (at x = %g)\n", what, w.abs,
              w.ratio, w.at);
}

using Kernel = void (*)(size_t, float*);
using Sensitivity = double (*)(double);

// Runs kernel and reference on x (n elements at offset `off` in a buffer
// followed by a sentinel guard) and compares with the GELU tolerance (SiLU
// passes its own atol). NaN matches NaN only. Lists the first mismatches
// with indices.
void check_gelu(Kernel simd, Kernel ref, Sensitivity sens, const std::vector<float>& x, size_t off,
                Worst* worst, double atol = kAtol) {
  const size_t n = x.size();
  std::vector<float> got(off + n + kGuard, kSentinel);
  std::copy(x.begin(), x.end(), got.begin() + off);
  std::vector<float> want(got);
  simd(n, got.data() + off);
  ref(n, want.data() + off);
  size_t bad = 0;
  std::ostringstream msg;
  for (size_t j = 0; j < n; ++j) {
    const float g = got[off + j], w = want[off + j];
    bool ok;
    double err = 0.0, tol = 0.0;
    if (std::isnan(g) || std::isnan(w)) {
      ok = std::isnan(g) && std::isnan(w);
    } else if (g == w) {
      ok = true;  // also covers +-inf, where err and tol would be NaN
    } else {
      tol = atol + kGeluRtol * sens(x[j]) * std::fabs(double(w));
      err = std::fabs(double(g) - double(w));
      ok = err <= tol;
      if (worst) {
        worst->abs = std::max(worst->abs, err);
        if (err / tol > worst->ratio) {
          worst->ratio = err / tol;
          worst->at = x[j];
        }
      }
    }
    if (!ok && bad++ < 8) {
      msg << "\n  [" << j << "]: x=" << x[j] << " simd=" << g << " ref=" << w << " |diff|=" << err
          << " tol=" << tol;
    }
  }
  if (bad) ADD_FAILURE() << bad << " of " << n << " elements differ (n=" << n << ", offset " << off << ")" << msg.str();
  for (size_t k = 0; k < kGuard; ++k) {
    EXPECT_EQ(std::memcmp(&got[off + n + k], &kSentinel, sizeof(float)), 0) << "guard cell " << k << " written";
  }
}

// x in [lo, hi) with step 2^-10 (exact floats).
std::vector<float> sweep(float lo, float hi) {
  std::vector<float> v;
  for (float x = lo; x < hi; x += 1.0f / 1024.0f) v.push_back(x);
  return v;
}

// ---------------------------------------------------------------------------
// References against independently computed values, textbook formulas, torch.

// x, gelu(x), gelu_tanh(x), from Python's math.erfc / math.exp in double:
//   0.5 * x * math.erfc(-x / math.sqrt(2)),  x / (1 + math.exp(-2 * u)).
struct GeluValue {
  float x;
  double gelu, gelu_tanh;
};
const GeluValue kGeluValues[] = {
    {-30.0f, -1.4720141781446293e-196, -0.0},
    {-13.0f, -7.952313719414897e-38, -1.0511517767632373e-76},
    {-10.0f, -7.619853024160593e-23, -1.2040923482098023e-37},
    {-8.0f, -4.9767684594174555e-15, -3.107782937501113e-21},
    {-5.0f, -1.4332578593959731e-06, -2.2917961966295044e-07},
    {-3.0f, -0.004049694094890287, -0.003637392081773019},
    {-2.0f, -0.04550026389635844, -0.045402305912224966},
    {-1.0f, -0.15865525393145707, -0.15880800939172326},
    {-0.5f, -0.15426876936299344, -0.15428599017485609},
    {-0.0009765625f, -0.00048790078905392527, -0.0004879007890542246},
    {0.0f, 0.0, 0.0},
    {0.0009765625f, 0.0004886617109460747, 0.0004886617109457755},
    {0.5f, 0.34573123063700656, 0.34571400982514394},
    {1.0f, 0.8413447460685429, 0.8411919906082768},
    {2.0f, 1.9544997361036416, 1.9545976940877752},
    {3.0f, 2.99595030590511, 2.9963626079182273},
    {5.0f, 4.99999856674214, 4.999999770820381},
    {10.0f, 10.0, 10.0},
};

// The references round a double result once: within half an ulp (1e-45 lets
// values below the float range become 0).
double half_ulp(double v) { return 0.5 * FLT_EPSILON * std::fabs(v) * (1.0 + 1e-9) + 1e-45; }

TEST(GeluRef, IndependentValues) {
  for (const GeluValue& v : kGeluValues) {
    float y = v.x, t = v.x;
    f32_gelu_ref(1, &y);
    f32_gelu_tanh_ref(1, &t);
    EXPECT_NEAR(y, v.gelu, half_ulp(v.gelu)) << "gelu x=" << v.x;
    EXPECT_NEAR(t, v.gelu_tanh, half_ulp(v.gelu_tanh)) << "gelu_tanh x=" << v.x;
  }
}

TEST(GeluRef, MatchesTextbookFormulas) {
  // On [-4, 6] the textbook forms in double lose at most ~1e-11 relative to
  // cancellation (1 + erf >= 6e-5 there), far below float's half ulp.
  const std::vector<float> xs = sweep(-4.0f, 6.0f);
  std::vector<float> y(xs), t(xs);
  f32_gelu_ref(y.size(), y.data());
  f32_gelu_tanh_ref(t.size(), t.data());
  for (size_t j = 0; j < xs.size(); ++j) {
    const double x = xs[j];
    const double g = 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    const double gt = 0.5 * x * (1.0 + std::tanh(kSqrt2_Pi * (x + 0.044715 * x * x * x)));
    ASSERT_NEAR(y[j], g, half_ulp(g) + 1e-10 * std::fabs(g)) << "gelu x=" << x;
    ASSERT_NEAR(t[j], gt, half_ulp(gt) + 1e-10 * std::fabs(gt)) << "gelu_tanh x=" << x;
  }
}

TEST(GeluRef, SpecialValues) {
  float x[] = {kNaN, kInf, -kInf, 0.0f, -0.0f};
  float t[5];
  std::copy(x, x + 5, t);
  f32_gelu_ref(5, x);
  f32_gelu_tanh_ref(5, t);
  for (const float* v : {static_cast<const float*>(x), static_cast<const float*>(t)}) {
    EXPECT_TRUE(std::isnan(v[0]));
    EXPECT_EQ(v[1], kInf);
    EXPECT_TRUE(std::isnan(v[2]));  // -inf * 0, as torch's formula
    EXPECT_EQ(v[3], 0.0f);
    EXPECT_EQ(v[4], 0.0f);
  }
}

// torch 1.13.1 CPU float32: F.gelu(x) and F.gelu(x, approximate='tanh').
// torch evaluates 1 + erf(..) / 1 + tanh(..) in float, so for x < 0 it is off
// by up to ~|x| eps / 2 in absolute terms (30% relative at x = -5 for tanh).
const float kTorchX[] = {-30, -10, -5, -3, -1, -0.5f, 0, 0.5f, 1, 2, 3, 10, 30};
const double kTorchGelu[] = {0.0, 0.0, -1.4901161193847656e-06, -0.004049867391586304, -0.1586552858352661,
                             -0.1542687863111496, 0.0, 0.3457311987876892, 0.8413447141647339,
                             1.9544999599456787, 2.995950222015381, 10.0, 30.0};
const double kTorchGeluTanh[] = {-0.0, -0.0, -2.980232238769531e-07, -0.0036374330520629883,
                                 -0.15880799293518066, -0.1542859971523285, 0.0, 0.3457140028476715,
                                 0.8411920070648193, 1.9545977115631104, 2.9963626861572266, 10.0, 30.0};

TEST(GeluSimd, MatchesTorch) {
  // 1e-6 relative, plus torch's own cancellation error |x| eps for x < 0.
  const size_t n = sizeof kTorchX / sizeof kTorchX[0];
  std::vector<float> y(kTorchX, kTorchX + n), t(y), yr(y), tr(y);
  f32_gelu(n, y.data());
  f32_gelu_tanh(n, t.data());
  f32_gelu_ref(n, yr.data());
  f32_gelu_tanh_ref(n, tr.data());
  for (size_t j = 0; j < n; ++j) {
    const double tol_g = 1e-6 * std::fabs(kTorchGelu[j]) + std::fabs(kTorchX[j]) * FLT_EPSILON;
    const double tol_t = 1e-6 * std::fabs(kTorchGeluTanh[j]) + std::fabs(kTorchX[j]) * FLT_EPSILON;
    EXPECT_NEAR(y[j], kTorchGelu[j], tol_g) << "simd gelu x=" << kTorchX[j];
    EXPECT_NEAR(yr[j], kTorchGelu[j], tol_g) << "ref gelu x=" << kTorchX[j];
    EXPECT_NEAR(t[j], kTorchGeluTanh[j], tol_t) << "simd gelu_tanh x=" << kTorchX[j];
    EXPECT_NEAR(tr[j], kTorchGeluTanh[j], tol_t) << "ref gelu_tanh x=" << kTorchX[j];
    if (kTorchX[j] >= 0) {
      EXPECT_NEAR(y[j], kTorchGelu[j], 1e-6 * std::fabs(kTorchGelu[j])) << "x=" << kTorchX[j];
      EXPECT_NEAR(t[j], kTorchGeluTanh[j], 1e-6 * std::fabs(kTorchGeluTanh[j])) << "x=" << kTorchX[j];
    }
  }
}

// ---------------------------------------------------------------------------
// GELU SIMD against reference.

struct GeluKind {
  const char* name;
  Kernel simd, ref;
  Sensitivity sens;
};
const GeluKind kGelus[] = {{"gelu", f32_gelu, f32_gelu_ref, gelu_sensitivity},
                           {"gelu_tanh", f32_gelu_tanh, f32_gelu_tanh_ref, gelu_tanh_sensitivity}};

TEST(GeluSimd, RandomAtAllSizes) {
  std::mt19937 rng(31);
  for (const GeluKind& k : kGelus) {
    Worst worst;
    for (size_t n : kSizes) {
      for (size_t off : {0, 1, 3}) {
        check_gelu(k.simd, k.ref, k.sens, random_vec(rng, n, -6.0f, 6.0f), off, &worst);
        check_gelu(k.simd, k.ref, k.sens, random_vec(rng, n, -30.0f, 30.0f), off, &worst);
      }
    }
    report((std::string(k.name) + " random, all sizes").c_str(), worst);
  }
}

TEST(GeluSimd, DenseSweep) {
  // Every multiple of 2^-10 in [-20, 20): in one call, and cut into pieces of
  // awkward lengths so that many values go through the padded tail.
  const std::vector<float> xs = sweep(-20.0f, 20.0f);
  for (const GeluKind& k : kGelus) {
    Worst worst;
    check_gelu(k.simd, k.ref, k.sens, xs, 0, &worst);
    size_t pos = 0, piece = 0;
    while (pos < xs.size()) {
      const size_t len = std::min(kSizes[piece++ % (sizeof kSizes / sizeof kSizes[0])], xs.size() - pos);
      check_gelu(k.simd, k.ref, k.sens, std::vector<float>(xs.begin() + pos, xs.begin() + pos + len), 0, &worst);
      pos += len;
    }
    report((std::string(k.name) + " sweep [-20, 20]").c_str(), worst);
  }
}

TEST(GeluSimd, SpecialValues) {
  std::vector<float> x(std::begin(kSpecials), std::end(kSpecials));
  for (const GeluKind& k : kGelus) {
    SCOPED_TRACE(k.name);
    Worst worst;
    // In every position modulo W (rotations), so each goes through vector and tail code.
    for (size_t r = 0; r < 9; ++r) {
      std::vector<float> v(x);
      std::rotate(v.begin(), v.begin() + r, v.end());
      check_gelu(k.simd, k.ref, k.sens, v, 0, &worst);
    }
    std::vector<float> y(x);
    k.simd(y.size(), y.data());
    for (size_t j = 0; j < x.size(); ++j) {
      const float xv = x[j], yv = y[j];
      if (std::isnan(xv) || xv == -kInf) {
        EXPECT_TRUE(std::isnan(yv)) << "x=" << xv;  // NaN propagates; -inf * 0 as torch
      } else {
        ASSERT_FALSE(std::isnan(yv)) << "x=" << xv;
        if (xv >= 10.0f) { EXPECT_EQ(yv, xv) << "x=" << xv; }  // 0.5 x (1 + 1) exactly
        if (xv <= -10.0f) { EXPECT_TRUE(yv <= 0.0f && yv >= -1e-20f) << "x=" << xv << " y=" << yv; }
      }
    }
    report((std::string(k.name) + " special values").c_str(), worst);
  }
}

TEST(GeluSimd, LargeMagnitudesNeverNaN) {
  std::mt19937 rng(32);
  for (const GeluKind& k : kGelus) {
    for (float scale : {10.0f, 30.0f, 1e3f, 1e10f, 1e30f}) {
      for (size_t n : kSizes) {
        std::vector<float> x = random_vec(rng, n, -scale, scale);
        for (size_t j = 0; j < n; j += 3) x[j] = (j % 2 ? -1.0f : 1.0f) * scale;
        std::vector<float> y(x);
        k.simd(n, y.data());
        for (size_t j = 0; j < n; ++j) {
          ASSERT_FALSE(std::isnan(y[j])) << k.name << " n=" << n << " x=" << x[j];
          if (x[j] >= 10.0f) { ASSERT_EQ(y[j], x[j]) << k.name << " x=" << x[j]; }
          if (x[j] <= -10.0f) { ASSERT_TRUE(y[j] <= 0.0f && y[j] >= -1e-20f) << k.name << " x=" << x[j]; }
        }
        check_gelu(k.simd, k.ref, k.sens, x, 0, nullptr);
      }
    }
  }
}

TEST(GeluSimd, EmptyIsANoOp) {
  float x[1] = {kSentinel};
  for (const GeluKind& k : kGelus) {
    k.simd(0, x);
    k.ref(0, x);
  }
  EXPECT_EQ(x[0], kSentinel);
}

// ---------------------------------------------------------------------------
// relu: bitwise against the reference.



TEST(ReluRef, HandComputed) {
  float x[] = {-2.0f, -0.0f, 0.0f, 3.5f, kNaN, kInf, -kInf, -FLT_MIN, 1e-40f};
  f32_relu_ref(9, x);
  EXPECT_EQ(x[0], 0.0f);
  EXPECT_EQ(x[1], 0.0f);  // -0 or +0 both accepted (torch keeps -0)
  EXPECT_EQ(x[2], 0.0f);
  EXPECT_EQ(x[3], 3.5f);
  EXPECT_TRUE(std::isnan(x[4]));  // torch.relu(nan) = nan
  EXPECT_EQ(x[5], kInf);
  EXPECT_EQ(x[6], 0.0f);
  EXPECT_EQ(x[7], 0.0f);
  EXPECT_EQ(x[8], 1e-40f);
}

TEST(ReluSimd, BitwiseEqualToReference) {
  std::mt19937 rng(33);
  for (size_t n : awkward_lengths()) {
    for (size_t off : {0, 1}) {
      const std::vector<float> x = mixed(rng, n);
      std::vector<float> got(off + n + kGuard, kSentinel);
      std::copy(x.begin(), x.end(), got.begin() + off);
      std::vector<float> want(got);
      f32_relu(n, got.data() + off);
      f32_relu_ref(n, want.data() + off);
      ASSERT_TRUE(same_bits(n, got.data() + off, want.data() + off)) << "n=" << n << " off=" << off;
      ASSERT_TRUE(guard_intact(got.data() + off + n)) << "n=" << n;
      for (size_t j = 0; j < n; ++j) {
        if (std::isnan(x[j])) { ASSERT_TRUE(std::isnan(got[off + j])) << "NaN lost at " << j << ", n=" << n; }
      }
    }
  }
}

}  // namespace
}  // namespace aw::kernels

// ---------------------------------------------------------------------------
// SiLU: x / (1 + exp(-x)), torch's formula. No cancellation and no
// amplification of the input's rounding (x is exact, exp(-x) of an exact
// argument), so the kernel keeps a relative accuracy of a few ulp
// everywhere: |simd - ref| <= kSiluAtol + kSiluRtol |ref| with kSiluRtol =
// 1e-6 (what we promise against torch; ~8 FLT_EPSILON). kSiluAtol = 3e-37
// covers x below -88.72, where exp(-x) overflows float and the kernel (as
// torch's float formula) returns -0 while the double reference still
// returns x e^x, at most 88.73 / FLT_MAX = 2.6e-37 in magnitude there.

namespace aw::kernels {
namespace {

constexpr double kSiluRtol = 1e-6;
constexpr double kSiluAtol = 3e-37;

// check_gelu with the SiLU tolerance: kSiluAtol + kSiluRtol |ref|.
double silu_rtol(double) { return kSiluRtol / kGeluRtol; }
void check_silu(const std::vector<float>& x, size_t off, Worst* worst) {
  check_gelu(f32_silu, f32_silu_ref, silu_rtol, x, off, worst, kSiluAtol);
}

// torch 1.13.1 CPU float32: F.silu(x), and x · sigmoid(x) in float64.
const float kSiluX[] = {-100.0f, -88.7f, -30, -10, -5, -3, -1, -0.5f, 0, 0.5f, 1, 2, 3, 10, 30, 88.7f, 100};
const double kTorchSilu[] = {-0.0, -2.6668855444309843e-37, -2.807286954981114e-12, -0.0004539787187241018,
                             -0.033464252948760986, -0.14227761328220367, -0.2689414322376251,
                             -0.1887703388929367, 0.0, 0.3112296760082245, 0.7310585975646973,
                             1.7615940570831299, 2.857722520828247, 9.99954605102539, 30.0, 88.69999694824219,
                             100.0};
const double kExactSilu[] = {-3.720075976020836e-42, -2.6668855941487023e-37, -2.8072868906517896e-12,
                             -0.00045397868702434395, -0.03346425462142428, -0.14227761953270035,
                             -0.2689414213699951, -0.1887703343990727, 0.0, 0.3112296656009273,
                             0.7310585786300049, 1.7615941559557646, 2.8577223804673, 9.999546021312977,
                             29.999999999997197, 88.69999694824219, 100.0};

TEST(SiluRef, IndependentValuesAndTorch) {
  const size_t n = sizeof kSiluX / sizeof kSiluX[0];
  std::vector<float> y(kSiluX, kSiluX + n), s(y);
  f32_silu_ref(n, y.data());
  f32_silu(n, s.data());
  for (size_t j = 0; j < n; ++j) {
    EXPECT_NEAR(y[j], kExactSilu[j], half_ulp(kExactSilu[j])) << "ref x=" << kSiluX[j];
    // Kernel and reference against torch: 1e-6 relative (and -0 where torch's exp overflows).
    EXPECT_NEAR(s[j], kTorchSilu[j], 1e-6 * std::fabs(kTorchSilu[j])) << "simd x=" << kSiluX[j];
    EXPECT_NEAR(y[j], kTorchSilu[j], 1e-6 * std::fabs(kTorchSilu[j]) + kSiluAtol) << "ref x=" << kSiluX[j];
  }
  EXPECT_TRUE(std::signbit(s[0]) && s[0] == 0.0f) << "silu(-100) = -0 in float, as torch";
  // Between xsimd::exp's overflow bound (88.376) and float's (88.72): torch
  // (exp finite there) gives x e^x ~ -3e-37, and so must the kernel.
  std::vector<float> edge = {-88.4f, -88.5f, -88.6f, -88.72f, -88.73f, -89.0f};
  std::vector<float> e(edge), er(edge);
  f32_silu(e.size(), e.data());
  f32_silu_ref(er.size(), er.data());
  for (size_t j = 0; j < 4; ++j) {
    EXPECT_LT(e[j], -1e-37f) << "x=" << edge[j];
    EXPECT_NEAR(e[j], er[j], 1e-6 * std::fabs(er[j])) << "x=" << edge[j];
  }
  EXPECT_TRUE(e[4] == 0.0f && e[5] == 0.0f) << "exp(-x) overflows float below -88.7228: -0, as torch";
}

TEST(SiluSimd, SpecialValuesAsTorch) {
  // NaN -> NaN, -inf -> -inf / inf = NaN, +inf -> inf, +-0 -> +-0 (torch's formula).
  std::vector<float> x(std::begin(kSpecials), std::end(kSpecials));
  for (size_t r = 0; r < 9; ++r) {  // every position modulo W: vector and tail code
    std::vector<float> v(x);
    std::rotate(v.begin(), v.begin() + r, v.end());
    std::vector<float> y(v), yr(v);
    f32_silu(y.size(), y.data());
    f32_silu_ref(yr.size(), yr.data());
    for (size_t j = 0; j < v.size(); ++j) {
      const float xv = v[j];
      if (std::isnan(xv) || xv == -kInf) {
        EXPECT_TRUE(std::isnan(y[j]) && std::isnan(yr[j])) << "x=" << xv;
      } else if (xv == kInf) {
        EXPECT_EQ(y[j], kInf);
        EXPECT_EQ(yr[j], kInf);
      } else {
        ASSERT_FALSE(std::isnan(y[j])) << "x=" << xv;
        if (xv == 0.0f) { EXPECT_TRUE(y[j] == 0.0f && std::signbit(y[j]) == std::signbit(xv)) << "x=" << xv; }
        if (xv >= 30.0f) { EXPECT_EQ(y[j], xv) << "x=" << xv; }  // x / (1 + tiny) rounds to x
        if (xv <= -100.0f) { EXPECT_TRUE(y[j] <= 0.0f && y[j] >= -1e-37f) << "x=" << xv << " y=" << y[j]; }
      }
    }
    check_silu(v, 0, nullptr);
  }
}

TEST(SiluSimd, RandomAndSweepAgainstReference) {
  std::mt19937 rng(35);
  Worst worst;
  for (size_t n : awkward_lengths()) {
    for (size_t off : {0, 1, 3}) {
      check_silu(random_vec(rng, n, -6.0f, 6.0f), off, &worst);
      check_silu(random_vec(rng, n, -120.0f, 120.0f), off, &worst);
    }
  }
  const std::vector<float> xs = sweep(-100.0f, 100.0f);
  check_silu(xs, 0, &worst);
  for (float scale : {1e3f, 1e10f, 1e30f}) {
    std::vector<float> x = random_vec(rng, 129, -scale, scale);
    check_silu(x, 1, &worst);
  }
  report("silu random, sweep [-100, 100], large", worst);
}

TEST(SiluSimd, EmptyIsANoOp) {
  float x[1] = {kSentinel};
  f32_silu(0, x);
  f32_silu_ref(0, x);
  EXPECT_EQ(x[0], kSentinel);
}

}  // namespace
}  // namespace aw::kernels

// ---------------------------------------------------------------------------
// quick_gelu (transformers' QuickGELUActivation, CLIP's): x · sigmoid(1.702 x), run as SiLU's code on 1.702 x:
// the same relative accuracy (kSiluRtol) and the same -0 where exp(-1.702 x) overflows float (x below -52.1).

namespace aw::kernels {
namespace {

// torch 1.13.1 CPU float32: x * torch.sigmoid(1.702 * x).
const float kQuickX[] = {-100.0f, -60, -52, -30, -10, -5, -3, -1, -0.5f, 0, 0.5f, 1, 2, 3, 10, 30, 100};
const double kTorchQuick[] = {-0.0, -0.0, -1.901977697265234e-37, -2.0046768593352725e-21, -4.0579593019174354e-07,
                              -0.0010070160496979952, -0.018071310594677925, -0.15420423448085785,
                              -0.14961156249046326, 0.0, 0.35038843750953674, 0.8457958102226257, 1.935658574104309,
                              2.981928825378418, 10.0, 30.0, 100.0};

void check_quick(const std::vector<float>& x, size_t off, Worst* worst) {
  check_gelu(f32_quick_gelu, f32_quick_gelu_ref, silu_rtol, x, off, worst, kSiluAtol);
}

TEST(QuickGelu, TorchValues) {
  const size_t n = sizeof kQuickX / sizeof kQuickX[0];
  std::vector<float> y(kQuickX, kQuickX + n), s(y);
  f32_quick_gelu_ref(n, y.data());
  f32_quick_gelu(n, s.data());
  for (size_t j = 0; j < n; ++j) {
    EXPECT_NEAR(s[j], kTorchQuick[j], 1e-6 * std::fabs(kTorchQuick[j]) + kSiluAtol) << "simd x=" << kQuickX[j];
    EXPECT_NEAR(y[j], kTorchQuick[j], 1e-6 * std::fabs(kTorchQuick[j]) + kSiluAtol) << "ref x=" << kQuickX[j];
  }
  EXPECT_TRUE(std::signbit(s[1]) && s[1] == 0.0f) << "quick_gelu(-60) = -0 in float, as torch";
}

TEST(QuickGelu, SpecialsAndAwkwardSizesAgainstReference) {
  std::vector<float> x(std::begin(kSpecials), std::end(kSpecials));
  for (size_t r = 0; r < 9; ++r) {
    std::vector<float> v(x);
    std::rotate(v.begin(), v.begin() + r, v.end());
    std::vector<float> y(v);
    f32_quick_gelu(y.size(), y.data());
    for (size_t j = 0; j < v.size(); ++j) {
      if (std::isnan(v[j]) || v[j] == -kInf) EXPECT_TRUE(std::isnan(y[j])) << "x=" << v[j];
      if (v[j] == kInf) EXPECT_EQ(y[j], kInf);
    }
    check_quick(v, 0, nullptr);
  }
  std::mt19937 rng(36);
  Worst worst;
  for (size_t n : awkward_lengths())
    for (size_t off : {0, 1, 3}) {
      check_quick(random_vec(rng, n, -6.0f, 6.0f), off, &worst);
      check_quick(random_vec(rng, n, -80.0f, 80.0f), off, &worst);
    }
  check_quick(sweep(-100.0f, 100.0f), 0, &worst);
  report("quick_gelu random, sweep [-100, 100]", worst);
  float e[1] = {kSentinel};
  f32_quick_gelu(0, e);
  EXPECT_EQ(e[0], kSentinel);
}

}  // namespace
}  // namespace aw::kernels
