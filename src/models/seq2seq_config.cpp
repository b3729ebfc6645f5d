// The encoder–decoder family's config (seq2seq.h): config.json of MarianMTModel, BartForConditionalGeneration,
// MBartForConditionalGeneration and M2M100ForConditionalGeneration, with transformers v4.40's defaults for absent
// keys (MarianConfig, BartConfig, MBartConfig, M2M100Config). Refused by key: an activation the kernels do not run,
// a head other than the generation one (a BART classifier), repository code (auto_map), tie_encoder_decoder. The
// legacy fairseq switches old configs carry (normalize_before, add_final_layer_norm, normalize_embedding) are
// ignored, as transformers ignores them. CheckSeq2SeqConfig holds the range rules.
#include <cmath>
#include <limits>

#include "core/limits.h"
#include "core/rules.h"
#include "io/json_fields.h"
#include "models/s2s_config_fields.h"
#include "models/seq2seq.h"

namespace aw {

using io::FieldReader;
using io::IntOr;
using io::JsonType;
using io::JsonValue;

namespace {

constexpr int64_t kMaxSeq2SeqPositions = 1 << 16;  // M2M100's sinusoid: positions a source or a target may have

bool BoolOr(const JsonValue* v, bool absent) { return v && v->type == JsonType::kBool ? v->boolean : absent; }

}  // namespace

int64_t S2sIdOr(const JsonValue* v, int64_t absent) {
  if (!v) return absent;
  if (v->type == JsonType::kNull) return -1;
  return IntOr(v, io::kUnreadInt);
}

Status ReadS2sStacks(const FieldReader& c, const S2sStackDefaults& d, Seq2SeqConfig* s) {
  std::string act = d.act;
  AW_RETURN_IF_ERROR(c.OptionalEnum("activation_function", {"gelu", "relu", "swish", "silu", "gelu_new", "gelu_pytorch_tanh"}, &act));
  s->act = act == "relu" ? Activation::kRelu : act == "gelu" ? Activation::kGelu
         : act == "swish" || act == "silu" ? Activation::kSilu : Activation::kGeluTanh;
  s->vocab = s->decoder_vocab = IntOr(c.Get("vocab_size"), d.vocab);
  s->d_model = IntOr(c.Get("d_model"), d.d_model);
  s->encoder_layers = IntOr(c.Get("encoder_layers"), d.layers);
  s->decoder_layers = IntOr(c.Get("decoder_layers"), d.layers);
  s->encoder_heads = IntOr(c.Get("encoder_attention_heads"), d.heads);
  s->decoder_heads = IntOr(c.Get("decoder_attention_heads"), d.heads);
  s->encoder_ffn = IntOr(c.Get("encoder_ffn_dim"), d.ffn);
  s->decoder_ffn = IntOr(c.Get("decoder_ffn_dim"), d.ffn);
  return Status::OK();
}

Status CheckS2sStacks(const io::ConfigRules& r, const Seq2SeqConfig& c) {
  AW_RETURN_IF_ERROR(r.Int("vocab_size", c.vocab, 1, kMaxVocab));
  if (!c.shared) AW_RETURN_IF_ERROR(r.Int("decoder_vocab_size", c.decoder_vocab, 1, kMaxVocab));
  AW_RETURN_IF_ERROR(r.Int("d_model", c.d_model, 1, kMaxLmWidth));
  AW_RETURN_IF_ERROR(r.Int("encoder_layers", c.encoder_layers, 1, kMaxLayers));
  AW_RETURN_IF_ERROR(r.Int("decoder_layers", c.decoder_layers, 1, kMaxLayers));
  AW_RETURN_IF_ERROR(r.Divisor("encoder_attention_heads", c.encoder_heads, "d_model", c.d_model));
  AW_RETURN_IF_ERROR(r.Divisor("decoder_attention_heads", c.decoder_heads, "d_model", c.d_model));
  AW_RETURN_IF_ERROR(r.Int("encoder_ffn_dim", c.encoder_ffn, 1, kMaxFeedforward));
  return r.Int("decoder_ffn_dim", c.decoder_ffn, 1, kMaxFeedforward);
}

const char* S2sActivationName(Activation a) {
  return a == Activation::kRelu ? "relu" : a == Activation::kGelu ? "gelu" : a == Activation::kSilu ? "swish" : "gelu_new";
}

int64_t Seq2SeqConfig::position_limit() const {
  return positions == S2sPositions::kFairseq ? kMaxSeq2SeqPositions : max_positions;
}

Status ReadSeq2SeqConfig(const JsonValue& hf, const std::string& root, Seq2SeqConfig* out) {
  const FieldReader c(hf, root);
  const JsonValue* mt = c.Get("model_type");
  const std::string type = mt && mt->is_string() ? mt->str : "";
  if (type != "marian" && type != "bart" && type != "mbart" && type != "m2m_100")
    return c.FailAt("model_type", "\"marian\", \"bart\", \"mbart\" or \"m2m_100\" (an encoder–decoder translator's config.json)");
  if (!c.Missing("auto_map"))
    return c.FailAt("auto_map", "absent (the repository's own modelling code: attnwasm runs transformers' classes)");
  const bool marian = type == "marian", m2m = type == "m2m_100", mbart = type == "mbart";
  // The class: the generation head (…ForConditionalGeneration, MarianMTModel).
  const std::string cls = marian ? "MarianMTModel" : m2m ? "M2M100ForConditionalGeneration"
                                                         : (mbart ? "MBart" : "Bart") + std::string("ForConditionalGeneration");
  if (const JsonValue* arch = c.Get("architectures"); arch && arch->is_array() && !arch->items.empty()) {
    const JsonValue& a = arch->items[0];
    if (!a.is_string() || a.str != cls)
      return c.Fail(".architectures[0]", "\"" + cls + "\" (other heads, a classifier among them, are not run)", io::Describe(&a));
  }
  Seq2SeqConfig s;
  s.model_type = type;
  AW_RETURN_IF_ERROR(ReadS2sStacks(c, {marian ? 58101 : m2m ? 128112 : 50265, 1024, 12, 16, 4096, m2m ? "relu" : "gelu"}, &s));
  s.max_positions = IntOr(c.Get("max_position_embeddings"), 1024);
  AW_RETURN_IF_ERROR(c.OptionalBool("scale_embedding"));
  AW_RETURN_IF_ERROR(c.OptionalBool("share_encoder_decoder_embeddings"));
  AW_RETURN_IF_ERROR(c.OptionalBool("tie_word_embeddings"));
  s.embed_scale = BoolOr(c.Get("scale_embedding"), m2m) ? std::sqrt(double(s.d_model)) : 1.0;
  s.shared = !marian || BoolOr(c.Get("share_encoder_decoder_embeddings"), true);
  s.tied = BoolOr(c.Get("tie_word_embeddings"), true);
  const JsonValue* dv = c.Get("decoder_vocab_size");
  s.decoder_vocab = marian && !s.shared && dv && dv->type != JsonType::kNull ? IntOr(dv, io::kUnreadInt) : s.vocab;
  // Legacy fairseq switches (normalize_before, add_final_layer_norm, normalize_embedding, …) are read by no class of
  // transformers v4.40: the architecture is the model_type's, as there. tie_encoder_decoder would share weights.
  if (const JsonValue* v = c.Get("tie_encoder_decoder"); v && !(v->type == JsonType::kBool && !v->boolean) && v->type != JsonType::kNull)
    return c.FailAt("tie_encoder_decoder", "false or absent (an encoder sharing the decoder's weights is not run)");
  s.pre_norm = s.final_norm = mbart || m2m;
  s.embed_norm = type == "bart" || mbart;
  s.logits_bias = !m2m;
  s.positions = marian ? S2sPositions::kMarian : m2m ? S2sPositions::kFairseq : S2sPositions::kLearned;
  s.pad = S2sIdOr(c.Get("pad_token_id"), marian ? 58100 : 1);
  s.eos = S2sIdOr(c.Get("eos_token_id"), marian ? 0 : 2);
  s.bos = S2sIdOr(c.Get("bos_token_id"), marian ? -1 : 0);
  s.decoder_start = S2sIdOr(c.Get("decoder_start_token_id"), marian ? 58100 : mbart ? -1 : 2);
  *out = std::move(s);
  return Status::OK();
}

Status CheckSeq2SeqConfig(const Seq2SeqConfig& c, const io::ConfigSource* src) {
  const io::ConfigRules r(src);
  AW_RETURN_IF_ERROR(CheckS2sStacks(r, c));
  AW_RETURN_IF_ERROR(r.Int("max_position_embeddings", c.max_positions, 1, kMaxPositions));
  if (c.positions == S2sPositions::kFairseq)  // the sinusoid's half width, less one, divides log(10000)
    AW_RETURN_IF_ERROR(r.Int("d_model", c.d_model, 4, kMaxLmWidth, " (M2M100's sinusoidal positions)"));
  if (c.tied && !c.shared && c.decoder_vocab != c.vocab)
    return r.Fail("decoder_vocab_size", "vocab_size (" + std::to_string(c.vocab) + "): with tie_word_embeddings the head is the "
                  "decoder's table, which transformers copies from the encoder's", double(c.decoder_vocab));
  const int64_t V = std::min(c.vocab, c.decoder_vocab);
  AW_RETURN_IF_ERROR(r.Int("pad_token_id", c.pad, 0, V - 1, " (a token id)"));
  AW_RETURN_IF_ERROR(r.Int("eos_token_id", c.eos, 0, V - 1, " (a token id)"));
  if (c.decoder_start != -1) AW_RETURN_IF_ERROR(r.Int("decoder_start_token_id", c.decoder_start, 0, c.decoder_vocab - 1, " (a token id)"));
  if (c.bos != -1) AW_RETURN_IF_ERROR(r.Int("bos_token_id", c.bos, 0, c.decoder_vocab - 1, " (a token id)"));
  return Status::OK();
}

std::string Seq2SeqConfigJson(const Seq2SeqConfig& c) {
  auto n = [](int64_t v) { return std::to_string(v); };
  auto b = [](bool v) { return v ? "true" : "false"; };
  auto id = [&](int64_t v) { return v < 0 ? std::string("null") : n(v); };
  const char* act = S2sActivationName(c.act);
  const char* pos = c.positions == S2sPositions::kMarian ? "sinusoidal" : c.positions == S2sPositions::kFairseq ? "fairseq-sinusoidal" : "learned";
  return "\"modelType\": \"" + c.model_type + "\", \"vocabSize\": " + n(c.vocab) + ", \"decoderVocabSize\": " +
         n(c.decoder_vocab) + ", \"dModel\": " + n(c.d_model) + ", \"encoderLayers\": " + n(c.encoder_layers) +
         ", \"decoderLayers\": " + n(c.decoder_layers) + ", \"encoderHeads\": " + n(c.encoder_heads) +
         ", \"decoderHeads\": " + n(c.decoder_heads) + ", \"encoderFfnDim\": " + n(c.encoder_ffn) +
         ", \"decoderFfnDim\": " + n(c.decoder_ffn) + ", \"maxPositions\": " + n(c.position_limit()) +
         ", \"activation\": \"" + act + "\", \"positions\": \"" + pos + "\", \"preNorm\": " + b(c.pre_norm) +
         ", \"layernormEmbedding\": " + b(c.embed_norm) + ", \"finalLogitsBias\": " + b(c.logits_bias) +
         ", \"sharedEmbeddings\": " + b(c.shared) + ", \"tiedHead\": " + b(c.tied) + ", \"embedScale\": " +
         NumStr(c.embed_scale) + ", \"padTokenId\": " + id(c.pad) + ", \"eosTokenId\": " + id(c.eos) +
         ", \"bosTokenId\": " + id(c.bos) + ", \"decoderStartTokenId\": " + id(c.decoder_start);
}

}  // namespace aw
