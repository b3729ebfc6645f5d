// The two-tower family's config (clip_model.h): config.json of CLIPModel, SiglipModel and their one-tower models
// (clip_text_model, clip_vision_model, siglip_text_model, siglip_vision_model), as transformers 4.x and 5.x write
// them, HF's defaults for absent keys (CLIPTextConfig, CLIPVisionConfig, SiglipTextConfig, SiglipVisionConfig).
// An old CLIP config's text_config_dict / vision_config_dict replaces text_config / vision_config, as
// CLIPConfig.__init__ does (it completes the dict with defaults and lays it over). Refused by key: another activation than the tower's family runs exactly, SigLIP's
// vision tower without its head, another task class. CheckClipConfig holds the range rules of each tower.
#include <cmath>
#include <limits>

#include "core/limits.h"
#include "io/json_fields.h"
#include "models/clip_model.h"

namespace aw {

using io::FieldReader;
using io::IntOr;
using io::JsonType;
using io::JsonValue;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A tower's config object: *_config_dict when the file has one (CLIPConfig completes it with the tower config's
// defaults and lays the whole of it over *_config, so its absent keys are defaults, not *_config's), else *_config,
// else an empty object (every key its default).
const JsonValue* TowerObject(const JsonValue* obj, const JsonValue* dict) {
  static const JsonValue kEmpty = [] {
    JsonValue v;
    v.type = JsonType::kObject;
    return v;
  }();
  if (dict && dict->is_object()) return dict;
  return obj && obj->is_object() ? obj : &kEmpty;
}

// One tower's fields from its config object (c), HF's defaults for the tower kind.
Status ReadTower(const FieldReader& c, Tower kind, EncoderConfig* out) {
  const bool siglip = kind == Tower::kSiglipText || kind == Tower::kSiglipVision;
  const bool text = kind == Tower::kClipText || kind == Tower::kSiglipText;
  EncoderConfig s;
  s.model_type = siglip ? (text ? "siglip_text_model" : "siglip_vision_model") : (text ? "clip_text_model" : "clip_vision_model");
  s.tower = kind;
  s.pre_norm = true;
  s.vision = !text;
  s.causal = kind == Tower::kClipText;
  s.type_vocab = 0;
  // quick_gelu (CLIP's default), gelu (erf; some CLIP checkpoints), gelu_pytorch_tanh (SigLIP's).
  std::string act = siglip ? "gelu_pytorch_tanh" : "quick_gelu";
  AW_RETURN_IF_ERROR(c.OptionalEnum("hidden_act", {"quick_gelu", "gelu", "gelu_pytorch_tanh", "gelu_new"}, &act));
  s.act = act == "quick_gelu" ? EncoderAct::kQuickGelu : act == "gelu" ? EncoderAct::kGelu : EncoderAct::kGeluTanh;
  s.hidden = IntOr(c.Get("hidden_size"), text && !siglip ? 512 : 768);
  s.intermediate = IntOr(c.Get("intermediate_size"), text && !siglip ? 2048 : 3072);
  s.layers = IntOr(c.Get("num_hidden_layers"), 12);
  s.heads = IntOr(c.Get("num_attention_heads"), text && !siglip ? 8 : 12);
  const JsonValue* eps = c.Get("layer_norm_eps");
  s.eps = !eps ? (siglip ? 1e-6 : 1e-5) : eps->is_number() ? eps->number : kNaN;
  if (text) {
    s.vocab = IntOr(c.Get("vocab_size"), siglip ? 32000 : 49408);
    s.max_positions = IntOr(c.Get("max_position_embeddings"), siglip ? 64 : 77);
    s.pad_id = IntOr(c.Get("pad_token_id"), 1);
    // CLIPTextTransformer: eos_token_id 2 (the configs before transformers 4.31) pools at argmax(input_ids).
    s.eos_id = IntOr(c.Get("eos_token_id"), 49407);
    s.eos_argmax = !siglip && s.eos_id == 2;
    // SigLIP's text head: Linear(hidden, projection_size) (5.x's key; 4.x: hidden).
    if (siglip) {
      const JsonValue* p = c.Get("projection_size");
      s.labels = p && p->type != JsonType::kNull ? IntOr(p, io::kUnreadInt) : s.hidden;
    }
  } else {
    s.image_size = IntOr(c.Get("image_size"), 224);
    s.patch_size = IntOr(c.Get("patch_size"), siglip ? 16 : 32);
    s.channels = IntOr(c.Get("num_channels"), 3);
    s.extra_tokens = siglip ? 0 : 1;
    if (const JsonValue* v = c.Get("vision_use_head"); siglip && v && !(v->type == JsonType::kBool && v->boolean))
      return c.FailAt("vision_use_head", "true or absent (the attention-pooling head; a tower without it is not run)");
  }
  *out = std::move(s);
  return Status::OK();
}

// architectures[0], or "" when the file names none.
std::string Architecture(const FieldReader& c) {
  const JsonValue* arch = c.Get("architectures");
  return arch && arch->type == JsonType::kArray && !arch->items.empty() && arch->items[0].is_string() ? arch->items[0].str : "";
}

}  // namespace

