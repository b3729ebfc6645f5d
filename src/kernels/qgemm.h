// Quantized matrix products: B (a weight, n outputs × k inputs) quantized to
// 8 or 4 bits in groups of 32 along k, the activations A quantized per row to
// int16 (q_gemm: q8, and q4 as 'q4a16') or, for q4, per group of 32 to int8
// (q4_gemm_a8, below: 'q4'), products summed in int32 per group. Scalar
// references in qgemm_ref.cpp, SIMD versions in qgemm_simd.cpp and
// qgemm_a8_simd.cpp (SSE4.1 intrinsics, which Emscripten maps to SIMD128:
// pmaddwd is i32x4.dot_i16x8_s; the relaxed build's q4_gemm_a8 uses
// i16x8.relaxed_dot_i8x16_i7x16_s). Kernels know numbers only: they never
// allocate and never fail.
//
// The arithmetic (README "Quantized weights"; tools/causal_lm.py quantize_*):
//   weights   per output row r and group g of 32 inputs: s = max|w| / Q (Q = 127 for q8, 7 for q4) in
//             float32, q = round_half_even(w / s) in [−Q, Q] (0 where s = 0): w ≈ q · s
//   inputs    per row i of A: t = max|a| / 32767 in float32, x = round_half_even(a · (32767 / max|a|)),
//             int16 (all 0 where max|a| = 0; a row with a NaN or ±inf gets t = NaN)
//   product   per group: an exact int32 sum Σ x·q (|x·q| ≤ 32767 · 127, 16 pairs: no overflow);
//             acc += float(sum) · s over the groups in order (one rounded product and add each, or
//             one fused multiply-add in the relaxed-SIMD build); c = acc · t · alpha [+ bias]
// So c differs from the float product of the dequantized weights with the
// float activations by the activations' rounding (|Δa| ≤ max|a| / 65534) and
// float32 rounding: tools/causal_lm.py reproduces it within 1e-4.
//
// Layout of a quantized B (q_packed_bytes): k padded to a multiple of 32 (kq;
// zeros past k, G = kq / 32 groups), n to whole panels of kGemmNR = 8 outputs
// (NP panels; zero rows past n). The groups come in blocks of 16 (512 inputs,
// the last block shorter), and a block holds every panel's groups of it, panel
// by panel: panel j, group g (block g0 = g − g % 16 of gbs groups) is at
// bp + (g0 · NP + j · gbs + g − g0) · group_bytes (q_group_offset), so that a
// pass over the panels for one block of inputs, as the kernels make, reads
// memory in order (a panel-major layout read 2 of every 18 groups per pass
// and streamed at 9 GB/s against 30+). Each group:
//   8 float32 scales (one per output of the panel), then
//   q8: 16 k-pairs × 16 bytes: pair p holds, for outputs c = 0 … 7, q(c, 2p) and q(c, 2p+1) at
//       bytes 2c, 2c + 1 (int8)                                     → 32 + 256 = 288 bytes
//   q4: 8 chunks of 16 bytes, a nibble u = q + 8 (1 … 15) per weight: chunk 2o + h holds inputs
//       8o … 8o + 7 of outputs 4h … 4h + 3, output 4h + c in the chunk's 32-bit lane c with
//       input 8o + 2i at bits 4i and input 8o + 2i + 1 at bits 16 + 4i   → 32 + 128 = 160 bytes
// so that one 16-byte load gives the pairs of four outputs that one pmaddwd
// multiplies with an input pair: q8 after widening to int16 (outputs 0–3 and
// 4–7 of pair p), q4 after one shift and one mask (lane >> 4i & 0x000F000F:
// the pair 4o + i as int16, unsigned; the kernel takes 8 · Σx of the group's
// inputs off each sum, exactly: Σ x·q = Σ x·u − 8·Σ x). Fewer operations per
// weight, not fewer bytes, is what bounds these kernels (README).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace aw::kernels {

constexpr size_t kQGroup = 32;  // inputs per quantization group
enum class QBits { kQ8, kQ4 };

