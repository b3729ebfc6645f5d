#include "models/causal_lm_blocks.h"

#include <algorithm>
#include <cstring>

#include "kernels/activation.h"
#include "kernels/elementwise.h"
#include "kernels/rope.h"
#include "ops/attention.h"

namespace aw {

Status LmAttention(const LmCall& call, CausalLmLayer& ly, size_t l, KvCache* cache, const float* table, size_t window,
                   const LmRows& r, ScratchScope* g, const float* h, float* y) {
  const CausalLmConfig& c = *call.c;
  const size_t E = call.E, H = call.H, Hkv = call.Hkv, D = call.D, QD = call.QD, KD = call.KD, R = call.R;
  const size_t len = call.len, cap = call.cap, L = call.L, S = call.S, T = call.T;
  const size_t b0 = r.b0, gs = r.gs, t0 = r.t0, gl = r.gl, rows = r.rows;
  float *q = r.q, *a = r.a, *qkv = r.qkv;
  // (batch, cap, KD); a forward's cache has one slot that every layer reuses (CausalLm::Forward)
  const size_t slot = std::min(l, cache->k.size() - 1);
  float* kc = cache->k[slot].data();
  float* vc = cache->v[slot].data();
  float* attention = call.attention;
  auto rotate = [&](const float* tab, size_t tokens, float* rws, size_t heads, size_t ld_token) {
    for (size_t t = 0; t < tokens; ++t)
      kernels::f32_rope_half(heads, R, rws + t * ld_token, D, tab + t * R, tab + t * R + R / 2);
  };
  const size_t QKV = QD + 2 * KD;
  if (c.fused_qkv) ly.qkv_proj.Apply(rows, h, E, qkv, QKV);
  else ly.q_proj.Apply(rows, h, E, q, QD);
  for (size_t s = 0; s < gs; ++s) {
    const size_t b = b0 + s;
    float* krow = kc + (b * cap + len + t0) * KD;
    float* vrow = vc + (b * cap + len + t0) * KD;
    float* qs = q + s * gl * QD;
    if (c.fused_qkv) {  // Phi-3: each row q | k | v
      for (size_t t = 0; t < gl; ++t) {
        const float* row = qkv + (s * gl + t) * QKV;
        std::memcpy(qs + t * QD, row, QD * sizeof(float));
        std::memcpy(krow + t * KD, row + QD, KD * sizeof(float));
        std::memcpy(vrow + t * KD, row + QD + KD, KD * sizeof(float));
      }
    } else {
      ly.k_proj.Apply(gl, h + s * gl * E, E, krow, KD);
      ly.v_proj.Apply(gl, h + s * gl * E, E, vrow, KD);
    }
    if (c.qk_norm) {  // every head's row of D, before RoPE
      ly.q_norm.Apply(gl * H, qs, D, qs, D);
      ly.k_norm.Apply(gl * Hkv, krow, D, krow, D);
    }
    if (table) {
      rotate(table + t0 * R, gl, qs, H, QD);
      rotate(table + t0 * R, gl, krow, Hkv, KD);
    }
  }
  // Every query of the group over its sequence's keys up to its own position (and, with a window, from
  // `window` keys back: the core skips the chunks before it).
  const size_t end = len + t0 + gl;  // keys written so far (of these sequences)
  float* wbuf = nullptr;
  if (attention) AW_RETURN_IF_ERROR(g->Take(gs * H * gl * end, "attention weights", &wbuf));
  AttnShape sh;
  sh.L = gl; sh.S = end; sh.hd = sh.hdv = D;
  sh.ldq = QD; sh.ldk = sh.ldv = KD; sh.ldo = QD; sh.ldw = end;
  sh.scale = call.scale;
  // Query i sees keys <= i + offset (its own position), from `window` keys back. Bidirectional: every key on a
  // full layer; on a sliding one the band |i − j| < window, which is the causal window moved: keys up to
  // i + window − 1, 2·window − 1 of them (the core then skips the chunks outside it, as for a causal window).
  const bool band = c.bidirectional && window;
  sh.causal = !c.bidirectional || band;
  sh.causal_offset = int64_t(end) - int64_t(gl) + (band ? int64_t(window) - 1 : 0);
  sh.window = band ? 2 * window - 1 : c.bidirectional ? 0 : window;
  sh.masked_unread = true;  // a step reads its window's chunks only, not the whole context
  sh.masked_keys = end;
  sh.weights = attention != nullptr;
  const size_t group = H / Hkv;
  auto head = [&](size_t s, size_t hh) {
    const size_t b = b0 + s, kvh = hh / group;
    AttnHead at;
    at.q = q + s * gl * QD + hh * D;
    at.k = kc + b * cap * KD + kvh * D;
    at.v = vc + b * cap * KD + kvh * D;
    at.out = a + s * gl * QD + hh * D;
    if (wbuf) at.weights = wbuf + (s * H + hh) * gl * end;
    return at;
  };
  AW_RETURN_IF_ERROR(Attend(sh, gs, H, head));
  if (attention && t0 + gl == T) {  // the last new token's row of every head: (batch, L, H, S)
    for (size_t s = 0; s < gs; ++s)
      for (size_t hh = 0; hh < H; ++hh) {
        const float* row = wbuf + ((s * H + hh) * gl + gl - 1) * end;
        std::copy(row, row + end, attention + (((b0 + s) * L + l) * H + hh) * S);
      }
  }
  ly.o_proj.Apply(rows, a, QD, y, E);
  return Status::OK();
}

// Phi-3's gate_up rows are gate | up.
void LmMlp(const LmCall& call, CausalLmLayer& ly, const LmRows& r, const float* h, float* y) {
  const CausalLmConfig& c = *call.c;
  const size_t E = call.E, I = call.I, rows = r.rows;
  float* gu = r.gu;
  const auto act = c.act == LmActivation::kGeluTanh ? kernels::f32_gelu_tanh
                   : c.act == LmActivation::kGelu   ? kernels::f32_gelu
                                                    : kernels::f32_silu;
  if (c.fused_gate_up) {
    ly.gate_up_proj.Apply(rows, h, E, gu, 2 * I);
    for (size_t i = 0; i < rows; ++i) {
      act(I, gu + i * 2 * I);
      kernels::f32_mul(I, gu + i * 2 * I, gu + i * 2 * I + I);
    }
    ly.down_proj.Apply(rows, gu, 2 * I, y, E);
  } else {
    ly.gate_proj.Apply(rows, h, E, gu, I);
    ly.up_proj.Apply(rows, h, E, gu + rows * I, I);
    act(rows * I, gu);  // the gated product act(gate) · up, in gu
    kernels::f32_mul(rows * I, gu, gu + rows * I);
    ly.down_proj.Apply(rows, gu, I, y, E);
  }
}

}  // namespace aw
