// Rotary position embedding (RoPE): the rotation of rows of d = 2h floats in
// place by the angles of one position, with scalar references (rope_ref.cpp)
// and xsimd versions (rope_simd.cpp). Two pairings of the d elements:
//
//   f32_rope_half         Hugging Face's rotate_half (Llama, Qwen2): pairs (j, j + h)
//       x[j]     <- x[j] c_j     - x[j + h] s_j
//       x[j + h] <- x[j + h] c_j + x[j] s_j                 j < h
//   f32_rope_interleaved  torchtune's RotaryPositionalEmbeddings: pairs (2i, 2i + 1)
//       x[2i]     <- x[2i] c_i     - x[2i + 1] s_i
//       x[2i + 1] <- x[2i + 1] c_i + x[2i] s_i              i < h
//
// cos, sin: h floats each, c_i and s_i of the position (the same tables for
// both pairings; layers/rotary.h computes them as torch does). `rows` rows ld
// apart share them: the heads of one token. Each output is two float
// products and one float add or subtract, never fused, in the order written
// above: the vector versions give the references' results bit for bit.
#pragma once
#include <cstddef>

namespace aw::kernels {

void f32_rope_half_ref(size_t rows, size_t d, float* x, size_t ld, const float* cos, const float* sin);
void f32_rope_half(size_t rows, size_t d, float* x, size_t ld, const float* cos, const float* sin);

void f32_rope_interleaved_ref(size_t rows, size_t d, float* x, size_t ld, const float* cos, const float* sin);
void f32_rope_interleaved(size_t rows, size_t d, float* x, size_t ld, const float* cos, const float* sin);

}  // namespace aw::kernels
