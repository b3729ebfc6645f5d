// Scalar references of elementwise.h: the plain loops.
#include "kernels/elementwise.h"

namespace aw::kernels {

void f32_add_ref(size_t n, float* y, const float* x) {
  for (size_t j = 0; j < n; ++j) y[j] += x[j];
}

void f32_mul_ref(size_t n, float* y, const float* x) {
  for (size_t j = 0; j < n; ++j) y[j] *= x[j];
}

}  // namespace aw::kernels
