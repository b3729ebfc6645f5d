// The two-tower family's registry row (family.h): CLIPModel and SiglipModel and their one-tower models by
// config.json model_type (models/clip_config.cpp), on the encoder's layers (clip_model.h). Tensor names as
// transformers saves them, read into the encoder's tree: the layers' self_attn.{q,k,v,out}_proj, layer_norm1/2 and
// mlp.fc1/fc2 as BERT's names, token_embedding / position_embedding / class_embedding / patch_embedding as the
// encoder's and the vision front's; position_ids buffers skipped.
#include <cstring>

#include "core/rng.h"
#include "models/clip_model.h"
#include "models/families.h"

namespace aw {
namespace {

const char* const kModelTypes[] = {"clip", "clip_text_model", "clip_vision_model",
                                   "siglip", "siglip_text_model", "siglip_vision_model", nullptr};

Status Build(const FamilyConfig& c, std::unique_ptr<Module>* out) {
  ClipConfig cfg;
  AW_RETURN_IF_ERROR(ReadClipConfig(*c.json, c.root, &cfg));
  if (!out) return CheckClipConfig(cfg, true);
  Rng rng = Rng::ForLoading();
  auto m = std::make_unique<ClipModel>();
  AW_RETURN_IF_ERROR(m->Init(cfg, rng, true));
  *out = std::move(m);
  return Status::OK();
}

// Inside a tower's layers only (SigLIP's head has its own attention.out_proj and mlp.fc1).
constexpr std::pair<const char*, const char*> kLayerNames[] = {
    {".self_attn.q_proj.", ".attention.self.query."},
    {".self_attn.k_proj.", ".attention.self.key."},
    {".self_attn.v_proj.", ".attention.self.value."},
    {".self_attn.out_proj.", ".attention.output.dense."},
    {".layer_norm1.", ".attention.output.LayerNorm."},
    {".layer_norm2.", ".output.LayerNorm."},
    {".mlp.fc1.", ".intermediate.dense."},
    {".mlp.fc2.", ".output.dense."},
};

void Replace(std::string* name, const char* from, const char* to) {
  if (size_t at = name->find(from); at != std::string::npos) name->replace(at, std::strlen(from), to);
}

bool ParamName(const Module&, std::string* name) {
  if (EndsWith(*name, ".position_ids")) return false;  // a buffer older saves kept
  if (name->find(".encoder.layers.") != std::string::npos) {
    Replace(name, ".encoder.layers.", ".encoder.layer.");
    for (auto [from, to] : kLayerNames) Replace(name, from, to);
    return true;
  }
  const bool text = name->rfind("text_model.", 0) == 0;
  Replace(name, ".embeddings.token_embedding.", ".embeddings.word_embeddings.");
  Replace(name, ".embeddings.position_embedding.weight",
          text ? ".embeddings.position_embeddings.weight" : ".embeddings.position_embeddings");
  Replace(name, ".embeddings.class_embedding", ".embeddings.cls_token");
  Replace(name, ".embeddings.patch_embedding.", ".embeddings.patch_embeddings.proj.");
  return true;
}

bool NotTied(const Module&, TiedTensor*) { return false; }

std::string Info(const Module& m) { return ClipConfigJson(static_cast<const ClipModel&>(m).config()); }

}  // namespace

const Family& ClipFamily() {
  static const Family f = {
      /*kind=*/"clip",
      /*class_name=*/"CLIPModel",
      /*noun=*/"an image-text model",
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
