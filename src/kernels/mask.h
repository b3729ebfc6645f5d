// Masking kernels applied to one row of attention scores before softmax,
// each with a scalar reference (mask_ref.cpp) and an xsimd version (mask_simd.cpp).
//
//   f32_mask_keep_u8:  x[j]  = keep[j] ? x[j] : -inf      (boolean mask, nonzero = keep: SDPA's)
//   f32_mask_drop_u8:  x[j]  = drop[j] ? -inf : x[j]      (boolean mask, nonzero = masked: MHA's)
//   f32_all_finite:    no NaN or ±inf in a block          (may attention skip masked keys?)
//
// An additive float mask is added with f32_add (elementwise.h), a fill is
// f32_fill (fill.h). Both bool conventions are applied as they are: SDPA's
// "true = attend" with keep, MultiheadAttention's "true = masked" with drop
// (no converted copy of a mask).
#pragma once
#include <cstddef>
#include <cstdint>

namespace aw::kernels {

void f32_mask_keep_u8_ref(size_t n, float* x, const uint8_t* keep);
void f32_mask_keep_u8(size_t n, float* x, const uint8_t* keep);
void f32_mask_drop_u8_ref(size_t n, float* x, const uint8_t* drop);
void f32_mask_drop_u8(size_t n, float* x, const uint8_t* drop);

// True when every element of the (rows, n) block with row stride ld is
// finite (no NaN, no ±inf). Attention skips fully masked chunks only then.
bool f32_all_finite_ref(size_t rows, size_t n, const float* x, size_t ld);
bool f32_all_finite(size_t rows, size_t n, const float* x, size_t ld);

}  // namespace aw::kernels
