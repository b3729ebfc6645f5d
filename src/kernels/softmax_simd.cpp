// xsimd version of f32_softmax_inplace (softmax.h), templated on the xsimd arch
// and instantiated for xsimd::default_arch (W = batch::size = 8 or 4).
// Scalar twin: softmax_ref.cpp. Three passes: vector max, vector exp + sum
// (the tail goes through the same vector exp, padded with -inf), scale.
// Deviations from the reference, all within the test tolerance: xsimd::exp
// instead of libm exp, lane-wise summation order, multiply by 1/sum.
#include "kernels/softmax.h"

#include <cmath>
#include <limits>

#include <xsimd/xsimd.hpp>

namespace aw::kernels {
namespace {

template <class Arch>
void softmax_impl(size_t n, float* x) {
  using batch = xsimd::batch<float, Arch>;
  constexpr size_t W = batch::size;
  const float neg_inf = -std::numeric_limits<float>::infinity();

  // Pass 1: max. xsimd::max (maxps) is not NaN-sticky, so with a NaN in the
  // row `mx` may be wrong; that is harmless: the NaN reaches the sum in pass 2
  // and poisons the whole row, and the only other outcome, mx == -inf, checks
  // for NaN explicitly below.
  batch vmax(neg_inf);
  size_t j = 0;
  for (; j + W <= n; j += W) vmax = xsimd::max(vmax, batch::load_unaligned(x + j));
  alignas(Arch::alignment()) float lanes[W];
  vmax.store_aligned(lanes);
  float mx = neg_inf;
  for (size_t l = 0; l < W; ++l) mx = lanes[l] > mx ? lanes[l] : mx;
  for (; j < n; ++j) mx = x[j] > mx ? x[j] : mx;

  if (mx == neg_inf) {
    // Every key masked: zeros (see softmax.h), unless a NaN hid from the max.
    bool has_nan = false;
    for (size_t t = 0; t < n; ++t) has_nan |= std::isnan(x[t]);
    const float fill = has_nan ? std::numeric_limits<float>::quiet_NaN() : 0.0f;
    for (size_t t = 0; t < n; ++t) x[t] = fill;
    return;
  }

  // Pass 2: e = exp(x - mx), stored in place, summed lane-wise. With mx = +inf
  // the +inf entries give exp(NaN) = NaN, so the row becomes NaN as in torch.
  const batch vmx(mx);
  batch vsum(0.0f);
  j = 0;
  for (; j + W <= n; j += W) {
    const batch e = xsimd::exp(batch::load_unaligned(x + j) - vmx);
    e.store_unaligned(x + j);
    vsum += e;
  }
  if (j < n) {
    // Tail through the same vector exp (so every element sees the same exp
    // approximation): pad with -inf, whose exp is 0 and adds nothing.
    const size_t rest = n - j;
    for (size_t l = 0; l < W; ++l) lanes[l] = l < rest ? x[j + l] : neg_inf;
    const batch e = xsimd::exp(batch::load_aligned(lanes) - vmx);
    e.store_aligned(lanes);
    vsum += e;
    for (size_t l = 0; l < rest; ++l) x[j + l] = lanes[l];
  }
  const float sum = xsimd::hadd(vsum);  // >= 1: the max term is exp(0) = 1

  // Pass 3: scale by the reciprocal (one extra rounding vs dividing).
  const float inv = 1.0f / sum;
  const batch vinv(inv);
  j = 0;
  for (; j + W <= n; j += W) (batch::load_unaligned(x + j) * vinv).store_unaligned(x + j);
  for (; j < n; ++j) x[j] *= inv;
}

}  // namespace

void f32_softmax_inplace(size_t n, float* x) {
  softmax_impl<xsimd::default_arch>(n, x);
}

}  // namespace aw::kernels
