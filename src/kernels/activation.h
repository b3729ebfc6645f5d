// Elementwise activations, in place over n contiguous
// floats, each with a scalar reference (activation_ref.cpp) and an xsimd
// version (activation_simd.cpp).
//
//   f32_relu:       x = max(x, 0)                 (NaN stays NaN, as torch.relu)
//   f32_gelu:       x = 0.5 x (1 + erf(x / sqrt 2))                       (approximate='none')
//   f32_gelu_tanh:  x = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))   (approximate='tanh')
//   f32_silu:       x = x sigmoid(x) = x / (1 + exp(-x))                  (torch.nn.SiLU)
//   f32_quick_gelu: x = x sigmoid(1.702 x) = x / (1 + exp(-1.702 x))      (transformers' quick_gelu, CLIP's)
//
// Both GELUs are evaluated through cancellation-free identities (erfc, and
// 1 + tanh(u) = 2 / (1 + exp(-2u))), so they keep relative accuracy for
// negative x where torch's float formula does not; they differ from torch
// there by at most about |x| * FLT_EPSILON. See activation_ref.cpp.
// SiLU is x / (1 + exp(-x)) in float, torch's own formula: no cancellation,
// so it keeps relative accuracy everywhere (a few ulp); exp(-x) overflows to
// inf below x = -88.7, giving -0 there as torch does (the true value is below
// 3e-37), and silu(-inf) = -inf / inf = NaN, silu(+inf) = inf, as torch.
#pragma once
#include <cstddef>

namespace aw::kernels {

void f32_relu_ref(size_t n, float* x);
void f32_relu(size_t n, float* x);

void f32_gelu_ref(size_t n, float* x);
void f32_gelu(size_t n, float* x);

void f32_gelu_tanh_ref(size_t n, float* x);
void f32_gelu_tanh(size_t n, float* x);

void f32_silu_ref(size_t n, float* x);
void f32_silu(size_t n, float* x);

void f32_quick_gelu_ref(size_t n, float* x);
void f32_quick_gelu(size_t n, float* x);

}  // namespace aw::kernels
