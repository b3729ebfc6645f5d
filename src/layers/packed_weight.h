// PackedWeight: a weight matrix W (n outputs × k inputs: torch's Linear weight (out, in), an embedding table
// (num, dim)) in the layout its matrix kernels read, stored once, in one of six types:
//   f32, bf16, f16   packed panels of kernels/gemm.h (16-bit floats kept as the checkpoint holds them: the
//                    products are bit-identical to float32 on the widened values)
//   q8, q4, q4a16    groups of 32 inputs quantized symmetrically, round to nearest even (kernels/qgemm.h); q4
//                    and q4a16 hold the same bytes, their products take int8 (q4) or int16 (q4a16) activations
// It is the parameter's only copy in a loaded model: rows go in as floats (PutRow: from any file dtype, the
// conversion to the type here exact for a 16-bit float written back as itself) and come out as floats
// (GetRow: embedding lookups, the tied head's check). Products: Product() below (one call per projection,
// split over the thread pool, bit-identical for any thread count).
// What each type takes (its layout's bytes, packers and product) is a row of layers/weight_types.h's table.
// Owner: the layer holding it (a Linear, an Embedding); its bytes are allocated by Reserve.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/buffer.h"
#include "core/module.h"

namespace aw {

class PackedWeight : public ParamStore {
 public:
  // The shape: n outputs, k inputs. Allocates nothing.
  void SetShape(size_t n, size_t k) { n_ = n; k_ = k; }
  // Allocates the storage for type t, its padding zeroed (the kernels read it); the rows 0 … n − 1 hold
  // whatever the allocator left until PutRow writes them. ERR_OUT_OF_MEMORY names the weight by its shape
  // and type.
  Status Reserve(WeightType t) override;
  bool reserved() const override { return reserved_; }
  WeightType type() const override { return type_; }
  size_t rows() const override { return n_; }
  size_t cols() const override { return k_; }
  size_t n() const { return n_; }
  size_t k() const { return k_; }
  // Bytes held (0 before Reserve); what Reserve(t) would hold, allocating nothing.
  size_t bytes() const override { return bytes_.size() + q8_.size() + norms_.size() * sizeof(float); }
  size_t BytesFor(WeightType t) const override;

  void PutRow(size_t r, const float* w) override;
  void PutRows(size_t r0, size_t count, const float* w, size_t ldw) override;
  bool PutRowsBits(size_t r0, size_t count, const uint8_t* bits, size_t ld, WeightType t) override;
  void GetRow(size_t r, float* w) const override;
  // Every row from float32 rows ldw apart (a layer made in code, after its float parameter changed).
  void PackAll(const float* w, size_t ldw);

  // y (m, n) rows ldy apart = alpha · x (m, k) · Wᵀ [+ bias], x rows ldx apart; the outputs [j0, j0 + cols)
  // only with Window. One row (a decoding step) runs the matrix-vector kernels.
  void Product(size_t m, const float* x, size_t ldx, float* y, size_t ldy, const float* bias, float alpha) const;

  // ---- a bounded float32 weight (a greedy search's head) ----
  // KeepBound() before Reserve: a float32 weight then also keeps a q8 copy of itself (kernels/qgemm.h, 1.125
  // bytes a weight) and two norms per output. Product() is untouched (the float32 panels, the same bits);
  // BoundedProduct reads the q8 copy only (28 % of the float32 bytes) and bounds every output, ExactOutputs
  // computes chosen outputs from the float32 panels. bounded(): kept so and reserved as float32 (another type
  // ignores KeepBound).
  void KeepBound() { bound_ = true; }
  bool bounded() const { return bound_ && reserved_ && type_ == WeightType::kF32; }
  // For each row r of x (m rows, ldx apart) and output i: lower ≤ y ≤ upper (rows ldy apart), y the float32
  // value Product(…, nullptr, alpha) gives, then + bias[i] in one float add (bias may be null), from the q8
  // copy's product ŷ (its inputs x̂ quantized to int16 as q_gemm does, its weights ŵ = w − e) and a bound on
  // the difference: |α|·(‖x − x̂‖·‖w_i‖ + ‖x̂‖·‖e_i‖ + γ_{G+3}·‖x̂‖·(‖w_i‖ + ‖e_i‖) + γ_k·‖x‖·‖w_i‖) and a few
  // ulps (G = ⌈k / 32⌉ groups, γ_j = j·2^-24 / (1 − j·2^-24)). A NaN or an inf in x or in a row of weights,
  // or a product that overflows, gives NaN bounds (the caller then takes the exact product). Only when
  // bounded().
  void BoundedProduct(size_t m, const float* x, size_t ldx, float alpha, const float* bias, float* lower, float* upper,
                      size_t ldy) const;
  // out[j] = the value Product(1, x, …, nullptr, alpha) gives at output ids[j] (each in [0, n)), j < count: the
  // 8 outputs of each id's panel only (the matrix-vector kernel's window). Only when bounded().
  void ExactOutputs(const float* x, float alpha, const int32_t* ids, size_t count, float* out) const;

 private:
  void PutBound(size_t r0, size_t count, const float* w, size_t ldw);
  size_t n_ = 0, k_ = 0;
  WeightType type_ = WeightType::kF32;
  bool reserved_ = false, bound_ = false;
  BufferT<uint8_t> bytes_;
  BufferT<uint8_t> q8_;   // bounded: the q8 copy
  BufferT<float> norms_;  // bounded: ‖e_i‖₂ of each output, then ‖w_i‖₂ of each, rounded up (NaN: a row with a NaN or inf)
};

}  // namespace aw
