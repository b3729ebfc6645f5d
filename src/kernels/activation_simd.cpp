// xsimd versions of the activation kernels (activation.h), templated on the
// xsimd arch and instantiated for xsimd::default_arch (W = batch::size = 8 or
// 4). Scalar twins: activation_ref.cpp.
// The GELUs use the same cancellation-free identities as the references:
//   gelu:       0.5 x (1 + erf(x / sqrt 2))  = 0.5 x erfc(-x / sqrt 2)   gelu_impl's erfc (below)
//   gelu_tanh:  0.5 x (1 + tanh(u))          = x / (1 + exp(-2u))        xsimd::exp
//   silu:       x sigmoid(x)                 = x / (1 + exp(-x))         xsimd::exp (torch's form)
//   quick_gelu: x sigmoid(1.702 x)           = x / (1 + exp(-1.702 x))   the same code, scaled
// xsimd 8.1's float exp (Cephes polynomials, generic code, so the same on
// sse4_1 and avx2) is within a few ulp, and so is gelu's erfc (tests/kernels/
// activation_test.cpp bounds both against the references). The textbook forms
// (what torch's CPU kernel evaluates, with xsimd::erf / xsimd::tanh here) lose
// all relative accuracy for x below about -3: 1 + erf(..) cancels. Ours keep
// relative accuracy there, so where we differ from torch it is by torch's
// rounding, at most about |x| * FLT_EPSILON / 2 in absolute terms.
// The GELU tails (n % W elements) go through the same vector code, padded, so
// every element sees the same approximation regardless of its position.
#include "kernels/activation.h"

#include "kernels/simd_int.h"
#if defined(__wasm_simd128__)
// xsimd's exp (ldexp(x, to_int(k))) converts with these: the wasm conversions of simd_int.h instead of
// Emscripten's lane-by-lane ones. Out of range or NaN they differ from SSE only in lanes exp replaces afterwards
// (x ≤ minlog → 0, x ≥ maxlog → inf, NaN stays NaN whatever the exponent), so every result keeps its bits.
#define _mm_cvttps_epi32 aw::kernels::trunc_to_i32
#define _mm_cvtps_epi32 aw::kernels::round_to_i32
#endif
#include <xsimd/xsimd.hpp>

#include "kernels/exp_simd.h"  // after xsimd, which must see the conversions above first

