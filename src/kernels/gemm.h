// Matrix-multiply kernels, each with a scalar reference (`*_ref`,
// gemm_ref.cpp) and an xsimd version (gemm_simd.cpp). Kernels know numbers
// only: pointers, counts, row strides (in elements). They never allocate and
// never fail; the caller validates shapes.
//
// The BLIS structure: the right-hand operand B (k × n of the product) is
// packed into panels of kGemmNR columns, and a register micro-kernel computes
// kGemmMR × kGemmNR tiles of C from kGemmMR rows of A (read in place, any row
// stride) and one panel, with no horizontal sums. Weights are packed once
// (Linear, MultiheadAttention); attention packs its K and V blocks
// (ops/attention.h).
//
//   f32_gemm_pack_nt:    Bp ← B(n, k)ᵀ        (a Linear weight (out, in); K rows)
//   f32_gemm_pack_nn:    Bp ← B(k, n)         (V rows)
//   f32_gemm_packed:     C(m, n) = alpha · A(m, k) · Bp [+ bias(n)]
//   f32_gemv_packed_window: the same for m = 1 (a decoding step), B read once
//
// Packed layout, in the order the kernel reads it: k is cut into blocks of
// kGemmKC (the last may be shorter, kc_b); block b starts at bp[b · KC · np]
// (np = n rounded up to NR) and holds the panels of its rows one after the
// other: panel j (columns j·NR … j·NR + NR − 1) has B[p][j·NR + c] at
// + j · kc_b · NR + (p − b · KC) · NR + c. Columns past n are zero. With
// k ≤ KC this is simply panel after panel, each k × NR.
// f32_gemm_packed_floats(n, k) floats in all; `bp_cols` of the window
// functions is the n the whole B was packed with.
//
// Summation order: every element of C is accumulated in k order, one product
// at a time, and (f32_gemm_packed) then scaled by alpha and biased, exactly
// as the references do. Where fma is a multiply then an add (sse4.1 and so
// the wasm SIMD128 build) the results are bit-identical to the references;
// with a real fma (AVX2 natively) they differ by the skipped roundings.
// Cache blocking (gemm_simd.cpp) splits k at the fixed multiples of KC and
// never reorders an element's sum, so any split of C into blocks
// (ops/parallel_gemm.cpp, threads) gives bit-identical results.
#pragma once
#include <cstddef>

namespace aw::kernels {

constexpr size_t kGemmNR = 8;    // columns of a packed panel and of a micro-tile
constexpr size_t kGemmMR = 4;    // rows of a micro-tile (gemm_simd.cpp explains the choice)
constexpr size_t kGemmKC = 512;  // depth of a packed block (gemm_simd.cpp, cache blocking)

// n rounded up to whole panels.
constexpr size_t f32_gemm_packed_cols(size_t n) { return (n + kGemmNR - 1) / kGemmNR * kGemmNR; }
// Floats of a packed B of n columns and depth k.
constexpr size_t f32_gemm_packed_floats(size_t n, size_t k) { return f32_gemm_packed_cols(n) * k; }

// bp (f32_gemm_packed_floats(n, k)) ← B(n, k)ᵀ, B row-major with row stride ldb.
void f32_gemm_pack_nt_ref(size_t n, size_t k, const float* b, size_t ldb, float* bp);
void f32_gemm_pack_nt(size_t n, size_t k, const float* b, size_t ldb, float* bp);
// bp (f32_gemm_packed_floats(n, k)) ← B(k, n), B row-major with row stride ldb.
void f32_gemm_pack_nn_ref(size_t n, size_t k, const float* b, size_t ldb, float* bp);
void f32_gemm_pack_nn(size_t n, size_t k, const float* b, size_t ldb, float* bp);

// C(m, n) = alpha · A(m, k) · Bp(k, n) [+ bias(n)]. `bias` may be null. C must
// not alias A or Bp.
void f32_gemm_packed_ref(size_t m, size_t n, size_t k, float* c, size_t ldc, const float* a, size_t lda,
                         const float* bp, const float* bias, float alpha);
void f32_gemm_packed(size_t m, size_t n, size_t k, float* c, size_t ldc, const float* a, size_t lda,
                     const float* bp, const float* bias, float alpha);
// The same for the columns [j0, j0 + n) of a B packed with bp_cols columns
// (j0 a multiple of NR): c, bias point at column j0 of the whole.
void f32_gemm_packed_window(size_t m, size_t n, size_t k, float* c, size_t ldc, const float* a, size_t lda,
                            const float* bp, size_t bp_cols, size_t j0, const float* bias, float alpha);

// M = 1: c(1, n) = alpha · a(1, k) · Bp [+ bias(n)] for the columns
// [j0, j0 + n) of a B packed with bp_cols columns (j0 a multiple of NR):
// bit-identical to f32_gemm_packed_window with m = 1 (the same multiply-adds
// in the same order), reading B once without the micro-kernel's MR − 1 zero
// rows. Its scalar twin is f32_gemm_packed_ref with m = 1.
void f32_gemv_packed_window(size_t n, size_t k, float* c, const float* a, const float* bp, size_t bp_cols, size_t j0,
                            const float* bias, float alpha);

// ap ← alpha · A(m, k) in the packed-A layout of f32_gemm_pp: MR-row panels
// of depth k, ap[(i / MR)·k·MR + p·MR + i % MR]; rows from m up to the next
// multiple of MR are zero. ceil(m / MR)·MR·k floats.
void f32_gemm_pack_a_ref(size_t m, size_t k, const float* a, size_t lda, float alpha, float* ap);
void f32_gemm_pack_a(size_t m, size_t k, const float* a, size_t lda, float alpha, float* ap);

// C(m, n) = [C · diag(row_scale) +] Ap(m, k) · Bp(k, n) with A already packed:
// MR-row panels of depth k, ap[(i / MR)·k·MR + p·MR + i % MR], rows past m
// zero (f32_softmax_online writes attention probabilities this way).
// Bp may be the first k rows of a B packed with depth bk >= k (attention uses
// the first keys of a chunk); when k > kGemmKC, bk must equal k.
// accumulate = false: C = Ap · Bp (C's old values are not read);
// true: row i of C is scaled by row_scale[i] (null: 1) and the products are
// added in k order.
void f32_gemm_pp_ref(size_t m, size_t n, size_t k, float* c, size_t ldc, const float* ap, const float* bp, size_t bk,
                     const float* row_scale, bool accumulate);
void f32_gemm_pp(size_t m, size_t n, size_t k, float* c, size_t ldc, const float* ap, const float* bp, size_t bk,
                 const float* row_scale, bool accumulate);

// True when this build's micro-kernel multiply-adds with f32x4.relaxed_madd
// (the relaxed-SIMD wasm build: gemm_simd.cpp madd()), false where it is
// xsimd::fma (the baseline wasm build: mul + add; natively: the host's fma).
bool f32_gemm_relaxed_madd();

}  // namespace aw::kernels
