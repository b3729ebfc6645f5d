// The GEMM kernels of kernels/gemm.h spread over the thread pool
// (core/parallel.h). Same arguments and results as f32_gemm_nt / f32_gemm_nn;
// C is cut into blocks of whole register tiles (by rows when there are enough,
// else by columns), one kernel call per block, so the output is bit-identical
// to the single call for any thread count. Small products (below about 2^18
// multiply-adds) run as that single call. Never allocates, never fails.
#pragma once
#include <cstddef>

namespace aw {

// C(m, n) = alpha * A(m, k) · B(n, k)^T [+ bias(n)]   (see kernels::f32_gemm_nt)
void ParallelGemmNt(size_t m, size_t n, size_t k, float* c, size_t ldc, const float* a, size_t lda,
                    const float* b, size_t ldb, const float* bias, float alpha);

// C(m, n) = A(m, k) · B(k, n) [+ bias(n)]              (see kernels::f32_gemm_nn)
void ParallelGemmNn(size_t m, size_t n, size_t k, float* c, size_t ldc, const float* a, size_t lda,
                    const float* b, size_t ldb, const float* bias);

}  // namespace aw
