// The causal LM family's config: one struct, read from a Hugging Face
// config.json (LlamaForCausalLM / Qwen2ForCausalLM) as transformers 4.x and
// 5.x write it. This reader reads: it checks types and the kinds the family
// can run (model_type, hidden_act, RoPE kind, sliding windows, …) and refuses
// the rest by key; every range rule is models/causal_lm.cpp CausalLm::Init's
// (bounds in core/limits.h), which words its errors from the same source
// (io/json_fields.h ConfigSource). Keys the family does not read are ignored,
// as HF's modelling code ignores them (architectures, torch_dtype / dtype,
// initializer_range, use_cache, …).
//
// Where 4.x and 5.x differ (README "What config.json fields are read"):
//   RoPE base   rope_theta (4.x) or rope_parameters.rope_theta (5.x); both with
//               two values: refused, naming both
//   RoPE kind   rope_scaling null / {"rope_type": "default"} (4.x) or
//               rope_parameters.rope_type "default" (5.x)
//   layers      Qwen2's layer_types (5.x): every one "full_attention"
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "io/json.h"

namespace aw {

struct CausalLmConfig {
  std::string model_type;  // "llama" or "qwen2"
  // Integers the reader could not read as integers are io::kUnreadInt: Init refuses them by name.
  int64_t vocab = 0, hidden = 0, intermediate = 0, layers = 0, heads = 0;
  int64_t kv_heads = 0;            // num_key_value_heads; absent or null: heads
  int64_t head_dim = 0;            // absent: hidden / heads if that is an even integer, else 0 (refused)
  int64_t max_positions = 0;       // positions a sequence may reach (the KV cache's bound)
  double rms_eps = 1e-6;
  double rope_theta = 10000.0;
  std::string rope_theta_key = "rope_theta";  // where the base was read: "rope_theta" or "rope_parameters.rope_theta"
  bool tied = false;               // lm_head = embed_tokens
  bool qkv_bias = false, o_bias = false, mlp_bias = false;
  // Special tokens: none for null / absent. eos_token_id may be a list (Llama 3's).
  std::optional<int64_t> bos_id, pad_id;
  std::vector<int64_t> eos_ids;
  int64_t attention_window = 0;    // a file's attentionWindow: the window generate() uses by default (0: all keys)
};

// Reads a config.json object (root names it in messages: "config",
// "attnwasm.config.hf_config") into *out, HF's defaults for absent keys
// (LlamaConfig / Qwen2Config; tools/causal_lm.py _DEFAULTS).
Status ReadCausalLmConfig(const io::JsonValue& hf, const std::string& root, CausalLmConfig* out);

// The resolved config as a JSON object (what a loaded model's JS face reads:
// vocabSize, maxPositions, eosTokenIds, …).
std::string CausalLmConfigJson(const CausalLmConfig& c);

}  // namespace aw
