// Configuration shared by TransformerEncoderLayer and TransformerDecoderLayer:
// torch's constructor arguments and defaults.
#pragma once
#include <cstdint>

#include "layers/activation.h"

namespace aw {

struct TransformerLayerConfig {
  int64_t d_model = 0;
  int64_t nhead = 0;
  int64_t dim_feedforward = 2048;
  double dropout = 0.1;  // accepted, ignored (inference = eval mode)
  Activation activation = Activation::kRelu;
  double layer_norm_eps = 1e-5;
  bool batch_first = false;
  bool norm_first = false;
  bool bias = true;      // torch >= 2.1: Linear and LayerNorm biases
};

}  // namespace aw
