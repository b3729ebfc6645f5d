// q4_gemm_a8 and i8_quantize_rows (kernels/qgemm.h): q4 weights against int8 activations quantized per group of
// 32. Two integer cores give the same int32 group sums, so every build gives the same bits (the float steps
// after them are rounded products and sums in both, never fused):
//   relaxed build   i16x8.relaxed_dot_i8x16_i7x16_s: the int8 inputs (signed) against the weights' nibbles
//                   u = q + 8 (0 … 15: the i7 operand, so the engine's choice of signedness does not matter), 16
//                   multiply-adds per instruction; a group's 32 inputs summed in int16 lanes (below: exact),
//                   widened once per 4 outputs (i32x4.extadd_pairwise_i16x8_s)
//   baseline build  (and natively) i32x4.dot_i16x8_s on the inputs widened to int16, as q_gemm's q4 path
// Both take 8 · Σx of the group off its sums, Σ x·q = Σ x·u − 8·Σ x, exactly, by starting the sums there: the
// baseline's int32 sums at −8·Σx, the relaxed build's int16 lanes (even lanes sum a group's even inputs, odd
// lanes its odd ones) at −8·Σx_even and −8·Σx_odd (|·| ≤ 8 · 16 · 127: int16; the lanes add modulo 2^16 and end
// at a partial sum of 16 products x·q, |·| ≤ 14224, so every lane is exact).
//
// The weights' layout (qgemm.h) puts inputs 8o + {0, 2, 4, 6} of an output in the low nibbles of its 32-bit
// lane of chunk o and 8o + {1, 3, 5, 7} in the high ones (bits 4i and 16 + 4i: input 8o + 2i, 8o + 2i + 1). So
// lane & 0x0F0F0F0F holds the nibbles of inputs 8o + 0, 4, 1, 5 as bytes, (lane >> 4) & 0x0F0F0F0F those of
// 8o + 2, 6, 3, 7: the relaxed build stores each octet of a row's int8 inputs in that order (x0 x4 x1 x5 x2 x6 x3
// x7), so that a 4-byte splat lines up with either, and gets 32 weights per load, an and, a shift and an and.
// The baseline build keeps the inputs in order as int16 and takes the int16 pairs (8o + 2i, 8o + 2i + 1) with a
// shift and a mask, as q_gemm does.
//
// The tile (as q_gemm's): up to MR = 4 rows of A against one 8-output panel; A's rows quantized one block of
// 16 groups (512 inputs: the layout's block) at a time into a stack block, then every panel of the window
// over that block; the tile's float sums live in C between blocks. One row (a decoding step) runs the same
// steps per output as the 4-row tile: the GEMV is the GEMM's row bit for bit.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include <smmintrin.h>
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#endif

#include "core/tiering.h"
#include "kernels/qgemm.h"
#include "kernels/simd_int.h"

// A loop kept rolled, for the .wasm's size (clang, which builds every .wasm; g++ builds the native tree and has
// no such pragma).
#if defined(__clang__)
#define AW_NO_UNROLL _Pragma("clang loop unroll(disable)")
#else
#define AW_NO_UNROLL
#endif

