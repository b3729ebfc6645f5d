// The causal LM family's registry row (family.h): Hugging Face's decoder-only families by config.json model_type
// (models/causal_lm_config.h), and this repository's own causal LM files ("model": "causal_lm", an hf_config and
// a character tokenizer inside: the demo model). Names as Hugging Face's (models/causal_lm.h), or a base model's
// without "model."; older saves' RoPE buffers skipped; a tied lm_head.weight taken only as a copy of the embedding.
#include <cstring>

#include "core/rng.h"
#include "models/causal_lm.h"
#include "models/families.h"

namespace aw {
namespace {

const char* TypeHint(const std::string& model_type) {
  return model_type == "gemma3" ? "\"gemma3\" is the multimodal model: its text model's config has \"gemma3_text\""
                                : nullptr;
}

Status Build(const FamilyConfig& c, std::unique_ptr<Module>* out) {
  CausalLmConfig cfg;
  io::ConfigSource src;
  if (c.own) {
    AW_RETURN_IF_ERROR(ReadCausalLmFile(io::FieldReader(*c.json, c.root), &cfg));
    AW_RETURN_IF_ERROR(CheckOwnKeys(*c.json, c.root));
    src = {c.json->Find("hf_config"), c.root + ".hf_config"};
  } else {
    AW_RETURN_IF_ERROR(ReadCausalLmConfig(*c.json, c.root, &cfg));
    src = {c.json, c.root};
  }
  if (!out) return CheckCausalLmConfig(cfg, &src);
  Rng rng = Rng::ForLoading();  // every parameter comes from the file
  auto m = std::make_unique<CausalLm>();
  AW_RETURN_IF_ERROR(m->Init(cfg, rng, &src));
  *out = std::move(m);
  return Status::OK();
}

// A base model's save (Qwen3Model: Qwen3-Embedding's files) names its tensors without "model.".
bool ParamName(const Module&, std::string* name) {
  if (name->rfind("layers.", 0) == 0 || *name == "embed_tokens.weight" || *name == "norm.weight") name->insert(0, "model.");
  return !EndsWith(*name, ".rotary_emb.inv_freq");
}

bool Tied(const Module& m, TiedTensor* out) {
  const CausalLmConfig& c = static_cast<const CausalLm&>(m).config();
  if (!c.tied) return false;
  out->name = "lm_head.weight";
  out->source = "model.embed_tokens.weight";
  out->shape = {c.vocab, c.hidden};
  out->message = "stateDict: lm_head.weight: tie_word_embeddings is true, so lm_head.weight must equal "
                 "model.embed_tokens.weight (or be absent), and it differs";
  return true;
}

std::string Info(const Module& m) {
  const std::string j = CausalLmConfigJson(static_cast<const CausalLm&>(m).config());
  return j.substr(1, j.size() - 2);
}

}  // namespace

const Family& CausalLmFamily() {
  static const Family f = {
      /*kind=*/"causal_lm",
      /*class_name=*/"CausalLM",
      /*noun=*/"a causal LM",
      /*model_types=*/CausalLmModelTypes(),
      /*own_model=*/"causal_lm",
      /*type_hint=*/TypeHint,
      /*build=*/Build,
      /*param_name=*/ParamName,
      /*tied=*/Tied,
      /*info=*/Info,
      /*unexpected_prefix=*/nullptr,
      /*bounded_head=*/nullptr,
  };
  return f;
}

}  // namespace aw
