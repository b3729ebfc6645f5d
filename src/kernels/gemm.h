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
//   h16_*:               the same with B stored as BF16 or F16 (bit-identical results)
//   (quantized B, q8 / q4: kernels/qgemm.h)
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
#include <cstdint>

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

// ---- B stored as 16-bit floats (a checkpoint's BF16 or F16 weights, kept as the file holds them) ----
//
// uint16_t bit patterns in a layout of their own: k in the same blocks of KC
// (block b at bp[b · KC · np16], np16 = n rounded up to 16: h16_packed_cols);
// within a block, panel pairs (columns 16q … 16q + 15) one after the other,
// pair q at + q · kc_b · 16, its row p at + (p − b · KC) · 16: panel 2q's 8
// columns then panel 2q + 1's, each 8 in the order 0, 4, 1, 5, 2, 6, 3, 7
// (h16_slot). Why: the 32-bit lanes of one 16-byte load then hold columns
// (j, j + 4), which a shift and a mask widen in order (no shuffle), and the
// GEMV runs two panels, four chains of adds, from one stream — one panel's
// two chains bound it by the adds' latency at 13 G multiply-adds/s, two reach
// 16 (Zen 5, wasm). Columns past n are zero. h16_packed_count(n, k) values.
//
// The kernels widen B to float32 exactly and run the float32 arithmetic — the
// GEMM per cache block (a group of panels of one k block widened into a stack
// buffer, then the same micro-kernel), the GEMV in registers, in the same
// order — so every result is bit-identical to the float32 kernels on the
// widened B: storing BF16 weights as BF16 changes no bit of any output.
enum class Half { kBF16, kF16 };
constexpr size_t kH16Cols = 2 * kGemmNR;  // columns of a panel pair
constexpr size_t h16_packed_cols(size_t n) { return (n + kH16Cols - 1) / kH16Cols * kH16Cols; }
constexpr size_t h16_packed_count(size_t n, size_t k) { return h16_packed_cols(n) * k; }
// Where column j (0 … 7) of a panel row sits among its 8 stored values.
constexpr size_t h16_slot(size_t j) { return j < 4 ? 2 * j : 2 * (j - 4) + 1; }
// Where B[p][r] sits in a 16-bit B of n columns, depth k.
constexpr size_t h16_index(size_t n, size_t k, size_t r, size_t p) {
  const size_t b0 = p / kGemmKC * kGemmKC, kc = k - b0 < kGemmKC ? k - b0 : kGemmKC;
  return b0 * h16_packed_cols(n) + r / kH16Cols * kc * kH16Cols + (p - b0) * kH16Cols + (r / kGemmNR % 2) * kGemmNR +
         h16_slot(r % kGemmNR);
}
// The float32 packed layout of `pairs` panel pairs of one k block of depth kc: dst (2 · pairs panels,
// 2 · pairs · kc · NR floats) ← src (pairs · kc · 16 values) widened.
void h16_widen_ref(Half h, size_t kc, size_t pairs, const uint16_t* src, float* dst);
void h16_widen(Half h, size_t kc, size_t pairs, const uint16_t* src, float* dst);
// As f32_gemm_packed_window / f32_gemv_packed_window, B stored as h (bp_cols: the n it was packed with; j0 a
// multiple of 16).
void h16_gemm_packed_window(Half h, size_t m, size_t n, size_t k, float* c, size_t ldc, const float* a, size_t lda,
                            const uint16_t* bp, size_t bp_cols, size_t j0, const float* bias, float alpha);
void h16_gemv_packed_window(Half h, size_t n, size_t k, float* c, const float* a, const uint16_t* bp, size_t bp_cols,
                            size_t j0, const float* bias, float alpha);

// One row or a panel of rows of B into or out of these layouts, and the quantized layout's: kernels/pack.h.

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
