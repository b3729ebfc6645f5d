#include "kernels/convert.h"

#include <cmath>

namespace aw::kernels {

uint16_t f32_to_bf16(float f) {
  const uint32_t b = f32_bits(f);
  if ((b & 0x7FFFFFFFu) > 0x7F800000u) return uint16_t((b >> 16) | 0x0040u);  // NaN: quiet, sign and top bits kept
  const uint32_t rounding = 0x7FFFu + ((b >> 16) & 1u);                        // ties to even
  return uint16_t((b + rounding) >> 16);                                       // overflow carries into ±inf
}

float f16_to_f32(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1F, mant = h & 0x3FF;
  if (exp == 0) {  // zero or subnormal: mant × 2^-24, exact in float32
    const float v = float(mant) * 0x1p-24f;
    return sign ? -v : v;
  }
  if (exp == 31) return f32_from_bits(sign | 0x7F800000u | (mant << 13));  // ±inf, NaN (payload kept)
  return f32_from_bits(sign | ((exp + 127 - 15) << 23) | (mant << 13));
}

uint16_t f32_to_f16(float f) {
  const uint32_t b = f32_bits(f);
  const uint16_t sign = uint16_t((b >> 16) & 0x8000u);
  const uint32_t abs = b & 0x7FFFFFFFu;
  if (abs > 0x7F800000u) return uint16_t(sign | 0x7E00u | ((abs >> 13) & 0x3FFu));  // NaN, quiet
  if (abs >= 0x477FF000u) return uint16_t(sign | 0x7C00u);  // >= 65520 rounds to inf (65504 is the largest)
  const float a = f32_from_bits(abs);
  if (a < 0x1p-14f) {
    // Subnormal (or zero): a multiple of 2^-24, rounded to nearest even by the float add.
    const float q = a * 0x1p24f;                    // exact
    const float r = std::nearbyint(q);              // ties to even (default rounding mode)
    return uint16_t(sign | uint16_t(r));            // r <= 1024: 1024 is the smallest normal's bits
  }
  // Normal: keep 10 mantissa bits, round the 13 dropped to nearest even.
  const uint32_t rebias = abs - ((127u - 15u) << 23);
  const uint32_t rounding = 0xFFFu + ((rebias >> 13) & 1u);
  return uint16_t(sign | ((rebias + rounding) >> 13));  // a carry moves into the exponent, up to inf
}

namespace {
inline uint16_t load_u16(const uint8_t* p) { return uint16_t(p[0] | (p[1] << 8)); }
}  // namespace

void f32_from_f32_bytes(size_t n, const uint8_t* src, float* dst) {
  if (n) std::memcpy(dst, src, n * 4);  // a zero-size tensor may come with null pointers
}

void f32_from_f64_bytes(size_t n, const uint8_t* src, float* dst) {
  for (size_t i = 0; i < n; ++i) {
    double d;
    std::memcpy(&d, src + 8 * i, 8);
    dst[i] = static_cast<float>(d);
  }
}

void f32_from_f16_bytes(size_t n, const uint8_t* src, float* dst) {
  for (size_t i = 0; i < n; ++i) dst[i] = f16_to_f32(load_u16(src + 2 * i));
}

void f32_from_bf16_bytes_ref(size_t n, const uint8_t* src, float* dst) {
  for (size_t i = 0; i < n; ++i) dst[i] = bf16_to_f32(load_u16(src + 2 * i));
}

}  // namespace aw::kernels
