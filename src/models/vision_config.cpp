// The vision family's config (encoder_config.h): a config.json of ViTModel, DeiTModel or Dinov2Model and their
// image classifiers, as transformers 4.x and 5.x write it, HF's defaults for absent keys. Refused by key: what
// the family cannot run exactly (another activation, no qkv bias, another pooler), another
// task model. CheckVisionConfig holds the range rules.
#include <cmath>
#include <cstring>
#include <limits>

#include "core/limits.h"
#include "io/json_fields.h"
#include "models/encoder_config.h"

namespace aw {

using io::FieldReader;
using io::IntOr;
using io::JsonType;
using io::JsonValue;

Status ReadVisionConfig(const JsonValue& hf, const std::string& root, EncoderConfig* out) {
  const FieldReader c(hf, root);
  const JsonValue* mt = c.Get("model_type");
  const bool known = mt && mt->is_string() && (mt->str == "vit" || mt->str == "deit" || mt->str == "dinov2");
  if (!known) return c.FailAt("model_type", "\"vit\", \"deit\" or \"dinov2\" (a vision encoder's config.json)");
  EncoderConfig s;
  s.model_type = mt->str;
  s.vision = true;
  s.pre_norm = true;
  s.dinov2 = s.model_type == "dinov2";
  s.layer_scale = s.dinov2;
  s.extra_tokens = s.model_type == "deit" ? 2 : 1;
  // GELU with erf (ACT2FN["gelu"]); the tanh forms and quick_gelu would give other numbers.
  AW_RETURN_IF_ERROR(c.OptionalEnum("hidden_act", {"gelu"}));
  if (const JsonValue* v = c.Get("qkv_bias"); v && !(v->type == JsonType::kBool && v->boolean))
    return c.FailAt("qkv_bias", "true or absent (query, key and value with biases)");
  AW_RETURN_IF_ERROR(c.OptionalBool("use_swiglu_ffn", &s.swiglu));
  if (s.swiglu && !s.dinov2) return c.FailAt("use_swiglu_ffn", "false or absent (a SwiGLU FFN is DINOv2's only)");
  if (!c.Missing("auto_map"))
    return c.FailAt("auto_map", "absent (the repository's own modelling code: attnwasm runs transformers' classes)");
  // transformers 5.x's ViTPooler: pooler_output_size and pooler_act; only tanh over hidden_size is the 4.x pooler.
  AW_RETURN_IF_ERROR(c.OptionalEnum("pooler_act", {"tanh"}));
  s.hidden = IntOr(c.Get("hidden_size"), 768);
  if (const JsonValue* v = c.Get("pooler_output_size"); v && v->type != JsonType::kNull && IntOr(v, -1) != s.hidden)
    return c.FailAt("pooler_output_size", "absent, null or hidden_size (" + std::to_string(s.hidden) + ")");
  s.layers = IntOr(c.Get("num_hidden_layers"), 12);
  s.heads = IntOr(c.Get("num_attention_heads"), 12);
  if (s.dinov2) {
    const double ratio = io::NumberOr(c.Get("mlp_ratio"), 4.0);
    s.intermediate = std::isfinite(ratio) && ratio > 0 && ratio * double(s.hidden) < 1e9 ? int64_t(double(s.hidden) * ratio)
                                                                                       : io::kUnreadInt;
    // Dinov2SwiGLUFFN's hidden_features: two thirds of the MLP's, rounded up to a multiple of 8.
    if (s.swiglu && s.intermediate != io::kUnreadInt) s.intermediate = (int64_t(double(s.intermediate) * 2.0 / 3.0) + 7) / 8 * 8;
  } else {
    s.intermediate = IntOr(c.Get("intermediate_size"), 3072);
  }
  s.image_size = IntOr(c.Get("image_size"), 224);
  s.patch_size = IntOr(c.Get("patch_size"), s.dinov2 ? 14 : 16);
  s.channels = IntOr(c.Get("num_channels"), 3);
  if (const JsonValue* arch = c.Get("architectures"); arch && arch->type == JsonType::kArray && !arch->items.empty() &&
                                                        arch->items[0].is_string()) {
    const std::string& a = arch->items[0].str;
    const char* const base = s.model_type == "vit" ? "ViT" : s.model_type == "deit" ? "DeiT" : "Dinov2";
    const std::string model = std::string(base) + "Model", classify = std::string(base) + "ForImageClassification";
    s.teacher = a == classify + "WithTeacher" && s.model_type == "deit";
    if (a == classify || s.teacher) {
      s.head = EncoderHead::kImage;
    } else if (a != model) {
      return c.FailAt("architectures", model + " or " + classify + (s.model_type == "deit" ? "[WithTeacher]" : "") +
                                           " (other heads, masked image modelling and backbones, are not run)");
    }
  }
  if (s.head != EncoderHead::kNone) {
    const JsonValue* id2label = c.Get("id2label");
    s.labels = id2label && id2label->type == JsonType::kObject ? int64_t(id2label->members.size())
                                                                : IntOr(c.Get("num_labels"), 2);
  }
  const JsonValue* eps = c.Get("layer_norm_eps");
  s.eps = !eps ? (s.dinov2 ? 1e-6 : 1e-12) : eps->is_number() ? eps->number : std::numeric_limits<double>::quiet_NaN();
  *out = std::move(s);
  return Status::OK();
}

Status CheckLayerWidths(const io::ConfigRules& r, const EncoderConfig& c) {
  AW_RETURN_IF_ERROR(r.Int("hidden_size", c.hidden, 1, kMaxLmWidth));
  AW_RETURN_IF_ERROR(r.Int("num_hidden_layers", c.layers, 1, kMaxLayers));
  AW_RETURN_IF_ERROR(r.Int("num_attention_heads", c.heads, 1, c.hidden));
  if (c.hidden % c.heads)
    return r.Fail("num_attention_heads", "a divisor of hidden_size (" + std::to_string(c.hidden) + ")", double(c.heads));
  return Status::OK();
}

Status CheckVisionConfig(const EncoderConfig& c, const io::ConfigSource* src) {
  const io::ConfigRules r(src);
  AW_RETURN_IF_ERROR(CheckLayerWidths(r, c));
  AW_RETURN_IF_ERROR(r.Int(c.dinov2 ? "mlp_ratio" : "intermediate_size", c.intermediate, 1, kMaxFeedforward,
                           c.dinov2 ? " (hidden_size · mlp_ratio)" : ""));
  AW_RETURN_IF_ERROR(r.Int("num_channels", c.channels, 1, kMaxChannels));
  AW_RETURN_IF_ERROR(r.Int("image_size", c.image_size, 1, kMaxImageSize));
  AW_RETURN_IF_ERROR(r.Int("patch_size", c.patch_size, 1, c.image_size));
  const int64_t g = c.image_size / c.patch_size;
  if (g * g + c.extra_tokens > kMaxPositions)
    return r.Fail("image_size", "at most " + std::to_string(kMaxPositions) + " patches", double(c.image_size));
  if (c.head != EncoderHead::kNone && c.tower == Tower::kNone)
    AW_RETURN_IF_ERROR(r.Int(c.labels ? "num_labels" : "id2label", c.labels, 1, kMaxVocab));
  return r.Positive("layer_norm_eps", c.eps);
}

std::string VisionConfigJson(const EncoderConfig& c) {
  return "{\"modelType\": \"" + c.model_type + "\", \"hiddenSize\": " + std::to_string(c.hidden) +
         ", \"numLayers\": " + std::to_string(c.layers) + ", \"numHeads\": " + std::to_string(c.heads) +
         ", \"imageSize\": " + std::to_string(c.image_size) + ", \"patchSize\": " + std::to_string(c.patch_size) +
         ", \"numChannels\": " + std::to_string(c.channels) + ", \"extraTokens\": " + std::to_string(c.extra_tokens) +
         ", \"anySize\": " + (c.dinov2 ? "true" : "false") + ", \"pooler\": " + (c.pooler || c.dinov2 ? "true" : "false") +
         ", \"head\": " + std::to_string(int(c.head)) + ", \"numLabels\": " + std::to_string(c.labels) + "}";
}

}  // namespace aw
