// The registry's row of ModernBERT (families.h): config.json model_type "modernbert" read by modernbert_config.cpp
// and run by the causal LM's runtime (CausalLm, bidirectional, Forward's hidden rows only), its tensor names
// mapped onto that runtime's: ModernBertModel's own save, or a task model's under "model." (ModernBERT-base is a
// ModernBertForMaskedLM save) whose head, decoder and classifier are skipped here (the JS face reads a
// classifier's head itself).
#include <cstring>

#include "core/rng.h"
#include "models/causal_lm.h"
#include "models/families.h"

namespace aw {
namespace {

Status Build(const FamilyConfig& c, std::unique_ptr<Module>* out) {
  CausalLmConfig cfg;
  AW_RETURN_IF_ERROR(ReadModernBertConfig(*c.json, c.root, &cfg));
  const io::ConfigSource src = {c.json, c.root};
  if (!out) return CheckCausalLmConfig(cfg, &src);
  Rng rng = Rng::ForLoading();  // every parameter comes from the file
  auto m = std::make_unique<CausalLm>();
  AW_RETURN_IF_ERROR(m->Init(cfg, rng, &src));
  *out = std::move(m);
  return Status::OK();
}

bool StartsWith(const std::string& s, const char* head) { return s.compare(0, std::strlen(head), head) == 0; }

// ModernBERT's names → the runtime's: {ModernBERT's, the runtime's}, after "layers.N." for the layer ones.
constexpr const char* kTop[][2] = {{"embeddings.tok_embeddings.", "embed_tokens."}, {"embeddings.norm.", "embed_norm."},
                                   {"final_norm.", "norm."}};
constexpr const char* kLayer[][2] = {{"attn_norm.", "input_layernorm."}, {"attn.Wqkv.", "self_attn.qkv_proj."},
                                     {"attn.Wo.", "self_attn.o_proj."}, {"mlp_norm.", "post_attention_layernorm."},
                                     {"mlp.Wi.", "mlp.gate_up_proj."}, {"mlp.Wo.", "mlp.down_proj."}};

bool Rename(std::string* name, size_t at, const char* const (*table)[2], size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (name->compare(at, std::strlen(table[i][0]), table[i][0]) == 0) {
      name->replace(at, std::strlen(table[i][0]), table[i][1]);
      return true;
    }
  return false;
}

bool ParamName(const Module&, std::string* name) {
  if (StartsWith(*name, "model.")) name->erase(0, 6);
  // A task model's own parts (ModernBertPredictionHead, the masked LM's decoder, a classifier): not the encoder's.
  if (StartsWith(*name, "head.") || StartsWith(*name, "decoder.") || StartsWith(*name, "classifier.")) return false;
  if (StartsWith(*name, "layers.")) {
    const size_t dot = name->find('.', 7);
    if (dot != std::string::npos) Rename(name, dot + 1, kLayer, sizeof(kLayer) / sizeof(kLayer[0]));
  } else {
    Rename(name, 0, kTop, sizeof(kTop) / sizeof(kTop[0]));
  }
  name->insert(0, "model.");  // an unknown name stays unknown: the loader names it
  return true;
}

bool Tied(const Module&, TiedTensor*) { return false; }

std::string Info(const Module& m) {
  const std::string j = CausalLmConfigJson(static_cast<const CausalLm&>(m).config());
  return j.substr(1, j.size() - 2);
}

const char* const kModelTypes[] = {"modernbert", nullptr};

}  // namespace

const Family& ModernBertFamily() {
  static const Family f = {
      /*kind=*/"modernbert",
      /*class_name=*/"Embedder",
      /*noun=*/"a ModernBERT encoder",
      /*model_types=*/kModelTypes,
      /*own_model=*/nullptr,
      /*type_hint=*/nullptr,
      /*build=*/Build,
      /*param_name=*/ParamName,
      /*tied=*/Tied,
      /*info=*/Info,
      /*unexpected_prefix=*/nullptr,
  };
  return f;
}

}  // namespace aw
