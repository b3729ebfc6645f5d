// T5's config (t5.h): config.json of T5ForConditionalGeneration and MT5ForConditionalGeneration (T5, T5 v1.1,
// Flan-T5, mT5), with transformers v4.40's defaults for absent keys (T5Config, MT5Config). feed_forward_proj is read
// as T5Config reads it ("gated-gelu" runs gelu_new), then dense_act_fn / is_gated_act where the file has them (they win,
// as PretrainedConfig sets them after T5Config derived them); refused by key: an activation the kernels do not run, other
// heads (T5EncoderModel, T5ForSequenceClassification), repository code (auto_map).
#include <cmath>

#include "core/limits.h"
#include "io/json_fields.h"
#include "models/t5.h"

namespace aw {

using io::FieldReader;
using io::IntOr;
using io::JsonType;
using io::JsonValue;

Status ReadT5Config(const JsonValue& hf, const std::string& root, T5Config* out) {
  const FieldReader c(hf, root);
  const JsonValue* mt = c.Get("model_type");
  const std::string type = mt && mt->is_string() ? mt->str : "";
  if (type != "t5" && type != "mt5") return c.FailAt("model_type", "\"t5\" or \"mt5\" (a T5 checkpoint's config.json)");
  if (!c.Missing("auto_map"))
    return c.FailAt("auto_map", "absent (the repository's own modelling code: attnwasm runs transformers' classes)");
  const bool mt5 = type == "mt5";
  const std::string cls = mt5 ? "MT5ForConditionalGeneration" : "T5ForConditionalGeneration";
  if (const JsonValue* arch = c.Get("architectures"); arch && arch->is_array() && !arch->items.empty()) {
    const JsonValue& a = arch->items[0];
    if (!a.is_string() || a.str != cls)
      return c.Fail(".architectures[0]", "\"" + cls + "\" (other heads, the encoder alone among them, are not run)", io::Describe(&a));
  }
  T5Config s;
  s.model_type = type;
  s.vocab = IntOr(c.Get("vocab_size"), mt5 ? 250112 : 32128);
  s.d_model = IntOr(c.Get("d_model"), 512);
  s.d_kv = IntOr(c.Get("d_kv"), 64);
  s.d_ff = IntOr(c.Get("d_ff"), mt5 ? 1024 : 2048);
  s.heads = IntOr(c.Get("num_heads"), mt5 ? 6 : 8);
  s.encoder_layers = IntOr(c.Get("num_layers"), mt5 ? 8 : 6);
  const JsonValue* dl = c.Get("num_decoder_layers");
  s.decoder_layers = dl && dl->type != JsonType::kNull ? IntOr(dl, io::kUnreadInt) : s.encoder_layers;
  s.buckets = IntOr(c.Get("relative_attention_num_buckets"), 32);
  s.max_distance = IntOr(c.Get("relative_attention_max_distance"), 128);
  const JsonValue* eps = c.Get("layer_norm_epsilon");
  if (eps && !eps->is_number()) return c.FailAt("layer_norm_epsilon", "a number");
  s.eps = eps ? eps->number : 1e-6;
  std::string ff = mt5 ? "gated-gelu" : "relu";
  if (const JsonValue* f = c.Get("feed_forward_proj"); f && f->type != JsonType::kNull) {
    if (!f->is_string()) return c.FailAt("feed_forward_proj", "a string (\"relu\", \"gated-gelu\", …)");
    ff = f->str;
  }
  s.gated = ff.rfind("gated-", 0) == 0;
  std::string act = s.gated ? ff.substr(6) : ff;
  if (ff == "gated-gelu") act = "gelu_new";  // T5Config: "gated-gelu" runs gelu_new
  // Configs saved by transformers also carry the derived dense_act_fn and is_gated_act, which PretrainedConfig sets
  // after T5Config derived them: they win.
  if (const JsonValue* d = c.Get("dense_act_fn"); d && d->type != JsonType::kNull) {
    if (!d->is_string()) return c.FailAt("dense_act_fn", "a string (\"relu\", \"gelu_new\", …)");
    act = d->str;
  }
  AW_RETURN_IF_ERROR(c.OptionalBool("is_gated_act", &s.gated));
  if (act == "relu") s.act = Activation::kRelu;
  else if (act == "gelu") s.act = Activation::kGelu;
  else if (act == "gelu_new" || act == "gelu_pytorch_tanh") s.act = Activation::kGeluTanh;
  else if (act == "silu" || act == "swish") s.act = Activation::kSilu;
  else
    return c.FailAt(c.Missing("dense_act_fn") ? "feed_forward_proj" : "dense_act_fn",
                    "\"relu\", \"gelu\", \"gelu_new\", \"silu\" (or one of them after \"gated-\" in feed_forward_proj): the activations attnwasm runs");
  AW_RETURN_IF_ERROR(c.OptionalBool("tie_word_embeddings"));
  const JsonValue* tie = c.Get("tie_word_embeddings");
  s.tied = tie && tie->type == JsonType::kBool ? tie->boolean : !mt5;
  auto id = [&](const char* key, int64_t absent) {
    const JsonValue* v = c.Get(key);
    return !v ? absent : v->type == JsonType::kNull ? -1 : IntOr(v, io::kUnreadInt);
  };
  s.pad = id("pad_token_id", 0);
  s.eos = id("eos_token_id", 1);
  s.decoder_start = id("decoder_start_token_id", mt5 ? 0 : -1);
  *out = std::move(s);
  return Status::OK();
}

Status CheckT5Config(const T5Config& c, const io::ConfigSource* src) {
  const io::ConfigRules r(src);
  AW_RETURN_IF_ERROR(r.Int("vocab_size", c.vocab, 1, kMaxVocab));
  AW_RETURN_IF_ERROR(r.Int("d_model", c.d_model, 1, kMaxLmWidth));
  AW_RETURN_IF_ERROR(r.Int("d_kv", c.d_kv, 1, kMaxHeadDim));
  AW_RETURN_IF_ERROR(r.Int("num_heads", c.heads, 1, kMaxLmWidth));
  if (c.heads * c.d_kv > kMaxLmWidth)
    return r.Fail("num_heads", "num_heads · d_kv at most " + std::to_string(kMaxLmWidth), double(c.heads));
  AW_RETURN_IF_ERROR(r.Int("d_ff", c.d_ff, 1, kMaxFeedforward));
  AW_RETURN_IF_ERROR(r.Int("num_layers", c.encoder_layers, 1, kMaxLayers));
  AW_RETURN_IF_ERROR(r.Int("num_decoder_layers", c.decoder_layers, 1, kMaxLayers));
  AW_RETURN_IF_ERROR(r.Int("relative_attention_num_buckets", c.buckets, 4, 1 << 16));
  AW_RETURN_IF_ERROR(r.Int("relative_attention_max_distance", c.max_distance, 1, kMaxPositions));
  if (!(c.eps >= 0 && c.eps < 1)) return r.Fail("layer_norm_epsilon", "a number in [0, 1)", c.eps);
  AW_RETURN_IF_ERROR(r.Int("pad_token_id", c.pad, 0, c.vocab - 1, " (a token id)"));
  AW_RETURN_IF_ERROR(r.Int("eos_token_id", c.eos, 0, c.vocab - 1, " (a token id)"));
  if (c.decoder_start != -1) AW_RETURN_IF_ERROR(r.Int("decoder_start_token_id", c.decoder_start, 0, c.vocab - 1, " (a token id)"));
  return Status::OK();
}

std::string T5ConfigJson(const T5Config& c) {
  auto n = [](int64_t v) { return std::to_string(v); };
  auto id = [&](int64_t v) { return v < 0 ? std::string("null") : n(v); };
  const char* act = c.act == Activation::kRelu ? "relu" : c.act == Activation::kGelu ? "gelu" : c.act == Activation::kSilu ? "silu" : "gelu_new";
  return "\"modelType\": \"" + c.model_type + "\", \"vocabSize\": " + n(c.vocab) + ", \"decoderVocabSize\": " + n(c.vocab) +
         ", \"dModel\": " + n(c.d_model) + ", \"dKv\": " + n(c.d_kv) + ", \"dFf\": " + n(c.d_ff) + ", \"numHeads\": " +
         n(c.heads) + ", \"encoderLayers\": " + n(c.encoder_layers) + ", \"decoderLayers\": " + n(c.decoder_layers) +
         ", \"relativeAttentionNumBuckets\": " + n(c.buckets) + ", \"relativeAttentionMaxDistance\": " + n(c.max_distance) +
         ", \"activation\": \"" + act + "\", \"gated\": " + (c.gated ? "true" : "false") + ", \"tiedHead\": " +
         (c.tied ? "true" : "false") + ", \"maxPositions\": " + n(kMaxSequence) + ", \"padTokenId\": " + id(c.pad) +
         ", \"eosTokenId\": " + id(c.eos) + ", \"bosTokenId\": null, \"decoderStartTokenId\": " + id(c.decoder_start);
}

}  // namespace aw
