// Linear: torch.nn.Linear. y (…, out) = x (…, in) · weight (out, in)^T + bias (out).
// state_dict keys: weight, bias (if bias). Initialised like torch
// (kaiming_uniform_(a=√5) → U(±1/√in) for weight and bias).
// Two ways to hold the weight:
//   made in code (aw.Linear, the layers of a stack): a float parameter, and a
//     float32 packed copy for the GEMM rebuilt whenever it changes;
//   loaded into a model (Rng::ForLoading): only the packed weight
//     (layers/packed_weight.h), in the checkpoint's dtype or the one asked for;
//     the float parameter does not exist (Param("weight") is null).
#pragma once
#include "core/module.h"
#include "core/rng.h"
#include "layers/packed_weight.h"

namespace aw {

class Linear : public Module {
 public:
  Linear() = default;
  Status Init(int64_t in_features, int64_t out_features, bool bias, Rng& rng);

  int64_t in_features() const { return in_; }
  int64_t out_features() const { return out_; }
  const float* weight() const { return w_; }  // null for a loaded model's Linear
  const float* bias() const { return b_; }
  const PackedWeight& packed() const { return packed_; }
  void ZeroBias();  // torch's MultiheadAttention re-initialises out_proj.bias to 0

  // Internal, unvalidated: y rows (ldy apart) = x rows (ldx apart) · W^T + b.
  void Apply(size_t rows, const float* x, size_t ldx, float* y, size_t ldy) const;

  // Public, validated: x (…, in) → y (…, out).
  Status Forward(const TensorView& x, Buffer* y, Shape* y_shape) const;

 private:
  void OnParamsLoaded() override;  // repacks a float weight

  int64_t in_ = 0, out_ = 0;
  float* w_ = nullptr;
  float* b_ = nullptr;
  PackedWeight packed_;  // the weight as the kernels read it
};

}  // namespace aw
