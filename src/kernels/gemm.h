// Matrix-multiply kernels: the two forms attention needs, each with a scalar
// reference (`*_ref`, gemm_ref.cpp) and an xsimd version (gemm_simd.cpp).
// Kernels know numbers only: pointers, counts, row strides (in elements).
// They never allocate and never fail; the caller validates shapes.
//
//   f32_gemm_nt: C(m, n) = alpha * A(m, k) · B(n, k)^T [+ bias(n)]   (Linear, Q·K^T)
//   f32_gemm_nn: C(m, n) =         A(m, k) · B(k, n)   [+ bias(n)]   (P·V)
//
// `bias` may be null. C must not alias A or B. Rows are read/written with the
// given leading dimensions, so a head's slice of an interleaved (L, E) buffer
// is passed as (ptr + h*hd, lda = E) without a transpose.
#pragma once
#include <cstddef>

namespace aw::kernels {

void f32_gemm_nt_ref(size_t m, size_t n, size_t k, float* c, size_t ldc,
                     const float* a, size_t lda, const float* b, size_t ldb,
                     const float* bias, float alpha);
void f32_gemm_nt(size_t m, size_t n, size_t k, float* c, size_t ldc,
                 const float* a, size_t lda, const float* b, size_t ldb,
                 const float* bias, float alpha);

void f32_gemm_nn_ref(size_t m, size_t n, size_t k, float* c, size_t ldc,
                     const float* a, size_t lda, const float* b, size_t ldb,
                     const float* bias);
void f32_gemm_nn(size_t m, size_t n, size_t k, float* c, size_t ldc,
                 const float* a, size_t lda, const float* b, size_t ldb,
                 const float* bias);

}  // namespace aw::kernels
