// The causal LM families' config: one struct, read from a Hugging Face
// config.json as transformers 4.x and 5.x write it, for the decoder-only
// families of models/causal_lm.h — llama (Llama 2/3.x, SmolLM2, TinyLlama),
// qwen2, qwen3, mistral, gemma3_text (Gemma 3 text), phi3 (Phi-3/3.5,
// Phi-4-mini) and smollm3 (docs/families.md). The reader checks types and
// the kinds a family can run (model_type, activation, RoPE type, layer
// types, …) and refuses the rest by key; CheckCausalLmConfig holds every
// range rule (bounds in core/limits.h), worded from the same source
// (io/json_fields.h ConfigSource). Keys a family does not read are ignored,
// as HF's modelling code ignores them (architectures, torch_dtype / dtype,
// initializer_range, use_cache, …). The family's registry row:
// models/causal_lm_family.cpp.
//
// Where 4.x and 5.x differ (docs/families.md):
//   RoPE        rope_theta + rope_scaling (4.x) or rope_parameters (5.x: rope_type, rope_theta, the type's
//               fields; Gemma 3: one per layer type); a base or field given in both with two values: refused
//   local RoPE  Gemma 3: rope_local_base_freq (4.x) or rope_parameters.sliding_attention (5.x)
//   layers      sliding_window_pattern / use_sliding_window + max_window_layers (4.x) or layer_types (5.x)
//   partial     partial_rotary_factor at the top (4.x) or in rope_parameters (5.x)
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/limits.h"
#include "core/status.h"
#include "io/json.h"
#include "io/json_fields.h"
#include "layers/rope_scaling.h"

namespace aw {

enum class LmActivation { kSilu, kGeluTanh, kGelu };  // kGelu: erf GELU (ModernBERT)

struct CausalLmConfig {
  std::string model_type;  // "llama", "qwen2", "qwen3", "mistral", "gemma3_text", "phi3", "smollm3"
  // Integers the reader could not read as integers are io::kUnreadInt: Init refuses them by name.
  int64_t vocab = 0, hidden = 0, intermediate = 0, layers = 0, heads = 0;
  int64_t kv_heads = 0;            // num_key_value_heads; absent or null: heads
  int64_t head_dim = 0;            // absent: the family's default, else hidden / heads if an even integer, else 0
  int64_t max_positions = 0;       // positions a sequence may reach (the KV cache's bound)
  double rms_eps = 1e-6;
  LmActivation act = LmActivation::kSilu;  // the MLP's gate: SwiGLU (silu) or GeGLU (gelu tanh, Gemma)
  bool tied = false;               // lm_head = embed_tokens
  bool qkv_bias = false, o_bias = false, mlp_bias = false;
  // Family features (docs/families.md):
  bool fused_qkv = false, fused_gate_up = false;  // Phi-3: qkv_proj (q, k, v rows) and gate_up_proj (gate, up)
  bool qk_norm = false;            // Qwen3, Gemma 3: an RMSNorm over head_dim on every q and k head, before RoPE
  bool norm_unit_offset = false;   // Gemma: every RMSNorm scales by (1 + w)
  bool sandwich = false;           // Gemma: post_attention_layernorm on the attention's output, then
                                   // pre_feedforward_layernorm / post_feedforward_layernorm around the MLP
  double embed_scale = 0;          // Gemma: embeddings × float32(√hidden); 0: none
  double query_scale = 0;          // the scores' scale: query_pre_attn_scalar^-½ (Gemma); 0: head_dim^-½
  double final_softcap = 0;        // Gemma: cap · tanh(logits / cap); 0: none
  // RoPE: the spec of full-attention layers and, for Gemma 3, of sliding ones; the rotated dims of a head:
  // int(head_dim · partial_rotary_factor) (Phi-3, Phi-4-mini rotate part of each head).
  RopeSpec rope, rope_local;
  bool has_local_rope = false;
  double partial_rotary_factor = 1.0;
  std::string rope_key = "rope_scaling";      // where rope's type and fields were read (messages)
  std::string rope_theta_key = "rope_theta";  // where the base was read: "rope_theta" or "rope_parameters…"
  std::string local_theta_key = "rope_local_base_freq";
  // Layers: sliding ones see their last sliding_window keys (HF: key j with i − j < window); no_rope ones skip
  // RoPE (SmolLM3). Both empty: every layer full, with RoPE.
  int64_t sliding_window = 0;
  std::vector<uint8_t> layer_sliding, layer_rope;
  // EmbeddingGemma (use_bidirectional_attention): every query sees every key, a sliding layer those with
  // |i − j| < sliding_window (already sliding_window / 2 + 1, as Gemma3TextConfig reads it). Forward only.
  bool bidirectional = false;
  // ModernBERT (modernbert_config.cpp): LayerNorms without bias in place of the RMSNorms (the RMS of the centred
  // row), one on the embeddings, none before layer 0's attention.
  bool layer_norm = false, embed_norm = false, first_attn_norm = true;
  // Special tokens: none for null / absent. eos_token_id may be a list (Llama 3's).
  std::optional<int64_t> bos_id, pad_id;
  std::vector<int64_t> eos_ids;
  int64_t attention_window = 0;    // a file's attentionWindow: the window generate() uses by default (0: all keys)

