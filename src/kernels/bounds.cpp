// kernels/bounds.h: scalar loops (compiled -O2: CMakeLists.txt).
#include <cfloat>
#include <cmath>
#include <limits>

#include "kernels/bounds.h"

namespace aw::kernels {

void f32_bounds_spread(size_t n, float A, float C, float K, const float* wn, const float* en, const float* bias,
                       float* lo, float* up) {
  for (size_t i = 0; i < n; ++i) {
    const float y = lo[i], b = bias ? std::fabs(bias[i]) : 0.0f;
    const float e = A * wn[i] + C * en[i] + K * (std::fabs(y) + b) + FLT_MIN;
    const bool finite = std::fabs(y) <= FLT_MAX;
    lo[i] = finite ? y - e : std::numeric_limits<float>::quiet_NaN();
    up[i] = finite ? y + e : std::numeric_limits<float>::quiet_NaN();
  }
}

float f32_bounds_best(size_t n, const float* lower, const float* upper) {
  float best = -std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < n; ++i) {
    if (!(lower[i] <= upper[i])) return std::numeric_limits<float>::quiet_NaN();
    if (lower[i] > best) best = lower[i];
  }
  return best;
}

size_t f32_bounds_above(size_t n, const float* upper, float t, float* ids, size_t cap) {
  size_t count = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!(upper[i] >= t)) continue;
    if (count < cap) ids[count] = float(i);
    if (++count > cap) break;
  }
  return count;
}

}  // namespace aw::kernels
