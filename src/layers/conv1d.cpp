#include "layers/conv1d.h"

#include <cmath>
#include <cstring>

#include "core/rules.h"
#include "core/workspace.h"
#include "kernels/gemm.h"
#include "ops/parallel_gemm.h"

namespace aw {

Status Conv1d::Init(int64_t in_channels, int64_t out_channels, int64_t kernel, int64_t stride, int64_t padding, bool bias,
                    Rng& rng) {
  AW_RETURN_IF_ERROR(PositiveInt("inChannels", in_channels));
  AW_RETURN_IF_ERROR(PositiveInt("outChannels", out_channels));
  AW_RETURN_IF_ERROR(IntInRange("kernelSize", kernel, 1, 64));
  AW_RETURN_IF_ERROR(IntInRange("stride", stride, 1, 64));
  AW_RETURN_IF_ERROR(IntInRange("padding", padding, 0, kernel - 1));
  cin_ = in_channels; cout_ = out_channels; k_ = kernel; stride_ = stride; pad_ = padding;
  // torch's Conv1d init: kaiming_uniform_(a=√5) → U(±1/√fan_in), bias likewise.
  const double bound = 1.0 / std::sqrt(double(cin_ * k_));
  AW_RETURN_IF_ERROR(AddParam("weight", {cout_, cin_, k_}, &w_));
  rng.FillUniform(w_, cout_ * cin_ * k_, bound);
  if (bias) {
    AW_RETURN_IF_ERROR(AddParam("bias", {cout_}, &b_));
    rng.FillUniform(b_, cout_, bound);
  }
  AW_RETURN_IF_ERROR(packed_.Resize(kernels::f32_gemm_packed_floats(size_t(cout_), size_t(cin_ * k_)), "packed conv weight"));
  if (rng.fills()) OnParamsLoaded();  // else the load packs
  return Status::OK();
}

void Conv1d::OnParamsLoaded() {
  kernels::f32_gemm_pack_nt(size_t(cout_), size_t(cin_ * k_), w_, size_t(cin_ * k_), packed_.data());
}

Status Conv1d::Apply(size_t t_in, const float* x, size_t ldx, float* y) const {
  const size_t C = size_t(cin_), K = size_t(k_), CK = C * K, t_out = size_t(out_length(int64_t(t_in)));
  ScratchScope scope;
  float* cols = nullptr;  // (t_out, C·K): row t, column (c, k) = x[t·stride + k − pad][c], 0 outside
  AW_RETURN_IF_ERROR(scope.Take(t_out * CK, "gathered windows", &cols));
  for (size_t t = 0; t < t_out; ++t) {
    float* row = cols + t * CK;
    for (size_t k = 0; k < K; ++k) {
      const int64_t src = int64_t(t) * stride_ + int64_t(k) - pad_;
      if (src < 0 || src >= int64_t(t_in)) {
        for (size_t c = 0; c < C; ++c) row[c * K + k] = 0.0f;
        continue;
      }
      const float* xs = x + size_t(src) * ldx;
      for (size_t c = 0; c < C; ++c) row[c * K + k] = xs[c];
    }
  }
  ParallelGemmPacked(t_out, size_t(cout_), CK, y, size_t(cout_), cols, CK, packed_.data(), size_t(cout_), 0, b_, 1.0f);
  return Status::OK();
}

}  // namespace aw
