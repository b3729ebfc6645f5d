#include "layers/packed_weight.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/bounds.h"
#include "kernels/convert.h"
#include "kernels/elementwise.h"
#include "kernels/gemm.h"
#include "kernels/pack.h"
#include "kernels/qgemm.h"
#include "layers/weight_types.h"
#include "ops/parallel_gemm.h"

namespace aw {
namespace {

constexpr double kU = 0x1p-24;  // float32's unit roundoff
constexpr double kUp = 1.0 + 0x1p-20;  // a bound computed in double, rounded up with room to spare
double Gamma(size_t j) { return double(j) * kU / (1.0 - double(j) * kU); }

const WeightTypeOps& Q8() { return OpsOf(WeightType::kQ8); }

}  // namespace

// 64 bytes more than the layout: the SIMD loads of the last panel may read up to a vector past its end; bounded:
// the q8 copy (its 64 too) and two floats of norms per output.
size_t PackedWeight::BytesFor(WeightType t) const {
  const bool bound = bound_ && t == WeightType::kF32;
  return OpsOf(t).bytes(n_, k_) + 64 + (bound ? Q8().bytes(n_, k_) + 64 + 2 * n_ * sizeof(float) : 0);
}

Status PackedWeight::Reserve(WeightType t) {
  type_ = t;
  const WeightTypeOps& ops = OpsOf(t);
  const size_t bytes = ops.bytes(n_, k_);
  const std::string what = std::string("a ") + WeightTypeName(t) + " weight (" + std::to_string(n_) + ", " +
                           std::to_string(k_) + ")";
  AW_RETURN_IF_ERROR(bytes_.Resize(bytes + 64, what.c_str()));
  const bool bound = bound_ && t == WeightType::kF32;
  if (bound) {
    AW_RETURN_IF_ERROR(q8_.Resize(Q8().bytes(n_, k_) + 64, (what + "'s q8 copy").c_str()));
    AW_RETURN_IF_ERROR(norms_.Resize(2 * n_, "a bounded weight's row norms"));
    std::memset(q8_.data() + Q8().bytes(n_, k_), 0, 64);
  }
  reserved_ = true;
  // Not zeroed whole (at 2.9 s per GiB of fresh pages on some VMs, a memset of the weights cost a load a
  // fifth of its time): every row a layout holds is written by PutRow, the real ones by the loader and the
  // padding ones (outputs past n, up to the layout's panel) here, as zero rows; then the tail.
  const size_t padded = std::max(ops.padded_rows(n_), bound ? Q8().padded_rows(n_) : 0);
  if (padded > n_) {
    BufferT<float> zero;
    AW_RETURN_IF_ERROR(zero.Resize(k_, "a zero row"));
    std::memset(zero.data(), 0, k_ * sizeof(float));
    for (size_t r = n_; r < padded; ++r) {
      if (r < ops.padded_rows(n_)) ops.put_row(n_, k_, r, zero.data(), bytes_.data());
      if (bound && r < Q8().padded_rows(n_)) Q8().put_row(n_, k_, r, zero.data(), q8_.data());
    }
  }
  std::memset(bytes_.data() + bytes, 0, 64);
  return Status::OK();
}

// Bounded: rows r0 … into the q8 copy, and their norms ‖e_r‖₂ (e = w − ŵ, ŵ = q · s the copy's weights, exact in
// double) and ‖w_r‖₂, in double, rounded up; NaN for a row with a NaN or an inf (its bounds are then NaN). The
// copy's q and s read group by group (kernels/qgemm.h's layout: scale c at byte 4c, q(c, 2p + h) at 32 + 16p + 2c + h).
void PackedWeight::PutBound(size_t r0, size_t count, const float* w, size_t ldw) {
  if (!bounded() || r0 >= n_) return;
  count = std::min(count, n_ - r0);
  Q8().put_rows(n_, k_, r0, count, w, ldw, q8_.data());
  for (size_t i = 0; i < count; ++i) {
    const size_t r = r0 + i, c = r % kernels::kQPanelCols;
    const float* row = w + i * ldw;
    double e2 = 0.0, w2 = 0.0;
    for (size_t g = 0, p = 0; p < k_; ++g) {
      const uint8_t* grp = q8_.data() + kernels::q_group_offset(kernels::QBits::kQ8, n_, k_, r / kernels::kQPanelCols, g);
      float s;
      std::memcpy(&s, grp + 4 * c, sizeof s);
      for (size_t j = 0; j < kernels::kQGroup && p < k_; ++j, ++p) {
        const double v = row[p], d = v - double(s) * int8_t(grp[32 + j / 2 * 16 + 2 * c + j % 2]);
        e2 += d * d;
        w2 += v * v;
      }
    }
    const bool finite = std::isfinite(w2) && std::isfinite(e2);
    norms_.data()[r] = finite ? float(std::sqrt(e2) * kUp) : NAN;
    norms_.data()[n_ + r] = finite ? float(std::sqrt(w2) * kUp) : NAN;
  }
}

void PackedWeight::PutRow(size_t r, const float* w) {
  OpsOf(type_).put_row(n_, k_, r, w, bytes_.data());
  PutBound(r, 1, w, k_);
}

void PackedWeight::PutRows(size_t r0, size_t count, const float* w, size_t ldw) {
  OpsOf(type_).put_rows(n_, k_, r0, count, w, ldw, bytes_.data());
  PutBound(r0, count, w, ldw);
}

bool PackedWeight::PutRowsBits(size_t r0, size_t count, const uint8_t* bits, size_t ld, WeightType t) {
  if (t != type_ || !OpsOf(t).holds_16bit_rows) return false;
  kernels::h16_packed_put_rows_bits(n_, k_, r0, count, bits, ld, reinterpret_cast<uint16_t*>(bytes_.data()));
  return true;
}

void PackedWeight::GetRow(size_t r, float* w) const { OpsOf(type_).get_row(n_, k_, r, bytes_.data(), w); }

void PackedWeight::PackAll(const float* w, size_t ldw) {
  if (type_ == WeightType::kF32 && !bound_) {  // the float packer (SIMD transposes)
    kernels::f32_gemm_pack_nt(n_, k_, w, ldw, reinterpret_cast<float*>(bytes_.data()));
    return;
  }
  PutRows(0, n_, w, ldw);
}

void PackedWeight::Product(size_t m, const float* x, size_t ldx, float* y, size_t ldy, const float* bias,
                           float alpha) const {
  OpsOf(type_).product(m, n_, k_, y, ldy, x, ldx, bytes_.data(), bias, alpha);
}

// y − ŷ for output i of row x, before α: Σ (x − x̂)·w_i + Σ x̂·e_i (Cauchy–Schwarz on each), x̂ = t · round(x / t)
// the product's int16 inputs (t = max|x| / 32767: |x − x̂| <= t / 2 + 4·2^-24·|x| each, so ‖x − x̂‖ <= √k·t/2 +
// 2^-22·‖x‖ and ‖x̂‖ <= ‖x‖ + ‖x − x̂‖); the q8 product's roundings (each group's float(S) and its product with s,
// the adds over G groups, · t and · α) <= γ_{G+3}·Σ|x̂||ŵ_i| <= γ_{G+3}·‖x̂‖·(‖w_i‖ + ‖e_i‖); the float32 product's
// k roundings <= γ_k·‖x‖·‖w_i‖; then the roundings of + bias and of the bounds themselves, each <= 2^-24 of a
// magnitude that |ŷ| + |α|·‖x‖·‖w_i‖ + |b_i| exceeds, taken eight times over. A ŷ that overflowed gives NaN bounds.
void PackedWeight::BoundedProduct(size_t m, const float* x, size_t ldx, float alpha, const float* bias, float* lower,
                                  float* upper, size_t ldy) const {
  Q8().product(m, n_, k_, lower, ldy, x, ldx, q8_.data(), nullptr, alpha);
  const double a = std::fabs(double(alpha)), gq = Gamma(kernels::q_padded_k(k_) / kernels::kQGroup + 3),
               gk = Gamma(k_);
  const float *en = norms_.data(), *wn = norms_.data() + n_;  // ‖e_i‖, ‖w_i‖
  for (size_t r = 0; r < m; ++r) {
    const float* xr = x + r * ldx;
    double x2 = 0.0, top = 0.0;
    for (size_t p = 0; p < k_; ++p) {
      x2 += double(xr[p]) * double(xr[p]);
      top = std::max(top, std::fabs(double(xr[p])));  // NaN: x2 is NaN too
    }
    const double X = std::sqrt(x2) * kUp, D = (std::sqrt(double(k_)) * top / 65534.0 + 0x1p-22 * X) * kUp,
                 H = X + D;
    // e_i = A·W_i + C·E_i + K·(|y_i| + |b_i|) in float (kernels f32_bounds_spread): A, C rounded up by 2^-16
    // (more than the 4 roundings of e's own sum and of y ± e can take off), K = 10·2^-24 (the 8 of the magnitude
    // and 2 for those roundings' share in |y|); the magnitude's |α|·‖x‖·W_i is in A.
    const float A = float((a * (D + gq * H + gk * X) * kUp + 8.0 * kU * a * X) * (1.0 + 0x1p-16)),
                C = float(a * H * (1.0 + gq) * kUp * (1.0 + 0x1p-16)), K = float(10.0 * kU);
    float* lo = lower + r * ldy;
    if (bias) kernels::f32_add(n_, lo, bias);  // as Append adds final_logits_bias: one float add
    // An overflow, a NaN: bounds nothing (the exact value may be finite). The kernel, not a loop here: this file
    // is compiled for size, and the loop took 0.63 ms a row of 58 101 (11 ns a logit), a sixth of a Marian step.
    kernels::f32_bounds_spread(n_, A, C, K, wn, en, bias, lo, upper + r * ldy);
  }
}

void PackedWeight::ExactOutputs(const float* x, float alpha, const int32_t* ids, size_t count, float* out) const {
  const float* bp = reinterpret_cast<const float*>(bytes_.data());
  alignas(16) float panel[kernels::kGemmNR];
  size_t at = n_;  // the panel in `panel`
  for (size_t j = 0; j < count; ++j) {
    const size_t id = size_t(ids[j]), j0 = id / kernels::kGemmNR * kernels::kGemmNR;
    if (j0 != at) {
      kernels::f32_gemv_packed_window(std::min(kernels::kGemmNR, n_ - j0), k_, panel, x, bp, n_, j0, nullptr, alpha);
      at = j0;
    }
    out[j] = panel[id - j0];
  }
}

}  // namespace aw
