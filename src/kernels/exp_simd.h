// exp for x <= 0 in xsimd batches, shared by the kernels that need one (softmax_simd.cpp: scores minus a row's
// maximum; activation_simd.cpp: the exact GELU's erfc), and the max it clamps with. Header-only: each kernel's
// translation unit instantiates it for its own xsimd arch.
#pragma once
#include <cstdint>

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#endif
#include <xsimd/xsimd.hpp>

namespace aw::kernels {

// The larger of a and b, and a where a is NaN: one instruction in V8 as
// wasm's f32x4.pmax (x < y ? y : x), and x86's maxps natively (b > a ? b :
// a); xsimd's max is a compare and a bitselect in the wasm build.
// (Measured: the online softmax ~10 % faster with it.)
template <class B>
inline B fast_max(const B& a, const B& b) {
#if defined(__wasm_simd128__)
  return B(wasm_f32x4_pmax(a, b));
#else
  return xsimd::max(b, a);
#endif
}

// exp(x) for x <= 0, -inf → 0, NaN → NaN (the callers: softmax's scores minus a row's maximum, the GELU's
// -a^2 + P(t)).
// Cephes' expf: x = n·ln2 + r with n = round(x·log2 e) and |r| <= ln2/2
// (ln2 in two parts, so r is exact), e^r by a degree-5 polynomial in r
// (relative error below 2 ulp, softmax_test.cpp measures it against
// std::exp), times 2^n built in the exponent bits. n comes from adding
// 1.5·2^23, which rounds x·log2 e to an integer in the low mantissa bits:
// no float-to-int conversion, whose saturating form costs a dozen
// instructions in V8's SIMD128. Below about -87.7 (where e^x leaves the
// normal range) the result is 0: at most e^-87 of a sum that holds a 1.
template <class B>
inline B exp_nonpos(const B& xin) {
  // Clamped at -127·ln2: from there n = -127 leaves a zero exponent field,
  // so the result is exactly 0 (for -inf too) with no compare and select.
  // NaN passes the clamp (pmax keeps a NaN first operand).
  const B x = fast_max(xin, B(-88.0296919311f));
  using I = xsimd::batch<int32_t, typename B::arch_type>;
  const B t = xsimd::fma(x, B(1.44269504088896341f), B(12582912.0f));  // round(x·log2 e) + 1.5·2^23
  const B n = t - B(12582912.0f);
  B r = xsimd::fma(n, B(-0.693359375f), x);
  r = xsimd::fma(n, B(2.12194440e-4f), r);
  B y = B(1.9875691500e-4f);
  y = xsimd::fma(y, r, B(1.3981999507e-3f));
  y = xsimd::fma(y, r, B(8.3334519073e-3f));
  y = xsimd::fma(y, r, B(4.1665795894e-2f));
  y = xsimd::fma(y, r, B(1.6666665459e-1f));
  y = xsimd::fma(y, r, B(5.0000001201e-1f));
  y = xsimd::fma(y, r * r, r + B(1.0f));
  // 2^n: n + 127 into the exponent field (bits of t minus those of 1.5·2^23 = n).
  const I e = (xsimd::bitwise_cast<I>(t) + I(127 - 0x4B400000)) << 23;
  return y * xsimd::bitwise_cast<B>(e);
}

}  // namespace aw::kernels
