// Tests for src/kernels/layernorm.h: the scalar reference against hand-computed
// rows and torch values, then the xsimd kernel against the reference at sizes
// around the vector width (W = 4 or 8), several rows with padded strides,
// every gamma / beta null combination, in place, magnitudes from 1e-3 to 1e3
// and a 1e3 offset, constant rows (var = 0 -> beta exactly), several eps, and
// NaN / inf propagation; nothing outside the (rows, n) region is written.
#include "kernels/layernorm.h"

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
using test::random_vec;
using test::span;
using test::untouched;

constexpr size_t kGuard = 8;  // sentinel cells after the last row

// Row lengths: below, equal to, above and multiples of 4 and 8 (and of 2W, the
// unroll of the sums), plus BERT's 768.
const size_t kSizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 64, 65, 127, 129, 768};

// Tolerance for one element, |simd - ref| <= tol, in terms of the reference's
// normalised value t = (x - mean) * rstd (so y = t * g + b):
//   tol = FLT_EPSILON * ( |g| * (2 (1 + |t0| + |t|) + (1 + sqrt(n) / 8) |t|) + 2 |b| )
// - |g| * 2 (1 + |t0| + |t|): absolute errors of the centred value. The kernel
//   carries the mean as x[0] + m in float, so rounding m, x - x[0] and
//   (x - x[0]) - m costs ~eps/2 * |x - x[0]| / std <= eps/2 * (|t0| + |t|),
//   with t0 the normalised x[0], plus ~eps left of the mean after the
//   corrected second pass. Alone (coefficient 1 and nothing else) this term
//   already covers all but 1.5x of what is measured. A kernel that forms the
//   mean as a plain float sum fails it by ~1e5 on the 1e3-offset rows.
// - |g| * (1 + sqrt(n) / 8) |t|: the relative error of rstd, i.e. half that
//   of the float sum of n squares accumulated in 2W lanes (the error grows
//   like sqrt(n) for such data; the worst case n / 2W is never approached),
//   plus the multiplies.
// - 2 |b|: the final add / fma. Summing |t g| and |b| rather than using |ref|
//   keeps the bound meaningful when t g and b cancel.
// Order-1 data at n = 768, |t| ~ |t0| ~ 1: ~10 eps = 1.2e-6. Measured worst
// |simd - ref| / tol: 0.40 (avx2), 0.45 (sse4.1); printed by each test.
double tol_elem(size_t n, double t0, double t, double g, double b) {
  const double at = std::fabs(t), ag = std::fabs(g);
  return FLT_EPSILON *
         (ag * (2.0 * (1.0 + std::fabs(t0) + at) + (1.0 + std::sqrt(double(n)) / 8.0) * at) +
          2.0 * std::fabs(b));
}

struct Worst {
  double abs = 0.0;    // max |simd - ref|
  double ratio = 0.0;  // max |simd - ref| / tolerance
};

void report(const char* what, const Worst& w) {
  std::printf("[  worst   ] %s: max |simd-ref| = %.3g, max |simd-ref|/tol = %.3g\n", what, w.abs, w.ratio);
}

struct Case {
  size_t rows, n, ldx, ldy;
  bool gamma, beta, in_place;  // in place: y = x, ldy = ldx
  float eps;
};

std::string describe(const Case& c) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "rows=%zu n=%zu ldx=%zu ldy=%zu gamma=%d beta=%d in_place=%d eps=%g",
                c.rows, c.n, c.ldx, c.ldy, int(c.gamma), int(c.beta), int(c.in_place), double(c.eps));
  return buf;
}

