// The encoder–decoder translators' registry row (family.h): config.json model_types marian, bart, mbart and m2m100
// (models/seq2seq.h). Names as transformers' …ForConditionalGeneration / MarianMTModel saves them; older saves' tied
// copies of the shared table (model.{encoder,decoder}.embed_tokens.weight) and Marian's and M2M100's computed
// position tables are read past (transformers ties the first and recomputes the others' values); BART's
// {encoder,decoder}.version skipped as transformers skips them; a tied lm_head.weight is taken only as a copy of
// the decoder's table.
#include "core/rng.h"
#include "models/families.h"
#include "models/seq2seq.h"

namespace aw {
namespace {

const char* const kModelTypes[] = {"marian", "bart", "mbart", "m2m_100", nullptr};

Status Build(const FamilyConfig& c, std::unique_ptr<Module>* out) {
  Seq2SeqConfig cfg;
  AW_RETURN_IF_ERROR(ReadSeq2SeqConfig(*c.json, c.root, &cfg));
  const io::ConfigSource src{c.json, c.root};
  if (!out) return CheckSeq2SeqConfig(cfg, &src);
  Rng rng = Rng::ForLoading();
  auto m = std::make_unique<Seq2SeqLm>();
  AW_RETURN_IF_ERROR(m->Init(cfg, rng, &src));
  *out = std::move(m);
  return Status::OK();
}

bool ParamName(const Module& m, std::string* name) {
  const Seq2SeqConfig& c = static_cast<const Seq2SeqLm&>(m).config();
  if (c.shared && (*name == "model.encoder.embed_tokens.weight" || *name == "model.decoder.embed_tokens.weight")) return false;
  if (c.positions != S2sPositions::kLearned && name->find(".embed_positions.") != std::string::npos) return false;
  if (*name == "model.encoder.version" || *name == "model.decoder.version") return false;
  return true;
}

bool Tied(const Module& m, TiedTensor* out) {
  const Seq2SeqConfig& c = static_cast<const Seq2SeqLm&>(m).config();
  if (!c.tied) return false;
  out->name = "lm_head.weight";
  out->source = c.shared ? "model.shared.weight" : "model.decoder.embed_tokens.weight";
  out->shape = {c.vocab, c.d_model};
  out->message = "stateDict: lm_head.weight: tie_word_embeddings is true, so lm_head.weight must equal " + out->source +
                 " (or be absent), and it differs";
  return true;
}

std::string Info(const Module& m) {
  const auto& s = static_cast<const Seq2SeqLm&>(m);
  return Seq2SeqConfigJson(s.config()) + (s.HeadBounded() ? ", \"boundedHead\": true" : "");
}

}  // namespace

const Family& Seq2SeqFamily() {
  static const Family f = {
      /*kind=*/"seq2seq",
      /*class_name=*/"Seq2SeqLM",
      /*noun=*/"an encoder-decoder translator",
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
