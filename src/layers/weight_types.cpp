#include "layers/weight_types.h"

#include "kernels/pack.h"
#include "ops/parallel_gemm.h"

namespace aw {
namespace {

using kernels::Half;
using kernels::QBits;

const float* F32(const uint8_t* b) { return reinterpret_cast<const float*>(b); }
float* F32(uint8_t* b) { return reinterpret_cast<float*>(b); }
const uint16_t* U16(const uint8_t* b) { return reinterpret_cast<const uint16_t*>(b); }
uint16_t* U16(uint8_t* b) { return reinterpret_cast<uint16_t*>(b); }

// float32: the packed panels of kernels/gemm.h.
constexpr WeightTypeOps kF32Ops = {
    [](size_t n, size_t k) { return kernels::f32_gemm_packed_floats(n, k) * 4; },
    [](size_t n) { return kernels::f32_gemm_packed_cols(n); },
    [](size_t n, size_t k, size_t r, const float* w, uint8_t* b) { kernels::f32_packed_put_row(n, k, r, w, F32(b)); },
    [](size_t n, size_t k, size_t r0, size_t count, const float* w, size_t ldw, uint8_t* b) {
      kernels::f32_packed_put_rows(n, k, r0, count, w, ldw, F32(b));
    },
    [](size_t n, size_t k, size_t r, const uint8_t* b, float* w) { kernels::f32_packed_get_row(n, k, r, F32(b), w); },
    [](size_t m, size_t n, size_t k, float* y, size_t ldy, const float* x, size_t ldx, const uint8_t* b, const float* bias,
       float alpha) { ParallelGemmPacked(m, n, k, y, ldy, x, ldx, F32(b), n, 0, bias, alpha); },
    false,
};

// bf16 and f16: the panel pairs of kernels/gemm.h, the products bit-identical to float32's on the widened values.
template <Half H>
constexpr WeightTypeOps kH16Ops = {
    [](size_t n, size_t k) { return kernels::h16_packed_count(n, k) * 2; },
    [](size_t n) { return kernels::h16_packed_cols(n); },
    [](size_t n, size_t k, size_t r, const float* w, uint8_t* b) { kernels::h16_packed_put_row(H, n, k, r, w, U16(b)); },
    [](size_t n, size_t k, size_t r0, size_t count, const float* w, size_t ldw, uint8_t* b) {
      for (size_t i = 0; i < count; ++i) kernels::h16_packed_put_row(H, n, k, r0 + i, w + i * ldw, U16(b));
    },
    [](size_t n, size_t k, size_t r, const uint8_t* b, float* w) { kernels::h16_packed_get_row(H, n, k, r, U16(b), w); },
    [](size_t m, size_t n, size_t k, float* y, size_t ldy, const float* x, size_t ldx, const uint8_t* b, const float* bias,
       float alpha) { ParallelGemmH16(H, m, n, k, y, ldy, x, ldx, U16(b), n, bias, alpha); },
    true,
};

// q8, q4, q4a16: the quantized groups of kernels/qgemm.h; q4 and q4a16 hold the same bytes and differ in the
// product's activations (int8 per group: q4_gemm_a8; int16 per row: q_gemm).
template <QBits B, bool kInt8Activations>
constexpr WeightTypeOps kQOps = {
    [](size_t n, size_t k) { return kernels::q_packed_bytes(B, n, k); },
    [](size_t n) { return kernels::q_packed_cols(n); },
    [](size_t n, size_t k, size_t r, const float* w, uint8_t* b) { kernels::q_pack_row(B, n, k, r, w, b); },
    [](size_t n, size_t k, size_t r0, size_t count, const float* w, size_t ldw, uint8_t* b) {
      kernels::q_pack_rows(B, n, k, r0, count, w, ldw, b);
    },
    [](size_t n, size_t k, size_t r, const uint8_t* b, float* w) { kernels::q_unpack_row(B, n, k, r, b, w); },
    [](size_t m, size_t n, size_t k, float* y, size_t ldy, const float* x, size_t ldx, const uint8_t* b, const float* bias,
       float alpha) {
      if constexpr (kInt8Activations) ParallelQ4GemmA8(m, n, k, y, ldy, x, ldx, b, bias, alpha);
      else ParallelQGemm(B, m, n, k, y, ldy, x, ldx, b, bias, alpha);
    },
    false,
};

// In WeightType's order (core/module.h).
constexpr const WeightTypeOps* kOps[kWeightTypes] = {
    &kF32Ops, &kH16Ops<Half::kBF16>, &kH16Ops<Half::kF16>, &kQOps<QBits::kQ8, false>, &kQOps<QBits::kQ4, true>,
    &kQOps<QBits::kQ4, false>,
};
static_assert(size_t(WeightType::kF32) == 0 && size_t(WeightType::kBF16) == 1 && size_t(WeightType::kF16) == 2 &&
                  size_t(WeightType::kQ8) == 3 && size_t(WeightType::kQ4) == 4 && size_t(WeightType::kQ4A16) == 5 &&
                  kWeightTypes == 6,
              "kOps follows WeightType's order");

}  // namespace

const WeightTypeOps& OpsOf(WeightType t) { return *kOps[size_t(t)]; }

}  // namespace aw
