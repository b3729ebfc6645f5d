// Whisper's registry row (family.h): config.json model_type whisper (models/whisper.h), faced as a
// SpeechRecognizer. Names as transformers' WhisperForConditionalGeneration saves them; a tied proj_out.weight is
// taken only as a copy of model.decoder.embed_tokens.weight.
#include "core/rng.h"
#include "models/families.h"
#include "models/whisper.h"

namespace aw {
namespace {

const char* const kModelTypes[] = {"whisper", nullptr};

Status Build(const FamilyConfig& c, std::unique_ptr<Module>* out) {
  WhisperConfig cfg;
  AW_RETURN_IF_ERROR(ReadWhisperConfig(*c.json, c.root, &cfg));
  const io::ConfigSource src{c.json, c.root};
  if (!out) return CheckWhisperConfig(cfg, &src);
  Rng rng = Rng::ForLoading();
  auto m = std::make_unique<WhisperLm>();
  AW_RETURN_IF_ERROR(m->Init(cfg, rng, &src));
  *out = std::move(m);
  return Status::OK();
}

bool ParamName(const Module&, std::string*) { return true; }

bool Tied(const Module& m, TiedTensor* out) {
  const WhisperConfig& c = static_cast<const WhisperLm&>(m).config();
  if (!c.s.tied) return false;
  out->name = "proj_out.weight";
  out->source = "model.decoder.embed_tokens.weight";
  out->shape = {c.s.vocab, c.s.d_model};
  out->message = "stateDict: proj_out.weight: tie_word_embeddings is true, so proj_out.weight must equal "
                 "model.decoder.embed_tokens.weight (or be absent), and it differs";
  return true;
}

std::string Info(const Module& m) { return WhisperConfigJson(static_cast<const WhisperLm&>(m).config()); }

}  // namespace

const Family& WhisperFamily() {
  static const Family f = {
      /*kind=*/"whisper",
      /*class_name=*/"SpeechRecognizer",
      /*noun=*/"a speech recognizer",
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
