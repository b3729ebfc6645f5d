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

// Register tiles of f32_gemm_nt / f32_gemm_nn (gemm_simd.cpp). Computing a
// block of C whose first row is a multiple of kGemmRowTile and whose first
// column is a multiple of the column tile, and which ends at such a multiple
// or at the edge of C, runs exactly the instructions a whole-C call runs for
// those elements: the results are bit-identical. ops/parallel_gemm.cpp splits
// C across threads that way. (The `_ref` kernels have no tiles.)
constexpr size_t kGemmRowTile = 4;    // rows of C per tile (both kernels)
constexpr size_t kGemmNtColTile = 2;  // columns of C per f32_gemm_nt tile
size_t f32_gemm_nn_col_tile();        // columns per f32_gemm_nn tile: 2 SIMD vectors

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
