// Conv1d: torch's nn.Conv1d(in_channels, out_channels, kernel_size, stride, padding) with zero padding, dilation 1,
// one group, on token-major activations: x (T_in, C_in) rows → y (T_out, C_out) rows, T_out = ⌊(T_in + 2·padding −
// kernel) / stride⌋ + 1. Whisper's encoder stem (models/whisper.h) runs two.
// state_dict keys: weight (C_out, C_in, kernel), bias (C_out) (if bias). The weight stays float32 whatever the
// load's dtype (as PatchEmbedding's): a stem's few parameters.
// Computed as one GEMM over gathered windows (im2col in (c, k) order, the flattened weight's).
#pragma once
#include "core/buffer.h"
#include "core/module.h"
#include "core/rng.h"

namespace aw {

class Conv1d : public Module {
 public:
  Status Init(int64_t in_channels, int64_t out_channels, int64_t kernel, int64_t stride, int64_t padding, bool bias,
              Rng& rng);
  int64_t out_length(int64_t in_length) const { return (in_length + 2 * pad_ - k_) / stride_ + 1; }
  // x (T_in, C_in), rows ldx apart → y (out_length(T_in), C_out), rows C_out apart. Internal: T_in >= kernel − 2·pad.
  Status Apply(size_t t_in, const float* x, size_t ldx, float* y) const;

 private:
  void OnParamsLoaded() override;
  int64_t cin_ = 0, cout_ = 0, k_ = 0, stride_ = 1, pad_ = 0;
  float* w_ = nullptr;
  float* b_ = nullptr;
  Buffer packed_;  // w as (C_out, C_in·kernel) packed for the GEMM (kernels/gemm.h), rebuilt when it changes
};

}  // namespace aw
