// Float vectors to int32 vectors without Emscripten 3.1.6's emulation: its _mm_cvttps_epi32 and
// _mm_cvtps_epi32 ("TODO: optimize") convert lane by lane through lrint, which cost 2 % of a q4 decoding step,
// a third of a q8 load and 5 ns per GELU value (xsimd's exp calls one per vector). In wasm these are the
// saturating conversion: the same ints for |x| < 2^31; out of range and NaN saturated or 0 (SSE: INT_MIN),
// which no caller relies on. Natively the SSE instructions themselves.
#pragma once
#include <smmintrin.h>
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#endif

namespace aw::kernels {

// Each lane truncated toward zero (SSE's cvttps).
inline __m128i trunc_to_i32(__m128 x) {
#if defined(__wasm_simd128__)
  return (__m128i)wasm_i32x4_trunc_sat_f32x4((v128_t)x);
#else
  return _mm_cvttps_epi32(x);
#endif
}

// Each lane rounded to nearest, ties to even (SSE's cvtps in its default mode).
inline __m128i round_to_i32(__m128 x) {
#if defined(__wasm_simd128__)
  return (__m128i)wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_nearest((v128_t)x));
#else
  return _mm_cvtps_epi32(x);
#endif
}

}  // namespace aw::kernels