// Runs the reference (out of place) and the kernel (in place or not) on x,
// an input of span(rows, n, ldx) elements, and compares element by element.
// NaN matches NaN only. Lists the first mismatches with their indices.
void check(const Case& c0, const std::vector<float>& x, const std::vector<float>& gamma,
           const std::vector<float>& beta, Worst* worst) {
  Case c = c0;
  if (c.in_place) c.ldy = c.ldx;
  SCOPED_TRACE(describe(c));
  const float* g = c.gamma ? gamma.data() : nullptr;
  const float* b = c.beta ? beta.data() : nullptr;

  // Reference, and its normalised values t for the tolerance.
  std::vector<float> want(span(c.rows, c.n, c.ldy) + kGuard, kSentinel);
  f32_layernorm_ref(c.rows, c.n, want.data(), c.ldy, x.data(), c.ldx, g, b, c.eps);
  std::vector<float> t(span(c.rows, c.n, c.ldy) + kGuard, kSentinel);
  f32_layernorm_ref(c.rows, c.n, t.data(), c.ldy, x.data(), c.ldx, nullptr, nullptr, c.eps);

  std::vector<float> got;
  if (c.in_place) {
    got.assign(span(c.rows, c.n, c.ldx) + kGuard, kSentinel);
    // Copy the rows only: the padding keeps the sentinel, so writes there show.
    for (size_t i = 0; i < c.rows; ++i)
      std::copy(x.begin() + i * c.ldx, x.begin() + i * c.ldx + c.n, got.begin() + i * c.ldx);
    f32_layernorm(c.rows, c.n, got.data(), c.ldx, got.data(), c.ldx, g, b, c.eps);
  } else {
    got.assign(span(c.rows, c.n, c.ldy) + kGuard, kSentinel);
    f32_layernorm(c.rows, c.n, got.data(), c.ldy, x.data(), c.ldx, g, b, c.eps);
  }

  size_t bad = 0;
  std::ostringstream msg;
  for (size_t i = 0; i < c.rows; ++i) {
    const double t0 = t[i * c.ldy];
    for (size_t j = 0; j < c.n; ++j) {
      const float gv = got[i * c.ldy + j], wv = want[i * c.ldy + j];
      bool ok;
      double err = 0.0, tol = 0.0;
      if (std::isnan(gv) || std::isnan(wv)) {
        ok = std::isnan(gv) && std::isnan(wv);
      } else {
        tol = tol_elem(c.n, t0, t[i * c.ldy + j], g ? g[j] : 1.0, b ? b[j] : 0.0);
        err = std::fabs(double(gv) - double(wv));
        ok = err <= tol;
        if (worst) {
          worst->abs = std::max(worst->abs, err);
          worst->ratio = std::max(worst->ratio, err / tol);
        }
      }
      if (!ok && bad++ < 8) {
        msg << "\n  (" << i << ", " << j << "): x=" << x[i * c.ldx + j] << " simd=" << gv << " ref=" << wv
            << " |diff|=" << err << " tol=" << tol;
      }
    }
  }
  if (bad) ADD_FAILURE() << bad << " of " << c.rows * c.n << " elements differ" << msg.str();
  EXPECT_TRUE(untouched(got, c.rows, c.n, c.ldy));
  EXPECT_TRUE(untouched(want, c.rows, c.n, c.ldy));
}

// Random rows for a case: uniform in [lo, hi], padding filled with values
// that would wreck the statistics if read.
std::vector<float> make_x(std::mt19937& rng, const Case& c, float lo, float hi) {
  return test::random_rows(rng, c.rows, c.n, c.ldx, lo, hi);
}

// ---------------------------------------------------------------------------
// Reference against hand-computed values.

