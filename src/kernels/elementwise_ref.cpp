// Scalar references of elementwise.h: the plain loops.
#include "kernels/elementwise.h"

namespace aw::kernels {

void f32_add_ref(size_t n, float* y, const float* x) {
  for (size_t j = 0; j < n; ++j) y[j] += x[j];
}

void f32_mul_ref(size_t n, float* y, const float* x) {
  for (size_t j = 0; j < n; ++j) y[j] *= x[j];
}

void f32_dot_rows_ref(size_t n, size_t k, const float* a, size_t lda, const float* x, float* y) {
  for (size_t i = 0; i < n; ++i) {
    float acc = 0.0f;
    for (size_t j = 0; j < k; ++j) acc += a[i * lda + j] * x[j];
    y[i] = acc;
  }
}

void f32_axpy_rows_ref(size_t n, size_t k, const float* a, size_t lda, const float* p, size_t ps, float* y) {
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < k; ++j) y[j] += p[i * ps] * a[i * lda + j];
}

}  // namespace aw::kernels
