#include "layers/layer_norm.h"

#include <cmath>

#include "core/rules.h"
#include "kernels/layernorm.h"
#include "kernels/fill.h"

namespace aw {

Status LayerNorm::Init(int64_t normalized_shape, double eps, bool elementwise_affine, bool bias) {
  AW_RETURN_IF_ERROR(PositiveInt("normalizedShape", normalized_shape));
  AW_RETURN_IF_ERROR(NonNegativeFinite("eps", eps));
  n_ = normalized_shape;
  eps_ = float(eps);
  if (elementwise_affine) {
    AW_RETURN_IF_ERROR(AddParam("weight", {n_}, &w_));
    kernels::f32_fill(size_t(n_), w_, 1.0f);
    if (bias) {
      AW_RETURN_IF_ERROR(AddParam("bias", {n_}, &b_));
      kernels::f32_fill(size_t(n_), b_, 0.0f);
    }
  }
  return Status::OK();
}

void LayerNorm::Apply(size_t rows, const float* x, size_t ldx, float* y, size_t ldy) const {
  kernels::f32_layernorm(rows, size_t(n_), y, ldy, x, ldx, w_, b_, eps_);
}

Status LayerNorm::Forward(const TensorView& x, Buffer* y, Shape* y_shape) const {
  AW_RETURN_IF_ERROR(CheckShape("input", x.shape));
  if (x.shape.empty() || x.shape.back() != n_)
    return ShapeError("input: expected (…, normalizedShape) with normalizedShape = " + std::to_string(n_) +
                      ", got " + ShapeStr(x.shape));
  const int64_t n = NumelChecked(x.shape);
  AW_RETURN_IF_ERROR(y->Resize(size_t(n), "LayerNorm output"));
  *y_shape = x.shape;
  if (n) Apply(size_t(n / n_), x.data, size_t(n_), y->data(), size_t(n_));
  return Status::OK();
}

}  // namespace aw
