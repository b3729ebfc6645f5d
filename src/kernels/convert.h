// Element conversions between float32 and the 16-bit float formats weights are
// stored in (scalar: they run per row while a file loads, and inside the
// scalar references; the SIMD kernels widen in registers, gemm_simd.cpp).
//   bf16 → f32, f16 → f32   exact for every input (subnormals, ±inf, NaN payloads)
//   f32 → bf16, f32 → f16   round to nearest, ties to even (IEEE); f16
//                           overflows to ±inf and keeps subnormals; a NaN stays
//                           a NaN (quiet, sign kept)
// Bit patterns are uint16_t, little-endian in memory as in safetensors files.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace aw::kernels {

inline float f32_from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}
inline uint32_t f32_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// bfloat16 is the top half of a float32.
inline float bf16_to_f32(uint16_t h) { return f32_from_bits(uint32_t(h) << 16); }
uint16_t f32_to_bf16(float f);
float f16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);

// n stored elements (little-endian bytes at any alignment, as in a file) to float32: exact, except
// f64 → f32, rounded to nearest (beyond the float range: ±inf).
void f32_from_f32_bytes(size_t n, const uint8_t* src, float* dst);
void f32_from_f64_bytes(size_t n, const uint8_t* src, float* dst);
void f32_from_f16_bytes(size_t n, const uint8_t* src, float* dst);
void f32_from_bf16_bytes(size_t n, const uint8_t* src, float* dst);  // SIMD (pack_simd.cpp): 8 at a time
void f32_from_bf16_bytes_ref(size_t n, const uint8_t* src, float* dst);  // its scalar twin

}  // namespace aw::kernels