namespace aw::kernels {
namespace {

constexpr size_t kMR = 4;
constexpr size_t kKB = kQBlockGroups * kQGroup;  // inputs per quantized block of the tile

#if defined(__wasm_relaxed_simd__)
using XElem = int8_t;   // octets in the relaxed order (file header)
#else
using XElem = int16_t;  // in input order
#endif

// The tile's activations for one block: x[r] row r's inputs; per group g and row r: t the scale and off where the
// sums start (baseline: −8·Σx; relaxed: the int16 pair −8·Σx_even, −8·Σx_odd).
struct TileA8 {
  alignas(16) XElem x[kMR][kKB];
  int32_t off[kQBlockGroups][kMR];
  float t[kQBlockGroups][kMR];
};

// A 32-bit word of memory in every lane.
inline __m128i splat32(const void* p) {
#if defined(__wasm_simd128__)
  return (__m128i)wasm_v128_load32_splat(p);
#else
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm_set1_epi32(v);
#endif
}

// One group of one row: the 32 floats a (valid of them; zeros after) as int8 in int16 lanes (q16[0..3]: inputs 0–7,
// …, 24–31) and where its sums start (off: TileA8's); returns the group's t (i8_quantize_rows_ref's: NaN, 0 or
// max|a| / 127).
inline float quantize_group(size_t valid, const float* a, __m128i q16[4], int32_t* off) {
  alignas(16) float pad[kQGroup];
  if (valid < kQGroup) {
    std::memset(pad, 0, sizeof pad);
    std::memcpy(pad, a, valid * sizeof(float));
    a = pad;
  }
  const __m128 absmask = _mm_castsi128_ps(_mm_set1_epi32(0x7FFFFFFF));
  const __m128 inf = _mm_set1_ps(std::numeric_limits<float>::infinity());
  __m128 v[8], mx = _mm_setzero_ps(), bad = _mm_setzero_ps();
  for (int i = 0; i < 8; ++i) {
    v[i] = _mm_loadu_ps(a + 4 * i);
    const __m128 ab = _mm_and_ps(v[i], absmask);
    bad = _mm_or_ps(bad, _mm_cmpnlt_ps(ab, inf));  // NaN (unordered) or ±inf
    mx = _mm_max_ps(mx, ab);
  }
  mx = _mm_max_ps(mx, _mm_shuffle_ps(mx, mx, _MM_SHUFFLE(1, 0, 3, 2)));
  mx = _mm_max_ps(mx, _mm_shuffle_ps(mx, mx, _MM_SHUFFLE(2, 3, 0, 1)));
  const float amax = _mm_cvtss_f32(mx), inv = 127.0f / amax;
  const bool finite = _mm_movemask_ps(bad) == 0;
  if (!finite || !(inv <= std::numeric_limits<float>::max())) {
    for (int i = 0; i < 4; ++i) q16[i] = _mm_setzero_si128();
    *off = 0;
    return finite ? 0.0f : std::numeric_limits<float>::quiet_NaN();
  }
  const __m128 vinv = _mm_set1_ps(inv);
  for (int i = 0; i < 4; ++i)  // |a · inv| ≤ 127 (+ rounding): nothing saturates
    q16[i] = _mm_packs_epi32(round_to_i32(_mm_mul_ps(v[2 * i], vinv)), round_to_i32(_mm_mul_ps(v[2 * i + 1], vinv)));
  // −8 · the sums of the even and of the odd inputs (lane j of s16 sums inputs j, j + 8, …: j's parity), as the
  // two int16 halves of every int32 lane (|·| ≤ 16256).
  const __m128i s16 = _mm_add_epi16(_mm_add_epi16(q16[0], q16[1]), _mm_add_epi16(q16[2], q16[3]));
  __m128i s32 = _mm_add_epi16(s16, _mm_shuffle_epi32(s16, _MM_SHUFFLE(1, 0, 3, 2)));
  s32 = _mm_add_epi16(s32, _mm_shuffle_epi32(s32, _MM_SHUFFLE(2, 3, 0, 1)));
  const __m128i neg8 = _mm_mullo_epi16(s32, _mm_set1_epi16(-8));
#if defined(__wasm_relaxed_simd__)
  *off = _mm_cvtsi128_si32(neg8);
#else
  *off = _mm_cvtsi128_si32(_mm_madd_epi16(neg8, _mm_set1_epi16(1)));
#endif
  return amax / 127.0f;
}

// The tile's rows of A (lda apart), inputs [k0, k0 + kb), into tl: rows past `rows` and inputs past k as zeros.
// Size: called once per tile and block; a threads build calls it from two places (q4_a8_quantize_row too), where
// one copy out of line is 1.2 KB smaller.
#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)
__attribute__((noinline))
#else
inline
#endif
void quantize_tile(size_t rows, size_t k, size_t k0, size_t kb, const float* a, size_t lda, TileA8* tl) {
  for (size_t r = 0; r < (rows == 1 ? 1 : kMR); ++r)  // one row runs the 1-row tile, which reads row 0 only
    for (size_t g = 0; g < kb / kQGroup; ++g) {
      const size_t at = k0 + g * kQGroup, valid = r < rows && at < k ? std::min(kQGroup, k - at) : 0;
      __m128i q16[4];
      tl->t[g][r] = quantize_group(valid, a + r * lda + at, q16, &tl->off[g][r]);
      XElem* xg = tl->x[r] + g * kQGroup;
#if defined(__wasm_relaxed_simd__)
      for (int h = 0; h < 2; ++h) {  // 16 inputs: two octets, each x0 x4 x1 x5 x2 x6 x3 x7
        const v128_t b = wasm_i8x16_narrow_i16x8((v128_t)q16[2 * h], (v128_t)q16[2 * h + 1]);
        wasm_v128_store(xg + 16 * h, wasm_i8x16_shuffle(b, b, 0, 4, 1, 5, 2, 6, 3, 7, 8, 12, 9, 13, 10, 14, 11, 15));
      }
#else
      for (int i = 0; i < 4; ++i) _mm_store_si128(reinterpret_cast<__m128i*>(xg + 8 * i), q16[i]);
#endif
    }
}

// One group of one panel against the tile's R rows: fs (R × 8 floats) += float(S) · (s · t) per row and output.
// x: row 0's inputs of the group (rows xs apart); off, t: the group's per row.
template <size_t R>
inline void group_tile(const uint8_t* grp, const XElem* x, size_t xs, const int32_t* off, const float* t, float* fs) {
  const uint8_t* q = grp + 32;
  // fs[r][4h … 4h + 3] += float(sum) · (s · t[r]) for outputs 4h … 4h + 3 (sum: their int32 sums, offset included).
  auto finish = [&](size_t r, size_t h, __m128i sum) {
    const __m128 w = _mm_mul_ps(_mm_loadu_ps(reinterpret_cast<const float*>(grp + 16 * h)), _mm_set1_ps(t[r]));
    float* f = fs + r * 8 + 4 * h;
    _mm_store_ps(f, _mm_add_ps(_mm_load_ps(f), _mm_mul_ps(_mm_cvtepi32_ps(sum), w)));
  };
#if defined(__wasm_relaxed_simd__)
  const v128_t mask = wasm_i8x16_splat(0x0F);
  auto widen = [&](v128_t acc16) { return (__m128i)wasm_i32x4_extadd_pairwise_i16x8(acc16); };
  // Both halves of the panel at once: 2R accumulators, 4 byte vectors and a splat live (a splat feeds two dots).
  v128_t acc[R][2];
  for (size_t r = 0; r < R; ++r) acc[r][0] = acc[r][1] = wasm_v128_load32_splat(off + r);
AW_NO_UNROLL  // size: a loop of four octets costs nothing measurable
  for (size_t o = 0; o < kQGroup / 8; ++o) {
    __asm__ volatile("" : : : "memory");  // one octet at a time: LLVM would hoist every load (V8 then spills)
    // Chunks 2o (outputs 0–3) and 2o + 1 (4–7) as byte vectors: lo the nibbles of inputs 8o + 0, 4, 1, 5; hi
    // those of 8o + 2, 6, 3, 7 (the octet's order in x).
    const v128_t v0 = wasm_v128_load(q + o * 32), v1 = wasm_v128_load(q + o * 32 + 16);
    const v128_t lo0 = wasm_v128_and(v0, mask), hi0 = wasm_v128_and(wasm_u16x8_shr(v0, 4), mask);
    const v128_t lo1 = wasm_v128_and(v1, mask), hi1 = wasm_v128_and(wasm_u16x8_shr(v1, 4), mask);
    for (size_t r = 0; r < R; ++r) {
      const v128_t ax = wasm_v128_load32_splat(x + r * xs + o * 8);
      acc[r][0] = wasm_i16x8_add(acc[r][0], wasm_i16x8_relaxed_dot_i8x16_i7x16(ax, lo0));
      acc[r][1] = wasm_i16x8_add(acc[r][1], wasm_i16x8_relaxed_dot_i8x16_i7x16(ax, lo1));
      const v128_t ay = wasm_v128_load32_splat(x + r * xs + o * 8 + 4);
      acc[r][0] = wasm_i16x8_add(acc[r][0], wasm_i16x8_relaxed_dot_i8x16_i7x16(ay, hi0));
      acc[r][1] = wasm_i16x8_add(acc[r][1], wasm_i16x8_relaxed_dot_i8x16_i7x16(ay, hi1));
    }
  }
  for (size_t r = 0; r < R; ++r) {
    finish(r, 0, widen(acc[r][0]));
    finish(r, 1, widen(acc[r][1]));
  }
#else
  __m128i acc[R][2];
  for (size_t r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm_set1_epi32(off[r]);
  auto pair = [&](__m128i lo, __m128i hi, size_t p) {  // inputs 2p, 2p + 1: outputs 0–3 (lo), 4–7 (hi)
    for (size_t r = 0; r < R; ++r) {
      const __m128i xa = splat32(x + r * xs + 2 * p);
      acc[r][0] = _mm_add_epi32(acc[r][0], _mm_madd_epi16(xa, lo));
      acc[r][1] = _mm_add_epi32(acc[r][1], _mm_madd_epi16(xa, hi));
    }
  };
  const __m128i mask = _mm_set1_epi32(0x000F000F);
  auto nib = [&](__m128i v, int i) { return _mm_and_si128(i == 0 ? v : _mm_srli_epi32(v, 4 * i), mask); };
  if constexpr (R == 1) {
AW_NO_UNROLL  // size: four octets of 16 multiply-adds per output each
    for (size_t o = 0; o < kQGroup / 8; ++o) {
      const __m128i v0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + o * 32));
      const __m128i v1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + o * 32 + 16));
      for (int i = 0; i < 4; ++i) pair(nib(v0, i), nib(v1, i), 4 * o + i);
    }
  } else {  // unpacked into a stack block first, as q_gemm's 4-row tile (12 live vectors otherwise spill)
    alignas(16) __m128i wv[kQGroup / 2][2];
    for (size_t o = 0; o < kQGroup / 8; ++o) {
      const __m128i v0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + o * 32));
      const __m128i v1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + o * 32 + 16));
      for (int i = 0; i < 4; ++i) {
        wv[4 * o + i][0] = nib(v0, i);
        wv[4 * o + i][1] = nib(v1, i);
      }
    }
    __asm__ volatile("" : : "r"(wv) : "memory");
