// The scalar packers of kernels/pack.h: single rows of a packed B (the loader writes a checkpoint's rows as they
// arrive, an embedding reads one row per token), and the _ref twins of pack_simd.cpp's multi-row writers. In the
// float layouts each k block of a row is a strided run (NR floats, or 16 values, apart), walked once; a quantized
// row is quantized group by group (kernels/qgemm.h, the arithmetic).
#include <algorithm>

#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/convert.h"
#include "kernels/pack.h"

namespace aw::kernels {
namespace {

// f(p, i): for each input p of row r, its index i in a packed B whose k blocks hold `cols` columns and whose
// rows within a stream are `stride` apart (the f32 layout: cols = np, stride = NR; h16: np16, 16).
template <class F>
inline void each_in_row(size_t k, size_t cols, size_t stride, size_t first, F&& f) {
  for (size_t b0 = 0; b0 < k; b0 += kGemmKC) {
    const size_t kc = std::min(kGemmKC, k - b0);
    size_t i = b0 * cols + first * kc;  // the stream's start in this block (first: its offset in rows of width 1)
    for (size_t p = b0; p < b0 + kc; ++p, i += stride) f(p, i);
  }
}

}  // namespace

// Row r sits in panel r / NR at column r % NR: i = b0 · np + (r / NR) · kc · NR + (p − b0) · NR + r % NR.
void f32_packed_put_row(size_t n, size_t k, size_t r, const float* w, float* bp) {
  float* base = bp + r % kGemmNR;
  each_in_row(k, f32_gemm_packed_cols(n), kGemmNR, r / kGemmNR * kGemmNR, [&](size_t p, size_t i) { base[i] = w[p]; });
}

void f32_packed_get_row(size_t n, size_t k, size_t r, const float* bp, float* w) {
  const float* base = bp + r % kGemmNR;
  each_in_row(k, f32_gemm_packed_cols(n), kGemmNR, r / kGemmNR * kGemmNR, [&](size_t p, size_t i) { w[p] = base[i]; });
}

// In the h16 layout (h16_index): pair r / 16, panel (r / 8) % 2 of it, slot h16_slot(r % 8).
void h16_packed_put_row(Half h, size_t n, size_t k, size_t r, const float* w, uint16_t* bp) {
  uint16_t* base = bp + (r / kGemmNR % 2) * kGemmNR + h16_slot(r % kGemmNR);
  const size_t first = r / kH16Cols * kH16Cols;
  if (h == Half::kBF16)
    each_in_row(k, h16_packed_cols(n), kH16Cols, first, [&](size_t p, size_t i) { base[i] = f32_to_bf16(w[p]); });
  else
    each_in_row(k, h16_packed_cols(n), kH16Cols, first, [&](size_t p, size_t i) { base[i] = f32_to_f16(w[p]); });
}

void h16_packed_put_row_bits(size_t n, size_t k, size_t r, const uint8_t* bits, uint16_t* bp) {
  uint16_t* base = bp + (r / kGemmNR % 2) * kGemmNR + h16_slot(r % kGemmNR);
  each_in_row(k, h16_packed_cols(n), kH16Cols, r / kH16Cols * kH16Cols,
              [&](size_t p, size_t i) { base[i] = uint16_t(bits[2 * p] | (bits[2 * p + 1] << 8)); });
}

void f32_packed_put_rows_ref(size_t n, size_t k, size_t r0, size_t count, const float* w, size_t ldw, float* bp) {
  for (size_t i = 0; i < count; ++i) f32_packed_put_row(n, k, r0 + i, w + i * ldw, bp);
}

// A whole panel's rows are interleaved as they are written, so that the writes run in order (8 read streams);
// scalar: a float32 file's load is bound by its page faults, not by this.
void f32_packed_put_rows(size_t n, size_t k, size_t r0, size_t count, const float* w, size_t ldw, float* bp) {
  const size_t np = f32_gemm_packed_cols(n);
  size_t i = 0;
  while (i < count) {
    const size_t r = r0 + i;
    const float* src = w + i * ldw;
    if (r % kGemmNR != 0 || count - i < kGemmNR) {
      f32_packed_put_row(n, k, r, src, bp);
      ++i;
      continue;
    }
    for (size_t b0 = 0; b0 < k; b0 += kGemmKC) {
      const size_t kc = std::min(kGemmKC, k - b0);
      float* out = bp + b0 * np + r * kc;  // panel r / NR of this k block
      for (size_t p = b0; p < b0 + kc; ++p)
        for (size_t j = 0; j < kGemmNR; ++j) *out++ = src[j * ldw + p];
    }
    i += kGemmNR;
  }
}

void h16_packed_put_rows_bits_ref(size_t n, size_t k, size_t r0, size_t count, const uint8_t* bits, size_t ld,
                                  uint16_t* bp) {
  for (size_t i = 0; i < count; ++i) h16_packed_put_row_bits(n, k, r0 + i, bits + i * ld, bp);
}

void h16_packed_get_row(Half h, size_t n, size_t k, size_t r, const uint16_t* bp, float* w) {
  const uint16_t* base = bp + (r / kGemmNR % 2) * kGemmNR + h16_slot(r % kGemmNR);
  const size_t first = r / kH16Cols * kH16Cols;
  if (h == Half::kBF16)
    each_in_row(k, h16_packed_cols(n), kH16Cols, first, [&](size_t p, size_t i) { w[p] = bf16_to_f32(base[i]); });
  else
    each_in_row(k, h16_packed_cols(n), kH16Cols, first, [&](size_t p, size_t i) { w[p] = f16_to_f32(base[i]); });
}

constexpr float kQMax8 = 127.0f, kQMax4 = 7.0f;

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

}  // namespace aw::kernels
