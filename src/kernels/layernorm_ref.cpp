// Scalar reference for f32_layernorm (layernorm.h): the oracle the xsimd
// version (layernorm_simd.cpp) is tested against. Per row, in double: mean,
// then the biased variance as the mean of squared deviations (two passes, no
// E[x^2] - E[x]^2 cancellation), then the affine output rounded once to float.
// Not meant to be fast.
#include "kernels/layernorm.h"

#include <cassert>
#include <cmath>

namespace aw::kernels {

void f32_layernorm_ref(size_t rows, size_t n, float* y, size_t ldy, const float* x, size_t ldx,
                       const float* gamma, const float* beta, float eps) {
  assert(rows <= 1 || n == 0 || (ldx >= n && ldy >= n));
  if (n == 0) return;
  for (size_t i = 0; i < rows; ++i) {
    const float* xi = x + i * ldx;
    float* yi = y + i * ldy;

    double sum = 0.0;
    for (size_t j = 0; j < n; ++j) sum += xi[j];
    const double mean = sum / double(n);

    double ss = 0.0;
    for (size_t j = 0; j < n; ++j) {
      const double d = double(xi[j]) - mean;
      ss += d * d;
    }
    const double var = ss / double(n);  // biased, as torch.nn.functional.layer_norm
    const double rstd = 1.0 / std::sqrt(var + double(eps));

    // Reads xi[j] before writing yi[j]: in place (y == x, ldy == ldx) is fine.
    for (size_t j = 0; j < n; ++j) {
      double v = (double(xi[j]) - mean) * rstd;
      if (gamma) v *= double(gamma[j]);
      if (beta) v += double(beta[j]);
      yi[j] = float(v);
    }
  }
}

}  // namespace aw::kernels
