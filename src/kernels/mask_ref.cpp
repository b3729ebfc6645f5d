// Scalar references for the masking kernels in mask.h: the oracles the xsimd
// versions (mask_simd.cpp) are tested against.
#include "kernels/mask.h"

#include <cmath>
#include <limits>

namespace aw::kernels {

void f32_mask_keep_u8_ref(size_t n, float* x, const uint8_t* keep) {
  const float neg_inf = -std::numeric_limits<float>::infinity();
  for (size_t j = 0; j < n; ++j) {
    if (keep[j] == 0) x[j] = neg_inf;
  }
}

void f32_mask_drop_u8_ref(size_t n, float* x, const uint8_t* drop) {
  const float neg_inf = -std::numeric_limits<float>::infinity();
  for (size_t j = 0; j < n; ++j) {
    if (drop[j] != 0) x[j] = neg_inf;
  }
}

bool f32_all_finite_ref(size_t rows, size_t n, const float* x, size_t ld) {
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < n; ++j)
      if (!std::isfinite(x[i * ld + j])) return false;
  return true;
}

}  // namespace aw::kernels
