// Whisper's config (whisper.h): config.json of WhisperForConditionalGeneration, with transformers v4.40's
// WhisperConfig defaults for absent keys. Refused by key: another head (WhisperForAudioClassification, the
// decoder alone), an activation the kernels do not run, repository code (auto_map). Read and ignored, as
// transformers' generation model ignores them: scale_embedding (the decoder never applies it), the classifier's
// and SpecAugment's keys (training and the audio-classification head only). CheckWhisperConfig holds the range rules.
#include "core/limits.h"
#include "io/json_fields.h"
#include "models/whisper.h"

namespace aw {

using io::FieldReader;
using io::IntOr;
using io::JsonType;
using io::JsonValue;

namespace {

constexpr int64_t kMaxMelBins = 1024;
constexpr int64_t kMaxSourcePositions = 1 << 16;

int64_t IdOr(const JsonValue* v, int64_t absent) {
  if (!v) return absent;
  if (v->type == JsonType::kNull) return -1;
  return IntOr(v, io::kUnreadInt);
}

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
  std::string act = "gelu";
  AW_RETURN_IF_ERROR(c.OptionalEnum("activation_function", {"gelu", "relu", "swish", "silu", "gelu_new", "gelu_pytorch_tanh"}, &act));
  s.act = act == "relu" ? Activation::kRelu : act == "gelu" ? Activation::kGelu
        : act == "swish" || act == "silu" ? Activation::kSilu : Activation::kGeluTanh;
  s.vocab = s.decoder_vocab = IntOr(c.Get("vocab_size"), 51865);
  s.d_model = IntOr(c.Get("d_model"), 384);
  s.encoder_layers = IntOr(c.Get("encoder_layers"), 4);
  s.decoder_layers = IntOr(c.Get("decoder_layers"), 4);
  s.encoder_heads = IntOr(c.Get("encoder_attention_heads"), 6);
  s.decoder_heads = IntOr(c.Get("decoder_attention_heads"), 6);
  s.encoder_ffn = IntOr(c.Get("encoder_ffn_dim"), 1536);
  s.decoder_ffn = IntOr(c.Get("decoder_ffn_dim"), 1536);
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
  s.pad = IdOr(c.Get("pad_token_id"), 50256);
  s.eos = IdOr(c.Get("eos_token_id"), 50256);
  s.bos = IdOr(c.Get("bos_token_id"), 50256);
  s.decoder_start = IdOr(c.Get("decoder_start_token_id"), 50257);
  *out = std::move(w);
  return Status::OK();
}

Status CheckWhisperConfig(const WhisperConfig& w, const io::ConfigSource* src) {
  const io::ConfigRules r(src);
  const Seq2SeqConfig& c = w.s;
  AW_RETURN_IF_ERROR(r.Int("vocab_size", c.vocab, 1, kMaxVocab));
  AW_RETURN_IF_ERROR(r.Int("d_model", c.d_model, 1, kMaxLmWidth));
  AW_RETURN_IF_ERROR(r.Int("encoder_layers", c.encoder_layers, 1, kMaxLayers));
  AW_RETURN_IF_ERROR(r.Int("decoder_layers", c.decoder_layers, 1, kMaxLayers));
  AW_RETURN_IF_ERROR(r.Divisor("encoder_attention_heads", c.encoder_heads, "d_model", c.d_model));
  AW_RETURN_IF_ERROR(r.Divisor("decoder_attention_heads", c.decoder_heads, "d_model", c.d_model));
  AW_RETURN_IF_ERROR(r.Int("encoder_ffn_dim", c.encoder_ffn, 1, kMaxFeedforward));
  AW_RETURN_IF_ERROR(r.Int("decoder_ffn_dim", c.decoder_ffn, 1, kMaxFeedforward));
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
  const char* act = c.act == Activation::kRelu ? "relu" : c.act == Activation::kGelu ? "gelu" : c.act == Activation::kSilu ? "swish" : "gelu_new";
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
