#include "layers/patch_embedding.h"

#include <cmath>
#include <cstring>

#include "core/limits.h"
#include "core/rules.h"
#include "core/workspace.h"
#include "kernels/gemm.h"
#include "ops/parallel_gemm.h"

namespace aw {

Status PatchEmbedding::Conv::Init(int64_t c, int64_t d, int64_t p, bool bias, Rng& rng) {
  // torch's Conv2d init: kaiming_uniform_(a=√5) → U(±1/√fan_in), bias likewise.
  const double bound = 1.0 / std::sqrt(double(c * p * p));
  AW_RETURN_IF_ERROR(AddParam("weight", {d, c, p, p}, &w));
  rng.FillUniform(w, d * c * p * p, bound);
  if (bias) {
    AW_RETURN_IF_ERROR(AddParam("bias", {d}, &b));
    rng.FillUniform(b, d, bound);
  }
  this->d = d;
  k = c * p * p;
  AW_RETURN_IF_ERROR(packed.Resize(kernels::f32_gemm_packed_floats(size_t(d), size_t(k)), "packed proj.weight"));
  if (rng.fills()) OnParamsLoaded();  // else the load packs
  return Status::OK();
}

void PatchEmbedding::Conv::OnParamsLoaded() {
  kernels::f32_gemm_pack_nt(size_t(d), size_t(k), w, size_t(k), packed.data());
}

Status PatchEmbedding::Init(int64_t in_channels, int64_t embed_dim, int64_t patch, bool bias, bool class_token,
                            Rng& rng) {
  AW_RETURN_IF_ERROR(PositiveInt("inChannels", in_channels));
  AW_RETURN_IF_ERROR(PositiveInt("embedDim", embed_dim));
  AW_RETURN_IF_ERROR(IntInRange("patchSize", patch, 1, kMaxImageSize));
  c_ = in_channels; d_ = embed_dim; p_ = patch;
  if (class_token) {
    AW_RETURN_IF_ERROR(AddParam("cls_token", {1, 1, d_}, &cls_));
    std::memset(cls_, 0, size_t(d_) * sizeof(float));
  }
  AW_RETURN_IF_ERROR(proj_.Init(c_, d_, p_, bias, rng));
  AddChild("proj", &proj_);
  return Status::OK();
}

Status PatchEmbedding::Forward(const TensorView& images, Buffer* y, Shape* y_shape) {
  const Shape& s = images.shape;
  AW_RETURN_IF_ERROR(CheckShape("images", s));
  if (s.size() != 3 && s.size() != 4)
    return ShapeError("images: expected a 4-D (B, C, H, W) or 3-D (C, H, W) tensor, got " + ShapeStr(s));
  const bool batched = s.size() == 4;
  const int64_t B = batched ? s[0] : 1, C = s[s.size() - 3], H = s[s.size() - 2], W = s[s.size() - 1];
  if (C != c_)
    return ShapeError("images: expected C = inChannels = " + std::to_string(c_) + " channels, got " + ShapeStr(s));
  if (H < p_ || W < p_)
    return ShapeError("images: expected H and W >= patchSize = " + std::to_string(p_) + ", got " + ShapeStr(s));
  const int64_t hp = H / p_, wp = W / p_, np = hp * wp, T = np + (cls_ ? 1 : 0), K = C * p_ * p_;
  Shape ys = batched ? Shape{B, T, d_} : Shape{T, d_};
  if (NumelChecked(ys) < 0 || NumelChecked({B * np, K}) < 0) return ShapeError("images: output too large");
  ScratchScope scope;
  float* cols = nullptr;  // (B·np, K) gathered patches: row (b, py, px), column (c, ky, kx)
  AW_RETURN_IF_ERROR(scope.Take(size_t(B * np * K), "gathered patches", &cols));
  AW_RETURN_IF_ERROR(y->Resize(size_t(B * T * d_), "patch embeddings"));
  *y_shape = ys;
  float* col = cols;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t py = 0; py < hp; ++py)
      for (int64_t px = 0; px < wp; ++px)
        for (int64_t c = 0; c < C; ++c)
          for (int64_t ky = 0; ky < p_; ++ky) {
            const float* src = images.data + ((b * C + c) * H + py * p_ + ky) * W + px * p_;
            std::memcpy(col, src, size_t(p_) * sizeof(float));
            col += p_;
          }
  for (int64_t b = 0; b < B; ++b) {
    float* out = y->data() + b * T * d_;
    if (cls_) {
      std::memcpy(out, cls_, size_t(d_) * sizeof(float));
      out += d_;
    }
    ParallelGemmPacked(size_t(np), size_t(d_), size_t(K), out, size_t(d_), cols + b * np * K, size_t(K),
                       proj_.packed.data(), size_t(d_), 0, proj_.b, 1.0f);
  }
  return Status::OK();
}

}  // namespace aw
