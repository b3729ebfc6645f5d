// SIMD versions of kernels/qgemm.h, in SSE4.1 intrinsics: natively they run
// as SSE4.1, and Emscripten maps each to SIMD128 (pmaddwd → i32x4.dot_i16x8_s,
// pmovsxbw → i16x8.extend_low_i8x16_s, roundps → f32x4.nearest, packssdw →
// i16x8.narrow_i32x4_s). Compiled with -mrelaxed-simd, the groups' float
// accumulation is f32x4.relaxed_madd, as the float GEMM's (gemm_simd.cpp madd).
// Scalar twins: qgemm_ref.cpp (bit-identical where the multiply-add is a
// multiply then an add).
//
// The tile: MR = 4 rows of A against one panel (8 outputs) of B. Per input
// pair: two int16 vectors of B (outputs 0–3, 4–7) — q8: one 16-byte load
// widened (i16x8.extend_low/high); q4: a shift and a mask of the two 16-byte
// loads of four pairs (qgemm.h's layout), 8·Σx taken off per group — and per row one
// splat of its input pair and two pmaddwd into int32 accumulators: 8
// accumulators, 2 B vectors, the raw load and a splat — 12 live vectors, inside
// the ~12 V8 keeps in registers (docs/TOOLCHAIN.md, SIMD). After a group of 32
// inputs the int32 sums become floats, times the 8 scales, added to the tile's
// float sums (in memory: 8 more vectors would spill). A's tile is packed per
// block of 512 inputs with its 4 rows' pairs interleaved, so each splat is one
// load at a constant offset; the tile quantizes its rows' block of inputs as
// it packs them (A's scales come from one pass over each row first), so the
// product needs no scratch. One row (a decoding step) runs the same tile with
// one row: the same operations per output, so the GEMV is the GEMM's row bit
// for bit.
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

