// Scalar reference for f32_softmax_inplace (softmax.h): the oracle the xsimd
// version (softmax_simd.cpp) is tested against. Three plain passes over the
// row: max, exp + sum (in index order), divide. Not meant to be fast.
#include "kernels/softmax.h"

#include <cmath>
#include <limits>

namespace aw::kernels {

void f32_softmax_inplace_ref(size_t n, float* x) {
  const float neg_inf = -std::numeric_limits<float>::infinity();
  // NaN-sticky max: once a NaN is seen it stays (x > NaN is false), so a row
  // like [-inf, NaN] does not take the all-masked branch below and yields NaN.
  float mx = neg_inf;
  for (size_t j = 0; j < n; ++j) {
    if (x[j] > mx || std::isnan(x[j])) mx = x[j];
  }
  if (mx == neg_inf) {
    // Every key masked: zeros, not NaN (see softmax.h).
    for (size_t j = 0; j < n; ++j) x[j] = 0.0f;
    return;
  }
  // mx is finite, +inf or NaN here. +inf: inf - inf = NaN poisons the sum,
  // so the whole row becomes NaN, as in torch.
  float sum = 0.0f;
  for (size_t j = 0; j < n; ++j) {
    x[j] = std::exp(x[j] - mx);
    sum += x[j];
  }
  for (size_t j = 0; j < n; ++j) x[j] = x[j] / sum;
}

}  // namespace aw::kernels
