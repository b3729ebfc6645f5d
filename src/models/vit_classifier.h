// VitClassifier: a ViT-style image classifier, the model family of the digit
// demo (tools/models/train_vit.py) and of any classifier exported with
// tools/export_safetensors.py export_vit:
//
//   image (C, H, W) → (x − mean) / std → patch embedding with a class token
//   (1 + P, d) → + learned positions → TransformerEncoder (final LayerNorm)
//   → Linear on the class token → logits (K) → softmax.
//
// state_dict keys: patch.cls_token, patch.proj.weight/bias, pos.weight,
// encoder.layers.N.* (as nn.TransformerEncoderLayer, batch_first),
// encoder.norm.weight/bias, head.weight/bias.
// Classify also returns, per layer and head, the class token's attention to
// each patch, and the attention rollout (Abnar & Zuidema 2020) over patches.
#pragma once
#include <cstdint>

#include "io/json_fields.h"
#include "layers/linear.h"
#include "layers/patch_embedding.h"
#include "layers/positional_encoding.h"
#include "layers/transformer.h"

namespace aw {

struct VitConfig {
  TransformerLayerConfig layer;  // batch_first is set (one image at a time)
  int64_t image_size = 0;        // H = W
  int64_t patch_size = 0;        // divides image_size
  int64_t in_channels = 1;
  int64_t num_layers = 0;
  int64_t num_classes = 0;
  double mean = 0.0, std = 1.0;  // input normalisation, one value for every channel
};

// A model file's own config (its attnwasm.config with "model": "vit"): every key checked (models/vit_config.cpp),
// then read into *out.
Status ReadVitFile(const io::FieldReader& c, VitConfig* out);

struct ClassifyResult {
  Buffer logits, probabilities;  // (K)
  int64_t index = 0;             // argmax (the first on ties)
  Buffer attention;              // (layers, heads, P): the class token's row, patches only
  Buffer rollout;                // (P): rollout of the class token over patches, scaled to max 1
  Shape attention_shape;
};

class VitClassifier : public Module {
 public:
  Status Init(const VitConfig& c, Rng& rng);
  int64_t grid() const { return cfg_.image_size / cfg_.patch_size; }
  // image: C·H·W values (channels first) before normalisation.
  Status Classify(const float* image, size_t n, ClassifyResult* out);

 private:
  VitConfig cfg_;
  PatchEmbedding patch_;
  LearnedPositionalEmbedding pos_;
  TransformerEncoder encoder_;
  Linear head_;
};

// Attention rollout over per-layer weights (H, T, T) each: per layer the
// head average, A = 0.5·A + 0.5·I, rows renormalised; R = A_L · … · A_1 (in
// float32, on the GEMM kernels). out (T − 1): row 0 of R (the class token) over the patches, divided
// by its maximum (all zero if that is not positive).
void AttentionRollout(const std::vector<const float*>& weights, size_t H, size_t T, float* out);

}  // namespace aw
