// CausalLm: a decoder-only language model of the families Hugging Face's
// transformers runs as LlamaForCausalLM, Qwen2/Qwen3ForCausalLM,
// MistralForCausalLM, Gemma3ForCausalLM (text), Phi3ForCausalLM and
// SmolLM3ForCausalLM: the model family of aw.loadModel for causal LMs;
// tools/causal_lm.py and tools/families.py are its PyTorch twins, and
// docs/families.md says what each family reads and computes.
//
//   ids (B, T) → x = embed_tokens[ids] [× √hidden, Gemma]                (B, T, E)
//   per layer:  h = input_layernorm(x)                                   RMSNorm [(1 + w), Gemma]
//               q, k, v = q_proj(h), k_proj(h), v_proj(h)                [qkv_proj(h) split, Phi-3]
//               q, k = q_norm(q), k_norm(k) per head                     [Qwen3, Gemma 3]
//               q, k = RoPE(q), RoPE(k) at their positions               rotate_half on the first rotary_dim
//                                                                        dims; the layer's spec; none on
//                                                                        SmolLM3's no-RoPE layers
//               a = softmax(cap(q Kᵀ · scale) + causal [+ window]) V    query head j reads kv head j / (H / Hkv)
//               x += o_proj(a)                        [x += post_attention_layernorm(o_proj(a)), Gemma]
//               x += down(act(gate(h')) · up(h'))     h' = post_attention_layernorm(x) [pre_feedforward_layernorm,
//                                                     and post_feedforward_layernorm on the MLP's output, Gemma];
//                                                     act silu [gelu tanh, Gemma]; [gate_up_proj split, Phi-3]
//   logits = lm_head(norm(x)) [cap(·), Gemma]  lm_head = embed_tokens when tied (tie_word_embeddings)
//
// state_dict keys: Hugging Face's — model.embed_tokens.weight, model.layers.{i}.self_attn.{q,k,v,o}_proj.{weight,
// bias} (Phi-3: qkv_proj, o_proj), self_attn.{q,k}_norm.weight (Qwen3, Gemma 3),
// model.layers.{i}.mlp.{gate,up,down}_proj.{weight,bias} (Phi-3: gate_up_proj, down_proj),
// model.layers.{i}.{input,post_attention}_layernorm.weight (Gemma 3 also {pre,post}_feedforward_layernorm),
// model.norm.weight, lm_head.weight (not when tied).
//
// Two ways through, the same arithmetic row by row:
//   Forward: whole sequences, causal, no cache: logits for every position (the parity path), or the final norm's
//            hidden rows (a decoder embedder: Qwen3-Embedding pools them);
//   Append:  tokens added to sequences held in a KvCache (keys after RoPE, values), logits of each sequence's
//            last new token: a prompt (prefill, many tokens) then one token per step (decode). Every
//            projection of a step is a matrix-vector product.
// RoPE frequencies that depend on the sequence's length (dynamic, longrope) are formed per call from its last
// position, as HF forms them per forward call (layers/rope_scaling.h).
// Scratch from the workspace; batches and long prompts in pieces within the budget (core/workspace.h).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "core/buffer.h"
#include "core/module.h"
#include "core/rng.h"
#include "models/causal_lm_config.h"
#include "io/json_fields.h"
#include "layers/embedding.h"
#include "layers/kv_cache.h"
#include "layers/linear.h"
#include "layers/rms_norm.h"

namespace aw {


// The window of an attention (generate()'s attentionWindow; a file's is read with the same bound): the keys
// a query sees, itself included, in [1, kMaxAttentionWindow]; "attentionWindow: expected an integer in [1, …],
// got v". (Internally 0 stands for no window: every key.)
Status CheckAttentionWindow(int64_t window);

// One layer; which members are parameters depends on the family (c's features): the others stay empty.
class CausalLmLayer : public Module {
 public:
  // attn_norm false: no input_layernorm (ModernBERT's layer 0: its attn_norm is Identity).
  Status Init(const CausalLmConfig& c, Rng& rng, bool attn_norm = true);
  RMSNorm input_layernorm, post_attention_layernorm, pre_feedforward_layernorm, post_feedforward_layernorm;
  RMSNorm q_norm, k_norm;
  Linear q_proj, k_proj, v_proj, qkv_proj, o_proj, gate_proj, up_proj, gate_up_proj, down_proj;

 private:
  ModuleList self_attn_, mlp_;
};

class CausalLm : public Module {
 public:
  // c checked by CheckCausalLmConfig(c, src) first.
  Status Init(const CausalLmConfig& c, Rng& rng, const io::ConfigSource* src = nullptr);
  const CausalLmConfig& config() const { return cfg_; }

  // ids (B, T), every id in [0, vocab) → logits (B, T, vocab), positions 0 … T−1, causal. B·T·vocab <= 2^29.
  // One sequence at a time through one layer's slot of keys and values that every layer reuses.
  // hidden: (B, T, hidden_size) after the final norm instead (no head, no soft-cap).
  Status Forward(const int32_t* ids, int64_t B, int64_t T, Buffer* logits, bool hidden = false);
  // The same from an ids tensor of any shape: (batch, tokens) required, named "ids" in errors.
  Status Forward(const int32_t* ids, const Shape& shape, bool hidden, Buffer* logits, Shape* logits_shape);

  // A cache for `batch` sequences of up to `capacity` positions (<= max_positions). The caller owns it.
  Status Begin(size_t batch, size_t capacity, KvCache* cache) const;
  // Appends T tokens to each of the cache's sequences (ids (batch, T)) at positions len … len+T−1 and fills
  // logits (batch, vocab) of each sequence's last new token. window > 0: each query sees its last `window` keys
  // only (itself included; the demo model was trained on windows). attention (optional):
  // (batch, layers, heads, len+T) the attention of the last new token over every key (zeros outside the window).
  Status Append(KvCache* cache, const int32_t* ids, size_t T, size_t window, float* logits, float* attention);
  // The same from an ids tensor (batch, T) and a window (0: none, else CheckAttentionWindow); the outputs sized here:
  // logits (batch, vocab), attention (batch, layers, heads, len + T) when want_attention.
  Status Append(KvCache* cache, const int32_t* ids, const Shape& shape, int64_t window, bool want_attention,
                Buffer* logits, Shape* logits_shape, Buffer* attention, Shape* attention_shape);

 private:
  // The layers over `rows` = nseq·T token rows x (rows, E) in place; positions len … len+T−1 for each sequence.
  // With a cache: keys and values go to cache rows len … and attention reads every cached row.
  Status Layers(float* x, size_t nseq, size_t T, KvCache* cache, size_t window, float* attention);
  // The rows' embeddings (x (n, E)), scaled where the family scales them.
  void Embed(size_t n, const int32_t* ids, float* x) const;
  // Logits of rows x (n, E), normalised here in place: the head's product, soft-capped where the family caps.
  void Logits(size_t n, float* x, float* logits) const;

  CausalLmConfig cfg_;
  ModuleList model_, layer_list_;
  Embedding embed_tokens_;
  std::vector<std::unique_ptr<CausalLmLayer>> layers_;
  RMSNorm norm_, embed_norm_;  // embed_norm_: ModernBERT's LayerNorm on the embeddings
  Linear lm_head_;          // untied only
  PackedWeight tied_head_;  // tied, made in code: the float table packed as the head (a loaded model's head is
                            // the table itself: Head())

  // The output head's weight: lm_head, or the embedding table when tied.
  const PackedWeight& Head() const;

  void OnParamsLoaded() override;
};

}  // namespace aw
