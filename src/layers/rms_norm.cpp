#include "layers/rms_norm.h"

#include <algorithm>
#include <cfloat>

#include "core/rules.h"
#include "kernels/fill.h"
#include "kernels/rmsnorm.h"

namespace aw {

Status RMSNorm::Init(const Shape& normalized_shape, std::optional<double> eps, bool elementwise_affine,
                     bool unit_offset, bool center) {
  if (normalized_shape.empty())
    return OutOfRangeError("normalizedShape: expected at least one dim, got " + ShapeStr(normalized_shape));
  for (size_t i = 0; i < normalized_shape.size(); ++i)
    AW_RETURN_IF_ERROR(PositiveInt("normalizedShape" + (normalized_shape.size() > 1 ? "[" + std::to_string(i) + "]"
                                                                                      : std::string()),
                                   normalized_shape[i]));
  AW_RETURN_IF_ERROR(CheckShape("normalizedShape", normalized_shape));
  if (eps) AW_RETURN_IF_ERROR(NonNegativeFinite("eps", *eps));
  shape_ = normalized_shape;
  n_ = NumelChecked(normalized_shape);
  eps_ = eps ? float(*eps) : FLT_EPSILON;  // torch: torch.finfo(x.dtype).eps when None
  unit_offset_ = unit_offset && elementwise_affine;
  center_ = center;
  if (elementwise_affine) {
    AW_RETURN_IF_ERROR(AddParam("weight", shape_, &w_));
    kernels::f32_fill(size_t(n_), w_, unit_offset_ ? 0.0f : 1.0f);
  }
  if (unit_offset_) {
    AW_RETURN_IF_ERROR(scale_.Resize(size_t(n_), "RMSNorm 1 + weight"));
    OnParamsLoaded();
  }
  return Status::OK();
}

void RMSNorm::OnParamsLoaded() {
  if (!unit_offset_) return;
  for (size_t i = 0; i < size_t(n_); ++i) scale_.data()[i] = 1.0f + w_[i];
}

void RMSNorm::Apply(size_t rows, const float* x, size_t ldx, float* y, size_t ldy) const {
  if (center_) {  // LayerNorm without bias: the row less its mean (summed in double), then its RMS
    const size_t n = size_t(n_);
    for (size_t r = 0; r < rows; ++r) {
      double sum = 0;
      for (size_t i = 0; i < n; ++i) sum += x[r * ldx + i];
      const float mean = float(sum / double(n));
      for (size_t i = 0; i < n; ++i) y[r * ldy + i] = x[r * ldx + i] - mean;
    }
    x = y;
    ldx = ldy;
  }
  kernels::f32_rmsnorm(rows, size_t(n_), y, ldy, x, ldx, unit_offset_ ? scale_.data() : w_, eps_);
}

Status RMSNorm::Forward(const TensorView& x, Buffer* y, Shape* y_shape) const {
  AW_RETURN_IF_ERROR(CheckShape("input", x.shape));
  const size_t k = shape_.size();
  if (x.shape.size() < k || !std::equal(shape_.begin(), shape_.end(), x.shape.end() - k)) {
    std::string dims;  // as the user wrote it: 16, or [3, 8]
    for (int64_t d : shape_) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
    if (k > 1) dims = "[" + dims + "]";
    return ShapeError("input: expected (…, normalizedShape) with normalizedShape = " + dims + ", got " +
                      ShapeStr(x.shape));
  }
  const int64_t n = NumelChecked(x.shape);
  AW_RETURN_IF_ERROR(y->Resize(size_t(n), "RMSNorm output"));
  *y_shape = x.shape;
  if (n) Apply(size_t(n / n_), x.data, size_t(n_), y->data(), size_t(n_));
  return Status::OK();
}

}  // namespace aw
