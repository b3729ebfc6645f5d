// The loader's SIMD kernels: bfloat16 bytes widened (kernels/convert.h f32_from_bf16_bytes), and the multi-row
// writers of a packed B (kernels/pack.h: f32_packed_put_rows, h16_packed_put_rows_bits, q_pack_rows): a loading
// checkpoint's rows go into the kernels' layouts a whole panel at a time, as register
// transposes, instead of one strided element at a time. SSE4.1 intrinsics (Emscripten maps them to SIMD128).
// Scalar twins: the _ref versions (convert.cpp; pack_ref.cpp: one row at a time), which these
// equal byte for byte (tests/kernels/pack_test.cpp). Rows that do not cover a whole panel, and k not a multiple of
// the transposes' width (4 floats, 8 halves, the group of 32: never so in a released checkpoint), go through them.
//
// Why it matters: a strided 2- or 4-byte store per weight bounded a BF16 load at 2.3 GB/s warm (1.1 GB/s with the
// pages fresh) and the quantizer at 0.45 GB/s, against a file read of 10–20 GB/s from the page cache.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include <smmintrin.h>

#include "kernels/convert.h"
#include "kernels/pack.h"
#include "kernels/simd_int.h"

namespace aw::kernels {
namespace {

__attribute__((always_inline)) inline __m128i load16(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }
__attribute__((always_inline)) inline void store16(void* p, __m128i v) { _mm_storeu_si128(static_cast<__m128i*>(p), v); }


// An 8 × 8 transpose of 16-bit lanes stored as it goes: row j of the result (lane i = v[i]'s lane j) at
// dst + j · stride bytes. Not inlined (nor the 4 × 4 below): its call sites would add 2.5 KB to the .wasm, for a
// call per 64 values. It stores itself: handing the result back in an array let clang turn eight contiguous
// stores into a call to memcpy, a third of a q8 load's time.
__attribute__((noinline)) void transpose8x16_store(const __m128i v[8], uint8_t* dst, size_t stride) {
  const __m128i a0 = _mm_unpacklo_epi16(v[0], v[1]), a1 = _mm_unpackhi_epi16(v[0], v[1]);
  const __m128i a2 = _mm_unpacklo_epi16(v[2], v[3]), a3 = _mm_unpackhi_epi16(v[2], v[3]);
  const __m128i a4 = _mm_unpacklo_epi16(v[4], v[5]), a5 = _mm_unpackhi_epi16(v[4], v[5]);
  const __m128i a6 = _mm_unpacklo_epi16(v[6], v[7]), a7 = _mm_unpackhi_epi16(v[6], v[7]);
  const __m128i b0 = _mm_unpacklo_epi32(a0, a2), b1 = _mm_unpackhi_epi32(a0, a2);
  const __m128i b2 = _mm_unpacklo_epi32(a1, a3), b3 = _mm_unpackhi_epi32(a1, a3);
  const __m128i b4 = _mm_unpacklo_epi32(a4, a6), b5 = _mm_unpackhi_epi32(a4, a6);
  const __m128i b6 = _mm_unpacklo_epi32(a5, a7), b7 = _mm_unpackhi_epi32(a5, a7);
  store16(dst, _mm_unpacklo_epi64(b0, b4));
  store16(dst + stride, _mm_unpackhi_epi64(b0, b4));
  store16(dst + 2 * stride, _mm_unpacklo_epi64(b1, b5));
  store16(dst + 3 * stride, _mm_unpackhi_epi64(b1, b5));
  store16(dst + 4 * stride, _mm_unpacklo_epi64(b2, b6));
  store16(dst + 5 * stride, _mm_unpackhi_epi64(b2, b6));
  store16(dst + 6 * stride, _mm_unpacklo_epi64(b3, b7));
  store16(dst + 7 * stride, _mm_unpackhi_epi64(b3, b7));
}

// A 4 × 4 transpose of 32-bit lanes.
__attribute__((noinline)) void transpose4x32(__m128& r0, __m128& r1, __m128& r2, __m128& r3) {
  const __m128 t0 = _mm_unpacklo_ps(r0, r1), t1 = _mm_unpacklo_ps(r2, r3);
  const __m128 t2 = _mm_unpackhi_ps(r0, r1), t3 = _mm_unpackhi_ps(r2, r3);
  r0 = _mm_movelh_ps(t0, t1);
  r1 = _mm_movehl_ps(t1, t0);
  r2 = _mm_movelh_ps(t2, t3);
  r3 = _mm_movehl_ps(t3, t2);
}

// The 16 rows r0 … r0 + 15 (r0 a multiple of 16: one panel pair) of a 16-bit packed B from their bit patterns
// (rows `ld` bytes apart, little-endian, any alignment). Panel h's row p holds columns 0, 4, 1, 5, 2, 6, 3, 7
// (h16_slot), so the transposed vectors are gathered in that order.
void h16_put_pair_bits(size_t n, size_t k, size_t r0, const uint8_t* bits, size_t ld, uint16_t* bp) {
  static constexpr int kOrder[8] = {0, 4, 1, 5, 2, 6, 3, 7};
  const size_t np16 = h16_packed_cols(n);
  for (size_t b0 = 0; b0 < k; b0 += kGemmKC) {
    const size_t kc = std::min(kGemmKC, k - b0);
    uint16_t* out = bp + b0 * np16 + r0 * kc;  // (r0 / 16) · kc · 16
    size_t p = b0;
    for (; p < b0 + kc; p += 8, out += 8 * kH16Cols) {  // k, so kc, a multiple of 8 (the caller's condition)
      for (size_t h = 0; h < 2; ++h) {
        __m128i v[8];
        for (int i = 0; i < 8; ++i) v[i] = load16(bits + (h * 8 + size_t(kOrder[i])) * ld + 2 * p);
        transpose8x16_store(v, reinterpret_cast<uint8_t*>(out + h * 8), kH16Cols * sizeof(uint16_t));
      }
    }
  }
}

// Quantizes the 8 rows r0 … r0 + 7 (r0 a multiple of 8: one panel) as q_pack_row does each: per group of 32
// inputs s = max|w| / Q, q = round_half_even(w / s) clamped to [−Q, Q] (a division, not a multiplication by
// 1 / s: the same quotient as the scalar code), 0 where s = 0, s = NaN and q = 0 where the group holds a NaN
// or ±inf. Then the rows' groups are interleaved as the layout wants (qgemm.h): q8, pairs of int8 per output,
// an 8 × 8 transpose of 16-bit lanes; q4, a 32-bit word per output and 8 inputs, transposed 4 × 4.
void q_pack_panel(QBits b, size_t n, size_t k, size_t r0, const float* w, size_t ldw, uint8_t* bp) {
  const size_t G = q_padded_k(k) / kQGroup;
  const float qmax = b == QBits::kQ8 ? 127.0f : 7.0f;
  const __m128 vmax = _mm_set1_ps(qmax), vmin = _mm_set1_ps(-qmax);
  const __m128 abs_mask = _mm_castsi128_ps(_mm_set1_epi32(0x7FFFFFFF));
  const __m128 big = _mm_set1_ps(std::numeric_limits<float>::max());
  const __m128i m_even = _mm_setr_epi32(1, 1 << 16, 1 << 4, 1 << 20);   // q4: inputs 8o + 0 … 3 of a word
  const __m128i m_odd = _mm_setr_epi32(1 << 8, 1 << 24, 1 << 12, 1 << 28);  //     inputs 8o + 4 … 7
  const __m128i eight = _mm_set1_epi32(8);
  for (size_t g = 0; g < G; ++g) {
    uint8_t* grp = bp + q_group_offset(b, n, k, r0 / 8, g);
    const size_t k0 = g * kQGroup;  // k a multiple of 32 (the caller's condition): every group whole
    __m128i lo[8], hi[8];  // q8: per row, inputs 0–15 and 16–31 as int8 (8 pairs each)
    __m128 f[4][8];        // q4: f[o][c], output c's four fields of its word for inputs 8o … 8o + 7
    for (size_t c = 0; c < 8; ++c) {
      const float* row = w + c * ldw + k0;  // read twice (a max, then the quotients): from L1, no copy
      __m128 amax = _mm_setzero_ps(), finite = _mm_castsi128_ps(_mm_set1_epi32(-1));
      for (int v = 0; v < 8; ++v) {
        const __m128 a = _mm_and_ps(_mm_loadu_ps(row + 4 * v), abs_mask);
        finite = _mm_and_ps(finite, _mm_cmple_ps(a, big));  // false for NaN and ±inf
        amax = _mm_max_ps(amax, a);
      }
      amax = _mm_max_ps(amax, _mm_movehl_ps(amax, amax));
      amax = _mm_max_ss(amax, _mm_shuffle_ps(amax, amax, 1));
      const bool all_finite = _mm_movemask_ps(finite) == 0xF;
      const float s = all_finite ? _mm_cvtss_f32(amax) / qmax : std::numeric_limits<float>::quiet_NaN();
      std::memcpy(grp + c * 4, &s, 4);
      const bool any = all_finite && s > 0.0f;
      const __m128 vs = _mm_set1_ps(s);
      __m128i q[8];  // inputs 4v … 4v + 3 as int32
      for (int v = 0; v < 8; ++v) {
        const __m128 r = _mm_round_ps(_mm_div_ps(_mm_loadu_ps(row + 4 * v), vs), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        q[v] = any ? trunc_to_i32(_mm_min_ps(_mm_max_ps(r, vmin), vmax)) : _mm_setzero_si128();
      }
      if (b == QBits::kQ8) {
        lo[c] = _mm_packs_epi16(_mm_packs_epi32(q[0], q[1]), _mm_packs_epi32(q[2], q[3]));
        hi[c] = _mm_packs_epi16(_mm_packs_epi32(q[4], q[5]), _mm_packs_epi32(q[6], q[7]));
      } else {
        // u = q + 8; input 8o + 2i at bits 4i, input 8o + 2i + 1 at bits 16 + 4i (disjoint: a sum is an or)
        for (size_t o = 0; o < 4; ++o)
          f[o][c] = _mm_castsi128_ps(_mm_add_epi32(_mm_mullo_epi32(_mm_add_epi32(q[2 * o], eight), m_even),
                                                   _mm_mullo_epi32(_mm_add_epi32(q[2 * o + 1], eight), m_odd)));
      }
    }
    if (b == QBits::kQ8) {
      transpose8x16_store(lo, grp + 32, 16);      // pairs 0–7: pair p's 16 bytes, outputs 0 … 7
      transpose8x16_store(hi, grp + 32 + 128, 16);  // pairs 8–15
    } else {
      for (size_t o = 0; o < 4; ++o)
        for (size_t h = 0; h < 2; ++h) {  // outputs 4h … 4h + 3: their words side by side in chunk 2o + h
          __m128 p0 = f[o][4 * h], p1 = f[o][4 * h + 1], p2 = f[o][4 * h + 2], p3 = f[o][4 * h + 3];
          transpose4x32(p0, p1, p2, p3);
          const __m128i word = _mm_add_epi32(_mm_add_epi32(_mm_castps_si128(p0), _mm_castps_si128(p1)),
                                             _mm_add_epi32(_mm_castps_si128(p2), _mm_castps_si128(p3)));
          store16(grp + 32 + (2 * o + h) * 16, word);
        }
    }
  }
}

}  // namespace

// bfloat16 is the top half of a float32: each 16-bit lane moved up (interleaved below a zero lane).
void f32_from_bf16_bytes(size_t n, const uint8_t* src, float* dst) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i v = load16(src + 2 * i);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), _mm_unpacklo_epi16(_mm_setzero_si128(), v));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i + 4), _mm_unpackhi_epi16(_mm_setzero_si128(), v));
  }
  for (; i < n; ++i) dst[i] = bf16_to_f32(uint16_t(src[2 * i] | (src[2 * i + 1] << 8)));
}

void h16_packed_put_rows_bits(size_t n, size_t k, size_t r0, size_t count, const uint8_t* bits, size_t ld,
                              uint16_t* bp) {
  size_t i = 0;
  while (i < count) {
    const size_t r = r0 + i;
    if (k % 8 == 0 && r % kH16Cols == 0 && count - i >= kH16Cols) {
      h16_put_pair_bits(n, k, r, bits + i * ld, ld, bp);
      i += kH16Cols;
    } else {
      h16_packed_put_row_bits(n, k, r, bits + i * ld, bp);
      ++i;
    }
  }
}

void q_pack_rows(QBits b, size_t n, size_t k, size_t r0, size_t count, const float* w, size_t ldw, uint8_t* bp) {
  size_t i = 0;
  while (i < count) {
    const size_t r = r0 + i;
    if (k % kQGroup == 0 && r % kGemmNR == 0 && count - i >= kGemmNR) {
      q_pack_panel(b, n, k, r, w + i * ldw, ldw, bp);
      i += kGemmNR;
    } else {
      q_pack_row(b, n, k, r, w + i * ldw, bp);
      ++i;
    }
  }
}

}  // namespace aw::kernels
