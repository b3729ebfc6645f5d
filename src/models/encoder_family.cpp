// The encoder family's registry row (family.h): BertModel, RobertaModel and XLMRobertaModel by config.json
// model_type (models/encoder_config.h), as transformers loads them: the family's own task-model prefix stripped
// ("bert." for BERT, "roberta." for RoBERTa and XLM-R), older saves' LayerNorm.gamma / .beta read as weight / bias,
// task heads (masked-LM, classifier) and the position_ids buffer skipped, the pooler the model's when the file
// has one.
#include <cstring>

#include "core/rng.h"
#include "models/encoder.h"
#include "models/families.h"

namespace aw {
namespace {

Status Build(const FamilyConfig& c, std::unique_ptr<Module>* out) {
  EncoderConfig cfg;
  AW_RETURN_IF_ERROR(ReadEncoderConfig(*c.json, c.root, &cfg));
  for (const io::StTensor* t : c.tensors) cfg.pooler = cfg.pooler || EndsWith(t->name, "pooler.dense.weight");
  const io::ConfigSource src{c.json, c.root};
  if (!out) return CheckEncoderConfig(cfg, &src);
  Rng rng = Rng::ForLoading();
  auto m = std::make_unique<Encoder>();
  AW_RETURN_IF_ERROR(m->Init(cfg, rng, &src));
  *out = std::move(m);
  return Status::OK();
}

// DistilBERT's names → BERT's (the module's): distilbert.transformer.layer.{i}.attention.q_lin → encoder.layer.{i}.
// attention.self.query, and so on.
constexpr std::pair<const char*, const char*> kDistilNames[] = {
    {"transformer.layer.", "encoder.layer."},           {".attention.q_lin.", ".attention.self.query."},
    {".attention.k_lin.", ".attention.self.key."},      {".attention.v_lin.", ".attention.self.value."},
    {".attention.out_lin.", ".attention.output.dense."}, {".sa_layer_norm.", ".attention.output.LayerNorm."},
    {".ffn.lin1.", ".intermediate.dense."},             {".ffn.lin2.", ".output.dense."},
    {".output_layer_norm.", ".output.LayerNorm."},
};

bool ParamName(const Module& m, std::string* name) {
  const EncoderConfig& c = static_cast<const Encoder&>(m).config();
  const std::string prefix = c.model_type == "bert" ? "bert." : c.distil ? "distilbert." : "roberta.";
  if (name->rfind(prefix, 0) == 0) name->erase(0, prefix.size());
  if (c.distil) {
    for (auto [from, to] : kDistilNames)
      if (size_t at = name->find(from); at != std::string::npos) name->replace(at, std::strlen(from), to);
    // DistilBertForMaskedLM's head.
    if (name->rfind("vocab_", 0) == 0) return false;
  }
  for (auto [from, to] : {std::pair{"LayerNorm.gamma", "LayerNorm.weight"}, std::pair{"LayerNorm.beta", "LayerNorm.bias"}})
    if (EndsWith(*name, from)) name->replace(name->size() - std::strlen(from), std::strlen(from), to);
  // Tensors a task head or an older save adds that the model does not use (HF ignores them too); a classifier
  // is read when config.json's architectures names a classification model.
  const bool head = c.head != EncoderHead::kNone;
  return !(name->rfind("cls.", 0) == 0 || name->rfind("lm_head.", 0) == 0 ||
           (!head && (name->rfind("classifier.", 0) == 0 || name->rfind("pre_classifier.", 0) == 0)) ||
           EndsWith(*name, "embeddings.position_ids"));
}

bool NotTied(const Module&, TiedTensor*) { return false; }

std::string Info(const Module& m) {
  const std::string j = EncoderConfigJson(static_cast<const Encoder&>(m).config());
  return j.substr(1, j.size() - 2);
}

}  // namespace

const Family& EncoderFamily() {
  static const Family f = {
      /*kind=*/"encoder",
      /*class_name=*/"Embedder",
      /*noun=*/"an encoder",
      /*model_types=*/EncoderModelTypes(),
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