const char* const* ClipModelTypes() {
  static const char* const kTypes[] = {"clip", "clip_text_model", "clip_vision_model",
                                       "siglip", "siglip_text_model", "siglip_vision_model", nullptr};
  return kTypes;
}

Status ReadClipConfig(const JsonValue& hf, const std::string& root, ClipConfig* out) {
  const FieldReader c(hf, root);
  const JsonValue* mt = c.Get("model_type");
  std::string type = mt && mt->is_string() ? mt->str : "";
  bool known = false;
  for (const char* const* t = ClipModelTypes(); *t; ++t) known = known || type == *t;
  if (!known)
    return c.FailAt("model_type", "\"clip\", \"clip_text_model\", \"clip_vision_model\", \"siglip\", \"siglip_text_model\" or "
                                  "\"siglip_vision_model\" (a two-tower model's config.json)");
  if (!c.Missing("auto_map"))
    return c.FailAt("auto_map", "absent (the repository's own modelling code: attnwasm runs transformers' classes)");
  ClipConfig s;
  s.model_type = type;
  s.siglip = type.rfind("siglip", 0) == 0;
  const bool both = type == "clip" || type == "siglip";
  s.has_text = both || type.find("_text_") != std::string::npos;
  s.has_vision = both || type.find("_vision_") != std::string::npos;
  // The classes: CLIPModel, CLIPTextModel[WithProjection], CLIPVisionModel[WithProjection]; SiglipModel,
  // SiglipTextModel, SiglipVisionModel.
  const std::string base = s.siglip ? "Siglip" : "CLIP";
  const std::string model = both ? base + "Model" : base + (s.has_text ? "TextModel" : "VisionModel");
  const std::string arch = Architecture(c);
  if (!arch.empty() && arch != model && (s.siglip || both || arch != model + "WithProjection"))
    return c.FailAt("architectures", model + (s.siglip || both ? "" : "[WithProjection]") +
                                         " (other heads, image classification among them, are not run)");
  s.text_projection = !s.siglip && s.has_text && (both || arch == model + "WithProjection");
  s.visual_projection = !s.siglip && s.has_vision && (both || arch == model + "WithProjection");
  s.logits = both;
  if (both) {
    for (const char* key : {"text_config", "vision_config", "text_config_dict", "vision_config_dict"})
      if (const JsonValue* v = c.Get(key); v && !v->is_object() && v->type != JsonType::kNull)
        return c.FailAt(key, "an object or null (a tower's config)");
    const JsonValue *td = c.Get("text_config_dict"), *vd = c.Get("vision_config_dict");
    s.text_json = TowerObject(c.Get("text_config"), td);
    s.vision_json = TowerObject(c.Get("vision_config"), vd);
    s.text_root = root + (td && td->is_object() ? ".text_config_dict" : ".text_config");
    s.vision_root = root + (vd && vd->is_object() ? ".vision_config_dict" : ".vision_config");
    s.projection_dim = IntOr(c.Get("projection_dim"), 512);
  } else {
    (s.has_text ? s.text_json : s.vision_json) = &hf;
    (s.has_text ? s.text_root : s.vision_root) = root;
    s.projection_dim = IntOr(c.Get("projection_dim"), 512);
  }
  if (s.has_text)
    AW_RETURN_IF_ERROR(ReadTower(FieldReader(*s.text_json, s.text_root), s.siglip ? Tower::kSiglipText : Tower::kClipText, &s.text));
  if (s.has_vision)
    AW_RETURN_IF_ERROR(ReadTower(FieldReader(*s.vision_json, s.vision_root),
                                 s.siglip ? Tower::kSiglipVision : Tower::kClipVision, &s.vision));
  *out = std::move(s);
  return Status::OK();
}

