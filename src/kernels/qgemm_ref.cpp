// Scalar references for kernels/qgemm.h: the layout read and written element by element, the products one
// output at a time in the documented order (q_gemm_ref: int16 activations per row; q4_gemm_a8_ref: int8 per
// group). The packers are kernels/pack.h's (pack_ref.cpp).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/qgemm.h"

namespace aw::kernels {

void i16_quantize_rows_ref(size_t m, size_t k, const float* a, size_t lda, int16_t* x, float* t) {
  const size_t kq = q_padded_k(k);
  for (size_t i = 0; i < m; ++i) {
    const float* row = a + i * lda;
    int16_t* xr = x + i * kq;
    float amax = 0.0f;
    bool finite = true;
    for (size_t kk = 0; kk < k; ++kk) {
      finite = finite && std::isfinite(row[kk]);
      amax = std::max(amax, std::fabs(row[kk]));
    }
    std::fill(xr, xr + kq, int16_t(0));
    if (!finite) {
      t[i] = std::numeric_limits<float>::quiet_NaN();
      continue;
    }
    t[i] = amax / 32767.0f;
    if (amax == 0.0f) continue;
    const float inv = 32767.0f / amax;
    for (size_t kk = 0; kk < k; ++kk) xr[kk] = int16_t(std::clamp(std::nearbyint(row[kk] * inv), -32767.0f, 32767.0f));
  }
}

void q_gemm_ref(QBits b, size_t m, size_t n, size_t k, float* c, size_t ldc, const float* a, size_t lda,
                const uint8_t* bp, size_t bn, size_t j0, const float* bias, float alpha, bool fused) {
  const size_t kq = q_padded_k(k), G = kq / kQGroup;
  std::vector<int16_t> x(kq);
  for (size_t i = 0; i < m; ++i) {
    float t = 0.0f;
    i16_quantize_rows_ref(1, k, a + i * lda, lda, x.data(), &t);
    for (size_t j = 0; j < n; ++j) {
      const size_t r = j0 + j;
      float acc = 0.0f;
      for (size_t g = 0; g < G; ++g) {
        int32_t sum = 0;
        for (size_t kk = g * kQGroup; kk < (g + 1) * kQGroup; ++kk) sum += int32_t(x[kk]) * q_at(b, bn, k, bp, r, kk);
        const float s = scale_at(b, bn, k, bp, r, g);
        if (fused) {
          acc = std::fma(float(sum), s, acc);
        } else {
          const float prod = float(sum) * s;
          acc = acc + prod;
        }
      }
      float v = acc * t;
      v = v * alpha;
      if (bias) v = v + bias[j];
      c[i * ldc + j] = v;
    }
  }
}

void i8_quantize_rows_ref(size_t m, size_t k, const float* a, size_t lda, int8_t* x, float* t) {
  const size_t kq = q_padded_k(k), G = kq / kQGroup;
  for (size_t i = 0; i < m; ++i)
    for (size_t g = 0; g < G; ++g) {
      const float* grp = a + i * lda + g * kQGroup;
      int8_t* xg = x + i * kq + g * kQGroup;
      const size_t valid = std::min(kQGroup, k - g * kQGroup);
      float amax = 0.0f;
      bool finite = true;
      for (size_t j = 0; j < valid; ++j) {
        finite = finite && std::isfinite(grp[j]);
        amax = std::max(amax, std::fabs(grp[j]));
      }
      std::fill(xg, xg + kQGroup, int8_t(0));
      float& tg = t[i * G + g];
      const float inv = 127.0f / amax;  // inf for a zero group and below max|a| ≈ 3.7e-37
      if (!finite) {
        tg = std::numeric_limits<float>::quiet_NaN();
      } else if (!(inv <= std::numeric_limits<float>::max())) {
        tg = 0.0f;
      } else {
        tg = amax / 127.0f;
        for (size_t j = 0; j < valid; ++j) xg[j] = int8_t(std::clamp(std::nearbyint(grp[j] * inv), -127.0f, 127.0f));
      }
    }
}

void q4_gemm_a8_ref(size_t m, size_t n, size_t k, float* c, size_t ldc, const float* a, size_t lda, const uint8_t* bp,
                    size_t bn, size_t j0, const float* bias, float alpha) {
  const size_t kq = q_padded_k(k), G = kq / kQGroup;
  std::vector<int8_t> x(kq);
  std::vector<float> t(G);
  for (size_t i = 0; i < m; ++i) {
    i8_quantize_rows_ref(1, k, a + i * lda, lda, x.data(), t.data());
    for (size_t j = 0; j < n; ++j) {
      const size_t r = j0 + j;
      float acc = 0.0f;
      for (size_t g = 0; g < G; ++g) {
        int32_t sum = 0;
        for (size_t kk = g * kQGroup; kk < (g + 1) * kQGroup; ++kk) sum += int32_t(x[kk]) * q_at(QBits::kQ4, bn, k, bp, r, kk);
        const float w = scale_at(QBits::kQ4, bn, k, bp, r, g) * t[g];
        const float prod = float(sum) * w;
        acc = acc + prod;
      }
      float v = acc * alpha;
      if (bias) v = v + bias[j];
      c[i * ldc + j] = v;
    }
  }
}

}  // namespace aw::kernels