AW_NO_UNROLL  // size, as above
    for (size_t p = 0; p < kQGroup / 2; ++p) pair(wv[p][0], wv[p][1], p);
  }
  for (size_t r = 0; r < R; ++r) {
    finish(r, 0, acc[r][0]);
    finish(r, 1, acc[r][1]);
  }
#endif
}

// The quantized inputs of a block as the tiles read them: row r's group g at x + r · xs + 32g, its off and t at
// [g · gs + r] (a TileA8: xs = kKB, gs = kMR; a row quantized whole, q4_a8_quantize_row: one row, gs = 1).
struct BlockA8 {
  const XElem* x;
  size_t xs;
  const int32_t* off;
  const float* t;
  size_t gs;
};

// One block of inputs for a tile of R rows over the window's panels (q_gemm's tile_block, with the scales per
// group): first block from zero, the last times alpha, plus bias. Entered per row tile and block (core/tiering.h).
template <size_t R>
AW_TIER_ENTRY void tile_block(bool first, bool last, size_t rows, size_t n, size_t gbs, BlockA8 in,
                              const uint8_t* block, float* c, size_t ldc, const float* bias, float alpha) {
  constexpr size_t gbytes = q_group_bytes(QBits::kQ4);
  alignas(16) float fs[kMR * 8];
  const size_t panels = (n + 7) / 8;
  for (size_t jp = 0; jp < panels; ++jp) {
    const size_t j = jp * 8, cols = std::min<size_t>(8, n - j);
    for (size_t r = 0; r < R; ++r)
AW_NO_UNROLL  // once per panel and block: size, not speed
      for (size_t q = 0; q < 8; ++q) fs[r * 8 + q] = !first && r < rows && q < cols ? c[r * ldc + j + q] : 0.0f;
    const uint8_t* grp = block + jp * gbs * gbytes;
    for (size_t g = 0; g < gbs; ++g)
      group_tile<R>(grp + g * gbytes, in.x + g * kQGroup, in.xs, in.off + g * in.gs, in.t + g * in.gs, fs);
    for (size_t r = 0; r < rows; ++r)
AW_NO_UNROLL
      for (size_t q = 0; q < cols; ++q) {
        float v = fs[r * 8 + q];
        if (last) {
          v = v * alpha;
          if (bias) v = v + bias[j + q];
        }
        c[r * ldc + j + q] = v;
      }
  }
}

}  // namespace

