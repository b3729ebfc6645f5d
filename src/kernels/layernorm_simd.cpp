// xsimd version of f32_layernorm (layernorm.h), templated on the xsimd arch and
// instantiated for xsimd::default_arch (W = batch::size = 8 or 4). Scalar twin:
// layernorm_ref.cpp (double). This one accumulates in float, in three passes
// over each row (a "shifted, corrected two-pass" variance):
//   1. s = sum (x - K) with the shift K = x[0];  m = s / n
//   2. d = (x - K) - m;  sd = sum d, sdd = sum d^2;  m += sd / n,
//      var = sdd / n - (sd / n)^2                (the correction of Chan et al.)
//   3. y = ((x - K) - m) * rstd [* gamma] [+ beta]
// Why the shift: the mean is carried as K + m, so a row like 1000 + [-1, 1]
// is handled as well as [-1, 1] (x - K is then exact) instead of losing
// digits to |mean| >> std as a plain float mean would (and as torch's
// x * rstd - mean * rstd does). Why the correction: pass 2 sums centred values,
// whose float sum is accurate to ~FLT_EPSILON * std, so it repairs pass 1's
// rounding. Float sums of squares overflow for |x - mean| above ~1e18 (as
// torch's float moments do); the reference, in double, does not.
#include "kernels/layernorm.h"

#include <cassert>
#include <cmath>

#include <xsimd/xsimd.hpp>

namespace aw::kernels {
namespace {

// Pass 3 for one row; the four gamma/beta presence cases are separate loops so
// the null case costs no loads and no flops.
template <class Arch, bool kGamma, bool kBeta>
inline void normalize_row(size_t n, float* y, const float* x, const float* gamma,
                          const float* beta, float shift, float m, float rstd) {
  using batch = xsimd::batch<float, Arch>;
  constexpr size_t W = batch::size;
  const batch vk(shift), vm(m), vr(rstd);
  size_t j = 0;
  for (; j + W <= n; j += W) {
    batch t = ((batch::load_unaligned(x + j) - vk) - vm) * vr;
    if constexpr (kGamma && kBeta) {
      t = xsimd::fma(t, batch::load_unaligned(gamma + j), batch::load_unaligned(beta + j));
    } else if constexpr (kGamma) {
      t = t * batch::load_unaligned(gamma + j);
    } else if constexpr (kBeta) {
      t = t + batch::load_unaligned(beta + j);
    }
    t.store_unaligned(y + j);
  }
  for (; j < n; ++j) {
    float t = ((x[j] - shift) - m) * rstd;
    if constexpr (kGamma) t *= gamma[j];
    if constexpr (kBeta) t += beta[j];
    y[j] = t;
  }
}

template <class Arch>
void layernorm_impl(size_t rows, size_t n, float* y, size_t ldy, const float* x, size_t ldx,
                    const float* gamma, const float* beta, float eps) {
  using batch = xsimd::batch<float, Arch>;
  constexpr size_t W = batch::size;
  assert(rows <= 1 || n == 0 || (ldx >= n && ldy >= n));
  if (n == 0) return;
  const float inv_n = 1.0f / float(n);

  for (size_t i = 0; i < rows; ++i) {
    const float* xi = x + i * ldx;
    float* yi = y + i * ldy;
    const float shift = xi[0];
    const batch vk(shift);

    // Pass 1: s = sum (x - K). Two accumulators: shorter chains, and each sums
    // n / (2W) terms, which keeps the float rounding small.
    batch a0(0.0f), a1(0.0f);
    size_t j = 0;
    for (; j + 2 * W <= n; j += 2 * W) {
      a0 += batch::load_unaligned(xi + j) - vk;
      a1 += batch::load_unaligned(xi + j + W) - vk;
    }
    if (j + W <= n) {
      a0 += batch::load_unaligned(xi + j) - vk;
      j += W;
    }
    float s = xsimd::hadd(a0 + a1);
    for (; j < n; ++j) s += xi[j] - shift;
    float m = s * inv_n;

    // Pass 2: d = (x - K) - m; sum d and sum d^2.
    const batch vm(m);
    batch d0(0.0f), d1(0.0f), q0(0.0f), q1(0.0f);
    j = 0;
    for (; j + 2 * W <= n; j += 2 * W) {
      const batch e0 = (batch::load_unaligned(xi + j) - vk) - vm;
      const batch e1 = (batch::load_unaligned(xi + j + W) - vk) - vm;
      d0 += e0;
      d1 += e1;
      q0 = xsimd::fma(e0, e0, q0);
      q1 = xsimd::fma(e1, e1, q1);
    }
    if (j + W <= n) {
      const batch e0 = (batch::load_unaligned(xi + j) - vk) - vm;
      d0 += e0;
      q0 = xsimd::fma(e0, e0, q0);
      j += W;
    }
    float sd = xsimd::hadd(d0 + d1);
    float sdd = xsimd::hadd(q0 + q1);
    for (; j < n; ++j) {
      const float e = (xi[j] - shift) - m;
      sd += e;
      sdd += e * e;
    }
    const float corr = sd * inv_n;
    m += corr;
    float var = sdd * inv_n - corr * corr;
    // sdd / n >= corr^2 holds exactly (Cauchy-Schwarz) but not after rounding.
    // A NaN or inf in the row has made m NaN already: the whole row becomes
    // NaN, as in torch and the reference.
    if (var < 0.0f) var = 0.0f;
    // Once per row, so in double: one rounding instead of two (sqrt, divide).
    const float rstd = float(1.0 / std::sqrt(double(var) + double(eps)));

    // Pass 3. Reads x[j] before writing y[j]: in place (y == x) is fine.
    if (gamma && beta) {
      normalize_row<Arch, true, true>(n, yi, xi, gamma, beta, shift, m, rstd);
    } else if (gamma) {
      normalize_row<Arch, true, false>(n, yi, xi, gamma, beta, shift, m, rstd);
    } else if (beta) {
      normalize_row<Arch, false, true>(n, yi, xi, gamma, beta, shift, m, rstd);
    } else {
      normalize_row<Arch, false, false>(n, yi, xi, gamma, beta, shift, m, rstd);
    }
  }
}

}  // namespace

void f32_layernorm(size_t rows, size_t n, float* y, size_t ldy, const float* x, size_t ldx,
                   const float* gamma, const float* beta, float eps) {
  layernorm_impl<xsimd::default_arch>(rows, n, y, ldy, x, ldx, gamma, beta, eps);
}

}  // namespace aw::kernels