Status CheckTowerConfig(const EncoderConfig& c, const io::ConfigSource* src) {
  if (c.vision) return CheckVisionConfig(c, src);  // the pixel rules of ViT's (intermediate_size, the grid)
  const io::ConfigRules r(src);
  AW_RETURN_IF_ERROR(CheckLayerWidths(r, c));
  AW_RETURN_IF_ERROR(r.Int("intermediate_size", c.intermediate, 1, kMaxFeedforward));
  AW_RETURN_IF_ERROR(r.Int("vocab_size", c.vocab, 1, kMaxVocab));
  AW_RETURN_IF_ERROR(r.Int("max_position_embeddings", c.max_positions, 1, kMaxPositions));
  AW_RETURN_IF_ERROR(r.Int("eos_token_id", c.eos_id, 0, INT32_MAX));
  if (c.tower == Tower::kSiglipText) AW_RETURN_IF_ERROR(r.Int("projection_size", c.labels, 1, kMaxLmWidth));
  return r.Positive("layer_norm_eps", c.eps);
}

Status CheckClipConfig(const ClipConfig& c, bool with_source) {
  const io::ConfigSource text{c.text_json, c.text_root}, vision{c.vision_json, c.vision_root};
  if (c.has_text) AW_RETURN_IF_ERROR(CheckTowerConfig(c.text, with_source ? &text : nullptr));
  if (c.has_vision) AW_RETURN_IF_ERROR(CheckTowerConfig(c.vision, with_source ? &vision : nullptr));
  if (c.text_projection || c.visual_projection) {
    const io::JsonValue* root = c.model_type == "clip" ? nullptr : c.has_text ? c.text_json : c.vision_json;
    const io::ConfigSource top{root, c.has_text && !c.has_vision ? c.text_root : c.has_vision && !c.has_text ? c.vision_root : ""};
    const io::ConfigRules r(with_source && root ? &top : nullptr);
    AW_RETURN_IF_ERROR(r.Int("projection_dim", c.projection_dim, 1, kMaxLmWidth));
  }
  return Status::OK();
}

std::string ClipConfigJson(const ClipConfig& c) {
  auto n = [](int64_t v) { return std::to_string(v); };
  std::string j = "\"modelType\": \"" + c.model_type + "\", \"siglip\": " + (c.siglip ? "true" : "false") +
                  ", \"hasText\": " + (c.has_text ? "true" : "false") + ", \"hasVision\": " +
                  (c.has_vision ? "true" : "false") + ", \"logits\": " + (c.logits ? "true" : "false");
  const int64_t text_dim = c.text_projection ? c.projection_dim : c.siglip ? c.text.labels : c.text.hidden;
  const int64_t image_dim = c.visual_projection ? c.projection_dim : c.vision.hidden;
  if (c.has_text)
    j += ", \"textEmbedDim\": " + n(text_dim) + ", \"textHiddenSize\": " + n(c.text.hidden) + ", \"vocabSize\": " +
         n(c.text.vocab) + ", \"maxPositions\": " + n(c.text.max_positions) + ", \"padTokenId\": " + n(c.text.pad_id) +
         ", \"eosTokenId\": " + n(c.text.eos_id);
  if (c.has_vision)
    j += ", \"imageEmbedDim\": " + n(image_dim) + ", \"visionHiddenSize\": " + n(c.vision.hidden) + ", \"imageSize\": " +
         n(c.vision.image_size) + ", \"patchSize\": " + n(c.vision.patch_size) + ", \"numChannels\": " + n(c.vision.channels) +
         ", \"extraTokens\": " + n(c.vision.extra_tokens) + ", \"visionNumLayers\": " + n(c.vision.layers) +
         ", \"visionNumHeads\": " + n(c.vision.heads);
  return j;
}

}  // namespace aw
