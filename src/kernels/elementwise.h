// Elementwise arithmetic of two float arrays, in place over n contiguous
// floats, each with a scalar reference (elementwise_ref.cpp) and an xsimd
// version (elementwise_simd.cpp). One rounding per element: the two agree
// bit for bit.
//
//   f32_add:  y += x      residual connections, additive masks, positional tables (y may equal x)
//   f32_mul:  y *= x      the SwiGLU product silu(gate) · up (y may equal x)
//
// And two row kernels of a decoding step's attention (ops/attention.h, its direct path): a few query rows
// against keys and values read where they lie, unpacked.
//   f32_dot_rows:   y[i] = Σ_j a[i·lda + j] · x[j], i < n, j < k    the scores of n keys (rows of a) for one query
//   f32_axpy_rows:  y[j] += Σ_i p[i·ps] · a[i·lda + j], i in order  the values (rows of a) weighted and summed
// f32_dot_rows' SIMD twin sums each dot product in lanes and then across them (another order than the
// reference's: within a few ulps); f32_axpy_rows' adds the rows one at a time, as the reference (bit for bit
// where a multiply-add is two roundings: SIMD128).
#pragma once
#include <cstddef>

namespace aw::kernels {

void f32_add_ref(size_t n, float* y, const float* x);
void f32_add(size_t n, float* y, const float* x);

void f32_mul_ref(size_t n, float* y, const float* x);
void f32_mul(size_t n, float* y, const float* x);

void f32_dot_rows_ref(size_t n, size_t k, const float* a, size_t lda, const float* x, float* y);
void f32_dot_rows(size_t n, size_t k, const float* a, size_t lda, const float* x, float* y);

void f32_axpy_rows_ref(size_t n, size_t k, const float* a, size_t lda, const float* p, size_t ps, float* y);
void f32_axpy_rows(size_t n, size_t k, const float* a, size_t lda, const float* p, size_t ps, float* y);

}  // namespace aw::kernels
