// ModernBERT's config.json (transformers' configuration_modernbert.py, 4.48+ and 5.x) read into the decoder-stack
// config the causal LM runtime runs (causal_lm_config.h), bidirectionally: what ModernBertModel computes is
// embeddings → LayerNorm, then pre-norm layers (layer 0 without attn_norm) of fused Wqkv with RoPE (a global
// theta on every global_attn_every_n_layers-th layer, a local one on the others, whose keys are |i − j| <=
// local_attention // 2), GeGLU with erf GELU (Wi: input | gate), and a final LayerNorm; no biases by default,
// LayerNorms without bias. docs/embeddings.md, "ModernBERT".
#include <algorithm>
#include <cmath>
#include <string>

#include "models/causal_lm_config.h"

namespace aw {

using io::FieldReader;
using io::JsonType;
using io::JsonValue;

Status ReadModernBertConfig(const JsonValue& hf, const std::string& root, CausalLmConfig* out) {
  const FieldReader c(hf, root);
  CausalLmConfig s;
  s.model_type = "modernbert";
  auto integer = [&](const char* key, int64_t absent) {  // null is not absent here: the rules name it
    const JsonValue* v = c.Get(key);
    return v && v->type == JsonType::kNull ? io::kUnreadInt : io::IntOr(v, absent);
  };
  auto number = [&](const char* key, double absent, double* out) {
    *out = io::NumberOr(c.Get(key), absent);
    return *out > 0 && std::isfinite(*out) ? Status::OK() : c.FailAt(key, "a finite number > 0");
  };
  AW_RETURN_IF_ERROR(c.OptionalEnum("hidden_activation", {"gelu"}));
  AW_RETURN_IF_ERROR(c.OptionalBool("norm_bias"));
  if (const JsonValue* b = c.Get("norm_bias"); b && b->boolean)
    return c.FailAt("norm_bias", "false (LayerNorms without bias, as every ModernBERT on the hub has)");
  AW_RETURN_IF_ERROR(c.OptionalBool("attention_bias", &s.o_bias));
  s.qkv_bias = s.o_bias;
  AW_RETURN_IF_ERROR(c.OptionalBool("mlp_bias", &s.mlp_bias));
  s.vocab = integer("vocab_size", 50368);
  s.hidden = integer("hidden_size", 768);
  s.intermediate = integer("intermediate_size", 1152);
  s.layers = integer("num_hidden_layers", 22);
  s.heads = s.kv_heads = integer("num_attention_heads", 12);
  s.max_positions = integer("max_position_embeddings", 8192);
  if (s.hidden > 0 && s.heads > 0 && (s.hidden % s.heads != 0 || (s.hidden / s.heads) % 2 != 0))
    return c.FailAt("num_attention_heads", "a divisor of hidden_size (" + std::to_string(s.hidden) +
                                               ") giving an even head size (RoPE pairs)");
  s.head_dim = s.hidden > 0 && s.heads > 0 ? s.hidden / s.heads : 0;
  AW_RETURN_IF_ERROR(number("norm_eps", 1e-5, &s.rms_eps));
  s.act = LmActivation::kGelu;
  s.fused_qkv = s.fused_gate_up = true;
  s.layer_norm = s.embed_norm = true;
  s.first_attn_norm = false;
  s.bidirectional = true;
  s.tied = true;  // no head is read: a masked-LM checkpoint's decoder is tied to the embeddings

  // Layers: 5.x layer_types, else every global_attn_every_n_layers-th layer (from 0) global.
  const int64_t every = integer("global_attn_every_n_layers", 3);
  if (every < 1) return c.FailAt("global_attn_every_n_layers", "an integer >= 1");
  const JsonValue* lt = c.Get("layer_types");
  if (lt && lt->type != JsonType::kNull && (!lt->is_array() || s.layers < 1 || int64_t(lt->items.size()) != s.layers))
    return c.FailAt("layer_types", "a list of num_hidden_layers (" + std::to_string(s.layers) + ") layer types");
  for (int64_t i = 0; i < std::max<int64_t>(s.layers, 0) && s.layers <= (int64_t(1) << 20); ++i) {
    bool sliding = i % every != 0;
    if (lt && lt->is_array()) {
      const JsonValue& t = lt->items[size_t(i)];
      if (!t.is_string() || (t.str != "full_attention" && t.str != "sliding_attention"))
        return c.Fail(".layer_types[" + std::to_string(i) + "]", "\"full_attention\" or \"sliding_attention\"", io::Describe(&t));
      sliding = t.str == "sliding_attention";
    }
    s.layer_sliding.push_back(sliding);
  }
  // |i − j| <= local_attention // 2, i.e. < local_attention // 2 + 1 (the runtime's exclusive bound).
  const int64_t local = integer("local_attention", 128);
  if (local < 2 || local > (int64_t(1) << 30)) return c.FailAt("local_attention", "an integer in [2, 1073741824]");
  s.sliding_window = local / 2 + 1;

  // RoPE: 5.x rope_parameters per layer type, else global_rope_theta / local_rope_theta (null: the global one).
  s.has_local_rope = true;
  if (const JsonValue* rp = c.Get("rope_parameters"); rp && rp->type != JsonType::kNull) {
    for (const char* type : {"full_attention", "sliding_attention"}) {
      const JsonValue* p = rp->is_object() ? rp->Find(type) : nullptr;
      const JsonValue* theta = p && p->is_object() ? p->Find("rope_theta") : nullptr;
      const JsonValue* kind = p && p->is_object() ? p->Find("rope_type") : nullptr;
      if (!theta || !theta->is_number() || !(theta->number > 0) || (kind && !(kind->is_string() && kind->str == "default")))
        return c.Fail(std::string(".rope_parameters.") + type, "an object {\"rope_type\": \"default\", \"rope_theta\": a number > 0}",
                      io::Describe(p));
      (std::string(type) == "full_attention" ? s.rope : s.rope_local).theta = theta->number;
    }
    s.rope_key = "rope_parameters.full_attention";
    s.rope_theta_key = "rope_parameters.full_attention.rope_theta";
    s.local_theta_key = "rope_parameters.sliding_attention.rope_theta";
  } else {
    AW_RETURN_IF_ERROR(number("global_rope_theta", 160000.0, &s.rope.theta));
    s.rope_theta_key = "global_rope_theta";
    s.local_theta_key = "local_rope_theta";
    if (c.Missing("local_rope_theta") && c.Get("local_rope_theta")) s.rope_local.theta = s.rope.theta;
    else AW_RETURN_IF_ERROR(number("local_rope_theta", 10000.0, &s.rope_local.theta));
  }
  for (const char* key : {"bos_token_id", "pad_token_id"}) {
    const int64_t v = integer(key, -1);
    if (v != -1) (std::string(key) == "bos_token_id" ? s.bos_id : s.pad_id) = v;
  }
  *out = std::move(s);
  return Status::OK();
}

}  // namespace aw
