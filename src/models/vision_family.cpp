// The vision family's registry row (family.h): ViTModel, DeiTModel and Dinov2Model and their image classifiers by
// config.json model_type (vit, deit, dinov2; models/vision_config.cpp), on the encoder's layers
// (models/vision_encoder.cpp). Tensor names as transformers saves them, read into the encoder's tree: the task
// model's prefix ("vit.", "deit.", "dinov2.") stripped, ViT's attention.attention / layernorm_before /
// layernorm_after and DINOv2's norm1 / norm2 / mlp.fc1 / mlp.fc2 (mlp.weights_in / weights_out) /
// layer_scale*.lambda1 as BERT's names; the mask
// token (masked image modelling) and a head the config does not name skipped, as transformers skips them.
#include <cstring>

#include "core/rng.h"
#include "models/encoder.h"
#include "models/families.h"

namespace aw {
namespace {

const char* const kModelTypes[] = {"vit", "deit", "dinov2", nullptr};

Status Build(const FamilyConfig& c, std::unique_ptr<Module>* out) {
  EncoderConfig cfg;
  AW_RETURN_IF_ERROR(ReadVisionConfig(*c.json, c.root, &cfg));
  for (const io::StTensor* t : c.tensors) cfg.pooler = cfg.pooler || (!cfg.dinov2 && EndsWith(t->name, "pooler.dense.weight"));
  const io::ConfigSource src{c.json, c.root};
  if (!out) return CheckVisionConfig(cfg, &src);
  Rng rng = Rng::ForLoading();
  auto m = std::make_unique<Encoder>();
  AW_RETURN_IF_ERROR(m->Init(cfg, rng, &src));
  *out = std::move(m);
  return Status::OK();
}

constexpr std::pair<const char*, const char*> kNames[] = {
    {".attention.attention.", ".attention.self."},
    {".layernorm_before.", ".attention.output.LayerNorm."},
    {".layernorm_after.", ".output.LayerNorm."},
    {".norm1.", ".attention.output.LayerNorm."},
    {".norm2.", ".output.LayerNorm."},
    {".mlp.fc1.", ".intermediate.dense."},
    {".mlp.fc2.", ".output.dense."},
    {".mlp.weights_in.", ".intermediate.dense."},  // DINOv2's SwiGLU FFN
    {".mlp.weights_out.", ".output.dense."},
    {".layer_scale1.lambda1", ".layer_scale1"},
    {".layer_scale2.lambda1", ".layer_scale2"},
    {"embeddings.patch_embeddings.projection.", "embeddings.patch_embeddings.proj."},
};

bool ParamName(const Module& m, std::string* name) {
  const EncoderConfig& c = static_cast<const Encoder&>(m).config();
  const std::string prefix = c.model_type + ".";
  if (name->rfind(prefix, 0) == 0) name->erase(0, prefix.size());
  for (auto [from, to] : kNames)
    if (size_t at = name->find(from); at != std::string::npos) name->replace(at, std::strlen(from), to);
  const bool head = c.head != EncoderHead::kNone;
  return !(*name == "embeddings.mask_token" || (!c.pooler && name->rfind("pooler.", 0) == 0) ||
           (!head && (name->rfind("classifier.", 0) == 0 || name->rfind("cls_classifier.", 0) == 0 ||
                      name->rfind("distillation_classifier.", 0) == 0)));
}

bool NotTied(const Module&, TiedTensor*) { return false; }

std::string Info(const Module& m) {
  const std::string j = VisionConfigJson(static_cast<const Encoder&>(m).config());
  return j.substr(1, j.size() - 2);
}

}  // namespace

const Family& VisionFamily() {
  static const Family f = {
      /*kind=*/"vision",
      /*class_name=*/"VisionModel",
      /*noun=*/"a vision encoder",
      /*model_types=*/kModelTypes,
      /*own_model=*/nullptr,
      /*type_hint=*/nullptr,
      /*build=*/Build,
      /*param_name=*/ParamName,
      /*tied=*/NotTied,
      /*info=*/Info,
      /*unexpected_prefix=*/nullptr,
      /*bounded_head=*/nullptr,
  };
  return f;
}

}  // namespace aw
