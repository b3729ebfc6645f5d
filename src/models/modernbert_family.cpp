// The registry's row of ModernBERT (families.h): config.json model_type "modernbert" read by modernbert_config.cpp
// and run by the causal LM's runtime (CausalLm, bidirectional, Forward's hidden rows only), its tensor names
// mapped onto that runtime's: ModernBertModel's own save, or a task model's under "model." (ModernBERT-base is a
// ModernBertForMaskedLM save) whose head and decoder are skipped here; a classifier's head and classifier are
// kept as plain parameters (ModernBert::AddHead) that the JS face applies.
#include <cstring>

#include "core/rng.h"
#include "models/causal_lm.h"
#include "models/families.h"

namespace aw {
namespace {

// The head of a ModernBertForSequenceClassification / ForTokenClassification save (head.dense, head.norm,
// classifier), when the file has classifier.weight: plain float parameters under the file's names, which the JS
// face reads (paramData) and applies to the pooled rows or to every row. A masked-LM save's head.* is skipped.
constexpr const char* kHead[] = {"head.dense.weight", "head.dense.bias", "head.norm.weight", "classifier.weight",
                                 "classifier.bias"};

class ModernBert : public CausalLm {
 public:
  Status AddHead(const std::vector<const io::StTensor*>& tensors) {
    const io::StTensor* cls = nullptr;
    for (const io::StTensor* t : tensors)
      if (t->name == "classifier.weight") cls = t;
    const int64_t E = config().hidden;
    if (!cls) return Status::OK();
    if (cls->shape.size() != 2 || cls->shape[1] != E || cls->shape[0] < 1 || cls->shape[0] > 65536)
      return Status(Code::kStateDict, "stateDict: classifier.weight: expected (num_labels, " + std::to_string(E) +
                                          "), num_labels in [1, 65536], got " + ShapeStr(cls->shape));
    labels_ = cls->shape[0];
    for (const io::StTensor* t : tensors)
      for (const char* name : kHead)
        if (t->name == name) {
          float* unused = nullptr;
          const Shape want = std::strcmp(name, "classifier.weight") == 0 ? Shape{labels_, E}
                             : std::strcmp(name, "classifier.bias") == 0 ? Shape{labels_}
                             : std::strcmp(name, "head.dense.weight") == 0 ? Shape{E, E} : Shape{E};
          AW_RETURN_IF_ERROR(AddParam(name, want, &unused));
        }
    return Status::OK();
  }
  int64_t labels() const { return labels_; }

 private:
  int64_t labels_ = 0;
};

Status Build(const FamilyConfig& c, std::unique_ptr<Module>* out) {
  CausalLmConfig cfg;
  AW_RETURN_IF_ERROR(ReadModernBertConfig(*c.json, c.root, &cfg));
  const io::ConfigSource src = {c.json, c.root};
  if (!out) return CheckCausalLmConfig(cfg, &src);
  Rng rng = Rng::ForLoading();  // every parameter comes from the file
  auto m = std::make_unique<ModernBert>();
  AW_RETURN_IF_ERROR(m->Init(cfg, rng, &src));
  AW_RETURN_IF_ERROR(m->AddHead(c.tensors));
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

bool ParamName(const Module& m, std::string* name) {
  // A classifier's head (kept when the model took it: AddHead); a masked LM's head and decoder: skipped.
  if (StartsWith(*name, "head.") || StartsWith(*name, "classifier.")) return m.Param(*name) != nullptr;
  if (StartsWith(*name, "decoder.")) return false;
  if (StartsWith(*name, "model.")) name->erase(0, 6);
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
  const auto& mb = static_cast<const ModernBert&>(m);
  const std::string j = CausalLmConfigJson(mb.config());
  return j.substr(1, j.size() - 2) + ", \"numLabels\": " + std::to_string(mb.labels()) +
         ", \"maxTokens\": " + std::to_string(mb.config().max_positions);
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
      /*bounded_head=*/nullptr,
  };
  return f;
}

}  // namespace aw
