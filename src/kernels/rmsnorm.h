// RMS normalisation over the last n elements of each row (torch.nn.RMSNorm,
// Hugging Face's LlamaRMSNorm), with a scalar reference (rmsnorm_ref.cpp) and
// an xsimd version (rmsnorm_simd.cpp).
//
//   r    = 1 / sqrt(mean(x[j]^2) + eps)        once per row
//   y[j] = (x[j] * r) * weight[j]              x times r first, then the weight
//
// The order of the two products is torch's (ATen rms_norm, HF's
// weight * (x * rsqrt(var + eps))): each is rounded to float in that order.
// weight may be null (elementwise_affine=False): y = x * r.
// y may alias x (in place: y == x and ldy == ldx; no other overlap). Rows are
// `ld` elements apart. As in float32 torch: a NaN in a row makes the row NaN;
// an inf (or a square that overflows float) makes r = 0, so that element is
// NaN (inf * 0) and the others 0; eps = 0 on an all-zero row gives NaN.
// Precision: rmsnorm_simd.cpp; tolerances: tests/kernels/rmsnorm_test.cpp.
#pragma once
#include <cstddef>

namespace aw::kernels {

void f32_rmsnorm_ref(size_t rows, size_t n, float* y, size_t ldy, const float* x, size_t ldx, const float* weight,
                     float eps);
void f32_rmsnorm(size_t rows, size_t n, float* y, size_t ldy, const float* x, size_t ldx, const float* weight,
                 float eps);

}  // namespace aw::kernels
