#include "layers/packed_weight.h"

#include <cstring>

#include "kernels/pack.h"
#include "layers/weight_types.h"

namespace aw {

// 64 bytes more than the layout: the SIMD loads of the last panel may read up to a vector past its end.
size_t PackedWeight::BytesFor(WeightType t) const { return OpsOf(t).bytes(n_, k_) + 64; }

Status PackedWeight::Reserve(WeightType t) {
  type_ = t;
  const WeightTypeOps& ops = OpsOf(t);
  const size_t bytes = ops.bytes(n_, k_);
  const std::string what = std::string("a ") + WeightTypeName(t) + " weight (" + std::to_string(n_) + ", " +
                           std::to_string(k_) + ")";
  AW_RETURN_IF_ERROR(bytes_.Resize(bytes + 64, what.c_str()));
  reserved_ = true;
  // Not zeroed whole (at 2.9 s per GiB of fresh pages on some VMs, a memset of the weights cost a load a
  // fifth of its time): every row a layout holds is written by PutRow, the real ones by the loader and the
  // padding ones (outputs past n, up to the layout's panel) here, as zero rows; then the tail.
  const size_t padded = ops.padded_rows(n_);
  if (padded > n_) {
    BufferT<float> zero;
    AW_RETURN_IF_ERROR(zero.Resize(k_, "a zero row"));
    std::memset(zero.data(), 0, k_ * sizeof(float));
    for (size_t r = n_; r < padded; ++r) PutRow(r, zero.data());
  }
  std::memset(bytes_.data() + bytes, 0, 64);
  return Status::OK();
}

void PackedWeight::PutRow(size_t r, const float* w) { OpsOf(type_).put_row(n_, k_, r, w, bytes_.data()); }

void PackedWeight::PutRows(size_t r0, size_t count, const float* w, size_t ldw) {
  OpsOf(type_).put_rows(n_, k_, r0, count, w, ldw, bytes_.data());
}

bool PackedWeight::PutRowsBits(size_t r0, size_t count, const uint8_t* bits, size_t ld, WeightType t) {
  if (t != type_ || !OpsOf(t).holds_16bit_rows) return false;
  kernels::h16_packed_put_rows_bits(n_, k_, r0, count, bits, ld, reinterpret_cast<uint16_t*>(bytes_.data()));
  return true;
}

void PackedWeight::GetRow(size_t r, float* w) const { OpsOf(type_).get_row(n_, k_, r, bytes_.data(), w); }

void PackedWeight::PackAll(const float* w, size_t ldw) {
  if (type_ == WeightType::kF32) {  // the float packer (SIMD transposes)
    kernels::f32_gemm_pack_nt(n_, k_, w, ldw, reinterpret_cast<float*>(bytes_.data()));
    return;
  }
  PutRows(0, n_, w, ldw);
}

void PackedWeight::Product(size_t m, const float* x, size_t ldx, float* y, size_t ldy, const float* bias,
                           float alpha) const {
  OpsOf(type_).product(m, n_, k_, y, ldy, x, ldx, bytes_.data(), bias, alpha);
}

}  // namespace aw
