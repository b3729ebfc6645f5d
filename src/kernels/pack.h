// Packers: rows of a weight B (n outputs × k inputs, as torch's Linear weight) into and out of the layouts the
// matrix kernels read — the f32 panels and 16-bit panel pairs of kernels/gemm.h, the quantized groups of
// kernels/qgemm.h. The loader writes a checkpoint's rows as they arrive; an embedding reads one row per token.
// Scalar versions in pack_ref.cpp (one row at a time; the _ref twins of the multi-row writers), SIMD versions in
// pack_simd.cpp (a whole panel at a time, as register transposes), equal byte for byte
// (tests/kernels/pack_test.cpp). Panel widths: kGemmNR (f32), kH16Cols (16-bit pairs), kQPanelCols (quantized).
#pragma once
#include <cstddef>
#include <cstdint>

#include "kernels/gemm.h"
#include "kernels/qgemm.h"

namespace aw::kernels {

// ---- float32 and 16-bit rows ----
// Row r of B (its k values) into or out of a packed B of n columns, depth k: float32 (the f32 layout) or
// 16-bit (the h16 layout; in: rounded to nearest even, out: widened exactly). Scalar, one pass per k block.
void f32_packed_put_row(size_t n, size_t k, size_t r, const float* w, float* bp);
void f32_packed_get_row(size_t n, size_t k, size_t r, const float* bp, float* w);
void h16_packed_put_row(Half h, size_t n, size_t k, size_t r, const float* w, uint16_t* bp);
void h16_packed_get_row(Half h, size_t n, size_t k, size_t r, const uint16_t* bp, float* w);
// The same from the row's 16-bit patterns as bytes (little-endian, any alignment: a file's row), copied.
void h16_packed_put_row_bits(size_t n, size_t k, size_t r, const uint8_t* bits, uint16_t* bp);
// Rows r0 … r0 + count − 1 at once (w: rows ldw floats apart; bits: rows ld bytes apart): the bytes of count
// single-row calls, which the _ref versions are. f32_packed_put_rows writes each whole panel the rows cover
// (8 rows from a multiple of 8) input by input (scalar, pack_ref.cpp); h16_packed_put_rows_bits
// (pack_simd.cpp) each whole panel pair (16 rows from a multiple of 16, k a multiple of 8) by register
// transposes; the rest go one row at a time.
void f32_packed_put_rows_ref(size_t n, size_t k, size_t r0, size_t count, const float* w, size_t ldw, float* bp);
void f32_packed_put_rows(size_t n, size_t k, size_t r0, size_t count, const float* w, size_t ldw, float* bp);
void h16_packed_put_rows_bits_ref(size_t n, size_t k, size_t r0, size_t count, const uint8_t* bits, size_t ld,
                                  uint16_t* bp);
void h16_packed_put_rows_bits(size_t n, size_t k, size_t r0, size_t count, const uint8_t* bits, size_t ld,
                              uint16_t* bp);

// ---- quantized rows ----
// Quantizes output row r of B (k floats) into bp (of n outputs, k inputs). Rows past n in a panel stay as
// the caller zeroed them.
void q_pack_row(QBits b, size_t n, size_t k, size_t r, const float* w, uint8_t* bp);
// Rows r0 … r0 + count − 1 (rows ldw floats apart) at once: the bytes of count q_pack_row calls (the _ref
// version is those calls; the other, pack_simd.cpp, quantizes each whole panel of 8 rows the rows cover in
// SIMD registers, k a multiple of 32).
void q_pack_rows_ref(QBits b, size_t n, size_t k, size_t r0, size_t count, const float* w, size_t ldw, uint8_t* bp);
void q_pack_rows(QBits b, size_t n, size_t k, size_t r0, size_t count, const float* w, size_t ldw, uint8_t* bp);
// Row r of B as its dequantized floats q · s (k of them).
void q_unpack_row(QBits b, size_t n, size_t k, size_t r, const uint8_t* bp, float* w);

}  // namespace aw::kernels
