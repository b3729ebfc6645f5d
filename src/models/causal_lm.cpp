// The causal LM family (causal_lm.h): the layers run layer by layer over row
// groups — one sequence's chunk of a prompt, or every sequence's single token
// of a step — each group computing its keys and values into the cache first
// and then attending over every key up to its own position, so that a prompt
// processed in chunks (to stay within the working-memory budget) gives the
// rows the whole prompt would.
#include "models/causal_lm.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "core/limits.h"
#include "core/parallel.h"
#include "core/rules.h"
#include "core/workspace.h"
#include "kernels/activation.h"
#include "kernels/elementwise.h"
#include "kernels/gemm.h"
#include "models/causal_lm_blocks.h"
#include "layers/residual.h"
#include "layers/rope_scaling.h"
#include "kernels/rope.h"
#include "ops/attention.h"
#include "ops/parallel_gemm.h"

namespace aw {

Status CausalLmLayer::Init(const CausalLmConfig& c, Rng& rng, bool attn_norm) {
  const int64_t E = c.hidden, D = c.head_dim, QD = c.heads * D, KD = c.kv_heads * D, I = c.intermediate;
  const bool gemma = c.norm_unit_offset;
  // Hugging Face's order: self_attn (projections, then q_norm, k_norm), mlp, then the layer's norms.
  if (c.fused_qkv) {
    AW_RETURN_IF_ERROR(qkv_proj.Init(E, QD + 2 * KD, c.qkv_bias, rng));
    self_attn_.Add("qkv_proj", &qkv_proj);
  } else {
    AW_RETURN_IF_ERROR(q_proj.Init(E, QD, c.qkv_bias, rng));
    AW_RETURN_IF_ERROR(k_proj.Init(E, KD, c.qkv_bias, rng));
    AW_RETURN_IF_ERROR(v_proj.Init(E, KD, c.qkv_bias, rng));
    self_attn_.Add("q_proj", &q_proj);
    self_attn_.Add("k_proj", &k_proj);
    self_attn_.Add("v_proj", &v_proj);
  }
  AW_RETURN_IF_ERROR(o_proj.Init(QD, E, c.o_bias, rng));
  self_attn_.Add("o_proj", &o_proj);
  if (c.qk_norm) {
    AW_RETURN_IF_ERROR(q_norm.Init({D}, c.rms_eps, true, gemma));
    AW_RETURN_IF_ERROR(k_norm.Init({D}, c.rms_eps, true, gemma));
    self_attn_.Add("q_norm", &q_norm);
    self_attn_.Add("k_norm", &k_norm);
  }
  if (c.fused_gate_up) {
    AW_RETURN_IF_ERROR(gate_up_proj.Init(E, 2 * I, c.mlp_bias, rng));
    mlp_.Add("gate_up_proj", &gate_up_proj);
  } else {
    AW_RETURN_IF_ERROR(gate_proj.Init(E, I, c.mlp_bias, rng));
    AW_RETURN_IF_ERROR(up_proj.Init(E, I, c.mlp_bias, rng));
    mlp_.Add("gate_proj", &gate_proj);
    mlp_.Add("up_proj", &up_proj);
  }
  AW_RETURN_IF_ERROR(down_proj.Init(I, E, c.mlp_bias, rng));
  mlp_.Add("down_proj", &down_proj);
  AddChild("self_attn", &self_attn_);
  AddChild("mlp", &mlp_);
  if (attn_norm) {
    AW_RETURN_IF_ERROR(input_layernorm.Init({E}, c.rms_eps, true, gemma, c.layer_norm));
    AddChild("input_layernorm", &input_layernorm);
  }
  AW_RETURN_IF_ERROR(post_attention_layernorm.Init({E}, c.rms_eps, true, gemma, c.layer_norm));
  AddChild("post_attention_layernorm", &post_attention_layernorm);
  if (c.sandwich) {
    AW_RETURN_IF_ERROR(pre_feedforward_layernorm.Init({E}, c.rms_eps, true, gemma));
    AW_RETURN_IF_ERROR(post_feedforward_layernorm.Init({E}, c.rms_eps, true, gemma));
    AddChild("pre_feedforward_layernorm", &pre_feedforward_layernorm);
    AddChild("post_feedforward_layernorm", &post_feedforward_layernorm);
  }
  return Status::OK();
}

Status CheckAttentionWindow(int64_t window) {
  return IntInRange("attentionWindow", window, 1, kMaxAttentionWindow);
}

Status CausalLm::Init(const CausalLmConfig& c, Rng& rng, const io::ConfigSource* src) {
  AW_RETURN_IF_ERROR(CheckCausalLmConfig(c, src));
  cfg_ = c;
  AW_RETURN_IF_ERROR(embed_tokens_.Init(c.vocab, c.hidden, 0, false, rng));
  model_.Add("embed_tokens", &embed_tokens_);
  for (int64_t i = 0; i < c.layers; ++i) {
    layers_.push_back(std::make_unique<CausalLmLayer>());
    AW_RETURN_IF_ERROR(layers_.back()->Init(c, rng, i > 0 || c.first_attn_norm));
    layer_list_.Append(layers_.back().get());
  }
  model_.Add("layers", &layer_list_);
  if (c.embed_norm) {
    AW_RETURN_IF_ERROR(embed_norm_.Init({c.hidden}, c.rms_eps, true, false, c.layer_norm));
    model_.Add("embed_norm", &embed_norm_);
  }
  AW_RETURN_IF_ERROR(norm_.Init({c.hidden}, c.rms_eps, true, c.norm_unit_offset, c.layer_norm));
  model_.Add("norm", &norm_);
  AddChild("model", &model_);
  if (c.tied) {
    if (embed_tokens_.weight()) {  // a model made in code: its float table packed as the head's weight
      tied_head_.SetShape(size_t(c.vocab), size_t(c.hidden));
      AW_RETURN_IF_ERROR(tied_head_.Reserve(WeightType::kF32));
    }
  } else {
    AW_RETURN_IF_ERROR(lm_head_.Init(c.hidden, c.vocab, false, rng));
    AddChild("lm_head", &lm_head_);
  }
  if (rng.fills()) OnParamsLoaded();  // else the load packs
  return Status::OK();
}

void CausalLm::OnParamsLoaded() {
  if (cfg_.tied && embed_tokens_.weight()) tied_head_.PackAll(embed_tokens_.weight(), size_t(cfg_.hidden));
}

const PackedWeight& CausalLm::Head() const {
  if (!cfg_.tied) return lm_head_.packed();
  return embed_tokens_.weight() ? tied_head_ : embed_tokens_.table();  // a loaded model: the table itself
}

Status CausalLm::Begin(size_t batch, size_t capacity, KvCache* c) const {
  AW_RETURN_IF_ERROR(IntInRange("batch", int64_t(batch), 1, kMaxBeams));
  AW_RETURN_IF_ERROR(IntInRange("positions", int64_t(capacity), 1, cfg_.position_limit()));
  AW_RETURN_IF_ERROR(c->Init(layers_.size(), batch, capacity, size_t(cfg_.kv_heads * cfg_.head_dim)));
  if (cfg_.rope.type == "longrope") c->ids.assign(batch * capacity, 0);  // the sequence may be recomputed (Append)
  return Status::OK();
}

Status CausalLm::Layers(float* x, size_t nseq, size_t T, KvCache* cache, size_t window, float* attention) {
  const CausalLmConfig& c = cfg_;
  const size_t E = size_t(c.hidden), H = size_t(c.heads), Hkv = size_t(c.kv_heads), D = size_t(c.head_dim);
  const size_t QD = H * D, KD = Hkv * D, I = size_t(c.intermediate), L = layers_.size();
  const size_t R = size_t(c.rotary_dim());
  const size_t len = cache->len, S = len + T, cap = cache->capacity;
  ScratchScope scope;
  // RoPE tables of positions len … len+T−1, shared by every layer and sequence: the full layers' spec and, for
  // Gemma 3, the sliding layers'. Frequencies that depend on the length are formed from this call's (S).
  int32_t* pos = nullptr;
  AW_RETURN_IF_ERROR(scope.Take(T, "positions", &pos));
  for (size_t t = 0; t < T; ++t) pos[t] = int32_t(len + t);
  float* tables[2] = {nullptr, nullptr};
  for (int which = 0; which < (c.has_local_rope ? 2 : 1); ++which) {
    float *inv = nullptr, factor = 1.0f;
    AW_RETURN_IF_ERROR(scope.Take(R / 2, "RoPE frequencies", &inv));
    AW_RETURN_IF_ERROR(scope.Take(T * R, "RoPE table", &tables[which]));
    RopeFrequencies(which ? c.rope_local : c.rope, int64_t(R), c.max_positions, int64_t(S), inv, &factor);
    RopeTable(T, pos, int64_t(R), inv, factor, tables[which]);
  }

  // Row groups: with one token per sequence (a step), every sequence's row
  // at once (the projections are then GEMMs of nseq rows); otherwise chunks
  // of one sequence's rows, as many as the budget allows.
  const bool step = T == 1;
  AttnShape probe;
  probe.L = step ? 1 : T; probe.S = S; probe.hd = probe.hdv = D; probe.weights = attention != nullptr;
  const size_t slabs = size_t(std::max<int64_t>(AttnScratchFloats(probe), 0)) * size_t(NumThreads()) * sizeof(float);
  const size_t per_row = (2 * E + 2 * QD + 2 * I + (c.fused_qkv ? QD + 2 * KD : 0)) * sizeof(float) +
                         (attention ? H * S * sizeof(float) : 0);
  // Bidirectional (EmbeddingGemma, ModernBERT): every row's key before any query, so one group of all T rows
  // (a sliding layer's band: causal_lm_blocks.cpp).
  const size_t chunk = step ? nseq : c.bidirectional ? T : WorkPieceEntries(T, per_row, slabs);
  const float scale = float(c.query_scale > 0 ? c.query_scale : 1.0 / std::sqrt(double(D)));
  const LmCall call{&c, E, H, Hkv, D, QD, KD, I, L, R, T, len, S, cap, scale, attention};
  const size_t sw = size_t(c.sliding_window);

  for (size_t l = 0; l < L; ++l) {
    CausalLmLayer& ly = *layers_[l];
    // This layer's keys: a sliding layer's window (and the caller's, if narrower); its RoPE table, or none.
    const size_t lw = c.sliding(l) ? sw : 0;
    const size_t win = lw && window ? std::min(lw, window) : lw ? lw : window;
    const float* table = !c.uses_rope(l) ? nullptr : tables[c.has_local_rope && c.sliding(l) ? 1 : 0];
    for (size_t b0 = 0; b0 < nseq; b0 += step ? nseq : 1) {
      for (size_t t0 = 0; t0 < T; t0 += chunk) {
        // The group: rows of sequences [b0, b0 + gs), positions t0 … t0 + gl − 1 of each.
        const size_t gs = step ? nseq : 1, gl = step ? 1 : std::min(chunk, T - t0), rows = gs * gl;
        float* xr = x + (b0 * T + t0) * E;
        ScratchScope g;
        float *q = nullptr, *a = nullptr, *gu = nullptr, *qkv = nullptr;
        AW_RETURN_IF_ERROR(g.Take(rows * QD, "queries", &q));
        AW_RETURN_IF_ERROR(g.Take(rows * QD, "attention output", &a));
        AW_RETURN_IF_ERROR(g.Take(rows * 2 * I, "gate and up rows", &gu));
        if (c.fused_qkv) AW_RETURN_IF_ERROR(g.Take(rows * (QD + 2 * KD), "q, k and v rows", &qkv));
        ResidualBlocks res;
        AW_RETURN_IF_ERROR(res.Begin(&g, c.sandwich ? NormPlace::kSandwich : NormPlace::kPre, rows, E));
        const LmRows r{b0, gs, t0, gl, rows, q, a, gu, qkv};
        auto attend = [&](const float* h, float* y) { return LmAttention(call, ly, l, cache, table, win, r, &g, h, y); };
        auto mlp = [&](const float* h, float* y) {
          LmMlp(call, ly, r, h, y);
          return Status::OK();
        };
        if (c.sandwich) {  // Gemma: x += post(f(pre(x))) for both blocks
          AW_RETURN_IF_ERROR(res.Block(ly.input_layernorm, ly.post_attention_layernorm, xr, attend));
          AW_RETURN_IF_ERROR(res.Block(ly.pre_feedforward_layernorm, ly.post_feedforward_layernorm, xr, mlp));
        } else if (l == 0 && !c.first_attn_norm) {  // ModernBERT's layer 0: x += attn(x)
          AW_RETURN_IF_ERROR(res.Unnormed(xr, attend));
          AW_RETURN_IF_ERROR(res.Block(ly.post_attention_layernorm, xr, mlp));
        } else {
          AW_RETURN_IF_ERROR(res.Block(ly.input_layernorm, xr, attend));
          AW_RETURN_IF_ERROR(res.Block(ly.post_attention_layernorm, xr, mlp));
        }
      }
    }
  }
  return Status::OK();
}

void CausalLm::Embed(size_t n, const int32_t* ids, float* x) const {
  const size_t E = size_t(cfg_.hidden);
  embed_tokens_.Lookup(n, ids, x, E);
  if (cfg_.embed_norm) embed_norm_.Apply(n, x, E, x, E);
  // Gemma: × the scale as a float32 tensor (HF's torch.tensor(hidden ** 0.5)), one rounded product each.
  if (cfg_.embed_scale > 0) {
    const float scale = float(cfg_.embed_scale);
    for (size_t i = 0; i < n * E; ++i) x[i] = x[i] * scale;
  }
}

void CausalLm::Logits(size_t n, float* x, float* logits) const {
  const size_t E = size_t(cfg_.hidden), V = size_t(cfg_.vocab);
  norm_.Apply(n, x, E, x, E);
  Head().Product(n, x, E, logits, V, nullptr, 1.0f);
  if (cfg_.final_softcap > 0) {  // Gemma: logits / cap, tanh, × cap (float32, as HF)
    const float cap = float(cfg_.final_softcap);
    for (size_t i = 0; i < n * V; ++i) logits[i] = std::tanh(logits[i] / cap) * cap;
  }
}

Status CausalLm::Forward(const int32_t* ids, int64_t B, int64_t T, Buffer* logits, bool hidden) {
  AW_RETURN_IF_ERROR(IntInRange("ids.shape[0] (batch)", B, 1, kMaxElements));
  AW_RETURN_IF_ERROR(IntInRange("ids.shape[1] (tokens)", T, 1, cfg_.position_limit()));
  AW_RETURN_IF_ERROR(embed_tokens_.CheckIds(ids, B * T, "ids"));
  const size_t E = size_t(cfg_.hidden), V = hidden ? E : size_t(cfg_.vocab);
  if (NumelChecked({B, T, int64_t(V)}) < 0)
    return ShapeError("outputs (B, T, " + std::string(hidden ? "hidden" : "vocab") + ") = " + ShapeStr({B, T, int64_t(V)}) +
                      " exceed 2^29 elements");
  AW_RETURN_IF_ERROR(logits->Resize(size_t(B * T) * V, "logits"));
  // One sequence at a time through a cache of its own length (one layer's keys and values: the floor of its
  // working set); its rows in chunks within the budget. `hidden`: the final norm's rows (a decoder
  // embedder's last hidden state), no head.
  for (int64_t b = 0; b < B; ++b) {
    ScratchScope seq;
    // One slot of keys and values that every layer reuses: the layers run one after the other over all of the
    // sequence's rows, and nothing is generated after, so no layer needs another's (L× less memory than Begin's).
    KvCache cache;
    AW_RETURN_IF_ERROR(cache.Init(1, 1, size_t(T), size_t(cfg_.kv_heads * cfg_.head_dim), "keys and values"));
    float* x = nullptr;
    AW_RETURN_IF_ERROR(seq.Take(size_t(T) * E, "hidden rows", &x));
    Embed(size_t(T), ids + b * T, x);
    AW_RETURN_IF_ERROR(Layers(x, 1, size_t(T), &cache, 0, nullptr));
    float* out = logits->data() + size_t(b * T) * V;
    if (hidden) norm_.Apply(size_t(T), x, E, out, E);
    else Logits(size_t(T), x, out);
  }
  return Status::OK();
}

Status CausalLm::Append(KvCache* cache, const int32_t* ids, size_t T, size_t window, float* logits,
                        float* attention) {
  if (T == 0) return ShapeError("ids: expected at least one token, got none");
  if (cache->len + T > cache->capacity)
    return OutOfRangeError("ids: " + std::to_string(T) + " more tokens would take the sequence to " +
                           std::to_string(cache->len + T) + " positions, more than the cache holds (" +
                           std::to_string(cache->capacity) + ")");
  const size_t B = cache->batch, E = size_t(cfg_.hidden);
  AW_RETURN_IF_ERROR(embed_tokens_.CheckIds(ids, int64_t(B * T), "ids"));
  ScratchScope scope;
  if (!cache->ids.empty()) {
    // Phi-3's longrope: the ids kept; the first time the sequence passes original_max_position_embeddings, the
    // cache is dropped and every position recomputed with the long factors, as transformers' Phi-3 generate
    // does (prepare_inputs_for_generation), so that every key carries the same RoPE.
    const size_t cap = cache->capacity, O = size_t(cfg_.rope.original_max), len = cache->len;
    for (size_t b = 0; b < B; ++b) std::copy(ids + b * T, ids + (b + 1) * T, cache->ids.begin() + ptrdiff_t(b * cap + len));
    if (len > 0 && len <= O && len + T > O) {
      int32_t* all = nullptr;
      AW_RETURN_IF_ERROR(scope.Take(B * (len + T), "the sequence's ids", &all));
      for (size_t b = 0; b < B; ++b)
        std::copy(cache->ids.begin() + ptrdiff_t(b * cap), cache->ids.begin() + ptrdiff_t(b * cap + len + T), all + b * (len + T));
      cache->len = 0;
      return Append(cache, all, len + T, window, logits, attention);
    }
  }
  float* x = nullptr;
  AW_RETURN_IF_ERROR(scope.Take(B * T * E, "hidden rows", &x));
  Embed(B * T, ids, x);
  AW_RETURN_IF_ERROR(Layers(x, B, T, cache, window, attention));
  cache->len += T;
  // Each sequence's last row: the final norm and the logits.
  float* last = nullptr;
  AW_RETURN_IF_ERROR(scope.Take(B * E, "last rows", &last));
  for (size_t b = 0; b < B; ++b) std::memcpy(last + b * E, x + (b * T + T - 1) * E, E * sizeof(float));
  Logits(B, last, logits);
  return Status::OK();
}

Status CausalLm::Forward(const int32_t* ids, const Shape& shape, bool hidden, Buffer* logits, Shape* logits_shape) {
  AW_RETURN_IF_ERROR(CheckShape("ids", shape));
  if (shape.size() != 2) return ShapeError("ids: expected (batch, tokens), got " + ShapeStr(shape));
  AW_RETURN_IF_ERROR(Forward(ids, shape[0], shape[1], logits, hidden));
  *logits_shape = {shape[0], shape[1], hidden ? cfg_.hidden : cfg_.vocab};
  return Status::OK();
}

Status CausalLm::Append(KvCache* cache, const int32_t* ids, const Shape& shape, int64_t window, bool want_attention,
                        Buffer* logits, Shape* logits_shape, Buffer* attention, Shape* attention_shape) {
  AW_RETURN_IF_ERROR(CheckShape("ids", shape));
  const size_t B = cache->batch;
  if (shape.size() != 2 || size_t(shape[0]) != B)
    return ShapeError("ids: expected (" + std::to_string(B) + ", tokens), got " + ShapeStr(shape));
  if (cfg_.bidirectional)
    return ArgError("this checkpoint's attention is bidirectional (config.use_bidirectional_attention, EmbeddingGemma): "
                    "it embeds (forward's hidden rows), it does not generate");
  if (window != 0) AW_RETURN_IF_ERROR(CheckAttentionWindow(window));
  const size_t T = size_t(shape[1]), S = cache->len + T;
  AW_RETURN_IF_ERROR(logits->Resize(B * size_t(cfg_.vocab), "logits"));
  if (want_attention) AW_RETURN_IF_ERROR(attention->Resize(B * size_t(cfg_.layers * cfg_.heads) * S, "attention"));
  AW_RETURN_IF_ERROR(Append(cache, ids, T, size_t(window), logits->data(), want_attention ? attention->data() : nullptr));
  *logits_shape = {int64_t(B), cfg_.vocab};
  if (want_attention) *attention_shape = {int64_t(B), cfg_.layers, cfg_.heads, int64_t(S)};
  return Status::OK();
}

}  // namespace aw
