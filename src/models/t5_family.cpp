// T5's registry row (family.h): config.json model_types t5 and mt5 (models/t5.h), faced as the other translators
// (a Seq2SeqLM). Names as transformers' T5ForConditionalGeneration saves them; the tied copies of shared.weight
// (encoder.embed_tokens.weight, decoder.embed_tokens.weight) read past, as transformers ties them; a tied
// lm_head.weight taken only as a copy of shared.weight.
#include "core/rng.h"
#include "models/families.h"
#include "models/t5.h"

namespace aw {
namespace {

const char* const kModelTypes[] = {"t5", "mt5", nullptr};

Status Build(const FamilyConfig& c, std::unique_ptr<Module>* out) {
  T5Config cfg;
  AW_RETURN_IF_ERROR(ReadT5Config(*c.json, c.root, &cfg));
  const io::ConfigSource src{c.json, c.root};
  if (!out) return CheckT5Config(cfg, &src);
  Rng rng = Rng::ForLoading();
  auto m = std::make_unique<T5Lm>();
  AW_RETURN_IF_ERROR(m->Init(cfg, rng, &src));
  *out = std::move(m);
  return Status::OK();
}

bool ParamName(const Module&, std::string* name) {
  return *name != "encoder.embed_tokens.weight" && *name != "decoder.embed_tokens.weight";
}

bool Tied(const Module& m, TiedTensor* out) {
  const T5Config& c = static_cast<const T5Lm&>(m).config();
  if (!c.tied) return false;
  out->name = "lm_head.weight";
  out->source = "shared.weight";
  out->shape = {c.vocab, c.d_model};
  out->message = "stateDict: lm_head.weight: tie_word_embeddings is true, so lm_head.weight must equal shared.weight "
                 "(or be absent), and it differs";
  return true;
}

std::string Info(const Module& m) {
  const auto& t = static_cast<const T5Lm&>(m);
  return T5ConfigJson(t.config()) + (t.HeadBounded() ? ", \"boundedHead\": true" : "");
}

}  // namespace

const Family& T5Family() {
  static const Family f = {
      /*kind=*/"t5",
      /*class_name=*/"Seq2SeqLM",
      /*noun=*/"a T5 encoder-decoder",
      /*model_types=*/kModelTypes,
      /*own_model=*/nullptr,
      /*type_hint=*/nullptr,
      /*build=*/Build,
      /*param_name=*/ParamName,
      /*tied=*/Tied,
      /*info=*/Info,
      /*unexpected_prefix=*/nullptr,
      /*bounded_head=*/KeepBoundedHead,
  };
  return f;
}

}  // namespace aw
