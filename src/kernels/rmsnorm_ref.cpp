// Scalar reference for f32_rmsnorm (rmsnorm.h): the oracle the xsimd version
// (rmsnorm_simd.cpp) is tested against. Per row: the squares x[j]^2 rounded
// to float (torch's x.pow(2) in float32), summed in double (exact enough to
// be the correctly rounded mean), the mean rounded to float, then
// r = 1 / sqrt(mean + eps) in double rounded once to float, and
// y = (x * r) * weight in float, torch's order. So the reference differs from
// the kernel only in how the float squares are summed. Not meant to be fast.
#include "kernels/rmsnorm.h"

#include <cassert>
#include <cmath>

namespace aw::kernels {

void f32_rmsnorm_ref(size_t rows, size_t n, float* y, size_t ldy, const float* x, size_t ldx, const float* weight,
                     float eps) {
  assert(rows <= 1 || n == 0 || (ldx >= n && ldy >= n));
  if (n == 0) return;
  for (size_t i = 0; i < rows; ++i) {
    const float* xi = x + i * ldx;
    float* yi = y + i * ldy;
    double ss = 0.0;
    for (size_t j = 0; j < n; ++j) {
      const float sq = xi[j] * xi[j];  // float, as torch's pow(2): overflows to inf as it does
      ss += sq;
    }
    const float ms = float(ss / double(n));
    const float r = float(1.0 / std::sqrt(double(ms) + double(eps)));
    // Reads xi[j] before writing yi[j]: in place (y == x, ldy == ldx) is fine.
    for (size_t j = 0; j < n; ++j) {
      const float t = xi[j] * r;
      yi[j] = weight ? t * weight[j] : t;
    }
  }
}

}  // namespace aw::kernels
