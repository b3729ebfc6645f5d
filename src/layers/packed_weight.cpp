#include "layers/packed_weight.h"

#include <algorithm>
#include <cstring>

#include "kernels/gemm.h"
#include "kernels/qgemm.h"
#include "ops/parallel_gemm.h"

namespace aw {
namespace {

kernels::QBits Bits(WeightType t) { return t == WeightType::kQ8 ? kernels::QBits::kQ8 : kernels::QBits::kQ4; }
bool Quantized(WeightType t) { return t == WeightType::kQ8 || t == WeightType::kQ4 || t == WeightType::kQ4A16; }
kernels::Half Half(WeightType t) { return t == WeightType::kBF16 ? kernels::Half::kBF16 : kernels::Half::kF16; }

// The layout's bytes, without the 64 of slack.
size_t PackedBytes(WeightType t, size_t n, size_t k) {
  switch (t) {
    case WeightType::kF32: return kernels::f32_gemm_packed_floats(n, k) * 4;
    case WeightType::kBF16:
    case WeightType::kF16: return kernels::h16_packed_count(n, k) * 2;
    case WeightType::kQ8:
    case WeightType::kQ4:
    case WeightType::kQ4A16: return kernels::q_packed_bytes(Bits(t), n, k);
  }
  return 0;
}

}  // namespace

// 64 bytes more than the layout: the SIMD loads of the last panel may read up to a vector past its end.
size_t PackedWeight::BytesFor(WeightType t) const { return PackedBytes(t, n_, k_) + 64; }

Status PackedWeight::Reserve(WeightType t) {
  type_ = t;
  const size_t bytes = PackedBytes(t, n_, k_);
  const std::string what = std::string("a ") + WeightTypeName(t) + " weight (" + std::to_string(n_) + ", " +
                           std::to_string(k_) + ")";
  AW_RETURN_IF_ERROR(bytes_.Resize(bytes + 64, what.c_str()));
  reserved_ = true;
  // Not zeroed whole (at 2.9 s per GiB of fresh pages on some VMs, a memset of the weights cost a load a
  // fifth of its time): every row a layout holds is written by PutRow, the real ones by the loader and the
  // padding ones (columns past n, up to the layout's panel or pair) here, as zero rows; then the tail.
  const size_t padded = t == WeightType::kF32 ? kernels::f32_gemm_packed_cols(n_)
                        : Quantized(t) ? (n_ + 7) / 8 * 8
                                                                       : kernels::h16_packed_cols(n_);
  if (padded > n_) {
    BufferT<float> zero;
    AW_RETURN_IF_ERROR(zero.Resize(k_, "a zero row"));
    std::memset(zero.data(), 0, k_ * sizeof(float));
    for (size_t r = n_; r < padded; ++r) PutRow(r, zero.data());
  }
  std::memset(bytes_.data() + bytes, 0, 64);
  return Status::OK();
}

void PackedWeight::PutRow(size_t r, const float* w) {
  uint8_t* b = bytes_.data();
  switch (type_) {
    case WeightType::kF32: kernels::f32_packed_put_row(n_, k_, r, w, reinterpret_cast<float*>(b)); break;
    case WeightType::kBF16:
    case WeightType::kF16: kernels::h16_packed_put_row(Half(type_), n_, k_, r, w, reinterpret_cast<uint16_t*>(b)); break;
    case WeightType::kQ8:
    case WeightType::kQ4:
    case WeightType::kQ4A16: kernels::q_pack_row(Bits(type_), n_, k_, r, w, b); break;
  }
}

void PackedWeight::PutRows(size_t r0, size_t count, const float* w, size_t ldw) {
  uint8_t* b = bytes_.data();
  switch (type_) {
    case WeightType::kF32: kernels::f32_packed_put_rows(n_, k_, r0, count, w, ldw, reinterpret_cast<float*>(b)); break;
    case WeightType::kBF16:
    case WeightType::kF16:
      for (size_t i = 0; i < count; ++i) PutRow(r0 + i, w + i * ldw);
      break;
    case WeightType::kQ8:
    case WeightType::kQ4:
    case WeightType::kQ4A16: kernels::q_pack_rows(Bits(type_), n_, k_, r0, count, w, ldw, b); break;
  }
}

bool PackedWeight::PutRowsBits(size_t r0, size_t count, const uint8_t* bits, size_t ld, WeightType t) {
  if (t != type_ || (t != WeightType::kBF16 && t != WeightType::kF16)) return false;
  kernels::h16_packed_put_rows_bits(n_, k_, r0, count, bits, ld, reinterpret_cast<uint16_t*>(bytes_.data()));
  return true;
}

void PackedWeight::GetRow(size_t r, float* w) const {
  const uint8_t* b = bytes_.data();
  switch (type_) {
    case WeightType::kF32: kernels::f32_packed_get_row(n_, k_, r, reinterpret_cast<const float*>(b), w); break;
    case WeightType::kBF16:
    case WeightType::kF16: kernels::h16_packed_get_row(Half(type_), n_, k_, r, reinterpret_cast<const uint16_t*>(b), w); break;
    case WeightType::kQ8:
    case WeightType::kQ4:
    case WeightType::kQ4A16: kernels::q_unpack_row(Bits(type_), n_, k_, r, b, w); break;
  }
}

void PackedWeight::PackAll(const float* w, size_t ldw) {
  if (type_ == WeightType::kF32) {  // the float packer (SIMD transposes)
    kernels::f32_gemm_pack_nt(n_, k_, w, ldw, reinterpret_cast<float*>(bytes_.data()));
    return;
  }
  PutRows(0, n_, w, ldw);
}

void PackedWeight::Product(size_t m, const float* x, size_t ldx, float* y, size_t ldy, const float* bias,
                           float alpha) const {
  const uint8_t* b = bytes_.data();
  switch (type_) {
    case WeightType::kF32:
      ParallelGemmPacked(m, n_, k_, y, ldy, x, ldx, reinterpret_cast<const float*>(b), n_, 0, bias, alpha);
      break;
    case WeightType::kBF16:
    case WeightType::kF16:
      ParallelGemmH16(Half(type_), m, n_, k_, y, ldy, x, ldx, reinterpret_cast<const uint16_t*>(b), n_, bias, alpha);
      break;
    case WeightType::kQ8:
    case WeightType::kQ4A16: ParallelQGemm(Bits(type_), m, n_, k_, y, ldy, x, ldx, b, bias, alpha); break;
    case WeightType::kQ4: ParallelQ4GemmA8(m, n_, k_, y, ldy, x, ldx, b, bias, alpha); break;
  }
}

}  // namespace aw
