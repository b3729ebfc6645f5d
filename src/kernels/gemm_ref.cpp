// Scalar references for the gemm kernels in gemm.h: the oracles the xsimd
// versions (gemm_simd.cpp) are tested against. Plain loops, one output element
// at a time, accumulated in float in k order, packed operands read through
// their documented layouts. Not meant to be fast.
#include "kernels/gemm.h"

#include <algorithm>
#include <cassert>

#include "kernels/convert.h"

namespace aw::kernels {

// ---- packed B (layout in gemm.h) ----

namespace {
// Where B[p][j] lives in a packed B of n columns and depth k (gemm.h).
inline size_t packed_index(size_t n, size_t k, size_t p, size_t j) {
  const size_t b0 = p / kGemmKC * kGemmKC, kc = std::min(kGemmKC, k - b0);
  return b0 * f32_gemm_packed_cols(n) + (j / kGemmNR) * kc * kGemmNR + (p - b0) * kGemmNR + j % kGemmNR;
}
inline float packed_at(const float* bp, size_t n, size_t k, size_t p, size_t j) { return bp[packed_index(n, k, p, j)]; }
}  // namespace

void f32_gemm_pack_nt_ref(size_t n, size_t k, const float* b, size_t ldb, float* bp) {
  for (size_t p = 0; p < k; ++p)
    for (size_t j = 0; j < f32_gemm_packed_cols(n); ++j) bp[packed_index(n, k, p, j)] = j < n ? b[j * ldb + p] : 0.0f;
}

void f32_gemm_pack_nn_ref(size_t n, size_t k, const float* b, size_t ldb, float* bp) {
  for (size_t p = 0; p < k; ++p)
    for (size_t j = 0; j < f32_gemm_packed_cols(n); ++j) bp[packed_index(n, k, p, j)] = j < n ? b[p * ldb + j] : 0.0f;
}

// C(m, n) = alpha * A(m, k) · Bp(k, n) [+ bias(n)]
void f32_gemm_packed_ref(size_t m, size_t n, size_t k, float* c, size_t ldc, const float* a, size_t lda,
                         const float* bp, const float* bias, float alpha) {
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < n; ++j) {
      float sum = 0.0f;
      for (size_t p = 0; p < k; ++p) sum += a[i * lda + p] * packed_at(bp, n, k, p, j);
      float v = alpha * sum;
      if (bias) v += bias[j];
      c[i * ldc + j] = v;
    }
  }
}

// C(m, n) = [C · diag(row_scale) +] Ap(m, k) · Bp(k, n), A packed
void f32_gemm_pp_ref(size_t m, size_t n, size_t k, float* c, size_t ldc, const float* ap, const float* bp, size_t bk,
                     const float* row_scale, bool accumulate) {
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < n; ++j) {
      float sum = !accumulate ? 0.0f : row_scale ? c[i * ldc + j] * row_scale[i] : c[i * ldc + j];
      for (size_t p = 0; p < k; ++p)
        sum += ap[(i / kGemmMR) * k * kGemmMR + p * kGemmMR + i % kGemmMR] * packed_at(bp, n, bk, p, j);
      c[i * ldc + j] = sum;
    }
  }
}

void f32_gemm_pack_a_ref(size_t m, size_t k, const float* a, size_t lda, float alpha, float* ap) {
  const size_t mp = (m + kGemmMR - 1) / kGemmMR * kGemmMR;
  for (size_t i = 0; i < mp; ++i)
    for (size_t p = 0; p < k; ++p)
      ap[(i / kGemmMR) * k * kGemmMR + p * kGemmMR + i % kGemmMR] = i < m ? alpha * a[i * lda + p] : 0.0f;
}

void h16_widen_ref(Half h, size_t kc, size_t pairs, const uint16_t* src, float* dst) {
  for (size_t q = 0; q < pairs; ++q)
    for (size_t half = 0; half < 2; ++half)
      for (size_t p = 0; p < kc; ++p)
        for (size_t j = 0; j < kGemmNR; ++j) {
          const uint16_t v = src[(q * kc + p) * kH16Cols + half * kGemmNR + h16_slot(j)];
          dst[((2 * q + half) * kc + p) * kGemmNR + j] = h == Half::kBF16 ? bf16_to_f32(v) : f16_to_f32(v);
        }
}

}  // namespace aw::kernels
