// The activations a Transformer feed-forward block may use, by name, as
// torch's TransformerEncoderLayer(activation="relu" | "gelu"); "gelu_tanh"
// stands for passing nn.GELU(approximate="tanh") as the activation.
#pragma once
#include <cstddef>
#include <string>

#include "core/status.h"
#include "kernels/activation.h"

namespace aw {

enum class Activation { kRelu, kGelu, kGeluTanh };

// "relu" | "gelu" | "gelu_tanh"; anything else is an ERR_OUT_OF_RANGE naming
// the argument `activation`.
inline Status ParseActivation(const std::string& s, Activation* out) {
  if (s == "relu") *out = Activation::kRelu;
  else if (s == "gelu") *out = Activation::kGelu;
  else if (s == "gelu_tanh") *out = Activation::kGeluTanh;
  else return OutOfRangeError("activation: expected 'relu', 'gelu' or 'gelu_tanh', got '" + s + "'");
  return Status::OK();
}

inline void ApplyActivation(Activation a, size_t n, float* x) {
  switch (a) {
    case Activation::kRelu: kernels::f32_relu(n, x); break;
    case Activation::kGelu: kernels::f32_gelu(n, x); break;
    case Activation::kGeluTanh: kernels::f32_gelu_tanh(n, x); break;
  }
}

}  // namespace aw
