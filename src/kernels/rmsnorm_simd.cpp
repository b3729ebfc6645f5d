// xsimd version of f32_rmsnorm (rmsnorm.h), templated on the xsimd arch and
// instantiated for xsimd::default_arch (W = batch::size = 8 or 4). Scalar
// twin: rmsnorm_ref.cpp. Two passes over each row:
//   1. ss = sum x^2, in FLOAT, in 2W lanes (two batch accumulators), then a
//      horizontal sum and the scalar tail; mean = ss / n in float.
//   2. y = (x * r) * weight, r = 1 / sqrt(mean + eps) (once per row, in
//      double, rounded once to float).
// Why float for the sum: it is what torch and Hugging Face compute for a
// float32 input (x.pow(2).mean() in float32), so a square or a sum that
// overflows float gives r = 0 here exactly as there (see rmsnorm.h), and the
// squares are all positive, so there is no cancellation: splitting the sum
// over 2W lanes keeps its relative error near sqrt(n / 2W) * FLT_EPSILON / 2
// (at most (n / 2W + 2W + 4) * FLT_EPSILON / 2), and r inherits half of it.
// A double sum would buy nothing at the 1e-5 tolerance of torch's own float
// result and would differ from torch in the overflow cases.
// Why r in double: one rounding instead of two (sqrt, divide), once per row.
// The products are never fused (no fma): each is rounded in torch's order.
#include "kernels/rmsnorm.h"

#include <cassert>
#include <cmath>

#include <xsimd/xsimd.hpp>

namespace aw::kernels {
namespace {

template <class Arch>
float sum_squares(size_t n, const float* x) {
  using batch = xsimd::batch<float, Arch>;
  constexpr size_t W = batch::size;
  batch a0(0.0f), a1(0.0f);
  size_t j = 0;
  for (; j + 2 * W <= n; j += 2 * W) {
    const batch v0 = batch::load_unaligned(x + j), v1 = batch::load_unaligned(x + j + W);
    a0 += v0 * v0;
    a1 += v1 * v1;
  }
  if (j + W <= n) {
    const batch v0 = batch::load_unaligned(x + j);
    a0 += v0 * v0;
    j += W;
  }
  float s = xsimd::hadd(a0 + a1);
  for (; j < n; ++j) s += x[j] * x[j];
  return s;
}

template <class Arch, bool kWeight>
void scale_row(size_t n, float* y, const float* x, const float* w, float r) {
  using batch = xsimd::batch<float, Arch>;
  constexpr size_t W = batch::size;
  const batch vr(r);
  size_t j = 0;
  for (; j + W <= n; j += W) {
    batch t = batch::load_unaligned(x + j) * vr;
    if constexpr (kWeight) t = t * batch::load_unaligned(w + j);
    t.store_unaligned(y + j);
  }
  for (; j < n; ++j) {
    const float t = x[j] * r;
    y[j] = kWeight ? t * w[j] : t;
  }
}

template <class Arch>
void rmsnorm_impl(size_t rows, size_t n, float* y, size_t ldy, const float* x, size_t ldx, const float* weight,
                  float eps) {
  assert(rows <= 1 || n == 0 || (ldx >= n && ldy >= n));
  if (n == 0) return;
  for (size_t i = 0; i < rows; ++i) {
    const float* xi = x + i * ldx;
    float* yi = y + i * ldy;
    const float ms = sum_squares<Arch>(n, xi) / float(n);
    const float r = float(1.0 / std::sqrt(double(ms) + double(eps)));
    // Reads x[j] before writing y[j]: in place (y == x) is fine.
    if (weight) scale_row<Arch, true>(n, yi, xi, weight, r);
    else scale_row<Arch, false>(n, yi, xi, nullptr, r);
  }
}

}  // namespace

void f32_rmsnorm(size_t rows, size_t n, float* y, size_t ldy, const float* x, size_t ldx, const float* weight,
                 float eps) {
  rmsnorm_impl<xsimd::default_arch>(rows, n, y, ldy, x, ldx, weight, eps);
}

}  // namespace aw::kernels
