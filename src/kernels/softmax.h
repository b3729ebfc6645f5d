// Row softmax kernel, in place, with a scalar reference (softmax_ref.cpp) and
// an xsimd version (softmax_simd.cpp).
//
//   f32_softmax_inplace: x[j] = exp(x[j] - max) / sum_j exp(x[j] - max)
//
// Deliberate deviation from torch.softmax: a row whose maximum is -inf (every
// key masked) becomes all zeros instead of NaN. This is what PyTorch >= 2.5's
// SDPA math path (`_safe_softmax`) returns; see README "Fully masked rows".
// A row containing NaN or +inf propagates NaN as torch does.
#pragma once
#include <cstddef>

namespace aw::kernels {

void f32_softmax_inplace_ref(size_t n, float* x);
void f32_softmax_inplace(size_t n, float* x);

}  // namespace aw::kernels
