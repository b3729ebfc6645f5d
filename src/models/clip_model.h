// ClipModel: transformers' CLIPModel and SiglipModel (modeling_clip.py, modeling_siglip.py) and their one-tower
// models, for image–text embeddings; docs/images.md is the reference, tests/data/make_clip_goldens.py the goldens.
//
//   CLIP    image_embeds = visual_projection(post_layernorm(vision(pixels)[:, 0]))        (no bias)
//           text_embeds  = text_projection(final_layer_norm(text(ids))[eos])              (causal text mask)
//           logits_per_text = normalize(text_embeds) · normalize(image_embeds)ᵀ · exp(logit_scale)
//   SigLIP  image_embeds = attention-pooling head(post_layernorm(vision(pixels)))
//           text_embeds  = head(final_layer_norm(text(ids))[:, -1])                     (no causal mask)
//           logits_per_text = … · exp(logit_scale) + logit_bias
// The towers are the encoder's layers (models/encoder.h, Tower); the logits are left to the caller (the JS face:
// bindings/clip.js), with logit_scale and logit_bias read from here.
//
// state_dict keys: transformers' — text_model.embeddings.{token,position}_embedding.weight,
// text_model.encoder.layers.{i}.{self_attn.{q,k,v,out}_proj,layer_norm1,mlp.fc1,mlp.fc2,layer_norm2}.*,
// text_model.final_layer_norm.*, vision_model.embeddings.{class_embedding,patch_embedding.weight,
// position_embedding.weight}, vision_model.pre_layrnorm.*, vision_model.post_layernorm.*, text_projection.weight,
// visual_projection.weight, logit_scale; SigLIP's text_model.head.*, vision_model.head.{probe,attention.*,
// layernorm.*,mlp.*}, logit_bias. The family row (clip_family.cpp) reads them into the encoder's names.
#pragma once
#include <memory>
#include <string>

#include "core/module.h"
#include "core/rng.h"
#include "io/json.h"
#include "layers/linear.h"
#include "models/encoder.h"

namespace aw {

struct ClipConfig {
  std::string model_type;    // clip, clip_text_model, clip_vision_model, siglip, siglip_text_model, siglip_vision_model
  bool siglip = false;
  bool has_text = false, has_vision = false;
  bool text_projection = false, visual_projection = false;  // CLIP's projections (CLIPModel, *WithProjection)
  bool logits = false;       // both towers: logit_scale (and SigLIP's logit_bias)
  int64_t projection_dim = 512;
  EncoderConfig text, vision;
  // Each tower's config object (text_config, or text_config_dict; the file itself for a one-tower model), into the
  // config.json the reader read: valid while it lives (the family's Build), null after it.
  const io::JsonValue* text_json = nullptr;
  const io::JsonValue* vision_json = nullptr;
  std::string text_root, vision_root;    // how messages name them: "config.text_config"
};

const char* const* ClipModelTypes();
Status ReadClipConfig(const io::JsonValue& hf, const std::string& root, ClipConfig* out);
// Each tower's range rules; with_source: worded from the config.json objects the reader kept.
Status CheckClipConfig(const ClipConfig& c, bool with_source);
// The resolved config as JSON members, no braces (modelType, hasText, textEmbedDim, imageSize, …).
std::string ClipConfigJson(const ClipConfig& c);

class ClipModel : public Module {
 public:
  Status Init(const ClipConfig& c, Rng& rng, bool with_source);
  const ClipConfig& config() const { return cfg_; }

  // pixel_values (B, C, H, W) → image embeddings (B, imageEmbedDim), not normalized (get_image_features); hidden:
  // the vision tower's last_hidden_state (B, T, E) when non-null; attention: its layers' softmax weights (B, layers,
  // heads, T, T) when non-null.
  Status ImageEmbeds(const float* pixels, const Shape& shape, bool interpolate, Buffer* out, Buffer* hidden = nullptr,
                     Buffer* attention = nullptr);
  const EncoderConfig& vision_config() const { return vision_.config(); }
  // input_ids (B, T) with attention_mask (null: all ones) → text embeddings (B, textEmbedDim), not normalized
  // (get_text_features).
  Status TextEmbeds(const int32_t* ids, const int32_t* mask, int64_t B, int64_t T, Buffer* out);
  // exp(logit_scale), logit_bias (0 for CLIP): the two-tower model's, else 1 and 0.
  float LogitScale() const { return logit_scale_ ? float(std::exp(double(*logit_scale_))) : 1.0f; }
  float LogitBias() const { return logit_bias_ ? *logit_bias_ : 0.0f; }

 private:
  ClipConfig cfg_;
  Encoder text_, vision_;
  Linear text_projection_, visual_projection_;
  float* logit_scale_ = nullptr;
  float* logit_bias_ = nullptr;
};

}  // namespace aw
