#include "layers/packed_weight.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/convert.h"
#include "kernels/elementwise.h"
#include "kernels/pack.h"
#include "layers/weight_types.h"
#include "ops/parallel_gemm.h"

namespace aw {
namespace {

// The layout a weight of type t keeps: split float32 (PackedWeight::Split) or t's row of the table.
const WeightTypeOps& OpsFor(WeightType t, bool split) {
  return split && t == WeightType::kF32 ? SplitF32Ops() : OpsOf(t);
}

constexpr double kU = 0x1p-24;  // float32's unit roundoff

}  // namespace

// 64 bytes more than the layout: the SIMD loads of the last panel may read up to a vector past its end; split:
// two floats of norms per output.
size_t PackedWeight::BytesFor(WeightType t) const {
  const bool split = split_ && t == WeightType::kF32;
  return OpsFor(t, split_).bytes(n_, k_) + 64 + (split ? 2 * n_ * sizeof(float) : 0);
}

Status PackedWeight::Reserve(WeightType t) {
  type_ = t;
  const WeightTypeOps& ops = OpsFor(t, split_);
  const size_t bytes = ops.bytes(n_, k_);
  const std::string what = std::string("a ") + WeightTypeName(t) + " weight (" + std::to_string(n_) + ", " +
                           std::to_string(k_) + ")";
  AW_RETURN_IF_ERROR(bytes_.Resize(bytes + 64, what.c_str()));
  if (split_ && t == WeightType::kF32) AW_RETURN_IF_ERROR(norms_.Resize(2 * n_, "a split weight's row norms"));
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

// Split: output r's ‖lo_r‖₂ + 2γ_k‖w_r‖₂ and ‖w_r‖₂ (lo: what truncating to the top half drops), in double,
// rounded up (BoundedProduct's bound).
void PackedWeight::RowNorms(size_t r0, size_t count, const float* w, size_t ldw) {
  if (!bounded()) return;
  const double ku = double(k_) * kU, gamma = ku / (1.0 - ku);
  for (size_t i = 0; i < count && r0 + i < n_; ++i) {
    const float* row = w + i * ldw;
    double lo2 = 0.0, w2 = 0.0;
    for (size_t p = 0; p < k_; ++p) {
      const double v = row[p];
      const double d = v - double(kernels::f32_from_bits(kernels::f32_bits(row[p]) & 0xFFFF0000u));
      lo2 += d * d;
      w2 += v * v;
    }
    const double up = 1.0 + 0x1p-20;
    norms_.data()[2 * (r0 + i)] = float((std::sqrt(lo2) + 2.0 * gamma * std::sqrt(w2)) * up);
    norms_.data()[2 * (r0 + i) + 1] = float(std::sqrt(w2) * up);
  }
}

void PackedWeight::PutRow(size_t r, const float* w) {
  OpsFor(type_, split_).put_row(n_, k_, r, w, bytes_.data());
  RowNorms(r, 1, w, k_);
}

void PackedWeight::PutRows(size_t r0, size_t count, const float* w, size_t ldw) {
  OpsFor(type_, split_).put_rows(n_, k_, r0, count, w, ldw, bytes_.data());
  RowNorms(r0, count, w, ldw);
}

bool PackedWeight::PutRowsBits(size_t r0, size_t count, const uint8_t* bits, size_t ld, WeightType t) {
  if (t != type_ || !OpsOf(t).holds_16bit_rows) return false;
  kernels::h16_packed_put_rows_bits(n_, k_, r0, count, bits, ld, reinterpret_cast<uint16_t*>(bytes_.data()));
  return true;
}

void PackedWeight::GetRow(size_t r, float* w) const { OpsFor(type_, split_).get_row(n_, k_, r, bytes_.data(), w); }

void PackedWeight::PackAll(const float* w, size_t ldw) {
  if (type_ == WeightType::kF32 && !split_) {  // the float packer (SIMD transposes)
    kernels::f32_gemm_pack_nt(n_, k_, w, ldw, reinterpret_cast<float*>(bytes_.data()));
    return;
  }
  PutRows(0, n_, w, ldw);
}

void PackedWeight::Product(size_t m, const float* x, size_t ldx, float* y, size_t ldy, const float* bias,
                           float alpha) const {
  OpsFor(type_, split_).product(m, n_, k_, y, ldy, x, ldx, bytes_.data(), bias, alpha);
}

// |exact − approx| for output i of row x: the bottom halves' part |α|·|x · lo_i| <= |α|·‖x‖·‖lo_i‖; each
// product's k roundings <= γ_k·Σ|x||w_i| <= γ_k·‖x‖·‖w_i‖ (the top halves are no larger than the weights); then
// the roundings of α·, of + bias and of the bounds themselves, each <= 2^-24 of a magnitude that
// |y| + |α|·‖x‖·‖w_i‖ + |b_i| exceeds, taken eight times over. A y that overflowed gives NaN bounds.
void PackedWeight::BoundedProduct(size_t m, const float* x, size_t ldx, float alpha, const float* bias, float* lower,
                                  float* upper, size_t ldy) const {
  ParallelGemmH16(kernels::Half::kBF16, m, n_, k_, lower, ldy, x, ldx,
                  reinterpret_cast<const uint16_t*>(bytes_.data()), n_, nullptr, alpha);
  const double a = std::fabs(double(alpha));
  const float* nrm = norms_.data();
  for (size_t r = 0; r < m; ++r) {
    const float* xr = x + r * ldx;
    double x2 = 0.0;
    for (size_t p = 0; p < k_; ++p) x2 += double(xr[p]) * double(xr[p]);
    const double ax = a * std::sqrt(x2) * (1.0 + 0x1p-40);
    float* lo = lower + r * ldy;
    float* up = upper + r * ldy;
    if (bias) kernels::f32_add(n_, lo, bias);  // as Append adds final_logits_bias: one float add
    for (size_t i = 0; i < n_; ++i) {
      const double y = lo[i];
      const double mag = std::fabs(y) + ax * double(nrm[2 * i + 1]) + (bias ? std::fabs(double(bias[i])) : 0.0);
      const double e = ax * double(nrm[2 * i]) * (1.0 + 0x1p-20) + 8.0 * kU * mag + 0x1p-140;
      if (!std::isfinite(y)) {  // an overflow bounds nothing (the exact value may be finite)
        lo[i] = up[i] = std::numeric_limits<float>::quiet_NaN();
        continue;
      }
      lo[i] = float(y - e);
      up[i] = float(y + e);
    }
  }
}

void PackedWeight::ExactOutputs(const float* x, float alpha, const int32_t* ids, size_t count, float* out) const {
  const uint16_t* bp = reinterpret_cast<const uint16_t*>(bytes_.data());
  alignas(16) float pair[kernels::kH16Cols];
  size_t at = n_;  // the panel pair in `pair`
  for (size_t j = 0; j < count; ++j) {
    const size_t id = size_t(ids[j]), j0 = id / kernels::kH16Cols * kernels::kH16Cols;
    if (j0 != at) {
      kernels::s32_gemm_packed_window(1, std::min(kernels::kH16Cols, n_ - j0), k_, pair, kernels::kH16Cols, x, k_, bp,
                                      n_, j0, nullptr, alpha);
      at = j0;
    }
    out[j] = pair[id - j0];
  }
}

}  // namespace aw
