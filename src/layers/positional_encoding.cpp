#include "layers/positional_encoding.h"

#include <cmath>

#include "core/rules.h"
#include "kernels/elementwise.h"

namespace aw {
namespace {

Status CheckDims(int64_t d_model, int64_t max_len) {
  AW_RETURN_IF_ERROR(PositiveInt("dModel", d_model));
  AW_RETURN_IF_ERROR(PositiveInt("maxLen", max_len));
  if (NumelChecked({max_len, d_model}) < 0)
    return ArgError("maxLen: a table of " + ShapeStr({max_len, d_model}) + " exceeds 2^29 elements");
  return Status::OK();
}

}  // namespace

Status PositionalAdd::CheckInput(const TensorView& x, const char* name) const {
  AW_RETURN_IF_ERROR(CheckShape(name, x.shape));
  if (x.shape.size() != 2 && x.shape.size() != 3)
    return ShapeError(std::string(name) + ": expected a 3-D " + (batch_first_ ? "(N, L, dModel)" : "(L, N, dModel)") +
                      " or 2-D (L, dModel) tensor, got " + ShapeStr(x.shape));
  if (x.shape.back() != d_)
    return ShapeError(std::string(name) + ": expected last dim dModel = " + std::to_string(d_) + ", got " +
                      ShapeStr(x.shape));
  const int64_t L = (x.shape.size() == 3 && batch_first_) ? x.shape[1] : x.shape[0];
  if (L > max_len_)
    return ShapeError(std::string(name) + ": sequence length " + std::to_string(L) + " exceeds maxLen = " +
                      std::to_string(max_len_) + ", got " + ShapeStr(x.shape));
  return Status::OK();
}

void PositionalAdd::Run(float* x, const Shape& shape) const {
  const size_t d = size_t(d_);
  if (shape.size() == 2) {
    kernels::f32_add(size_t(shape[0]) * d, x, table_);
  } else if (batch_first_) {  // (N, L, d): each sequence gets P[:L]
    for (int64_t n = 0; n < shape[0]; ++n) kernels::f32_add(size_t(shape[1]) * d, x + n * shape[1] * d_, table_);
  } else {  // (L, N, d): row (l, n) gets P[l]
    for (int64_t l = 0; l < shape[0]; ++l)
      for (int64_t n = 0; n < shape[1]; ++n) kernels::f32_add(d, x + (l * shape[1] + n) * d_, table_ + l * d_);
  }
}

Status PositionalAdd::Forward(const TensorView& x, Buffer* y, Shape* y_shape) const {
  AW_RETURN_IF_ERROR(CheckInput(x, "input"));
  const size_t n = size_t(NumelChecked(x.shape));
  AW_RETURN_IF_ERROR(y->Resize(n, "positional output"));
  std::copy(x.data, x.data + n, y->data());
  *y_shape = x.shape;
  Run(y->data(), x.shape);
  return Status::OK();
}

Status SinusoidalPositionalEncoding::Init(int64_t d_model, int64_t max_len, bool batch_first) {
  AW_RETURN_IF_ERROR(CheckDims(d_model, max_len));
  max_len_ = max_len; d_ = d_model; batch_first_ = batch_first;
  AW_RETURN_IF_ERROR(pe_.Resize(size_t(max_len * d_model), "positional table"));
  // float32 arithmetic in torch's order, so the table matches torch's bit for bit
  // up to sin/cos rounding.
  const float k = float(-std::log(10000.0) / double(d_model));
  for (int64_t i = 0; i < d_model; i += 2) {
    const float w = std::exp(float(i) * k);
    for (int64_t p = 0; p < max_len; ++p) {
      const float a = float(p) * w;
      pe_.data()[p * d_model + i] = float(std::sin(double(a)));
      if (i + 1 < d_model) pe_.data()[p * d_model + i + 1] = float(std::cos(double(a)));
    }
  }
  table_ = pe_.data();
  return Status::OK();
}

Status LearnedPositionalEmbedding::Init(int64_t max_len, int64_t d_model, bool batch_first, Rng& rng) {
  AW_RETURN_IF_ERROR(CheckDims(d_model, max_len));
  max_len_ = max_len; d_ = d_model; batch_first_ = batch_first;
  float* w = nullptr;
  AW_RETURN_IF_ERROR(AddParam("weight", {max_len, d_model}, &w));
  rng.FillNormal(w, max_len * d_model, 1.0);
  table_ = w;
  return Status::OK();
}

}  // namespace aw