constexpr size_t kQBlockGroups = 16;  // groups per block of inputs (the layout's and the kernels' unit)
constexpr size_t kQPanelCols = 8;     // outputs of a panel (as the f32 layout's kGemmNR)
// The outputs a quantized B holds: n rounded up to whole panels.
constexpr size_t q_packed_cols(size_t n) { return (n + kQPanelCols - 1) / kQPanelCols * kQPanelCols; }
constexpr size_t q_padded_k(size_t k) { return (k + kQGroup - 1) / kQGroup * kQGroup; }
constexpr size_t q_group_bytes(QBits b) { return b == QBits::kQ8 ? 32 + 256 : 32 + 128; }
// Bytes of a quantized B of n outputs and k inputs.
constexpr size_t q_packed_bytes(QBits b, size_t n, size_t k) {
  return q_packed_cols(n) / kQPanelCols * (q_padded_k(k) / kQGroup) * q_group_bytes(b);
}
// Byte offset of panel jp's group g in a quantized B of n outputs and k inputs (the layout above).
constexpr size_t q_group_offset(QBits b, size_t n, size_t k, size_t jp, size_t g) {
  const size_t G = q_padded_k(k) / kQGroup, NP = (n + 7) / 8, g0 = g - g % kQBlockGroups;
  const size_t gbs = G - g0 < kQBlockGroups ? G - g0 : kQBlockGroups;
  return (g0 * NP + jp * gbs + (g - g0)) * q_group_bytes(b);
}

// Where an element of the layout sits, for the scalar code that reads or writes one at a time (the references,
// the packers of kernels/pack.h). q4: output c (0 … 7) of its panel and input `within` (0 … 31) of its group →
// the byte in the group and the shift in the byte.
inline void q4_position(size_t c, size_t within, size_t* byte, size_t* shift) {
  const size_t o = within / 8, i = within % 8 / 2, bit = (within % 2) * 16 + 4 * i;
  *byte = 32 + (2 * o + c / 4) * 16 + (c % 4) * 4 + bit / 8;
  *shift = bit % 8;
}
// q of output r, input kk (of a B of n outputs, k inputs).
inline int q_at(QBits b, size_t n, size_t k, const uint8_t* bp, size_t r, size_t kk) {
  const uint8_t* grp = bp + q_group_offset(b, n, k, r / 8, kk / kQGroup);
  const size_t c = r % 8, within = kk % kQGroup, p = within / 2, s = within % 2;
  if (b == QBits::kQ8) return int(int8_t(grp[32 + p * 16 + c * 2 + s]));
  size_t byte = 0, shift = 0;
  q4_position(c, within, &byte, &shift);
  return int((grp[byte] >> shift) & 0x0F) - 8;
}
// The scale s of output r, group g.
inline float scale_at(QBits b, size_t n, size_t k, const uint8_t* bp, size_t r, size_t g) {
  float s;
  std::memcpy(&s, bp + q_group_offset(b, n, k, r / 8, g) + (r % 8) * 4, 4);
  return s;
}

// A's rows as int16 (x, kq per row: zeros past k) and their scales t (rows of A lda apart).
void i16_quantize_rows_ref(size_t m, size_t k, const float* a, size_t lda, int16_t* x, float* t);
void i16_quantize_rows(size_t m, size_t k, const float* a, size_t lda, int16_t* x, float* t);