namespace aw::kernels {
namespace {

// acc + a·b: a multiply then an add, or one relaxed_madd in the relaxed build.
inline __m128 madd(__m128 a, __m128 b, __m128 acc) {
#if defined(__wasm_relaxed_simd__)
  return (__m128)wasm_f32x4_relaxed_madd((v128_t)a, (v128_t)b, (v128_t)acc);
#else
  return _mm_add_ps(acc, _mm_mul_ps(a, b));
#endif
}

constexpr size_t kMR = 4;
constexpr size_t kKB = kQBlockGroups * kQGroup;  // inputs per packed block of A's tile: the layout's block
constexpr size_t kPairsKB = kKB / 2;

// xr[0, kb) ← the first `valid` values of row quantized with inv (round half to even, as i16_quantize_rows
// does), zeros after.
inline void quantize_block(size_t valid, size_t kb, const float* row, float inv, int16_t* xr) {
  const __m128 vinv = _mm_set1_ps(inv);
  size_t kk = 0;
  for (; kk + 8 <= valid; kk += 8) {  // |a · inv| <= 32767 (+ rounding): the narrowing saturates nothing
    const __m128i q0 = trunc_to_i32(_mm_round_ps(_mm_mul_ps(_mm_loadu_ps(row + kk), vinv), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    const __m128i q1 = trunc_to_i32(_mm_round_ps(_mm_mul_ps(_mm_loadu_ps(row + kk + 4), vinv), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(xr + kk), _mm_packs_epi32(q0, q1));
  }
  for (; kk < valid; ++kk) xr[kk] = int16_t(std::clamp(std::nearbyint(row[kk] * inv), -32767.0f, 32767.0f));
  for (; kk < kb; ++kk) xr[kk] = 0;
}

// The tile's rows of A (lda apart), inputs [k0, k0 + kb) quantized with their row's 1/t (inv) as interleaved
// pairs: xp[p · 4 + r] holds row r's int16 inputs k0 + 2p, k0 + 2p + 1 (rows past `rows`, inputs past k and
// rows with no finite scale: zeros); gsum[g · 4 + r]: the sum of row r's inputs in group g of the block.
inline void quantize_tile(size_t rows, size_t k, size_t k0, size_t kb, const float* a, size_t lda, const float* inv,
                          int32_t* xp, int32_t* gsum) {
  alignas(16) int16_t xr[kKB];
  for (size_t r = 0; r < kMR; ++r) {
    const size_t valid = r < rows && inv[r] > 0.0f && k0 < k ? std::min(kb, k - k0) : 0;
    quantize_block(valid, kb, a + r * lda + k0, inv[r], xr);
    for (size_t p = 0; p < kb / 2; ++p) std::memcpy(xp + p * kMR + r, xr + 2 * p, 4);
    for (size_t g = 0; g < kb / kQGroup; ++g) {
      int32_t sum = 0;
      for (size_t i = 0; i < kQGroup; ++i) sum += xr[g * kQGroup + i];
      gsum[g * kMR + r] = sum;
    }
  }
}

// One group of one panel against the tile's R rows: int32 sums, then fs (R × 8 floats) += float(sum) · s.
// gs: the rows' sums of the group's inputs (gs[r]; q4 takes 8 · gs[r] off its unsigned nibbles' sums).
template <QBits B, size_t R>
inline void group_tile(const uint8_t* grp, const int32_t* xp, const int32_t* gs, float* fs) {
  __m128i acc[R][2];
  for (size_t r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm_setzero_si128();
  auto pair = [&](__m128i lo, __m128i hi, size_t p) {  // pair p's int16 weights: outputs 0–3 (lo), 4–7 (hi)
    for (size_t r = 0; r < R; ++r) {
      const __m128i xa = _mm_set1_epi32(xp[p * kMR + r]);
      acc[r][0] = _mm_add_epi32(acc[r][0], _mm_madd_epi16(xa, lo));
      acc[r][1] = _mm_add_epi32(acc[r][1], _mm_madd_epi16(xa, hi));
    }
  };
  const uint8_t* q = grp + 32;
  if constexpr (B == QBits::kQ8) {
    for (size_t p = 0; p < kQGroup / 2; ++p) {
      const __m128i b8 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + p * 16));
#if defined(__wasm_simd128__)
      // One load and two extends. Two i16x8.load8x8_s (a load that widens) instead ran 1.3× slower in Node 20
      // (one row of 58 101 × 512: 2.05 against 1.56 ms, same-process A/B, Zen 5; 4 rows 0.97×).
      pair(wasm_i16x8_extend_low_i8x16(b8), wasm_i16x8_extend_high_i8x16(b8), p);  // one operation each
#else
      pair(_mm_cvtepi8_epi16(b8), _mm_cvtepi8_epi16(_mm_srli_si128(b8, 8)), p);
#endif
    }
  } else {
    const __m128i mask = _mm_set1_epi32(0x000F000F);
    auto nib = [&](__m128i v, int i) { return _mm_and_si128(i == 0 ? v : _mm_srli_epi32(v, 4 * i), mask); };
    if constexpr (R == 1) {  // the pairs straight from the two chunks in registers
      for (size_t o = 0; o < kQGroup / 8; ++o) {
        const __m128i v0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + o * 32));
        const __m128i v1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + o * 32 + 16));
        for (int i = 0; i < 4; ++i) pair(nib(v0, i), nib(v1, i), 4 * o + i);
      }
    } else {
      // With 4 rows, 8 accumulators, a splat and both chunks would spill: the group's pairs are unpacked into
      // a stack block first (the barrier keeps the compiler from folding it back into the loop).
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
      for (size_t p = 0; p < kQGroup / 2; ++p) pair(wv[p][0], wv[p][1], p);
    }
    for (size_t r = 0; r < R; ++r) {  // Σ x·q = Σ x·(q + 8) − 8·Σ x, exactly
      const __m128i off = _mm_set1_epi32(8 * gs[r]);
      acc[r][0] = _mm_sub_epi32(acc[r][0], off);
      acc[r][1] = _mm_sub_epi32(acc[r][1], off);
    }
  }
  const __m128 s_lo = _mm_loadu_ps(reinterpret_cast<const float*>(grp));
  const __m128 s_hi = _mm_loadu_ps(reinterpret_cast<const float*>(grp + 16));
  for (size_t r = 0; r < R; ++r) {
    _mm_store_ps(fs + r * 8, madd(_mm_cvtepi32_ps(acc[r][0]), s_lo, _mm_load_ps(fs + r * 8)));
    _mm_store_ps(fs + r * 8 + 4, madd(_mm_cvtepi32_ps(acc[r][1]), s_hi, _mm_load_ps(fs + r * 8 + 4)));
  }
}

// One block of inputs for a tile of R rows over the window's panels: the float sums of each panel's tile live
// in C between blocks (first block: from zero; last: times t and alpha, plus bias). The unit a first call
// tiers up on (core/tiering.h): entered per row tile and block.
// block: the layout's block of these inputs (its first panel's first group); gbs: its groups.
template <QBits B, size_t R>
AW_TIER_ENTRY void tile_block(bool first, bool last, size_t rows, size_t n, size_t gbs, const int32_t* xp,
                              const int32_t* gsum, const uint8_t* block, float* c, size_t ldc, const float* t, const float* bias,
                              float alpha) {
  constexpr size_t gbytes = q_group_bytes(B);
  alignas(16) float fs[kMR * 8];
  const size_t panels = (n + 7) / 8;
  for (size_t jp = 0; jp < panels; ++jp) {
    const size_t j = jp * 8, cols = std::min<size_t>(8, n - j);
    for (size_t r = 0; r < R; ++r)
      for (size_t q = 0; q < 8; ++q) fs[r * 8 + q] = !first && r < rows && q < cols ? c[r * ldc + j + q] : 0.0f;
    const uint8_t* grp = block + jp * gbs * gbytes;
    for (size_t g = 0; g < gbs; ++g) group_tile<B, R>(grp + g * gbytes, xp + g * (kQGroup / 2) * kMR, gsum + g * kMR, fs);
    for (size_t r = 0; r < rows; ++r)
      for (size_t q = 0; q < cols; ++q) {
        float v = fs[r * 8 + q];
        if (last) {
          v = v * t[r];
          v = v * alpha;
          if (bias) v = v + bias[j + q];
        }
        c[r * ldc + j + q] = v;
      }
  }
}

