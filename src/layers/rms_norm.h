// RMSNorm: torch.nn.RMSNorm(normalized_shape, eps=None, elementwise_affine=True)
// (torch >= 2.4; Hugging Face's LlamaRMSNorm / Qwen2RMSNorm are the same with
// a weight). Over the trailing dims normalized_shape (one int, or several):
//   y = (x · rsqrt(mean(x²) + eps)) · weight        (kernels/rmsnorm.h)
// eps unset: float32's machine epsilon 2^-23 (torch's None for a float32
// input). state_dict key: weight (normalized_shape), when elementwise_affine;
// initialised to ones like torch.
#pragma once
#include <optional>

#include "core/module.h"

namespace aw {

class RMSNorm : public Module {
 public:
  RMSNorm() = default;
  // normalized_shape: at least one dim, each >= 1 (ERR_OUT_OF_RANGE naming
  // normalizedShape); eps: a finite number >= 0, or none. unit_offset: Gemma's
  // form, y = (x · rsqrt(mean(x²) + eps)) · (1 + weight), 1 + weight formed in
  // float32 once the weight is loaded (HF: `output * (1.0 + self.weight.float())`);
  // the weight then starts at zeros, as Gemma's does.
  // center: LayerNorm without bias instead (the RMS of the row less its mean; ModernBERT's, not the public op's).
  Status Init(const Shape& normalized_shape, std::optional<double> eps, bool elementwise_affine,
              bool unit_offset = false, bool center = false);

  int64_t size() const { return n_; }  // elements normalised together: the product of normalized_shape
  float eps() const { return eps_; }
  const float* weight() const { return w_; }  // (normalized_shape), or null

  // Internal, unvalidated (the model family's entry): rows of size() floats,
  // ldx / ldy apart; y may alias x (in place).
  void Apply(size_t rows, const float* x, size_t ldx, float* y, size_t ldy) const;
  // Public, validated: x (…, *normalized_shape) → y of x's shape.
  Status Forward(const TensorView& x, Buffer* y, Shape* y_shape) const;

 private:
  void OnParamsLoaded() override;

  Shape shape_;
  int64_t n_ = 0;
  float eps_ = 0.0f;
  float* w_ = nullptr;
  bool unit_offset_ = false, center_ = false;
  Buffer scale_;  // 1 + weight, with unit_offset
};

}  // namespace aw
