// Whisper's config (whisper.h): config.json of WhisperForConditionalGeneration, with transformers v4.40's
// WhisperConfig defaults for absent keys. Refused by key: another head (WhisperForAudioClassification, the
// decoder alone), an activation the kernels do not run, repository code (auto_map). Read and ignored, as
// transformers' generation model ignores them: scale_embedding (the decoder never applies it), the classifier's
// and SpecAugment's keys (training and the audio-classification head only). CheckWhisperConfig holds the range rules.
#include "core/limits.h"
#include "io/json_fields.h"
#include "models/s2s_config_fields.h"
#include "models/whisper.h"

namespace aw {

using io::FieldReader;
using io::IntOr;
using io::JsonType;
using io::JsonValue;

namespace {

constexpr int64_t kMaxMelBins = 1024;
// Every Whisper has 1500 (30 s); the encoder attends over all of them at once (quadratic), so a file asking for
// more than 4096 (82 s windows) is refused rather than run for minutes.
constexpr int64_t kMaxSourcePositions = 4096;

}  // namespace

Status ReadWhisperConfig(const JsonValue& hf, const std::string& root, WhisperConfig* out) {
  const FieldReader c(hf, root);
  const JsonValue* mt = c.Get("model_type");
  if (!mt || !mt->is_string() || mt->str != "whisper") return c.FailAt("model_type", "\"whisper\"");
  if (!c.Missing("auto_map"))
    return c.FailAt("auto_map", "absent (the repository's own modelling code: attnwasm runs transformers' classes)");
  if (const JsonValue* arch = c.Get("architectures"); arch && arch->is_array() && !arch->items.empty()) {
    const JsonValue& a = arch->items[0];
    if (!a.is_string() || a.str != "WhisperForConditionalGeneration")
      return c.Fail(".architectures[0]", "\"WhisperForConditionalGeneration\" (the audio classifier and the decoder alone are not run)",
                    io::Describe(&a));
  }
  WhisperConfig w;
  Seq2SeqConfig& s = w.s;
  s.model_type = "whisper";
  AW_RETURN_IF_ERROR(ReadS2sStacks(c, {51865, 384, 4, 6, 1536, "gelu"}, &s));
  s.max_positions = IntOr(c.Get("max_target_positions"), 448);
  w.max_source = IntOr(c.Get("max_source_positions"), 1500);
  w.mel_bins = IntOr(c.Get("num_mel_bins"), 80);
  AW_RETURN_IF_ERROR(c.OptionalBool("scale_embedding"));
  AW_RETURN_IF_ERROR(c.OptionalBool("tie_word_embeddings"));
  const JsonValue* tie = c.Get("tie_word_embeddings");
  s.tied = !(tie && tie->type == JsonType::kBool && !tie->boolean);
  s.shared = true;
  s.pre_norm = s.final_norm = true;
  s.embed_norm = s.logits_bias = false;
  s.k_bias = false;
  s.positions = S2sPositions::kLearned;
  s.embed_scale = 1.0;
  s.pad = S2sIdOr(c.Get("pad_token_id"), 50256);
  s.eos = S2sIdOr(c.Get("eos_token_id"), 50256);
  s.bos = S2sIdOr(c.Get("bos_token_id"), 50256);
  s.decoder_start = S2sIdOr(c.Get("decoder_start_token_id"), 50257);
  *out = std::move(w);
  return Status::OK();
}

Status CheckWhisperConfig(const WhisperConfig& w, const io::ConfigSource* src) {
  const io::ConfigRules r(src);
  const Seq2SeqConfig& c = w.s;
  AW_RETURN_IF_ERROR(CheckS2sStacks(r, c));
  AW_RETURN_IF_ERROR(r.Int("max_target_positions", c.max_positions, 1, kMaxPositions));
  AW_RETURN_IF_ERROR(r.Int("max_source_positions", w.max_source, 1, kMaxSourcePositions));
  AW_RETURN_IF_ERROR(r.Int("num_mel_bins", w.mel_bins, 1, kMaxMelBins));
  const int64_t V = c.vocab;
  if (c.pad != -1) AW_RETURN_IF_ERROR(r.Int("pad_token_id", c.pad, 0, V - 1, " (a token id)"));
  AW_RETURN_IF_ERROR(r.Int("eos_token_id", c.eos, 0, V - 1, " (a token id)"));
  AW_RETURN_IF_ERROR(r.Int("decoder_start_token_id", c.decoder_start, 0, V - 1, " (a token id)"));
  if (c.bos != -1) AW_RETURN_IF_ERROR(r.Int("bos_token_id", c.bos, 0, V - 1, " (a token id)"));
  return Status::OK();
}

std::string WhisperConfigJson(const WhisperConfig& w) {
  const Seq2SeqConfig& c = w.s;
  auto n = [](int64_t v) { return std::to_string(v); };
  auto id = [&](int64_t v) { return v < 0 ? std::string("null") : n(v); };
  const char* act = S2sActivationName(c.act);
  return "\"modelType\": \"whisper\", \"vocabSize\": " + n(c.vocab) + ", \"dModel\": " + n(c.d_model) +
         ", \"encoderLayers\": " + n(c.encoder_layers) + ", \"decoderLayers\": " + n(c.decoder_layers) +
         ", \"encoderHeads\": " + n(c.encoder_heads) + ", \"decoderHeads\": " + n(c.decoder_heads) +
         ", \"encoderFfnDim\": " + n(c.encoder_ffn) + ", \"decoderFfnDim\": " + n(c.decoder_ffn) +
         ", \"numMelBins\": " + n(w.mel_bins) + ", \"maxSourcePositions\": " + n(w.max_source) +
         ", \"frames\": " + n(w.frames()) + ", \"maxTargetPositions\": " + n(c.max_positions) +
         ", \"activation\": \"" + act + "\", \"tiedHead\": " + (c.tied ? "true" : "false") +
         ", \"padTokenId\": " + id(c.pad) + ", \"eosTokenId\": " + id(c.eos) + ", \"bosTokenId\": " + id(c.bos) +
         ", \"decoderStartTokenId\": " + id(c.decoder_start);
}

}  // namespace aw