TEST(LayerNormRef, HandComputed) {
  // [1, 2, 3, 4]: mean 2.5, biased var 1.25.
  const float x[] = {1, 2, 3, 4};
  {
    // eps = 0: (x - 2.5) / sqrt(1.25) = +-3/sqrt(5), +-1/sqrt(5).
    float y[4];
    f32_layernorm_ref(1, 4, y, 4, x, 4, nullptr, nullptr, 0.0f);
    const double a = 3.0 / std::sqrt(5.0), b = 1.0 / std::sqrt(5.0);
    EXPECT_FLOAT_EQ(y[0], -a);
    EXPECT_FLOAT_EQ(y[1], -b);
    EXPECT_FLOAT_EQ(y[2], b);
    EXPECT_FLOAT_EQ(y[3], a);
  }
  {
    // eps = 1: rstd = 1 / sqrt(2.25) = 2/3 -> [-1, -1/3, 1/3, 1]; then
    // gamma = [1, 2, 0.5, -1], beta = [0, 1, -1, 0.5].
    const float gamma[] = {1, 2, 0.5f, -1}, beta[] = {0, 1, -1, 0.5f};
    float y[4];
    f32_layernorm_ref(1, 4, y, 4, x, 4, gamma, beta, 1.0f);
    EXPECT_FLOAT_EQ(y[0], -1.0f);
    EXPECT_FLOAT_EQ(y[1], 1.0f - 2.0f / 3.0f);
    EXPECT_FLOAT_EQ(y[2], -1.0f + 0.5f / 3.0f);
    EXPECT_FLOAT_EQ(y[3], -0.5f);
    // gamma only, beta only.
    f32_layernorm_ref(1, 4, y, 4, x, 4, gamma, nullptr, 1.0f);
    EXPECT_FLOAT_EQ(y[1], -2.0f / 3.0f);
    EXPECT_FLOAT_EQ(y[3], -1.0f);
    f32_layernorm_ref(1, 4, y, 4, x, 4, nullptr, beta, 1.0f);
    EXPECT_FLOAT_EQ(y[1], 1.0f - 1.0f / 3.0f);
    EXPECT_FLOAT_EQ(y[3], 1.5f);
  }
  {
    // Offset by 1000 (exact in float): same output as [1, 2, 3, 4].
    const float xo[] = {1001, 1002, 1003, 1004};
    float y[4];
    f32_layernorm_ref(1, 4, y, 4, xo, 4, nullptr, nullptr, 0.0f);
    EXPECT_FLOAT_EQ(y[0], -3.0 / std::sqrt(5.0));
    EXPECT_FLOAT_EQ(y[3], 3.0 / std::sqrt(5.0));
  }
  {
    // n = 1 and constant rows: var = 0, output = beta (or 0) exactly.
    const float one[] = {7.5f}, c[] = {3, 3, 3}, beta[] = {0.25f, -2, 0};
    float y[3];
    f32_layernorm_ref(1, 1, y, 1, one, 1, nullptr, beta, 1e-5f);
    EXPECT_EQ(y[0], 0.25f);
    f32_layernorm_ref(1, 3, y, 3, c, 3, beta, beta, 1e-5f);
    EXPECT_EQ(y[0], 0.25f);
    EXPECT_EQ(y[1], -2.0f);
    EXPECT_EQ(y[2], 0.0f);
  }
  {
    // Two rows with strides: x row 1 starts at 3, y row 1 at 4; padding untouched.
    const float xs[] = {0, 2, 999, 10, 30};
    float y[6] = {kSentinel, kSentinel, kSentinel, kSentinel, kSentinel, kSentinel};
    f32_layernorm_ref(2, 2, y, 4, xs, 3, nullptr, nullptr, 0.0f);
    EXPECT_FLOAT_EQ(y[0], -1.0f);
    EXPECT_FLOAT_EQ(y[1], 1.0f);
    EXPECT_EQ(y[2], kSentinel);
    EXPECT_EQ(y[3], kSentinel);
    EXPECT_FLOAT_EQ(y[4], -1.0f);
    EXPECT_FLOAT_EQ(y[5], 1.0f);
  }
}

