// Layer normalisation over the last dim of each row, with a scalar reference
// (layernorm_ref.cpp) and an xsimd version (layernorm_simd.cpp).
//
//   y[j] = (x[j] - mean) / sqrt(var + eps) * gamma[j] + beta[j]
//   mean, var over the row's n elements (biased variance, as torch)
//
// gamma / beta may be null (elementwise_affine=False, or bias=False).
// y may alias x (in place: y == x and ldy == ldx; no other overlap). Rows are
// `ld` elements apart. A row containing NaN or +-inf becomes all NaN (torch).
// Accuracy and tolerances: layernorm_simd.cpp, tests/kernels/layernorm_test.cpp.
#pragma once
#include <cstddef>

namespace aw::kernels {

void f32_layernorm_ref(size_t rows, size_t n, float* y, size_t ldy, const float* x, size_t ldx,
                       const float* gamma, const float* beta, float eps);
void f32_layernorm(size_t rows, size_t n, float* y, size_t ldy, const float* x, size_t ldx,
                   const float* gamma, const float* beta, float eps);

}  // namespace aw::kernels
