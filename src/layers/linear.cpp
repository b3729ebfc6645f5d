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
  AW_RETURN_IF_ERROR(AddParam("weight", {out_, in_}, &w_));
  const double bound = 1.0 / std::sqrt(double(in_));
  rng.FillUniform(w_, out_ * in_, bound);
  if (bias) {
    AW_RETURN_IF_ERROR(AddParam("bias", {out_}, &b_));
    rng.FillUniform(b_, out_, bound);
  }
  AW_RETURN_IF_ERROR(packed_.Resize(kernels::f32_gemm_packed_floats(size_t(out_), size_t(in_)), "packed weight"));
  if (rng.fills()) OnParamsLoaded();  // else the load packs
  return Status::OK();
}

void Linear::OnParamsLoaded() {
  kernels::f32_gemm_pack_nt(size_t(out_), size_t(in_), w_, size_t(in_), packed_.data());
}

void Linear::ZeroBias() {
  if (b_) kernels::f32_fill(size_t(out_), b_, 0.0f);
}

void Linear::Apply(size_t rows, const float* x, size_t ldx, float* y, size_t ldy) const {
  ParallelGemmPacked(rows, size_t(out_), size_t(in_), y, ldy, x, ldx, packed_.data(), size_t(out_), 0, b_, 1.0f);
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