// torch 1.13.1, F.layer_norm(x, (7,), gamma, beta, eps=1e-5) on CPU, and the
// same in float64 (the exact answer for these float inputs). Row 0 is order-1
// data; row 1 is 1000 + cos(3j), where torch's float kernel is off by ~4e-5
// (it computes x * rstd - mean * rstd) and ours must not be.
struct TorchCase {
  float x[2][7], gamma[7], beta[7];
  double torch_f32[2][7], exact[2][7];
};
const TorchCase kTorch = {
    {{0.30000001192092896f, 1.98294198513031f, 2.1185948848724365f, 0.5822400450706482f,
      -1.2136050462722778f, -1.617848515510559f, -0.2588309943675995f},
     {1001.0f, 999.010009765625f, 1000.9601440429688f, 999.0888671875f, 1000.8438720703125f,
      999.2402954101562f, 1000.6603393554688f}},
    {1.0f, 1.100000023841858f, 1.2000000476837158f, 1.2999999523162842f, 1.399999976158142f, 1.5f,
     1.600000023841858f},
    {-0.20000000298023224f, -0.15000000596046448f, -0.10000000149011612f, -0.05000000074505806f, 0.0f,
     0.05000000074505806f, 0.10000000149011612f},
    {{-0.1779187023639679, 1.259924054145813, 1.5599411725997925, 0.25333625078201294, -1.5551749467849731,
      -2.0701181888580322, -0.5339183211326599},
     {0.8110770583152771, -1.5381426811218262, 1.0586628913879395, -1.573436975479126, 1.1658403873443604,
      -1.4483634233474731, 1.096970796585083}},
    {{-0.17791867712931386, 1.2599241411942246, 1.5599411621987833, 0.2533362810275382, -1.555174983293134,
      -2.0701181785991145, -0.5339183575948857},
     {0.8111127345965903, -1.538102666545711, 1.0587057817773582, -1.5733896847376303, 1.165890461012838,
      -1.448308868711128, 1.0970281067652174}},
};

TEST(LayerNormRef, MatchesTorch) {
  float y[14];
  f32_layernorm_ref(2, 7, y, 7, &kTorch.x[0][0], 7, kTorch.gamma, kTorch.beta, 1e-5f);
  for (size_t i = 0; i < 2; ++i) {
    for (size_t j = 0; j < 7; ++j) {
      // The reference rounds a double result once: within half an ulp.
      EXPECT_NEAR(y[i * 7 + j], kTorch.exact[i][j], 0.5 * FLT_EPSILON * std::fabs(kTorch.exact[i][j]))
          << "row " << i << " j " << j;
      if (i == 0) { EXPECT_NEAR(y[j], kTorch.torch_f32[0][j], 1e-6 * std::fabs(kTorch.torch_f32[0][j])) << j; }
    }
  }
}

TEST(LayerNormSimd, MatchesTorch) {
  float y[14];
  f32_layernorm(2, 7, y, 7, &kTorch.x[0][0], 7, kTorch.gamma, kTorch.beta, 1e-5f);
  for (size_t j = 0; j < 7; ++j) {
    // Order-1 row: torch to 1e-6 relative. Offset row: the exact values to a
    // few ulp (torch itself is ~4e-5 off there).
    EXPECT_NEAR(y[j], kTorch.torch_f32[0][j], 1e-6 * std::fabs(kTorch.torch_f32[0][j])) << j;
    EXPECT_NEAR(y[7 + j], kTorch.exact[1][j], 4 * FLT_EPSILON * std::fabs(kTorch.exact[1][j])) << j;
  }
}

// ---------------------------------------------------------------------------
// SIMD against reference.

TEST(LayerNormSimd, RandomRowsAllAffineCombinations) {
  std::mt19937 rng(21);
  Worst worst;
  for (size_t n : kSizes) {
    for (int mode = 0; mode < 4; ++mode) {
      const Case c{3, n, n, n, bool(mode & 1), bool(mode & 2), false, 1e-5f};
      const std::vector<float> gamma = random_vec(rng, n, 0.5f, 1.5f);
      const std::vector<float> beta = random_vec(rng, n, -0.5f, 0.5f);
      check(c, make_x(rng, c, -2.0f, 2.0f), gamma, beta, &worst);
      // Normal-ish activations with a small bias, as a residual stream has.
      check(c, make_x(rng, c, -3.0f, 4.0f), gamma, beta, &worst);
    }
  }
  report("layernorm uniform order-1 rows", worst);
}

TEST(LayerNormSimd, StridedRows) {
  std::mt19937 rng(22);
  Worst worst;
  for (size_t n : kSizes) {
    for (auto [ldx, ldy] : {std::pair<size_t, size_t>{n + 3, n + 5}, {n + 1, n}, {n, n + 7}, {2 * n + 1, n + 2}}) {
      const Case c{4, n, ldx, ldy, true, true, false, 1e-5f};
      check(c, make_x(rng, c, -1.0f, 1.0f), random_vec(rng, n, -2.0f, 2.0f), random_vec(rng, n, -1.0f, 1.0f),
            &worst);
    }
  }
  report("layernorm strided rows", worst);
}

