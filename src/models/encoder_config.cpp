// The encoder family's config: ReadEncoderConfig (the kinds first, each refusal naming its key, then the
// fields) and CheckEncoderConfig (the range rules, bounds in core/limits.h).
#include "models/encoder_config.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "core/limits.h"
#include "io/json_fields.h"

namespace aw {
namespace {

using io::FieldReader;
using io::IntOr;
using io::JsonType;
using io::JsonValue;

}  // namespace

const char* const* EncoderModelTypes() {
  static const char* const types[] = {"bert", "roberta", "xlm-roberta", "distilbert", nullptr};
  return types;
}

bool IsEncoderConfig(const JsonValue& hf) {
  const JsonValue* mt = hf.Find("model_type");
  if (!mt || !mt->is_string()) return false;
  for (const char* const* t = EncoderModelTypes(); *t; ++t)
    if (mt->str == *t) return true;
  return false;
}

Status ReadEncoderConfig(const JsonValue& hf, const std::string& root, EncoderConfig* out) {
  const FieldReader c(hf, root);
  if (!IsEncoderConfig(hf))
    return c.FailAt("model_type", "\"bert\", \"roberta\", \"xlm-roberta\" or \"distilbert\" (an encoder's config.json)");
  EncoderConfig s;
  s.model_type = c.Get("model_type")->str;
  s.distil = s.model_type == "distilbert";
  s.roberta_positions = s.model_type != "bert" && !s.distil;
  // DistilBERT's own names (DistilBertConfig): dim, n_layers, n_heads, hidden_dim, activation; no token types.
  const char* const hidden_key = s.distil ? "dim" : "hidden_size";
  AW_RETURN_IF_ERROR(c.OptionalEnum(s.distil ? "activation" : "hidden_act", {"gelu"}));
  // GELU with erf, as BertIntermediate's ACT2FN["gelu"]; the tanh forms would give other numbers (checked above).
  AW_RETURN_IF_ERROR(c.OptionalEnum("position_embedding_type", {"absolute"}));
  // Keys of other models' code (a repository's own modelling code, ELECTRA's factorised embeddings, rotary
  // BERTs): transformers' BertModel would ignore them and run something else than the file means.
  if (!c.Missing("auto_map"))
    return c.FailAt("auto_map", "absent (the repository's own modelling code: attnwasm runs transformers' BertModel / "
                                "RobertaModel only)");
  if (const io::JsonValue* es = c.Get("embedding_size"); es && es->type != JsonType::kNull &&
                                                           !(es->is_number() && c.Get(hidden_key) &&
                                                             c.Get(hidden_key)->is_number() &&
                                                             es->number == c.Get(hidden_key)->number))
    return c.FailAt("embedding_size", "absent or hidden_size (factorised embeddings are ELECTRA's / ALBERT's)");
  if (!c.Missing("rotary_emb_base")) return c.FailAt("rotary_emb_base", "absent (BERT's positions are a learned table)");
  for (const char* key : {"is_decoder", "add_cross_attention"}) {
    AW_RETURN_IF_ERROR(c.OptionalBool(key));
    const JsonValue* v = c.Get(key);
    if (v && v->type == JsonType::kBool && v->boolean) return c.FailAt(key, "false (an encoder: bidirectional, no memory)");
  }
  s.vocab = IntOr(c.Get("vocab_size"), io::kUnreadInt);
  s.hidden = IntOr(c.Get(hidden_key), io::kUnreadInt);
  s.layers = IntOr(c.Get(s.distil ? "n_layers" : "num_hidden_layers"), io::kUnreadInt);
  s.heads = IntOr(c.Get(s.distil ? "n_heads" : "num_attention_heads"), io::kUnreadInt);
  s.intermediate = IntOr(c.Get(s.distil ? "hidden_dim" : "intermediate_size"), io::kUnreadInt);
  s.max_positions = IntOr(c.Get("max_position_embeddings"), 512);
  s.type_vocab = s.distil ? 0 : IntOr(c.Get("type_vocab_size"), s.roberta_positions ? 1 : 2);
  s.pad_id = IntOr(c.Get("pad_token_id"), s.roberta_positions ? 1 : 0);
  if (const JsonValue* arch = c.Get("architectures"); arch && arch->type == JsonType::kArray && !arch->items.empty() &&
                                                        arch->items[0].is_string()) {
    const std::string& a = arch->items[0].str;
    auto ends = [&](const char* tail) { return a.size() >= std::strlen(tail) && a.compare(a.size() - std::strlen(tail), std::string::npos, tail) == 0; };
    if (ends("ForQuestionAnswering") || ends("ForMultipleChoice"))
      return c.FailAt("architectures", "a base model, *ForSequenceClassification, *ForTokenClassification or a masked-LM "
                                       "(question answering and multiple choice heads are not run)");
    s.head = ends("ForSequenceClassification") ? EncoderHead::kSequence
             : ends("ForTokenClassification")  ? EncoderHead::kToken
                                               : EncoderHead::kNone;
  }
  if (s.head != EncoderHead::kNone) {
    const JsonValue* id2label = c.Get("id2label");
    s.labels = id2label && id2label->type == JsonType::kObject ? int64_t(id2label->members.size())
                                                                : IntOr(c.Get("num_labels"), 2);
    s.pooler = s.pooler || (s.head == EncoderHead::kSequence && s.model_type == "bert");
  }
  const JsonValue* eps = c.Get("layer_norm_eps");
  s.eps = !eps || s.distil ? 1e-12 : eps->is_number() ? eps->number : std::numeric_limits<double>::quiet_NaN();
  *out = std::move(s);
  return Status::OK();
}

std::string EncoderConfigJson(const EncoderConfig& c) {
  return "{\"modelType\": \"" + c.model_type + "\", \"vocabSize\": " + std::to_string(c.vocab) +
         ", \"hiddenSize\": " + std::to_string(c.hidden) + ", \"numLayers\": " + std::to_string(c.layers) +
         ", \"numHeads\": " + std::to_string(c.heads) + ", \"maxPositions\": " + std::to_string(c.max_positions) +
         ", \"maxTokens\": " + std::to_string(EncoderMaxTokens(c)) +
         ", \"typeVocabSize\": " + std::to_string(c.type_vocab) + ", \"padTokenId\": " + std::to_string(c.pad_id) +
         ", \"pooler\": " + (c.pooler ? "true" : "false") + ", \"head\": " + std::to_string(int(c.head)) +
         ", \"numLabels\": " + std::to_string(c.labels) + "}";
}

Status CheckEncoderConfig(const EncoderConfig& c, const io::ConfigSource* src) {
  const io::ConfigRules r(src);
  const bool d = c.distil;
  const char* const heads = d ? "n_heads" : "num_attention_heads";
  AW_RETURN_IF_ERROR(r.Int("vocab_size", c.vocab, 1, kMaxVocab));
  AW_RETURN_IF_ERROR(r.Int(d ? "dim" : "hidden_size", c.hidden, 1, kMaxLmWidth));
  AW_RETURN_IF_ERROR(r.Int(d ? "n_layers" : "num_hidden_layers", c.layers, 1, kMaxLayers));
  AW_RETURN_IF_ERROR(r.Int(heads, c.heads, 1, c.hidden));
  if (c.hidden % c.heads)
    return r.Fail(heads, std::string("a divisor of ") + (d ? "dim" : "hidden_size") + " (" + std::to_string(c.hidden) + ")", double(c.heads));
  AW_RETURN_IF_ERROR(r.Int(d ? "hidden_dim" : "intermediate_size", c.intermediate, 1, kMaxFeedforward));
  if (!d) AW_RETURN_IF_ERROR(r.Int("type_vocab_size", c.type_vocab, 1, kMaxVocab));
  AW_RETURN_IF_ERROR(r.Int("pad_token_id", c.pad_id, 0, c.vocab - 1));
  if (c.head != EncoderHead::kNone) AW_RETURN_IF_ERROR(r.Int(c.labels ? "num_labels" : "id2label", c.labels, 1, kMaxVocab));
  // RoBERTa's positions start at pad_token_id + 1: a table of max_position_embeddings rows holds
  // max_position_embeddings − pad_token_id − 1 tokens.
  AW_RETURN_IF_ERROR(r.Int("max_position_embeddings", c.max_positions, c.roberta_positions ? c.pad_id + 2 : 1,
                           kMaxPositions));
  return r.Positive("layer_norm_eps", c.eps);
}

}  // namespace aw