// q4 with int8 activations, per group of 32 (q4_gemm_a8; the arithmetic of dtype 'q4'). Same weights, same
// layout; the inputs and the product:
//   inputs    per row i and group g of 32 inputs of A: t = max|a| / 127 in float32, x = round_half_even(a ·
//             (127 / max|a|)) in [−127, 127], int8; all 0 and t = 0 where max|a| = 0 or where 127 / max|a|
//             overflows float32 (max|a| < 3.7e-37); t = NaN for a group holding a NaN or ±inf
//   product   per group an exact int32 sum S = Σ x·q (|S| ≤ 32 · 127 · 7); acc += float(S) · (s · t) over the
//             groups in order, each a rounded product, product and sum, in every build (no fused multiply-add:
//             the baseline and relaxed builds give the same bits); c = acc · alpha [+ bias]
// Why per group: no pass over a row for its maximum before the first product (a tile quantizes each block of
// 512 inputs as it goes), and a row's large values bound only their own group's rounding; measured, the twin
// with int8 per row is as accurate (bench/quant_choices.py). The extra s · t is one multiply per 4 outputs and
// group. Why int8: the relaxed build multiplies the weights' nibbles u = q + 8 (0 … 15, the i7 operand, whose
// signedness the engine may choose: it cannot matter here) with x (the i8 operand) by
// i16x8.relaxed_dot_i8x16_i7x16_s, 16 multiply-adds per instruction (pmaddubsw on x64), and sums a group's 32
// inputs in int16 lanes, each starting at −8 × the sum of its 16 inputs (Σ x·q = Σ x·u − 8·Σ x) and ending at 16
// products x·q, |·| ≤ 14224: exact (the adds wrap modulo 2^16 in between), then one widening per 4 outputs. The
// baseline build computes the same S with i32x4.dot_i16x8_s on x widened to int16, as q_gemm does. (The i32x4
// form, relaxed_dot_i8x16_i7x16_add_s, ran at a quarter of the i16x8 form's rate in Node 20: V8 11.3 does not
// emit vpdpbusd; bench/relaxed_dot.mjs.) The weights' error (q4: s / 2 = max|w| / 14 per group) dwarfs the
// activations' (max|a| / 254): docs/weights.md gives the measured accuracy against 'q4a16'.
// Layout of the activations (the kernels' and the tests'): x (m, kq) int8 in input order, t (m, G) per group.
void i8_quantize_rows_ref(size_t m, size_t k, const float* a, size_t lda, int8_t* x, float* t);
void i8_quantize_rows(size_t m, size_t k, const float* a, size_t lda, int8_t* x, float* t);
// C(m, n) as q_gemm's arguments (a q4 B), A quantized inside as i8_quantize_rows does. One row gives the GEMM's
// row bit for bit; the relaxed build gives the baseline's bits.
void q4_gemm_a8_ref(size_t m, size_t n, size_t k, float* c, size_t ldc, const float* a, size_t lda, const uint8_t* bp,
                    size_t bn, size_t j0, const float* bias, float alpha);
void q4_gemm_a8(size_t m, size_t n, size_t k, float* c, size_t ldc, const float* a, size_t lda, const uint8_t* bp,
                size_t bn, size_t j0, const float* bias, float alpha);
// A decoding step's row quantized once, ahead of the product, for the threads that share it (each a window of
// panels: ops/parallel_gemm.cpp): q4_a8_quantize_row writes the row's quantized inputs (the kernels' own
// layout, q4_a8_row_bytes(k) bytes, 16-byte aligned; owner: the caller), q4_gemv_a8 computes c[0, n) from them
// for the outputs [j0, j0 + n): q4_gemm_a8's row, bit for bit.
size_t q4_a8_row_bytes(size_t k);
void q4_a8_quantize_row(size_t k, const float* a, void* row);
void q4_gemv_a8(size_t n, size_t k, float* c, const void* row, const uint8_t* bp, size_t bn, size_t j0,
                const float* bias, float alpha);

// C(m, n) = alpha · (A · Bᵀ) [+ bias] for the outputs [j0, j0 + n) (j0 a multiple of 8) of a B of bn outputs and k inputs,
// A (m, k) float rows lda apart, quantized inside as i16_quantize_rows does (so no scratch: a tile's rows are
// quantized into a stack block as the product goes). c, bias point at output j0. One row (m = 1, a decoding
// step) gives the GEMM's row bit for bit.
// fused: each group's acc += float(sum) · s with one rounding (std::fma), as the relaxed-SIMD build's
// f32x4.relaxed_madd computes it where the engine fuses it.
void q_gemm_ref(QBits b, size_t m, size_t n, size_t k, float* c, size_t ldc, const float* a, size_t lda,
                const uint8_t* bp, size_t bn, size_t j0, const float* bias, float alpha, bool fused = false);
void q_gemm(QBits b, size_t m, size_t n, size_t k, float* c, size_t ldc, const float* a, size_t lda,
            const uint8_t* bp, size_t bn, size_t j0, const float* bias, float alpha);

}  // namespace aw::kernels