TEST(LayerNormSimd, InPlace) {
  std::mt19937 rng(23);
  Worst worst;
  for (size_t n : kSizes) {
    for (size_t ld : {n, n + 3}) {
      for (int mode = 0; mode < 4; ++mode) {
        const Case c{3, n, ld, ld, bool(mode & 1), bool(mode & 2), true, 1e-5f};
        check(c, make_x(rng, c, -1.5f, 1.5f), random_vec(rng, n, -1.0f, 1.0f), random_vec(rng, n, -1.0f, 1.0f),
              &worst);
      }
    }
  }
  report("layernorm in place", worst);
}

TEST(LayerNormSimd, Magnitudes) {
  std::mt19937 rng(24);
  Worst wide, offset, tiny;
  for (size_t n : kSizes) {
    const Case c{3, n, n + 1, n, true, true, false, 1e-5f};
    const std::vector<float> gamma = random_vec(rng, n, 0.5f, 1.5f);
    const std::vector<float> beta = random_vec(rng, n, -0.5f, 0.5f);
    check(c, make_x(rng, c, -1e3f, 1e3f), gamma, beta, &wide);
    check(c, make_x(rng, c, 1e3f - 1.0f, 1e3f + 1.0f), gamma, beta, &offset);  // |mean| >> std
    check(c, make_x(rng, c, -1e3f - 3.0f, -1e3f + 1.0f), gamma, beta, &offset);
    check(c, make_x(rng, c, 1e4f - 0.05f, 1e4f + 0.05f), gamma, beta, &offset);
    // 1e-3 scale: var ~ 3e-7 is below eps = 1e-5, which then dominates; with
    // eps = 1e-12 it does not.
    check(c, make_x(rng, c, -1e-3f, 1e-3f), gamma, beta, &tiny);
    Case c12 = c;
    c12.eps = 1e-12f;
    check(c12, make_x(rng, c12, -1e-3f, 1e-3f), gamma, beta, &tiny);
    check(c12, make_x(rng, c12, 0.5f - 1e-3f, 0.5f + 1e-3f), gamma, beta, &tiny);
  }
  report("layernorm uniform [-1e3, 1e3]", wide);
  report("layernorm offset 1e3 / 1e4, small spread", offset);
  report("layernorm 1e-3 scale (eps 1e-5 and 1e-12)", tiny);
}

TEST(LayerNormSimd, OutlierAtTheShift) {
  // x[0] is the kernel's shift; make it a far outlier (|t0| ~ sqrt(n)), and
  // also put the outlier elsewhere.
  std::mt19937 rng(25);
  Worst worst;
  for (size_t n : kSizes) {
    const Case c{2, n, n, n, true, true, false, 1e-5f};
    std::vector<float> x = make_x(rng, c, -1.0f, 1.0f);
    x[0] = 500.0f;
    x[n + (n - 1) / 2] = -800.0f;
    check(c, x, random_vec(rng, n, 0.5f, 1.5f), random_vec(rng, n, -0.5f, 0.5f), &worst);
  }
  report("layernorm with outliers", worst);
}

TEST(LayerNormSimd, Eps) {
  std::mt19937 rng(26);
  Worst worst;
  for (float eps : {0.0f, 1e-12f, 1e-6f, 1e-5f, 0.1f, 10.0f}) {
    for (size_t n : kSizes) {
      if (n == 1 && eps == 0.0f) continue;  // 0 / 0: NaN on both sides, checked below
      const Case c{2, n, n, n, true, false, false, eps};
      check(c, make_x(rng, c, -1.0f, 1.0f), random_vec(rng, n, 0.5f, 1.5f), {}, &worst);
    }
  }
  report("layernorm eps 0 .. 10", worst);
}

