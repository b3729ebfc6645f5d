#include "layers/activation.h"

#include <algorithm>

#include "core/rules.h"

namespace aw {

Status ParseActivation(const std::string& s, Activation* out) {
  if (s == "relu") *out = Activation::kRelu;
  else if (s == "gelu") *out = Activation::kGelu;
  else if (s == "gelu_tanh") *out = Activation::kGeluTanh;
  else if (s == "silu") *out = Activation::kSilu;
  else return OutOfRangeError("activation: expected 'relu', 'gelu', 'gelu_tanh' or 'silu', got '" + s + "'");
  return Status::OK();
}

Status ActivationForward(Activation kind, const TensorView& x, Buffer* y, Shape* y_shape) {
  AW_RETURN_IF_ERROR(CheckShape("input", x.shape));
  const size_t n = size_t(NumelChecked(x.shape));
  AW_RETURN_IF_ERROR(y->Resize(n, "activation output"));
  std::copy(x.data, x.data + n, y->data());
  ApplyActivation(kind, n, y->data());
  *y_shape = x.shape;
  return Status::OK();
}

Status ActivationForward(const std::string& activation, const TensorView& x, Buffer* y, Shape* y_shape) {
  Activation kind = Activation::kRelu;
  AW_RETURN_IF_ERROR(ParseActivation(activation, &kind));
  return ActivationForward(kind, x, y, y_shape);
}

}  // namespace aw