namespace aw::kernels {
namespace {

constexpr float kSqrt1_2 = 0.70710678118654752440f;  // 1 / sqrt(2)
constexpr float kSqrt2_Pi = 0.79788456080286535588f;  // sqrt(2 / pi)
constexpr float kGeluTanhCubic = 0.044715f;

// Applies f (batch -> batch) to x[0, n) in place; the tail is copied into a
// zero-padded batch, transformed, and copied back.
template <class Arch, class F>
inline void map_inplace(size_t n, float* x, F f) {
  using batch = xsimd::batch<float, Arch>;
  constexpr size_t W = batch::size;
  size_t j = 0;
  for (; j + W <= n; j += W) f(batch::load_unaligned(x + j)).store_unaligned(x + j);
  if (j < n) {
    const size_t rest = n - j;
    alignas(Arch::alignment()) float lanes[W];
    for (size_t l = 0; l < W; ++l) lanes[l] = l < rest ? x[j + l] : 0.0f;
    f(batch::load_aligned(lanes)).store_aligned(lanes);
    for (size_t l = 0; l < rest; ++l) x[j + l] = lanes[l];
  }
}

template <class Arch>
void relu_impl(size_t n, float* x) {
  using batch = xsimd::batch<float, Arch>;
  constexpr size_t W = batch::size;
  // select(x < 0, 0, x) rather than xsimd::max: whether maxps keeps a NaN
  // depends on operand order (it returns the second operand if either is NaN;
  // Emscripten emulates exactly that with a compare and a bitselect). The
  // explicit form costs the same (compare + blend / bitselect) and says what it
  // means: `x < 0` is false for NaN, so NaN passes; -0 stays -0 (as torch).
  const batch zero(0.0f);
  size_t j = 0;
  for (; j + W <= n; j += W) {
    const batch v = batch::load_unaligned(x + j);
    xsimd::select(v < zero, zero, v).store_unaligned(x + j);
  }
  for (; j < n; ++j)  // as f32_relu_ref: a select here would become f32.max in wasm (+0 for -0)
    if (x[j] < 0.0f) x[j] = 0.0f;
}

// gelu = 0.5 x erfc(-x / sqrt 2). E = erfc(a), a = |x| / sqrt 2, in one branch-free form: t exp(-a^2 + P(t)),
// t = 1 / (1 + a / 2), P of degree 9 (the Chebyshev fit of Numerical Recipes' erfcc: fractional error below
// 1.2e-7 for every a >= 0), evaluated in Estrin's order (a chain of 4 dependent products, not Horner's 9: this
// loop is bound by its latency). Then h = 0.5 x E is gelu for x <= 0, and x - h for x > 0 (erfc(-a) = 2 - E).
// Rounding -a^2 inside exp costs a^2 eps / 2 relative: gelu's own conditioning for x << 0. The exp is softmax's
// (exp_simd.h: no float-to-int conversion; 0 below -88). In wasm (baseline build, bench/lib.mjs
// kernelBench().activation) 2.8–3.0 ns a value, against 3.55 for xsimd's erfc, which evaluates two ranges, each with
// its own polynomial and exp, both whenever a vector straddles them.
// Special values: a = inf gives t = 0 and E = 0, so x = -inf gives -inf * 0 = NaN (as torch's formula) and x =
// +inf gives inf - 0.5 min(x, 16) * 0 = inf (past x = 16, h is below an ulp of x); NaN propagates through t and
// E (min(NaN, 16) is 16 on SSE and SIMD128 alike, but E is NaN).
template <class Arch>
void gelu_impl(size_t n, float* x) {
  using batch = xsimd::batch<float, Arch>;
  const batch one(1.0f), half(0.5f), s(kSqrt1_2), cap(16.0f);
  map_inplace<Arch>(n, x, [&](batch v) {
    const batch a = xsimd::abs(v) * s;
    const batch t = one / xsimd::fma(half, a, one);
    const batch t2 = t * t, t4 = t2 * t2, t8 = t4 * t4;
    const batch p01 = xsimd::fma(batch(1.00002368f), t, batch(-1.26551223f));
    const batch p23 = xsimd::fma(batch(0.09678418f), t, batch(0.37409196f));
    const batch p45 = xsimd::fma(batch(0.27886807f), t, batch(-0.18628806f));
    const batch p67 = xsimd::fma(batch(1.48851587f), t, batch(-1.13520398f));
    const batch p89 = xsimd::fma(batch(0.17087277f), t, batch(-0.82215223f));
    const batch p03 = xsimd::fma(p23, t2, p01), p47 = xsimd::fma(p67, t2, p45);
    const batch p = xsimd::fma(p89, t8, xsimd::fma(p47, t4, p03));
    const batch e = t * exp_nonpos(xsimd::fnma(a, a, p));
    const batch h = (half * xsimd::min(v, cap)) * e;
    return xsimd::select(v > batch(0.0f), v - h, h);
  });
}

template <class Arch>
void gelu_tanh_impl(size_t n, float* x) {
  using batch = xsimd::batch<float, Arch>;
  // -2u = x * (k0 + k1 x^2) with k0 = -2 sqrt(2/pi), k1 = k0 * 0.044715.
  const batch k0(-2.0f * kSqrt2_Pi), k1(-2.0f * kSqrt2_Pi * kGeluTanhCubic), one(1.0f);
  // Very negative x: exp overflows to inf and x / inf = -0. x = -inf: -inf /
  // inf = NaN, as torch's formula. x^3 overflowing to +-inf is harmless.
  map_inplace<Arch>(n, x, [&](batch v) {
    const batch m2u = v * xsimd::fma(v * v, k1, k0);
    return v / (one + xsimd::exp(m2u));
  });
}

// One body for SiLU and quick_gelu (noinline: a call per array, and one copy of the code in the .wasm).
template <class Arch>
__attribute__((noinline)) void silu_impl(size_t n, float* x, float a) {
  using batch = xsimd::batch<float, Arch>;
  // exp(t), t = -x, overflows float only above ln(FLT_MAX) = 88.72 (as in
  // torch, whose silu(-88.5) is -3.3e-37), but xsimd::exp returns inf from
  // its Cephes bound 88.376 on: above t = 80 take exp(t - 44) · e^44 (e^44
  // rounded to float: half an ulp more error there), which overflows to inf
  // where float does. Then x / inf = -0 below x = -88.72, as torch; t = -inf
  // (x = +inf) gives exp = 0 and silu = inf; x = -inf gives -inf / inf = NaN.
  // quick_gelu (a = 1.702): x / (1 + exp(-a x)), the same overflow handling on t = -a x.
  const batch one(1.0f), big(80.0f), shift(44.0f), e44(1.285159987981792e19f), scale(-a);
  map_inplace<Arch>(n, x, [&](batch v) {
    const batch t = v * scale;
    const auto far = t > big;
    const batch e = xsimd::exp(xsimd::select(far, t - shift, t)) * xsimd::select(far, e44, one);
    return v / (one + e);
  });
}

}  // namespace

void f32_relu(size_t n, float* x) { relu_impl<xsimd::default_arch>(n, x); }
void f32_gelu(size_t n, float* x) { gelu_impl<xsimd::default_arch>(n, x); }
void f32_gelu_tanh(size_t n, float* x) { gelu_tanh_impl<xsimd::default_arch>(n, x); }
void f32_silu(size_t n, float* x) { silu_impl<xsimd::default_arch>(n, x, 1.0f); }
void f32_quick_gelu(size_t n, float* x) { silu_impl<xsimd::default_arch>(n, x, 1.702f); }

}  // namespace aw::kernels
