// Elementwise arithmetic of two float arrays, in place over n contiguous
// floats, each with a scalar reference (elementwise_ref.cpp) and an xsimd
// version (elementwise_simd.cpp). One rounding per element: the two agree
// bit for bit.
//
//   f32_add:  y += x      residual connections, additive masks, positional tables (y may equal x)
//   f32_mul:  y *= x      the SwiGLU product silu(gate) · up (y may equal x)
#pragma once
#include <cstddef>

namespace aw::kernels {

void f32_add_ref(size_t n, float* y, const float* x);
void f32_add(size_t n, float* y, const float* x);

void f32_mul_ref(size_t n, float* y, const float* x);
void f32_mul(size_t n, float* y, const float* x);

}  // namespace aw::kernels
