// The activations a Transformer feed-forward block may use, by name, as
// torch's TransformerEncoderLayer(activation="relu" | "gelu"); "gelu_tanh"
// stands for passing nn.GELU(approximate="tanh") as the activation and
// "silu" for passing F.silu (nn.SiLU()). Also the functional form
// (torch.nn.functional.relu / gelu / silu): ActivationForward.
#pragma once
#include <cstddef>
#include <string>

#include "core/buffer.h"
#include "core/status.h"
#include "core/tensor.h"
#include "kernels/activation.h"

namespace aw {

enum class Activation { kRelu, kGelu, kGeluTanh, kSilu };

// "relu" | "gelu" | "gelu_tanh" | "silu"; anything else is an ERR_OUT_OF_RANGE naming
// the argument `activation`.
Status ParseActivation(const std::string& s, Activation* out);

inline void ApplyActivation(Activation a, size_t n, float* x) {
  switch (a) {
    case Activation::kRelu: kernels::f32_relu(n, x); break;
    case Activation::kGelu: kernels::f32_gelu(n, x); break;
    case Activation::kGeluTanh: kernels::f32_gelu_tanh(n, x); break;
    case Activation::kSilu: kernels::f32_silu(n, x); break;
  }
}

// y = activation(x), a new tensor of x's shape (x is named "input").
Status ActivationForward(Activation kind, const TensorView& x, Buffer* y, Shape* y_shape);
// The same with the activation by name (ParseActivation).
Status ActivationForward(const std::string& activation, const TensorView& x, Buffer* y, Shape* y_shape);

}  // namespace aw
