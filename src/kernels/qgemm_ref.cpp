// Scalar references for kernels/qgemm.h: the layout read and written element by element, the products one
// output at a time in the documented order (q_gemm_ref: int16 activations per row; q4_gemm_a8_ref: int8 per
// group). Packing and unpacking (q_pack_row, q_unpack_row) have no SIMD
// twin: they run per row while a model loads.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/qgemm.h"

namespace aw::kernels {
namespace {

constexpr float kQMax8 = 127.0f, kQMax4 = 7.0f;

// Where a q4 nibble sits in its group: output c (0 … 7) of the panel, input `within` (0 … 31) of the group →
// byte offset in the group and shift within the byte (qgemm.h's layout).
inline void q4_position(size_t c, size_t within, size_t* byte, size_t* shift) {
  const size_t o = within / 8, i = within % 8 / 2, bit = (within % 2) * 16 + 4 * i;
  *byte = 32 + (2 * o + c / 4) * 16 + (c % 4) * 4 + bit / 8;
  *shift = bit % 8;
}

// q of output r, input kk (of a B of n outputs, k inputs).
inline int q_at(QBits b, size_t n, size_t k, const uint8_t* bp, size_t r, size_t kk) {
  const uint8_t* grp = bp + q_group_offset(b, n, k, r / 8, kk / kQGroup);
  const size_t c = r % 8, within = kk % kQGroup, p = within / 2, s = within % 2;
  if (b == QBits::kQ8) return int(int8_t(grp[32 + p * 16 + c * 2 + s]));
  size_t byte = 0, shift = 0;
  q4_position(c, within, &byte, &shift);
  return int((grp[byte] >> shift) & 0x0F) - 8;
}

inline float scale_at(QBits b, size_t n, size_t k, const uint8_t* bp, size_t r, size_t g) {
  float s;
  std::memcpy(&s, bp + q_group_offset(b, n, k, r / 8, g) + (r % 8) * 4, 4);
  return s;
}

}  // namespace

void q_pack_row(QBits b, size_t n, size_t k, size_t r, const float* w, uint8_t* bp) {
  const size_t G = q_padded_k(k) / kQGroup;
  const float qmax = b == QBits::kQ8 ? kQMax8 : kQMax4;
  for (size_t g = 0; g < G; ++g) {
    uint8_t* grp = bp + q_group_offset(b, n, k, r / 8, g);
    const size_t c = r % 8, k0 = g * kQGroup, k1 = std::min(k, k0 + kQGroup);
    float amax = 0.0f;
    bool finite = true;
    for (size_t kk = k0; kk < k1; ++kk) {
      finite = finite && std::isfinite(w[kk]);
      amax = std::max(amax, std::fabs(w[kk]));
    }
    // A group with a NaN or ±inf has no scale: its products are NaN, as the float product would be.
    const float s = finite ? amax / qmax : std::numeric_limits<float>::quiet_NaN();
    std::memcpy(grp + c * 4, &s, 4);
    for (size_t within = 0; within < kQGroup; ++within) {
      const size_t kk = k0 + within, p = within / 2, sub = within % 2;
      int q = 0;
      if (kk < k && finite && s > 0.0f) q = int(std::clamp(std::nearbyint(w[kk] / s), -qmax, qmax));
      if (b == QBits::kQ8) {
        grp[32 + p * 16 + c * 2 + sub] = uint8_t(int8_t(q));
      } else {
        size_t at = 0, shift = 0;
        q4_position(c, within, &at, &shift);
        grp[at] = uint8_t((grp[at] & ~(0x0F << shift)) | ((q + 8) << shift));
      }
    }
  }
}

void q_pack_rows_ref(QBits b, size_t n, size_t k, size_t r0, size_t count, const float* w, size_t ldw, uint8_t* bp) {
  for (size_t i = 0; i < count; ++i) q_pack_row(b, n, k, r0 + i, w + i * ldw, bp);
}

void q_unpack_row(QBits b, size_t n, size_t k, size_t r, const uint8_t* bp, float* w) {
  for (size_t kk = 0; kk < k; ++kk) w[kk] = float(q_at(b, n, k, bp, r, kk)) * scale_at(b, n, k, bp, r, kk / kQGroup);
}

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