void i8_quantize_rows(size_t m, size_t k, const float* a, size_t lda, int8_t* x, float* t) {
  const size_t kq = q_padded_k(k), G = kq / kQGroup;
  for (size_t i = 0; i < m; ++i)
    for (size_t g = 0; g < G; ++g) {
      __m128i q16[4];
      int32_t off = 0;
      t[i * G + g] = quantize_group(std::min(kQGroup, k - g * kQGroup), a + i * lda + g * kQGroup, q16, &off);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(x + i * kq + g * kQGroup), _mm_packs_epi16(q16[0], q16[1]));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(x + i * kq + g * kQGroup + 16), _mm_packs_epi16(q16[2], q16[3]));
    }
}

size_t q4_a8_row_bytes(size_t k) {
  const size_t kq = q_padded_k(k);
  return kq * sizeof(XElem) + kq / kQGroup * (sizeof(int32_t) + sizeof(float));
}

void q4_a8_quantize_row(size_t k, const float* a, void* row) {
  const size_t kq = q_padded_k(k), G = kq / kQGroup;
  XElem* x = static_cast<XElem*>(row);
  int32_t* off = reinterpret_cast<int32_t*>(x + kq);
  float* t = reinterpret_cast<float*>(off + G);
  TileA8 tl;
  for (size_t k0 = 0; k0 < kq; k0 += kKB) {  // the 1-row tile's quantization, block by block, copied out
    const size_t kb = std::min(kKB, kq - k0);
    quantize_tile(1, k, k0, kb, a, k, &tl);
    std::memcpy(x + k0, tl.x[0], kb * sizeof(XElem));
    for (size_t g = 0; g < kb / kQGroup; ++g) {
      off[k0 / kQGroup + g] = tl.off[g][0];
      t[k0 / kQGroup + g] = tl.t[g][0];
    }
  }
}