// Max |a| of a row and whether every value is finite.
inline float row_amax(size_t k, const float* row, bool* finite) {
  const __m128 absmask = _mm_castsi128_ps(_mm_set1_epi32(0x7FFFFFFF));
  const __m128 inf = _mm_set1_ps(std::numeric_limits<float>::infinity());
  __m128 mx = _mm_setzero_ps(), bad = _mm_setzero_ps();
  size_t kk = 0;
  for (; kk + 4 <= k; kk += 4) {
    const __m128 a = _mm_and_ps(_mm_loadu_ps(row + kk), absmask);
    bad = _mm_or_ps(bad, _mm_cmpnlt_ps(a, inf));  // NaN (unordered) or ±inf
    mx = _mm_max_ps(mx, a);
  }
  alignas(16) float lanes[4];
  _mm_store_ps(lanes, mx);
  float amax = std::max(std::max(lanes[0], lanes[1]), std::max(lanes[2], lanes[3]));
  bool ok = _mm_movemask_ps(bad) == 0;
  for (; kk < k; ++kk) {
    ok = ok && std::isfinite(row[kk]);
    amax = std::max(amax, std::fabs(row[kk]));
  }
  *finite = ok;
  return amax;
}

// A row's scale t = max|a| / 32767 and its inverse 32767 / max|a| (0 for a zero row; t NaN, inverse 0 for a
// row with a NaN or ±inf), as i16_quantize_rows computes them.
inline void row_scales(size_t k, const float* row, float* t, float* inv) {
  bool finite = true;
  const float amax = row_amax(k, row, &finite);
  if (!finite) {
    *t = std::numeric_limits<float>::quiet_NaN();
    *inv = 0.0f;
  } else {
    *t = amax / 32767.0f;
    *inv = amax == 0.0f ? 0.0f : 32767.0f / amax;
  }
}

template <QBits B>
void gemm_impl(size_t m, size_t n, size_t k, float* c, size_t ldc, const float* a, size_t lda, const uint8_t* bp,
               size_t bn, size_t j0, const float* bias, float alpha) {
  if (m == 0 || n == 0) return;
  const size_t kq = q_padded_k(k), jp0 = j0 / 8;
  alignas(16) int32_t xp[kPairsKB * kMR];
  alignas(16) int32_t gsum[kQBlockGroups * kMR];
  // q4a16 (B = kQ4) takes every row through the 1-row tile: a 4-row tile would be 3.5 KB more of each .wasm for
  // the prefill of the arithmetic kept for its last bit of accuracy ('q4', the default, has its own GEMM). The
  // bits are the same either way: each output's sums run over the groups in order whatever the tile.
  constexpr size_t kRows = B == QBits::kQ8 ? kMR : 1;
  const auto tile1 = TierEntry<&tile_block<B, 1>>();
  auto tile4 = tile1;
  if constexpr (kRows > 1) tile4 = TierEntry<&tile_block<B, kRows>>();
  for (size_t i0 = 0; i0 < m; i0 += kRows) {
    const size_t rows = std::min(kRows, m - i0);
    float t[kMR] = {0, 0, 0, 0}, inv[kMR] = {0, 0, 0, 0};
    for (size_t r = 0; r < rows; ++r) row_scales(k, a + (i0 + r) * lda, &t[r], &inv[r]);
    for (size_t k0 = 0; k0 < kq; k0 += kKB) {
      const size_t kb = std::min(kKB, kq - k0);
      quantize_tile(rows, k, k0, kb, a + i0 * lda, lda, inv, xp, gsum);
      const bool first = k0 == 0, last = k0 + kb == kq;
      const uint8_t* block = bp + q_group_offset(B, bn, k, jp0, k0 / kQGroup);
      (rows == 1 ? tile1 : tile4)(first, last, rows, n, kb / kQGroup, xp, gsum, block, c + i0 * ldc, ldc, t, bias, alpha);
    }
  }
}

}  // namespace

void i16_quantize_rows(size_t m, size_t k, const float* a, size_t lda, int16_t* x, float* t) {
  const size_t kq = q_padded_k(k);
  for (size_t i = 0; i < m; ++i) {
    float inv = 0.0f;
    row_scales(k, a + i * lda, &t[i], &inv);
    quantize_block(inv > 0.0f ? k : 0, kq, a + i * lda, inv, x + i * kq);
  }
}

void q_gemm(QBits b, size_t m, size_t n, size_t k, float* c, size_t ldc, const float* a, size_t lda,
            const uint8_t* bp, size_t bn, size_t j0, const float* bias, float alpha) {
  if (b == QBits::kQ8) gemm_impl<QBits::kQ8>(m, n, k, c, ldc, a, lda, bp, bn, j0, bias, alpha);
  else gemm_impl<QBits::kQ4>(m, n, k, c, ldc, a, lda, bp, bn, j0, bias, alpha);
}

}  // namespace aw::kernels