  // Positions a sequence may reach: max_position_embeddings, but for dynamic RoPE, whose point is to go past it
  // (HF sets no bound: here core/limits.h's).
  int64_t position_limit() const { return rope.type == "dynamic" ? kMaxPositions : max_positions; }
  bool sliding(size_t layer) const { return layer < layer_sliding.size() && layer_sliding[layer]; }
  // The rotated dims of a head: int(head_dim · partial_rotary_factor), as HF forms it.
  int64_t rotary_dim() const {
    return partial_rotary_factor == 1.0 ? head_dim : int64_t(double(head_dim) * partial_rotary_factor);
  }
  bool uses_rope(size_t layer) const { return layer >= layer_rope.size() || layer_rope[layer]; }
};

// Whether a config.json model_type is one of the causal LM families'.
bool IsCausalLmType(std::string_view model_type);
// The same as a null-terminated list (the registry row's model_types).
const char* const* CausalLmModelTypes();

// Reads a config.json object (root names it in messages: "config",
// "attnwasm.config.hf_config") into *out, HF's defaults for absent keys
// (each family's configuration_*.py; tools/causal_lm.py, tools/families.py).
Status ReadCausalLmConfig(const io::JsonValue& hf, const std::string& root, CausalLmConfig* out);

// ModernBERT's config.json (model_type "modernbert", 4.x or 5.x keys) as the bidirectional stack it is run as.
Status ReadModernBertConfig(const io::JsonValue& hf, const std::string& root, CausalLmConfig* out);

// The family's range rules, each written once, every bound in core/limits.h: CausalLm::Init applies them first.
// With a source (the config.json or file it was read from) an error names the field as the file does
// ("config.vocab_size: expected an integer in [1, 1000000], got 0", ERR_INVALID_ARGUMENT); without,
// the field alone (ERR_OUT_OF_RANGE).
Status CheckCausalLmConfig(const CausalLmConfig& c, const io::ConfigSource* src = nullptr);

// A model file's own {"model": "causal_lm", "hf_config": {…}, "tokenizer": {…}, "attentionWindow": n} (the demo
// model's, c's root "attnwasm.config"): the HF config (ReadCausalLmConfig), an optional character tokenizer (one
// string per id) and the attention window it was trained with (generation's default).
Status ReadCausalLmFile(const io::FieldReader& c, CausalLmConfig* lm);

// The resolved config as a JSON object (what a loaded model's JS face reads:
// vocabSize, maxPositions, eosTokenIds, …).
std::string CausalLmConfigJson(const CausalLmConfig& c);

}  // namespace aw
