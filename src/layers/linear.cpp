#include "layers/linear.h"

#include <cmath>

#include "core/rules.h"
#include "kernels/gemm.h"
#include "kernels/fill.h"
#include "ops/parallel_gemm.h"

namespace aw {

Status Linear::Init(int64_t in_features, int64_t out_features, bool bias, Rng& rng) {
  AW_RETURN_IF_ERROR(PositiveInt("inFeatures", in_features));
  AW_RETURN_IF_ERROR(PositiveInt("outFeatures", out_features));
  in_ = in_features;
  out_ = out_features;
  packed_.SetShape(size_t(out_), size_t(in_));
  const double bound = 1.0 / std::sqrt(double(in_));
  if (rng.fills()) {
    AW_RETURN_IF_ERROR(AddParam("weight", {out_, in_}, &w_));
    rng.FillUniform(w_, out_ * in_, bound);
  } else {
    AW_RETURN_IF_ERROR(AddStoredParam("weight", {out_, in_}, &packed_));  // the loader reserves its type
  }
  if (bias) {
    AW_RETURN_IF_ERROR(AddParam("bias", {out_}, &b_));
    rng.FillUniform(b_, out_, bound);
  }
  if (w_) {
    AW_RETURN_IF_ERROR(packed_.Reserve(WeightType::kF32));
    OnParamsLoaded();
  }
  return Status::OK();
}

void Linear::OnParamsLoaded() {
  if (w_) packed_.PackAll(w_, size_t(in_));
}

void Linear::ZeroBias() {
  if (b_) kernels::f32_fill(size_t(out_), b_, 0.0f);
}

void Linear::Apply(size_t rows, const float* x, size_t ldx, float* y, size_t ldy) const {
  packed_.Product(rows, x, ldx, y, ldy, b_, 1.0f);
}

Status Linear::Forward(const TensorView& x, Buffer* y, Shape* y_shape) const {
  AW_RETURN_IF_ERROR(CheckShape("input", x.shape));
  if (x.shape.empty() || x.shape.back() != in_)
    return ShapeError("input: expected (…, inFeatures) with inFeatures = " + std::to_string(in_) + ", got " +
                      ShapeStr(x.shape));
  const int64_t n = NumelChecked(x.shape);
  Shape ys = x.shape;
  ys.back() = out_;
  if (NumelChecked(ys) < 0) return ShapeError("output: shape " + ShapeStr(ys) + " exceeds 2^29 elements");
  const size_t rows = size_t(n / in_);
  AW_RETURN_IF_ERROR(y->Resize(rows * size_t(out_), "Linear output"));
  *y_shape = ys;
  if (rows) Apply(rows, x.data, size_t(in_), y->data(), size_t(out_));
  return Status::OK();
}

}  // namespace aw