TEST(LayerNormSimd, ConstantRowsGiveBeta) {
  // var = 0: every x - mean is exactly 0 on both sides, so y = 0 * gamma + beta
  // = beta bitwise (0 without beta), for any constant, even a large one.
  std::mt19937 rng(27);
  for (size_t n : kSizes) {
    const std::vector<float> gamma = random_vec(rng, n, -2.0f, 2.0f);
    const std::vector<float> beta = random_vec(rng, n, -1.0f, 1.0f);
    for (float v : {0.0f, 1.0f, -3.25f, 1e3f, 1e-3f, -7e20f}) {
      for (int mode = 0; mode < 4; ++mode) {
        const float* g = (mode & 1) ? gamma.data() : nullptr;
        const float* b = (mode & 2) ? beta.data() : nullptr;
        std::vector<float> x(2 * n, v), y(2 * n + kGuard, kSentinel), yr(y);
        f32_layernorm(2, n, y.data(), n, x.data(), n, g, b, 1e-5f);
        f32_layernorm_ref(2, n, yr.data(), n, x.data(), n, g, b, 1e-5f);
        for (size_t idx = 0; idx < 2 * n; ++idx) {
          const float want = b ? b[idx % n] : 0.0f;
          ASSERT_EQ(y[idx], want) << "n=" << n << " v=" << v << " mode=" << mode << " idx=" << idx;
          ASSERT_EQ(yr[idx], want) << "ref: n=" << n << " v=" << v << " mode=" << mode << " idx=" << idx;
        }
        ASSERT_EQ(y[2 * n], kSentinel);
      }
    }
  }
}

TEST(LayerNormSimd, NaNAndInfPoisonOnlyTheirRow) {
  // A NaN or +-inf makes the mean (or the variance) NaN: the whole row is NaN,
  // as in torch; the other rows are unaffected.
  std::mt19937 rng(28);
  for (size_t n : kSizes) {
    for (size_t pos = 0; pos < n; pos += (n > 40 ? 13 : 1)) {
      for (float bad : {kNaN, kInf, -kInf}) {
        const Case c{3, n, n + 2, n, true, true, false, 1e-5f};
        std::vector<float> x = make_x(rng, c, -1.0f, 1.0f);
        x[1 * c.ldx + pos] = bad;
        std::vector<float> y(span(3, n, n) + kGuard, kSentinel);
        const std::vector<float> gamma = random_vec(rng, n, 0.5f, 1.5f);
        const std::vector<float> beta = random_vec(rng, n, -0.5f, 0.5f);
        f32_layernorm(3, n, y.data(), n, x.data(), c.ldx, gamma.data(), beta.data(), 1e-5f);
        for (size_t j = 0; j < n; ++j) {
          ASSERT_TRUE(std::isnan(y[n + j])) << "n=" << n << " pos=" << pos << " bad=" << bad << " j=" << j;
          ASSERT_FALSE(std::isnan(y[j]) || std::isnan(y[2 * n + j])) << "n=" << n << " pos=" << pos;
        }
        check(c, x, gamma, beta, nullptr);  // the reference agrees, row by row
      }
    }
  }
  // Constant row with eps = 0: 0 * (1 / sqrt(0)) = NaN on both sides, as torch.
  const float x[] = {2, 2, 2};
  float y[3], yr[3];
  f32_layernorm(1, 3, y, 3, x, 3, nullptr, nullptr, 0.0f);
  f32_layernorm_ref(1, 3, yr, 3, x, 3, nullptr, nullptr, 0.0f);
  for (size_t j = 0; j < 3; ++j) EXPECT_TRUE(std::isnan(y[j]) && std::isnan(yr[j])) << j;
}

TEST(LayerNormSimd, EmptyIsANoOp) {
  float x[2] = {1, 2}, y[2] = {kSentinel, kSentinel};
  f32_layernorm(0, 2, y, 2, x, 2, nullptr, nullptr, 1e-5f);
  f32_layernorm(3, 0, y, 0, x, 0, nullptr, nullptr, 1e-5f);
  f32_layernorm_ref(0, 2, y, 2, x, 2, nullptr, nullptr, 1e-5f);
  f32_layernorm_ref(3, 0, y, 0, x, 0, nullptr, nullptr, 1e-5f);
  EXPECT_EQ(y[0], kSentinel);
  EXPECT_EQ(y[1], kSentinel);
}

}  // namespace
}  // namespace aw::kernels
