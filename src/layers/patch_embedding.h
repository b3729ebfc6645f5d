// PatchEmbedding: the ViT stem. nn.Conv2d(in_channels, embed_dim,
// kernel_size = stride = patch) then flatten: images (B, C, H, W) → tokens
// (B, H'·W', embed_dim), H' = floor(H / patch) (the conv drops a partial
// edge, as torch), row-major over the patch grid; patch 1 is DETR's 1×1
// projection. With class_token, the parameter cls_token (1, 1, d) is
// prepended → (B, 1 + H'W', d). Unbatched (C, H, W) → (H'W' [+1], d).
// state_dict keys: cls_token (if class_token), proj.weight (d, C, p, p),
// proj.bias (d) (if bias).
// Computed as one GEMM over gathered patches (im2col in (c, ky, kx) order,
// matching the flattened conv weight).
#pragma once
#include "core/module.h"
#include "core/rng.h"
#include "layers/linear.h"

namespace aw {

class PatchEmbedding : public Module {
 public:
  Status Init(int64_t in_channels, int64_t embed_dim, int64_t patch, bool bias, bool class_token, Rng& rng);
  Status Forward(const TensorView& images, Buffer* y, Shape* y_shape);
  int64_t embed_dim() const { return d_; }

 private:
  int64_t c_ = 0, d_ = 0, p_ = 0;
  float* cls_ = nullptr;
  struct Conv : Module {
    float* w = nullptr;
    float* b = nullptr;
    Buffer packed;  // w as (d, C·p·p) packed for the GEMM (kernels/gemm.h), rebuilt when it changes
    int64_t d = 0, k = 0;
    Status Init(int64_t c, int64_t d, int64_t p, bool bias, Rng& rng);
    void OnParamsLoaded() override;
  } proj_;
};

}  // namespace aw
