// Scalar references for the activation kernels (activation.h): the oracles
// the xsimd versions (activation_simd.cpp) are tested against. The two GELUs
// are evaluated in double and rounded once to float, through identities that
// avoid the cancellation in 1 + erf(..) and 1 + tanh(..) for negative x:
//   1 + erf(a)  = erfc(-a)
//   1 + tanh(u) = 2 / (1 + exp(-2u))
// So they are (nearly) correctly rounded everywhere, including the negative
// tail where the textbook formula in float (what torch's CPU kernel computes)
// keeps only an absolute accuracy of about |x| * FLT_EPSILON / 2.
// Not meant to be fast.
#include "kernels/activation.h"

#include <cmath>

namespace aw::kernels {

namespace {
constexpr double kSqrt1_2 = 0.70710678118654752440;     // 1 / sqrt(2)
constexpr double kSqrt2_Pi = 0.79788456080286535588;    // sqrt(2 / pi)
constexpr double kGeluTanhCubic = 0.044715;
}  // namespace

void f32_relu_ref(size_t n, float* x) {
  // `x < 0` is false for NaN, so NaN stays NaN (torch.relu(nan) = nan); -0 stays -0.
  // A conditional store, not `x = x < 0 ? 0 : x`: Emscripten's clang-14 turns
  // that select into wasm f32.max / f32x4.max, which make -0 into +0 (found by
  // the kernel tests built to wasm).
  for (size_t j = 0; j < n; ++j)
    if (x[j] < 0.0f) x[j] = 0.0f;
}

void f32_gelu_ref(size_t n, float* x) {
  // 0.5 x (1 + erf(x / sqrt 2)) = 0.5 x erfc(-x / sqrt 2).
  // x = -inf gives -inf * 0 = NaN, as torch's formula does.
  for (size_t j = 0; j < n; ++j) {
    const double v = x[j];
    x[j] = float(0.5 * v * std::erfc(-v * kSqrt1_2));
  }
}

void f32_gelu_tanh_ref(size_t n, float* x) {
  // 0.5 x (1 + tanh(u)) = x / (1 + exp(-2u)),  u = sqrt(2/pi) (x + 0.044715 x^3).
  // For very negative x, exp(-2u) = inf and the result is -0 (true value
  // below 1e-300); x = -inf gives -inf / inf = NaN, as torch's formula does.
  for (size_t j = 0; j < n; ++j) {
    const double v = x[j];
    const double u = kSqrt2_Pi * (v + kGeluTanhCubic * v * v * v);
    x[j] = float(v / (1.0 + std::exp(-2.0 * u)));
  }
}

void f32_silu_ref(size_t n, float* x) {
  // x / (1 + exp(-x)) in double, rounded once: (nearly) correctly rounded. For
  // x below about -745 exp(-x) = inf and the result is -0; x = -inf gives
  // -inf / inf = NaN and NaN stays NaN, as torch's float formula.
  for (size_t j = 0; j < n; ++j) {
    const double v = x[j];
    x[j] = float(v / (1.0 + std::exp(-v)));
  }
}

void f32_quick_gelu_ref(size_t n, float* x) {
  // HF's QuickGELUActivation, x · sigmoid(1.702 x): t = 1.702 x rounded to float, as torch multiplies a float
  // tensor by the scalar (and as the kernel does: exp amplifies that rounding, up to 4e-6 relative at |t| = 88),
  // then x / (1 + exp(-t)) in double, rounded once. -inf gives NaN, as torch's -inf · sigmoid(-inf) = -inf · 0.
  for (size_t j = 0; j < n; ++j) {
    const double v = x[j];
    const double t = double(1.702f * x[j]);
    x[j] = float(v / (1.0 + std::exp(-t)));
  }
}

}  // namespace aw::kernels
