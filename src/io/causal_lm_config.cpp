// ReadCausalLmConfig: the kinds first (what the family can run at all, each
// refusal naming its key), then the fields into the struct. Ranges are
// CausalLm::Init's (models/causal_lm.cpp).
#include "io/causal_lm_config.h"

#include <cmath>
#include <limits>

#include "io/json_fields.h"

namespace aw {
namespace {

using io::Describe;
using io::FieldReader;
using io::JsonType;
using io::JsonValue;

// A family of config.json: the model_type and HF's defaults that differ.
struct Recipe {
  const char* model_type;
  int64_t default_max_positions;  // max_position_embeddings when absent
};
constexpr Recipe kRecipes[] = {{"llama", 2048}, {"qwen2", 32768}};

// rope_parameters (transformers 5.x; null or absent in 4.x files): for the default RoPE it holds rope_type
// ("default"; "type" in older saves), rope_theta and perhaps partial_rotary_factor (1 here). Any other key
// belongs to a scaled RoPE and is refused by name: never ignored.
Status CheckRopeParameters(const FieldReader& c) {
  const JsonValue* rp = c.Get("rope_parameters");
  if (!rp || rp->type == JsonType::kNull) return Status::OK();
  if (!rp->is_object()) return c.Fail(".rope_parameters", "null or an object", Describe(rp));
  for (const io::JsonMember& m : rp->members) {
    const std::string at = ".rope_parameters" + io::KeyPath(m.key);
    const JsonValue& v = m.value;
    if (m.key == "rope_type" || m.key == "type") {
      if (!(v.is_string() && v.str == "default")) return c.Fail(at, "\"default\" (scaled RoPE is not supported)", Describe(&v));
    } else if (m.key == "partial_rotary_factor") {
      if (!(v.is_number() && v.number == 1.0)) return c.Fail(at, "1 (RoPE on every dim)", Describe(&v));
    } else if (m.key != "rope_theta") {
      return c.Fail(at, "no such key (the default RoPE has rope_type, rope_theta and partial_rotary_factor; "
                        "scaled RoPE is not supported)", Describe(&v));
    }
  }
  const JsonValue* top = c.Get("rope_theta");
  const JsonValue* inner = rp->Find("rope_theta");
  // (A base that is no base at all, 0 or "1e6", is Init's to refuse first: its range rule.)
  if (top && inner && top->is_number() && inner->is_number() && inner->number > 0 && std::isfinite(inner->number) &&
      top->number != inner->number)
    return c.Fail(".rope_parameters.rope_theta", "the same base as rope_theta (" + Describe(top) + ") when both are given",
                  Describe(inner));
  return Status::OK();
}

// The kinds of model this family runs; refusals name the key.
Status CheckKinds(const FieldReader& c, const Recipe** recipe) {
  const JsonValue* mt = c.Get("model_type");
  *recipe = nullptr;
  for (const Recipe& r : kRecipes)
    if (mt && mt->is_string() && mt->str == r.model_type) *recipe = &r;
  if (!*recipe) return c.Fail(".model_type", "\"llama\" or \"qwen2\"", Describe(mt));
  AW_RETURN_IF_ERROR(c.OptionalEnum("hidden_act", {"silu"}));
  auto default_rope = [](const JsonValue* v) {
    if (!v || v->type == JsonType::kNull) return true;
    if (!v->is_object()) return false;
    for (const io::JsonMember& m : v->members)
      if ((m.key != "rope_type" && m.key != "type") || !(m.value.is_string() && m.value.str == "default")) return false;
    return true;
  };
  if (!default_rope(c.Get("rope_scaling")))
    return c.FailAt("rope_scaling", "null or {\"rope_type\": \"default\"} (scaled RoPE is not supported)");
  AW_RETURN_IF_ERROR(CheckRopeParameters(c));
  if (const JsonValue* f = c.Get("partial_rotary_factor"); f && !(f->is_number() && f->number == 1.0))
    return c.FailAt("partial_rotary_factor", "1 (RoPE on every dim)");
  if (const JsonValue* tp = c.Get("pretraining_tp"); tp && !(tp->is_number() && tp->number == 1.0))
    return c.FailAt("pretraining_tp", "1");
  if (const JsonValue* w = c.Get("use_sliding_window"); w && !(w->type == JsonType::kBool && !w->boolean))
    return c.FailAt("use_sliding_window", "false (sliding-window attention is not supported)");
  if (const JsonValue* lt = c.Get("layer_types"); lt && lt->is_array())
    for (size_t i = 0; i < lt->items.size(); ++i)
      if (!(lt->items[i].is_string() && lt->items[i].str == "full_attention"))
        return c.Fail(".layer_types[" + std::to_string(i) + "]", "\"full_attention\"", Describe(&lt->items[i]));
  AW_RETURN_IF_ERROR(c.OptionalBool("tie_word_embeddings"));
  AW_RETURN_IF_ERROR(c.OptionalBool("attention_bias"));
  return c.OptionalBool("mlp_bias");
}

// An integer field as written, or io::kUnreadInt (absent, null, not an integer, beyond ±2^53): Init names it.
int64_t IntOr(const JsonValue* v, int64_t absent) {
  if (!v || v->type == JsonType::kNull) return absent;
  int64_t out = 0;
  constexpr int64_t kExact = int64_t(1) << 53;
  return io::IntIn(v, -kExact, kExact, &out) ? out : io::kUnreadInt;
}

// A number field as written (absent: def), NaN if it is not a number: Init names it.
double NumberOr(const JsonValue* v, double def) {
  if (!v) return def;
  return v->is_number() ? v->number : std::numeric_limits<double>::quiet_NaN();
}

bool BoolOr(const FieldReader& c, const char* key, bool def) {
  const JsonValue* v = c.Get(key);
  return v && v->type == JsonType::kBool ? v->boolean : def;
}

}  // namespace

Status ReadCausalLmConfig(const JsonValue& hf, const std::string& root, CausalLmConfig* out) {
  const FieldReader c(hf, root);
  const Recipe* recipe = nullptr;
  AW_RETURN_IF_ERROR(CheckKinds(c, &recipe));
  CausalLmConfig s;
  s.model_type = recipe->model_type;
  const bool qwen2 = s.model_type == "qwen2";
  s.vocab = IntOr(c.Get("vocab_size"), io::kUnreadInt);
  s.hidden = IntOr(c.Get("hidden_size"), io::kUnreadInt);
  s.intermediate = IntOr(c.Get("intermediate_size"), io::kUnreadInt);
  s.layers = IntOr(c.Get("num_hidden_layers"), io::kUnreadInt);
  s.heads = IntOr(c.Get("num_attention_heads"), io::kUnreadInt);
  s.kv_heads = IntOr(c.Get("num_key_value_heads"), s.heads);
  // head_dim absent: hidden_size / num_attention_heads when that is an even integer; else 0, which Init refuses
  // naming both.
  const bool even_split = s.hidden > 0 && s.heads > 0 && s.hidden % s.heads == 0 && (s.hidden / s.heads) % 2 == 0;
  s.head_dim = IntOr(c.Get("head_dim"), even_split ? s.hidden / s.heads : 0);
  s.max_positions = IntOr(c.Get("max_position_embeddings"), recipe->default_max_positions);
  s.rms_eps = NumberOr(c.Get("rms_norm_eps"), 1e-6);
  // The RoPE base: rope_parameters.rope_theta (5.x), else rope_theta (4.x), else HF's default.
  const JsonValue* rp = c.Get("rope_parameters");
  if (const JsonValue* inner = rp && rp->is_object() ? rp->Find("rope_theta") : nullptr) {
    s.rope_theta = NumberOr(inner, 0);
    s.rope_theta_key = "rope_parameters.rope_theta";
  } else {
    s.rope_theta = NumberOr(c.Get("rope_theta"), 10000.0);
  }
  s.tied = BoolOr(c, "tie_word_embeddings", false);
  const bool attention_bias = !qwen2 && BoolOr(c, "attention_bias", false);
  s.qkv_bias = qwen2 || attention_bias;  // Qwen2: q, k, v always; Llama: all four with attention_bias
  s.o_bias = attention_bias;
  s.mlp_bias = !qwen2 && BoolOr(c, "mlp_bias", false);
  if (!c.Missing("bos_token_id")) s.bos_id = IntOr(c.Get("bos_token_id"), 0);
  if (!c.Missing("pad_token_id")) s.pad_id = IntOr(c.Get("pad_token_id"), 0);
  if (const JsonValue* eos = c.Get("eos_token_id"); eos && eos->is_array()) {
    for (const JsonValue& item : eos->items) s.eos_ids.push_back(item.type == JsonType::kNull ? io::kUnreadInt : IntOr(&item, 0));
  } else if (eos && eos->type != JsonType::kNull) {
    s.eos_ids.push_back(IntOr(eos, 0));
  }
  *out = std::move(s);
  return Status::OK();
}

std::string CausalLmConfigJson(const CausalLmConfig& c) {
  std::string eos = "[";
  for (size_t i = 0; i < c.eos_ids.size(); ++i) eos += (i ? ", " : "") + std::to_string(c.eos_ids[i]);
  eos += "]";
  auto id = [](const std::optional<int64_t>& v) { return v ? std::to_string(*v) : std::string("null"); };
  return "{\"modelType\": \"" + c.model_type + "\", \"vocabSize\": " + std::to_string(c.vocab) +
         ", \"hiddenSize\": " + std::to_string(c.hidden) + ", \"numLayers\": " + std::to_string(c.layers) +
         ", \"numHeads\": " + std::to_string(c.heads) + ", \"numKeyValueHeads\": " + std::to_string(c.kv_heads) +
         ", \"headDim\": " + std::to_string(c.head_dim) + ", \"maxPositions\": " + std::to_string(c.max_positions) +
         ", \"attentionWindow\": " + (c.attention_window > 0 ? std::to_string(c.attention_window) : "null") +
         ", \"eosTokenIds\": " + eos + ", \"bosTokenId\": " + id(c.bos_id) + ", \"padTokenId\": " + id(c.pad_id) +
         ", \"tied\": " + (c.tied ? "true" : "false") + "}";
}

}  // namespace aw
