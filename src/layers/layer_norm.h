// LayerNorm: torch.nn.LayerNorm over the last dim (normalized_shape given as
// one int, the form Transformers use). state_dict keys: weight, bias (when
// elementwise_affine; bias also needs bias=true, torch >= 2.1's option).
// Initialised like torch: weight 1, bias 0.
#pragma once
#include "core/module.h"

namespace aw {

class LayerNorm : public Module {
 public:
  LayerNorm() = default;
  Status Init(int64_t normalized_shape, double eps, bool elementwise_affine, bool bias);

  int64_t size() const { return n_; }
  bool elementwise_affine() const { return w_ != nullptr; }
  bool has_bias() const { return b_ != nullptr; }
  // Internal, unvalidated: rows of n floats, y may alias x.
  void Apply(size_t rows, const float* x, size_t ldx, float* y, size_t ldy) const;
  // Public, validated: x (…, n) → y (…, n).
  Status Forward(const TensorView& x, Buffer* y, Shape* y_shape) const;

 private:
  int64_t n_ = 0;
  float eps_ = 1e-5f;
  float* w_ = nullptr;
  float* b_ = nullptr;
};

}  // namespace aw
