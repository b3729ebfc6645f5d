// Scalar reference for the gemm kernels in gemm.h: the oracle the xsimd
// versions (gemm_simd.cpp) are tested against. Plain loops, one output element
// at a time, accumulated in float in k order. Not meant to be fast.
#include "kernels/gemm.h"

#include <cassert>

namespace aw::kernels {

// C(m, n) = alpha * A(m, k) · B(n, k)^T [+ bias(n)]
void f32_gemm_nt_ref(size_t m, size_t n, size_t k, float* c, size_t ldc,
                     const float* a, size_t lda, const float* b, size_t ldb,
                     const float* bias, float alpha) {
  assert(m == 0 || n == 0 || (lda >= k && ldb >= k && ldc >= n));
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (size_t p = 0; p < k; ++p) sum += a[i * lda + p] * b[j * ldb + p];
      float v = alpha * sum;
      if (bias) v += bias[j];
      c[i * ldc + j] = v;
    }
  }
}

// C(m, n) = A(m, k) · B(k, n) [+ bias(n)]
void f32_gemm_nn_ref(size_t m, size_t n, size_t k, float* c, size_t ldc,
                     const float* a, size_t lda, const float* b, size_t ldb,
                     const float* bias) {
  assert(m == 0 || n == 0 || (lda >= k && ldb >= n && ldc >= n));
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (size_t p = 0; p < k; ++p) sum += a[i * lda + p] * b[p * ldb + j];
      if (bias) sum += bias[j];
      c[i * ldc + j] = sum;
    }
  }
}

}  // namespace aw::kernels
