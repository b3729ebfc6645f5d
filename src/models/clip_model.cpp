// ClipModel (clip_model.h): the towers, the projections and the logit scale.
#include "models/clip_model.h"

namespace aw {

Status ClipModel::Init(const ClipConfig& c, Rng& rng, bool with_source) {
  AW_RETURN_IF_ERROR(CheckClipConfig(c, with_source));
  const io::ConfigSource text{c.text_json, c.text_root}, vision{c.vision_json, c.vision_root};
  cfg_ = c;
  cfg_.text_json = cfg_.vision_json = nullptr;  // c's config.json lives only while the model is built
  if (c.has_text) {
    AW_RETURN_IF_ERROR(text_.Init(c.text, rng, with_source ? &text : nullptr));
    AddChild("text_model", &text_);
  }
  if (c.has_vision) {
    AW_RETURN_IF_ERROR(vision_.Init(c.vision, rng, with_source ? &vision : nullptr));
    AddChild("vision_model", &vision_);
  }
  if (c.visual_projection) {
    AW_RETURN_IF_ERROR(visual_projection_.Init(c.vision.hidden, c.projection_dim, false, rng));
    AddChild("visual_projection", &visual_projection_);
  }
  if (c.text_projection) {
    AW_RETURN_IF_ERROR(text_projection_.Init(c.text.hidden, c.projection_dim, false, rng));
    AddChild("text_projection", &text_projection_);
  }
  if (c.logits) {
    // CLIP's logit_scale is a 0-d tensor; SigLIP's logit_scale and logit_bias have shape (1).
    AW_RETURN_IF_ERROR(AddParam("logit_scale", c.siglip ? Shape{1} : Shape{}, &logit_scale_));
    *logit_scale_ = 2.6592f;  // log(1 / 0.07), HF's logit_scale_init_value
    if (c.siglip) {
      AW_RETURN_IF_ERROR(AddParam("logit_bias", {1}, &logit_bias_));
      *logit_bias_ = 0.0f;
    }
  }
  return Status::OK();
}

Status ClipModel::ImageEmbeds(const float* pixels, const Shape& shape, bool interpolate, Buffer* out, Buffer* hidden,
                              Buffer* attention) {
  if (!cfg_.has_vision) return ArgError("pixelValues: this model (" + cfg_.model_type + ") has no vision tower");
  Buffer h, pooled;
  AW_RETURN_IF_ERROR(vision_.ForwardPixels(pixels, shape, interpolate, hidden ? hidden : &h, &pooled, nullptr, attention));
  if (!cfg_.visual_projection) {
    *out = std::move(pooled);
    return Status::OK();
  }
  const size_t B = size_t(shape[0]), E = size_t(cfg_.vision.hidden), P = size_t(cfg_.projection_dim);
  AW_RETURN_IF_ERROR(out->Resize(B * P, "imageEmbeds"));
  visual_projection_.Apply(B, pooled.data(), E, out->data(), P);
  return Status::OK();
}

Status ClipModel::TextEmbeds(const int32_t* ids, const int32_t* mask, int64_t B, int64_t T, Buffer* out) {
  if (!cfg_.has_text) return ArgError("inputIds: this model (" + cfg_.model_type + ") has no text tower");
  Buffer pooled;
  AW_RETURN_IF_ERROR(text_.ForwardText(ids, mask, B, T, &pooled));
  if (!cfg_.text_projection) {
    *out = std::move(pooled);
    return Status::OK();
  }
  const size_t E = size_t(cfg_.text.hidden), P = size_t(cfg_.projection_dim);
  AW_RETURN_IF_ERROR(out->Resize(size_t(B) * P, "textEmbeds"));
  text_projection_.Apply(size_t(B), pooled.data(), E, out->data(), P);
  return Status::OK();
}

}  // namespace aw