void q4_gemv_a8(size_t n, size_t k, float* c, const void* row, const uint8_t* bp, size_t bn, size_t j0,
                const float* bias, float alpha) {
  if (n == 0) return;
  const size_t kq = q_padded_k(k), G = kq / kQGroup, jp0 = j0 / 8;
  const XElem* x = static_cast<const XElem*>(row);
  const int32_t* off = reinterpret_cast<const int32_t*>(x + kq);
  const float* t = reinterpret_cast<const float*>(off + G);
  const auto tile1 = TierEntry<&tile_block<1>>();
  for (size_t k0 = 0; k0 < kq; k0 += kKB) {
    const size_t kb = std::min(kKB, kq - k0);
    const BlockA8 in{x + k0, 0, off + k0 / kQGroup, t + k0 / kQGroup, 1};
    tile1(k0 == 0, k0 + kb == kq, 1, n, kb / kQGroup, in, bp + q_group_offset(QBits::kQ4, bn, k, jp0, k0 / kQGroup), c, 0,
          bias, alpha);
  }
}

void q4_gemm_a8(size_t m, size_t n, size_t k, float* c, size_t ldc, const float* a, size_t lda, const uint8_t* bp,
                size_t bn, size_t j0, const float* bias, float alpha) {
  if (m == 0 || n == 0) return;
  const size_t kq = q_padded_k(k), jp0 = j0 / 8;
  TileA8 tl;
  const auto tile4 = TierEntry<&tile_block<kMR>>();
  const auto tile1 = TierEntry<&tile_block<1>>();
  for (size_t i0 = 0; i0 < m; i0 += kMR) {
    const size_t rows = std::min(kMR, m - i0);
    for (size_t k0 = 0; k0 < kq; k0 += kKB) {
      const size_t kb = std::min(kKB, kq - k0);
      quantize_tile(rows, k, k0, kb, a + i0 * lda, lda, &tl);
      const uint8_t* block = bp + q_group_offset(QBits::kQ4, bn, k, jp0, k0 / kQGroup);
      const BlockA8 in{tl.x[0], kKB, &tl.off[0][0], &tl.t[0][0], kMR};
      (rows == 1 ? tile1 : tile4)(k0 == 0, k0 + kb == kq, rows, n, kb / kQGroup, in, block, c + i0 * ldc, ldc, bias, alpha);
    }
  }
}

}  // namespace aw::kernels
