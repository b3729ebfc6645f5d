// The packed GEMM of kernels/gemm.h spread over the thread pool
// (core/parallel.h). Same arguments and results as f32_gemm_packed_window;
// C is cut into blocks (by rows, on micro-tile boundaries, when there are
// enough, else by whole panels of columns), one kernel call per block, so the
// output is bit-identical to the single call for any thread count (the kernel
// computes each element the same way wherever its block starts; a single row
// runs on the matrix-vector kernel, which computes it as the GEMM does). Small
// products (below about 2^18 multiply-adds) run as that single call. Never
// allocates, never fails.
#pragma once
#include <cstddef>
#include <cstdint>

#include "kernels/gemm.h"
#include "kernels/qgemm.h"

namespace aw {

// C(m, n) = alpha * A(m, k) · Bp [+ bias(n)], B packed   (see kernels::f32_gemm_packed);
// Bp may be the columns [j0, j0 + n) of a B packed with bp_cols columns (j0 a
// multiple of kGemmNR; kernels::f32_gemm_packed_window).
void ParallelGemmPacked(size_t m, size_t n, size_t k, float* c, size_t ldc, const float* a, size_t lda,
                        const float* bp, size_t bp_cols, size_t j0, const float* bias, float alpha);

// The same split for B stored as 16-bit floats (kernels::h16_*: bit-identical to the float32 product on the
// widened B) and for quantized B (kernels::q_gemm: A's rows quantized inside the kernel), whole B (j0 = 0).
void ParallelGemmH16(kernels::Half h, size_t m, size_t n, size_t k, float* c, size_t ldc, const float* a, size_t lda,
                     const uint16_t* bp, size_t bp_cols, const float* bias, float alpha);
void ParallelQGemm(kernels::QBits b, size_t m, size_t n, size_t k, float* c, size_t ldc, const float* a, size_t lda,
                   const uint8_t* bp, const float* bias, float alpha);
// q4 with int8 activations (kernels::q4_gemm_a8), the same split.
void ParallelQ4GemmA8(size_t m, size_t n, size_t k, float* c, size_t ldc, const float* a, size_t lda, const uint8_t* bp,
                      const float* bias, float alpha);

}  // namespace aw
