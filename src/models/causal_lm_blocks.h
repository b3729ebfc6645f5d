// The two blocks of a causal LM's decoder layer for one group of rows (causal_lm.cpp's CausalLm::Layers walks
// the layers and the groups): attention (the projections, the keys and values into the cache, the q/k norms
// and RoPE, the attention core, o_proj) and the gated MLP. Internal to src/models.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/status.h"
#include "core/workspace.h"
#include "models/causal_lm.h"

namespace aw {

// One call of Layers: the shapes every block of it shares.
struct LmCall {
  const CausalLmConfig* c;
  size_t E, H, Hkv, D, QD, KD, I, L, R;  // hidden, heads, kv heads, head dim, q and kv widths, MLP, layers, rotary
  size_t T, len, S, cap;                 // new tokens per sequence, tokens before them, after them, cache capacity
  float scale;                           // the queries' scale
  float* attention;                      // (batch, L, H, S) the last new token's weights, or null
};

// A group of rows: sequences [b0, b0 + gs), positions t0 … t0 + gl − 1 of each (rows = gs · gl), and its
// scratch (q, a: rows × QD; gu: rows × 2I; qkv: rows × (QD + 2KD) when the projections are fused).
struct LmRows {
  size_t b0, gs, t0, gl, rows;
  float *q, *a, *gu, *qkv;
};

// y (rows, E) = the attention block of layer l on h (rows, E): the group's keys and values into the cache, then
// every query over its sequence's keys up to its own position (from `window` keys back when nonzero; a
// bidirectional model's group holds every row, its queries see every key, or those with |i − j| < window); table: the
// layer's RoPE table of the call's positions (T × R), or null. Takes the weights' scratch from `g`.
Status LmAttention(const LmCall& call, CausalLmLayer& ly, size_t l, KvCache* cache, const float* table, size_t window,
                   const LmRows& r, ScratchScope* g, const float* h, float* y);

// y (rows, E) = down(act(gate(h)) · up(h)), act silu (SwiGLU) or gelu tanh (GeGLU).
void LmMlp(const LmCall& call, CausalLmLayer& ly, const LmRows& r, const float* h, float* y);

}  // namespace aw
