#!/usr/bin/python3
"""PyTorch twins of the causal-LM families of issue 31 (Llama 3.x RoPE scaling, Qwen3, Mistral, Gemma 3 text,
Phi-3 / Phi-3.5 / Phi-4-mini, SmolLM3), in torch 1.13, written from transformers' modeling and configuration files.

The oracle for attnwasm's family recipes (tests/data/make_family_goldens.py writes the goldens; docs/families.md is the
user-facing reference). Not a runtime dependency and not a general Hugging Face loader: it reads the config.json of
these six model_types as transformers 4.4x-4.57 and 5.x write them, refuses (ValueError naming the key) what it cannot
run exactly, and runs the models at float32 (the runtime's precision) or float64 (the reference; RoPE tables still
formed in float32 exactly as torch forms them). Plain Llama / Qwen2 with the default RoPE: tools/causal_lm.py, whose
conventions (RMSNorm order, RoPE angle in float32, KV cache) this file reuses.

Shapes: B batch, T tokens in this call, P tokens already cached, S = P + T keys, E hidden_size, H heads, Hkv kv heads,
D head_dim, R = rotary dims (D, or int(D * partial_rotary_factor)), F intermediate_size, V vocab_size.

One model, switched by a recipe per model_type (RECIPES; the data the C++ side mirrors):
  x = embed_tokens[ids]                              (B, T, E); gemma3_text: x * float32(sqrt(E)) (module EmbedScale)
  per layer i:
    h = norm_in(x)                                   RMSNorm (llama kind) or GemmaRMSNorm ((1 + w) in float32)
    q, k, v = q_proj/k_proj/v_proj(h) | split qkv_proj(h) (phi3: rows q, then k, then v)
    qwen3 / gemma3_text: q, k = q_norm(q), k_norm(k) per head over D, before RoPE
    q[..., :R], k[..., :R] = RoPE (rotate_half within the first R dims; cos / sin times attention_scaling);
        none on SmolLM3's NoPE layers (no_rope_layers[i] == 0); Gemma 3: the layer type's own RoPE
    scores = q k^T * scale                           scale = D^-0.5, gemma3_text: query_pre_attn_scalar^-0.5
    (no attention soft-capping: Gemma3Attention ignores attn_logit_softcapping, so a non-null value is refused)
    mask: key j visible to the query at absolute position p iff j <= p and (no window or p - j < window);
          gemma3_text with use_bidirectional_attention (EmbeddingGemma): every j, or |p - j| < sliding_window // 2 + 1
    a = softmax(scores) v                            (GQA: query head h reads kv head h // (H / Hkv))
    gemma3_text: x = x + post_attention_layernorm(o_proj(a)); x = x + post_feedforward_layernorm(mlp(pre_feedforward_layernorm(x)))
    others:      x = x + o_proj(a);                   x = x + mlp(post_attention_layernorm(x))
    mlp = down(act(gate(h)) * up(h)) (phi3: gate, up = gate_up_proj(h).chunk(2, -1), first half gate); act silu or
          gelu tanh approximation (gemma3_text: gelu_pytorch_tanh)
  logits = lm_head(norm(x)) (tied: embed_tokens.weight); gemma3_text: tanh(logits / cap) * cap (final_logit_softcapping)

RoPE inverse frequencies (float32 tensors, each function names the transformers function it follows):
  rope_default, rope_linear, rope_dynamic (depends on seq_len = max position in the call + 1), rope_yarn,
  rope_longrope (short / long factors by seq_len), rope_llama3. RopeSpec.tables(seq_len) -> (inv_freq, attention_scaling).

API (every tensor returned is fresh and owned by the caller):
  config_from_hf(dict) -> FamilyConfig           validate a config.json of either generation (ValueError names the key)
  hf_config_v5(v4_dict) -> dict                  the config.json transformers 5.x writes for a 4.x one
  FamilyLM(cfg)                                  nn.Module, state_dict keys = the hub's names; .double() = float64 path
  model(ids, cache=None) -> logits (B, T, V)     cache (causal_lm.KVCache) is extended in place
  Session(model).append(ids) -> logits           the generate path: KV cache + Phi-3's longrope cache reset
  kv_logits(model, ids, prefill) / greedy(model, prompt, n)
  expected_param_shapes(cfg), load_state_dict_hf(model, sd), hf_state_dict(model)
  self-test: /usr/bin/python3 tools/families.py
"""

import collections
import copy
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import causal_lm as clm  # noqa: E402  (read-only here: KVCache, masks, RMSNorm, rope_angles)

# ------------------------------------------------------------------------------------------------
# Recipes: what differs between the families (data, as the C++ side holds it)
# ------------------------------------------------------------------------------------------------

# norm: "rms" = weight * (x * rsqrt(mean x^2 + eps)) (LlamaRMSNorm), "gemma" = (x * rsqrt(...)) * (1 + weight)
# (Gemma3RMSNorm). qk_norm: q_norm / k_norm over head_dim before RoPE. sandwich: Gemma 3's four norms per layer.
# fused: Phi-3's qkv_proj / gate_up_proj. embed_scale: x * sqrt(E). softcap: attn/final logit soft-capping allowed.
# biases: which of attention_bias / mlp_bias the family reads (others must be absent or false).
RECIPES = {
    "llama": dict(norm="rms", qk_norm=False, sandwich=False, fused=False, embed_scale=False, softcap=False,
                  act_key="hidden_act", act="silu", biases=("attention_bias", "mlp_bias"),
                  rope_types=("default", "linear", "dynamic", "yarn", "llama3"), arch="LlamaForCausalLM"),
    "qwen3": dict(norm="rms", qk_norm=True, sandwich=False, fused=False, embed_scale=False, softcap=False,
                  act_key="hidden_act", act="silu", biases=("attention_bias",),
                  rope_types=("default", "linear", "dynamic", "yarn", "llama3"), arch="Qwen3ForCausalLM"),
    "mistral": dict(norm="rms", qk_norm=False, sandwich=False, fused=False, embed_scale=False, softcap=False,
                    act_key="hidden_act", act="silu", biases=(),
                    rope_types=("default", "linear", "dynamic", "yarn", "llama3"), arch="MistralForCausalLM"),
    "gemma3_text": dict(norm="gemma", qk_norm=True, sandwich=True, fused=False, embed_scale=True, softcap=True,
                        act_key="hidden_activation", act="gelu_pytorch_tanh", biases=("attention_bias",),
                        rope_types=("default", "linear", "dynamic", "yarn", "llama3"), arch="Gemma3ForCausalLM"),
    "phi3": dict(norm="rms", qk_norm=False, sandwich=False, fused=True, embed_scale=False, softcap=False,
                 act_key="hidden_act", act="silu", biases=(), rope_types=("default", "longrope"),
                 arch="Phi3ForCausalLM"),
    "smollm3": dict(norm="rms", qk_norm=False, sandwich=False, fused=False, embed_scale=False, softcap=False,
                    act_key="hidden_act", act="silu", biases=("attention_bias", "mlp_bias"),
                    rope_types=("default", "linear", "dynamic", "yarn", "llama3"), arch="SmolLM3ForCausalLM"),
}
MODEL_TYPES = tuple(RECIPES)

# The configuration classes' defaults for keys a config.json may omit (transformers 4.5x and 5.x agree on these).
# "head_dim": None = hidden_size // num_attention_heads. "num_key_value_heads": None = num_attention_heads.
DEFAULTS = {
    "llama": {"rms_norm_eps": 1e-6, "rope_theta": 10000.0, "max_position_embeddings": 2048, "tie_word_embeddings": False,
              "head_dim": None, "num_key_value_heads": None},
    # Qwen3Config: head_dim 128 and num_key_value_heads 32 whatever hidden_size / num_attention_heads are.
    "qwen3": {"rms_norm_eps": 1e-6, "rope_theta": 10000.0, "max_position_embeddings": 32768, "tie_word_embeddings": False,
              "head_dim": 128, "num_key_value_heads": 32},
    "mistral": {"rms_norm_eps": 1e-6, "rope_theta": 10000.0, "max_position_embeddings": 4096 * 32,
                "tie_word_embeddings": False, "head_dim": None, "num_key_value_heads": 8},
    "gemma3_text": {"rms_norm_eps": 1e-6, "rope_theta": 1000000.0, "max_position_embeddings": 131072,
                    "tie_word_embeddings": True, "head_dim": 256, "num_key_value_heads": 4},
    "phi3": {"rms_norm_eps": 1e-5, "rope_theta": 10000.0, "max_position_embeddings": 4096, "tie_word_embeddings": False,
             "head_dim": None, "num_key_value_heads": None},
    "smollm3": {"rms_norm_eps": 1e-6, "rope_theta": 2000000.0, "max_position_embeddings": 32768,
                "tie_word_embeddings": True, "head_dim": None, "num_key_value_heads": 4},
}
ROPE_TYPES = ("default", "linear", "dynamic", "yarn", "longrope", "llama3")
# Keys each rope type reads (besides rope_type / type / rope_theta / partial_rotary_factor); required first.
ROPE_KEYS = {
    "default": ((), ()),
    "linear": (("factor",), ()),
    "dynamic": (("factor",), ("original_max_position_embeddings",)),   # read by no transformers version
    "yarn": (("factor",), ("attention_factor", "beta_fast", "beta_slow", "original_max_position_embeddings",
                           "mscale", "mscale_all_dim", "truncate")),
    "longrope": (("short_factor", "long_factor"), ("factor", "attention_factor", "original_max_position_embeddings")),
    "llama3": (("factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"), ()),
}


# ------------------------------------------------------------------------------------------------
# RoPE: inverse frequencies and attention factor, in float32 exactly as torch forms them
# ------------------------------------------------------------------------------------------------
# Every expression below is the torch expression of transformers' modeling_rope_utils.py (4.48-4.57 and 5.x; the
# differences between generations are noted per function). Python scalars meet float32 tensors: torch rounds the
# scalar to float32 and rounds each operation to float32; `scalar / tensor` is tensor.reciprocal() * scalar (two
# roundings; torch's Tensor.__rtruediv__), `tensor / scalar` is a true division.

def _exponents(dim):
    """float32 (dim // 2,): float32(2i) / dim, a true float32 division (torch.arange(0, dim, 2).float() / dim)."""
    return torch.arange(0, dim, 2, dtype=torch.int64).float() / dim


def rope_default(dim, base):
    """_compute_default_rope_parameters (and each model's compute_default_rope_parameters in 5.x):
    inv_freq = 1 / base ** (float32(2i) / dim): float32 pow of float32(base), then a float32 reciprocal."""
    return 1.0 / (base ** _exponents(dim)), 1.0


def rope_linear(dim, base, factor):
    """_compute_linear_scaling_rope_parameters: the default inv_freq divided (in float32) by factor."""
    inv, att = rope_default(dim, base)
    inv /= factor
    return inv, att


def rope_dynamic(dim, base, factor, max_position_embeddings, seq_len=None):
    """_compute_dynamic_ntk_parameters (dynamic NTK). seq_len None (model init) or <= max_position_embeddings: the
    default inv_freq (HF computes base * 1.0 ** x in Python float64 = base). seq_len > max_position_embeddings (HF's
    dynamic_rope_update passes torch.max(position_ids) + 1, an int64 tensor): every step in float32,
        base' = float32(base) * (float32(factor) * S / M - float32(factor - 1)) ** float32(dim / (dim - 2))
    then inv_freq = 1 / base' ** (float32(2i) / dim). attention_scaling 1."""
    if seq_len is None or int(seq_len) <= max_position_embeddings:
        b = base * ((factor * max_position_embeddings / max_position_embeddings) - (factor - 1)) ** (dim / (dim - 2))
        return 1.0 / (b ** _exponents(dim)), 1.0
    s = torch.tensor(int(seq_len), dtype=torch.int64)
    s = torch.maximum(s, torch.tensor(max_position_embeddings, dtype=s.dtype))
    b = base * ((factor * s / max_position_embeddings) - (factor - 1)) ** (dim / (dim - 2))
    return 1.0 / (b ** _exponents(dim)), 1.0


def yarn_attention_factor(factor, attention_factor=None, mscale=None, mscale_all_dim=None):
    """_compute_yarn_parameters' attention factor (Python float64): attention_factor if given, else
    get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim) when both are set and non-zero, else
    get_mscale(factor) = 0.1 ln(factor) + 1 (1 when factor <= 1). transformers <= 4.47 had no mscale keys."""
    def get_mscale(scale, m=1):
        return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0
    if attention_factor is not None:
        return float(attention_factor)
    if mscale and mscale_all_dim:
        return float(get_mscale(factor, mscale) / get_mscale(factor, mscale_all_dim))
    return get_mscale(factor)


def rope_yarn(dim, base, factor, max_position_embeddings, original_max_position_embeddings=None, beta_fast=None,
              beta_slow=None, attention_factor=None, mscale=None, mscale_all_dim=None, truncate=True):
    """_compute_yarn_parameters as transformers 4.48-4.57 and 5.x (late) compute it:
      L = original_max_position_embeddings or max_position_embeddings (<= 4.47: always max_position_embeddings)
      low/high = dim * ln(L / (beta * 2 pi)) / (2 ln base) for beta_fast (default 32) / beta_slow (default 1), in
      float64; truncate (default true; the key exists from 4.56): floor(low), ceil(high); then max(low, 0), min(high, dim-1)
      ramp = clamp((float32(j) - low) / (high - low), 0, 1) for j < dim // 2 (high += 0.001 when low == high)
      pos = float32 base ** (float32(2i) / dim); extra = 1 / pos; inter = 1 / (float32(factor) * pos)
      e = 1 - ramp; inv_freq = inter * (1 - e) + extra * e          (every step float32)
    factor is the explicit rope_scaling.factor (5.0's first releases replaced it by max_position_embeddings /
    original_max_position_embeddings when the latter was given: the goldens keep the two equal or omit the latter)."""
    L = original_max_position_embeddings or max_position_embeddings
    att = yarn_attention_factor(factor, attention_factor, mscale, mscale_all_dim)
    beta_fast = beta_fast or 32
    beta_slow = beta_slow or 1

    def correction_dim(rot):
        return (dim * math.log(L / (rot * 2 * math.pi))) / (2 * math.log(base))
    low, high = correction_dim(beta_fast), correction_dim(beta_slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    ramp = torch.clamp((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low), 0, 1)
    pos = base ** (torch.arange(0, dim, 2).float() / dim)
    extra = 1.0 / pos
    inter = 1.0 / (factor * pos)
    e = 1 - ramp
    return inter * (1 - e) + extra * e, att


def longrope_attention_factor(max_position_embeddings, original_max_position_embeddings, attention_factor=None):
    """_compute_longrope_parameters' attention factor (Python float64): attention_factor if given, else with
    scale = max_position_embeddings / original_max_position_embeddings: 1 if scale <= 1, else
    sqrt(1 + ln(scale) / ln(original_max_position_embeddings))."""
    if attention_factor is not None:
        return float(attention_factor)
    scale = max_position_embeddings / original_max_position_embeddings
    return 1.0 if scale <= 1.0 else math.sqrt(1 + math.log(scale) / math.log(original_max_position_embeddings))


def rope_longrope(dim, base, short_factor, long_factor, original_max_position_embeddings, seq_len=None,
                  attention_factor=1.0):
    """_compute_longrope_parameters + dynamic_rope_update's longrope_frequency_update: with seq_len = max position in
    the call + 1, ext = float32(long_factor) if seq_len > original_max_position_embeddings else float32(short_factor);
    inv_freq = 1 / (ext * float32 base ** (float32(2i) / dim)) (float32 product, then reciprocal)."""
    use_long = seq_len is not None and int(seq_len) > original_max_position_embeddings
    ext = torch.tensor(long_factor if use_long else short_factor, dtype=torch.float32)
    return 1.0 / (ext * base ** _exponents(dim)), attention_factor


def rope_llama3(dim, base, factor, low_freq_factor, high_freq_factor, original_max_position_embeddings):
    """_compute_llama3_parameters, every step float32 on the default inv_freq:
      wavelen = reciprocal(inv) * float32(2 pi)                   (2 * math.pi / inv_freq)
      inv_l = where(wavelen > float32(omp / low), inv / factor, inv)
      smooth = (reciprocal(wavelen) * omp - low) / (high - low)   (omp / wavelen, then float32 ops)
      smoothed = (1 - smooth) * inv_l / factor + smooth * inv_l
      medium = !(wavelen < float32(omp / high)) and !(wavelen > float32(omp / low)); inv = where(medium, smoothed, inv_l)"""
    inv, att = rope_default(dim, base)
    old = original_max_position_embeddings
    low_wavelen, high_wavelen = old / low_freq_factor, old / high_freq_factor
    wavelen = 2 * math.pi / inv
    inv_l = torch.where(wavelen > low_wavelen, inv / factor, inv)
    smooth = (old / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    smoothed = (1 - smooth) * inv_l / factor + smooth * inv_l
    medium = ~(wavelen < high_wavelen) * ~(wavelen > low_wavelen)
    return torch.where(medium, smoothed, inv_l), att


class RopeSpec:
    """One RoPE of a model (Gemma 3 has one per layer type). rope_type, theta (base), dim = R (rotary dims), the
    type's parameters (params, as in the config), max_position_embeddings. tables(seq_len) -> (inv_freq float32
    (R/2,), attention_scaling float): seq_len = largest position of the call + 1 (only dynamic and longrope use it)."""

    def __init__(self, rope_type, theta, dim, params, max_position_embeddings):
        self.rope_type, self.theta, self.dim, self.params = rope_type, float(theta), dim, dict(params)
        self.max_position_embeddings = max_position_embeddings

    @property
    def seq_dependent(self):
        return self.rope_type in ("dynamic", "longrope")

    def tables(self, seq_len=None):
        p, d, b = self.params, self.dim, self.theta
        if self.rope_type == "default":
            return rope_default(d, b)
        if self.rope_type == "linear":
            return rope_linear(d, b, p["factor"])
        if self.rope_type == "dynamic":
            return rope_dynamic(d, b, p["factor"], self.max_position_embeddings, seq_len)
        if self.rope_type == "yarn":
            return rope_yarn(d, b, p["factor"], self.max_position_embeddings, p.get("original_max_position_embeddings"),
                             p.get("beta_fast"), p.get("beta_slow"), p.get("attention_factor"), p.get("mscale"),
                             p.get("mscale_all_dim"), p.get("truncate", True))
        if self.rope_type == "longrope":
            omp = p["original_max_position_embeddings"]
            att = longrope_attention_factor(self.max_position_embeddings, omp, p.get("attention_factor"))
            return rope_longrope(d, b, p["short_factor"], p["long_factor"], omp, seq_len, att)
        if self.rope_type == "llama3":
            return rope_llama3(d, b, p["factor"], p["low_freq_factor"], p["high_freq_factor"],
                               p["original_max_position_embeddings"])
        raise AssertionError(self.rope_type)

    def key(self):
        return (self.rope_type, self.theta, self.dim, tuple(sorted((k, tuple(v) if isinstance(v, list) else v)
                                                                   for k, v in self.params.items())),
                self.max_position_embeddings if self.rope_type in ("dynamic", "yarn", "longrope") else None)

    def __eq__(self, other):
        return isinstance(other, RopeSpec) and self.key() == other.key()

    def __repr__(self):
        return f"RopeSpec({self.rope_type!r}, theta={self.theta}, dim={self.dim}, params={self.params})"


def rope_cos_sin(positions, inv_freq, attention_scaling, dtype):
    """cos, sin (1, T, R) in dtype: the angle float32(float32(p) * inv_freq) (HF: a float32 K=1 matmul), duplicated
    (cat(freqs, freqs)); float32: torch's cos / sin times float32(attention_scaling) (HF: emb.cos() * scaling);
    float64: the exact cos / sin of that float32 angle times attention_scaling."""
    ang = clm.rope_angles(positions, inv_freq)                            # float32 (T, R/2)
    emb = torch.cat([ang, ang], -1).unsqueeze(0)
    if dtype == torch.float32:
        return emb.cos() * attention_scaling, emb.sin() * attention_scaling
    emb = emb.to(dtype)
    return emb.cos() * attention_scaling, emb.sin() * attention_scaling


def apply_rope_partial(x, cos, sin):
    """x (B, T, H, D); cos, sin (1, T, R), R <= D: HF apply_rotary_pos_emb (Phi-3's version): the first R dims are
    rotated with rotate_half within them (pairs (i, i + R/2)), dims R.. pass through unchanged (and unscaled by the
    attention factor). out = x_rot * cos + rotate_half(x_rot) * sin."""
    R = cos.shape[-1]
    c, s = cos.unsqueeze(2), sin.unsqueeze(2)
    xr, xp = x[..., :R], x[..., R:]
    rot = torch.cat([-xr[..., R // 2:], xr[..., :R // 2]], -1)
    out = xr * c + rot * s
    return torch.cat([out, xp], -1) if xp.shape[-1] else out


# ------------------------------------------------------------------------------------------------
# Config
# ------------------------------------------------------------------------------------------------

def _fail(path, expected, got):
    raise ValueError(f"config.{path}: expected {expected}, got {got!r}")


def _num(v):
    return not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v)


def _int_at(d, key, lo, hi, default=None, path=None):
    v = d.get(key, default)
    if not _num(v) or v != int(v) or not lo <= v <= hi:
        _fail(path or key, f"an integer in [{lo}, {hi}]", v)
    return int(v)


def _pos_at(d, key, default=None, path=None):
    v = d.get(key, default)
    if not _num(v) or v <= 0:
        _fail(path or key, "a finite number > 0", v)
    return float(v)


def _bool_at(d, key, default, path=None):
    v = d.get(key, default)
    if not isinstance(v, bool):
        _fail(path or key, "a boolean", v)
    return v


class LayerSpec:
    """Per layer: kind ("full_attention" / "sliding_attention"), window (None or W keys), rope (RopeSpec or None = NoPE)."""

    def __init__(self, kind, window, rope):
        self.kind, self.window, self.rope = kind, window, rope

    def __eq__(self, o):
        return (self.kind, self.window, self.rope) == (o.kind, o.window, o.rope)

    def __repr__(self):
        return f"LayerSpec({self.kind}, window={self.window}, rope={self.rope})"


class FamilyConfig:
    """The validated numbers the model needs. Two configs with the same fields run the same math (the goldens
    assert this for the 4.x and 5.x config.json of each case)."""

    FIELDS = ("model_type", "vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers",
              "num_attention_heads", "num_key_value_heads", "head_dim", "rms_norm_eps", "max_position_embeddings",
              "tie_word_embeddings", "attention_bias", "mlp_bias", "attn_scale", "attn_logit_softcapping",
              "final_logit_softcapping", "layers", "longrope_reset", "bidirectional")

    def __init__(self, **kw):
        for k in self.FIELDS:
            setattr(self, k, kw[k])
        self.recipe = RECIPES[self.model_type]

    def __eq__(self, other):
        return all(getattr(self, k) == getattr(other, k) for k in self.FIELDS)

    def __repr__(self):
        return "FamilyConfig(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in self.FIELDS) + ")"


def _rope_type_of(rp, path, model_type):
    """rope_type (or its old name type); phi3 maps su / yarn to longrope (Phi3Config._rope_scaling_adjustment)."""
    def norm(x):
        return "longrope" if model_type == "phi3" and x in ("su", "yarn") else x
    rt, t = rp.get("rope_type"), rp.get("type")
    if rt is not None and t is not None and norm(rt) != norm(t):
        _fail(f"{path}.type", f"the same as {path}.rope_type ({rt!r})", t)
    rt = norm(rt if rt is not None else (t if t is not None else "default"))
    allowed = RECIPES[model_type]["rope_types"]
    if rt not in allowed:
        name = f"{path}.rope_type" if "rope_type" in rp else f"{path}.type"
        _fail(name, f"one of {list(allowed)} for model_type {model_type!r}", rt)
    return rt


def _rope_spec(model_type, rp, path, theta, dim, max_pos, top_omp=None):
    """A RopeSpec from a rope_scaling / rope_parameters dict (theta already resolved)."""
    rt = _rope_type_of(rp, path, model_type)
    req, opt = ROPE_KEYS[rt]
    known = set(req) | set(opt) | {"rope_type", "type", "rope_theta", "partial_rotary_factor"}
    for k in rp:
        if k not in known:
            raise ValueError(f"config.{path}.{k}: not a key of rope_type {rt!r} (keys: {sorted(known)})")
    params = {}
    for k in req:
        if k == "original_max_position_embeddings" and top_omp is not None:
            continue
        if rp.get(k) is None:
            _fail(f"{path}.{k}", f"a value (required by rope_type {rt!r})", None)
    for k in req + opt:
        v = rp.get(k)
        if v is None:
            continue
        if k in ("short_factor", "long_factor"):
            if not isinstance(v, list) or len(v) != dim // 2 or not all(_num(x) and x > 0 for x in v):
                _fail(f"{path}.{k}", f"a list of {dim // 2} numbers > 0 (rotary dims / 2)", v)
            params[k] = [float(x) for x in v]
        elif k == "truncate":
            if not isinstance(v, bool):
                _fail(f"{path}.{k}", "a boolean", v)
            params[k] = v
        elif k == "original_max_position_embeddings":
            params[k] = _int_at(rp, k, 1, 1 << 24, path=f"{path}.{k}")
        else:
            params[k] = _pos_at(rp, k, path=f"{path}.{k}")
    if rt == "dynamic":
        params.pop("original_max_position_embeddings", None)       # read by no transformers version
        if dim <= 2:
            _fail("head_dim", "more than 2 rotary dims for dynamic NTK (dim / (dim - 2))", dim)
    if rt == "llama3" and not params["high_freq_factor"] > params["low_freq_factor"]:
        _fail(f"{path}.high_freq_factor", f"a number > low_freq_factor ({params['low_freq_factor']})",
              params["high_freq_factor"])
    if rt == "longrope":
        # Phi-3: the top-level original_max_position_embeddings wins (5.x standardize_rope_params gives it priority;
        # 4.x reads only it); the factor key is then ignored by 4.x and used by 5.x: refuse it unless it is the ratio.
        omp = top_omp if top_omp is not None else params.get("original_max_position_embeddings", max_pos)
        if "original_max_position_embeddings" in params and params["original_max_position_embeddings"] != omp:
            _fail(f"{path}.original_max_position_embeddings", f"the top-level value ({omp})",
                  params["original_max_position_embeddings"])
        params["original_max_position_embeddings"] = omp
        if "factor" in params and params["factor"] != max_pos / omp:
            _fail(f"{path}.factor", f"absent or max_position_embeddings / original_max_position_embeddings "
                  f"({max_pos / omp}) (transformers 4.x ignores it, 5.x uses it)", params["factor"])
        params.pop("factor", None)
    if rt == "yarn" and params.get("original_max_position_embeddings") == max_pos:
        params.pop("original_max_position_embeddings")          # 5.x writes it = max_position_embeddings: same math
    return RopeSpec(rt, theta, dim, params, max_pos)


def _theta(d, rp, path, default):
    """The base: rope_parameters.rope_theta (5.x) or rope_theta (4.x); both given must agree."""
    top = d.get("rope_theta")
    if top is not None and not (_num(top) and top > 0):
        _fail("rope_theta", "a finite number > 0", top)
    inner = rp.get("rope_theta") if isinstance(rp, dict) else None
    if inner is not None:
        if not (_num(inner) and inner > 0):
            _fail(f"{path}.rope_theta", "a finite number > 0", inner)
        if top is not None and float(top) != float(inner):
            _fail(f"{path}.rope_theta", f"the same base as rope_theta ({top}) when both are given", inner)
        return float(inner)
    return float(top) if top is not None else float(default)


def _partial_factor(d, rp, model_type):
    top = d.get("partial_rotary_factor")
    inner = rp.get("partial_rotary_factor") if isinstance(rp, dict) else None
    for name, v in (("partial_rotary_factor", top), ("rope_parameters.partial_rotary_factor", inner)):
        if v is not None and not (_num(v) and 0 < v <= 1):
            _fail(name, "a number in (0, 1]", v)
    if top is not None and inner is not None and float(top) != float(inner):
        _fail("rope_parameters.partial_rotary_factor", f"the same as partial_rotary_factor ({top})", inner)
    f = float(inner if inner is not None else (top if top is not None else 1.0))
    if f != 1.0 and model_type != "phi3":
        name = "rope_parameters.partial_rotary_factor" if inner is not None else "partial_rotary_factor"
        _fail(name, f"1 (model_type {model_type!r} rotates every head dim)", f)
    return f


def _layer_types(d, n, allowed=("full_attention", "sliding_attention")):
    lt = d.get("layer_types")
    if lt is None:
        return None
    if not isinstance(lt, list) or len(lt) != n:
        _fail("layer_types", f"a list of {n} layer types (num_hidden_layers)", lt)
    for i, t in enumerate(lt):
        if t not in allowed:
            _fail(f"layer_types[{i}]", f"one of {list(allowed)}", t)
    return list(lt)


def _window(d, key, default):
    v = d.get(key, default) if key in d else default
    if v is None:
        return None
    if not _num(v) or v != int(v) or v < 1:
        _fail(key, "null or an integer >= 1 (keys each query sees, itself included)", v)
    return int(v)


def config_from_hf(d):
    """FamilyConfig from a config.json dict written by transformers 4.x or 5.x, for the model_types of RECIPES.
    ValueError("config.<key>: expected ..., got ...") for anything not run exactly. Keys that change nothing in
    transformers' math (architectures, dtype / torch_dtype, initializer_range, use_cache, dropout, ...) are ignored."""
    if not isinstance(d, dict):
        raise ValueError(f"config: expected a JSON object, got {type(d).__name__}")
    mt = d.get("model_type")
    if mt not in RECIPES:
        hint = " (Gemma 3's multimodal config: use its text_config, model_type \"gemma3_text\")" if mt == "gemma3" else ""
        _fail("model_type", f"one of {list(MODEL_TYPES)}{hint}", mt)
    rec, dft = RECIPES[mt], DEFAULTS[mt]
    act = d.get(rec["act_key"], rec["act"])
    if act != rec["act"]:
        _fail(rec["act_key"], f"{rec['act']!r}", act)
    if mt == "llama" and d.get("pretraining_tp", 1) != 1:
        _fail("pretraining_tp", "1", d["pretraining_tp"])
    for key in ("attention_bias", "mlp_bias"):
        if key not in rec["biases"] and d.get(key, False) is not False:
            _fail(key, f"false or absent (model_type {mt!r} has no such bias)", d[key])
    if not rec["softcap"]:
        for key in ("attn_logit_softcapping", "final_logit_softcapping"):
            if d.get(key) is not None:
                _fail(key, f"null or absent (model_type {mt!r} has no soft-capping)", d[key])
    # EmbeddingGemma: Gemma3TextConfig(use_bidirectional_attention=True) — every key visible to every query, and a
    # sliding layer's window |p - j| < sliding_window // 2 + 1 (the config class halves the stored value on load).
    bidirectional = mt == "gemma3_text" and _bool_at(d, "use_bidirectional_attention", False)

    E = _int_at(d, "hidden_size", 1, 1 << 16)
    H = _int_at(d, "num_attention_heads", 1, 1024)
    # Absent: the class default (Qwen3 32, Mistral 8, Gemma 3 / SmolLM3 4, others num_attention_heads); null:
    # num_attention_heads (each __init__: `if num_key_value_heads is None: num_key_value_heads = num_attention_heads`).
    kvv = d["num_key_value_heads"] if "num_key_value_heads" in d else dft["num_key_value_heads"]
    Hkv = _int_at({"num_key_value_heads": H if kvv is None else kvv}, "num_key_value_heads", 1, H)
    if H % Hkv:
        _fail("num_key_value_heads", f"a divisor of num_attention_heads ({H})", Hkv)
    if d.get("head_dim") is None:
        if dft["head_dim"] is not None:
            D = dft["head_dim"]
        else:
            if E % H:
                _fail("head_dim", f"a value (hidden_size {E} is not a multiple of num_attention_heads {H})", None)
            D = E // H
    else:
        D = _int_at(d, "head_dim", 2, 1024)
    if mt == "phi3" and D * H != E:
        _fail("head_dim", f"hidden_size / num_attention_heads ({E // H}) (Phi-3 splits hidden_size into the heads)", D)
    if D % 2:
        _fail("head_dim", "an even number (RoPE pairs)", D)
    L = _int_at(d, "num_hidden_layers", 1, 1024)
    V = _int_at(d, "vocab_size", 1, 1 << 22)
    max_pos = _int_at(d, "max_position_embeddings", 1, 1 << 24, default=dft["max_position_embeddings"])
    for key in ("bos_token_id", "eos_token_id", "pad_token_id"):
        v = d.get(key)
        ids = v if key == "eos_token_id" and isinstance(v, list) else [v]
        for i, x in enumerate(ids):
            if x is None and not isinstance(v, list):
                continue
            if not _num(x) or x != int(x) or not 0 <= x < V:
                _fail(f"{key}[{i}]" if isinstance(v, list) else key, f"an id in [0, {V - 1}] or null", x)

    # ---- RoPE, per layer type ----
    rs, rp = d.get("rope_scaling"), d.get("rope_parameters")
    for name, v in (("rope_scaling", rs), ("rope_parameters", rp)):
        if v is not None and not isinstance(v, dict):
            _fail(name, "null or an object", v)
    if rs is not None and rp is not None:
        raise ValueError("config.rope_scaling: give either rope_scaling (transformers 4.x) or rope_parameters (5.x), "
                         "not both (5.x lets rope_scaling override rope_parameters)")
    prf = _partial_factor(d, rp if (rp is not None and mt != "gemma3_text") else None, mt)
    R = int(D * prf)
    if R % 2 or R < 2:
        _fail("partial_rotary_factor", f"a factor giving an even number of rotary dims >= 2 (head_dim {D} * factor)", prf)
    top_omp = None
    if mt == "phi3":
        top_omp = _int_at(d, "original_max_position_embeddings", 1, 1 << 24, default=4096)
    ropes = {}
    if mt == "gemma3_text":
        if rp is not None:
            if set(rp) - {"full_attention", "sliding_attention"} or "full_attention" not in rp \
                    or "sliding_attention" not in rp:
                _fail("rope_parameters", "an object with the keys \"full_attention\" and \"sliding_attention\" "
                      "(Gemma 3: one RoPE per layer type)", rp)
            for lt in ("full_attention", "sliding_attention"):
                sub = rp[lt]
                if not isinstance(sub, dict):
                    _fail(f"rope_parameters.{lt}", "an object", sub)
                dft_theta = dft["rope_theta"] if lt == "full_attention" else 10000.0
                top_key = "rope_theta" if lt == "full_attention" else "rope_local_base_freq"
                theta = _theta({"rope_theta": d.get(top_key)}, sub, f"rope_parameters.{lt}", dft_theta)
                if sub.get("partial_rotary_factor", 1.0) != 1.0:
                    _fail(f"rope_parameters.{lt}.partial_rotary_factor", "1", sub["partial_rotary_factor"])
                ropes[lt] = _rope_spec(mt, sub, f"rope_parameters.{lt}", theta, R, max_pos)
        else:
            theta = _theta(d, None, "rope_scaling", dft["rope_theta"])
            ropes["full_attention"] = _rope_spec(mt, rs or {}, "rope_scaling", theta, R, max_pos)
            local = d.get("rope_local_base_freq", 10000.0)
            if not (_num(local) and local > 0):
                _fail("rope_local_base_freq", "a finite number > 0", local)
            ropes["sliding_attention"] = RopeSpec("default", local, R, {}, max_pos)   # Gemma 3: always default RoPE
    else:
        path = "rope_parameters" if rp is not None else "rope_scaling"
        src = rp if rp is not None else (rs or {})
        theta = _theta(d, rp, path, dft["rope_theta"])
        spec = _rope_spec(mt, src, path, theta, R, max_pos, top_omp)
        ropes["full_attention"] = ropes["sliding_attention"] = spec

    # ---- layer kinds, windows, NoPE ----
    kinds, use_rope = None, [True] * L
    window = None
    if mt == "llama":
        kinds = ["full_attention"] * L
    elif mt == "qwen3":
        if _bool_at(d, "use_sliding_window", False):
            _fail("use_sliding_window", "false (transformers <= 4.52 applied the window to every layer in eager / sdpa, "
                  ">= 4.53 only from max_window_layers: the generations disagree)", True)
        kinds = _layer_types(d, L, ("full_attention",)) or ["full_attention"] * L
    elif mt == "mistral":
        if d.get("layer_types") is not None:
            _fail("layer_types", "absent (MistralModel ignores it; per-layer windows are model_type \"ministral\")",
                  d["layer_types"])
        window = _window(d, "sliding_window", 4096)        # absent = MistralConfig's default 4096; null = none
        kinds = ["sliding_attention" if window else "full_attention"] * L
    elif mt == "phi3":
        window = _window(d, "sliding_window", None)
        want = ["sliding_attention" if window else "full_attention"] * L
        lt = _layer_types(d, L)
        if lt is not None and lt != want:
            _fail("layer_types", f"{want[0]!r} for every layer (Phi-3's sliding_window applies to all layers)", lt)
        kinds = want
    elif mt == "gemma3_text":
        lt = _layer_types(d, L)
        pat = d.get("sliding_window_pattern")
        if pat is not None and (not _num(pat) or pat != int(pat) or pat < 1):
            _fail("sliding_window_pattern", "an integer >= 1", pat)
        from_pat = ["sliding_attention" if (i + 1) % int(pat if pat is not None else 6) else "full_attention"
                    for i in range(L)]
        if lt is not None and pat is not None and lt != from_pat:
            _fail("layer_types", f"the pattern of sliding_window_pattern {pat} ({from_pat}) when both are given "
                  "(transformers 4.50-4.52 read only sliding_window_pattern)", lt)
        kinds = lt if lt is not None else from_pat
        window = _window(d, "sliding_window", 4096)
        if window is None and "sliding_attention" in kinds:
            _fail("sliding_window", "an integer >= 1 (some layers are sliding_attention)", None)
    elif mt == "smollm3":
        nrl = d.get("no_rope_layers")
        interval = _int_at(d, "no_rope_layer_interval", 1, 1 << 20, default=4)
        if nrl is None:
            nrl = [int((i + 1) % interval != 0) for i in range(L)]
        if not isinstance(nrl, list) or len(nrl) < L:
            _fail("no_rope_layers", f"a list of at least {L} flags (num_hidden_layers)", nrl)
        for i, v in enumerate(nrl[:L]):
            if isinstance(v, bool) or v not in (0, 1):
                _fail(f"no_rope_layers[{i}]", "0 (no RoPE) or 1 (RoPE)", v)
        use_rope = [bool(v) for v in nrl[:L]]
        usw = _bool_at(d, "use_sliding_window", False)
        window = _window(d, "sliding_window", None)
        lt = _layer_types(d, L)
        derived = ["sliding_attention" if usw and window is not None and not use_rope[i] else "full_attention"
                   for i in range(L)]
        kinds = lt if lt is not None else derived
        if "sliding_attention" in kinds and not (usw and window is not None):
            _fail("use_sliding_window" if window is not None else "sliding_window",
                  "true and an integer (layer_types has sliding_attention layers)",
                  usw if window is not None else None)
    layers = []
    if bidirectional and window is not None:
        window = window // 2 + 1
    for i, kind in enumerate(kinds):
        w = window if kind == "sliding_attention" else None
        layers.append(LayerSpec(kind, w, ropes[kind] if use_rope[i] else None))

    attn_scale = D ** -0.5
    caps = {}
    if mt == "gemma3_text":
        attn_scale = _pos_at(d, "query_pre_attn_scalar", 256) ** -0.5
        # Gemma3Attention stores attn_logit_softcapping but never passes softcap= to the attention function (4.50 to
        # 5.x; Gemma 2 does): transformers ignores the key. Refused rather than guessed (Gemma 3 checkpoints have null).
        if d.get("attn_logit_softcapping") is not None:
            _fail("attn_logit_softcapping", "null (transformers' Gemma3Attention ignores it; soft-capping the "
                  "scores would not give its numbers)", d["attn_logit_softcapping"])
        v = d.get("final_logit_softcapping")
        caps["final_logit_softcapping"] = None if v is None else _pos_at(d, "final_logit_softcapping")
    tie = _bool_at(d, "tie_word_embeddings", dft["tie_word_embeddings"])
    return FamilyConfig(
        model_type=mt, vocab_size=V, hidden_size=E, intermediate_size=_int_at(d, "intermediate_size", 1, 1 << 20),
        num_hidden_layers=L, num_attention_heads=H, num_key_value_heads=Hkv, head_dim=D,
        rms_norm_eps=_pos_at(d, "rms_norm_eps", dft["rms_norm_eps"]), max_position_embeddings=max_pos,
        tie_word_embeddings=tie,
        attention_bias=_bool_at(d, "attention_bias", False) if "attention_bias" in rec["biases"] else False,
        mlp_bias=_bool_at(d, "mlp_bias", False) if "mlp_bias" in rec["biases"] else False,
        attn_scale=attn_scale, attn_logit_softcapping=caps.get("attn_logit_softcapping"),
        final_logit_softcapping=caps.get("final_logit_softcapping"), layers=layers,
        longrope_reset=(ropes["full_attention"].params["original_max_position_embeddings"]
                        if mt == "phi3" and ropes["full_attention"].rope_type == "longrope" else None),
        bidirectional=bidirectional)


# ------------------------------------------------------------------------------------------------
# config.json writers: 4.x as given, 5.x converted as transformers 5.x's configuration classes do
# ------------------------------------------------------------------------------------------------

def hf_config_v5(d4, transformers_version="5.0.0"):
    """The config.json transformers 5.x writes for the model a 4.x config.json describes (RotaryEmbeddingConfigMixin
    .convert_rope_params_to_dict + standardize_rope_params, each config class's layer_types):
      rope_theta / rope_scaling (/ partial_rotary_factor) -> rope_parameters {"rope_type", "rope_theta", ...};
      llama3 / yarn / longrope: original_max_position_embeddings added (the top-level one first: Phi-3);
      gemma3_text: rope_parameters {"full_attention": rope_theta + rope_scaling, "sliding_attention": default with
      rope_local_base_freq}, layer_types from sliding_window_pattern (dropped), use_bidirectional_attention false;
      qwen3: sliding_window null unless use_sliding_window, layer_types; smollm3: layer_types; phi3: layer_types;
      torch_dtype -> dtype."""
    d = copy.deepcopy(d4)
    mt = d["model_type"]
    dft = DEFAULTS[mt]
    if "torch_dtype" in d:
        d["dtype"] = d.pop("torch_dtype")
    d["transformers_version"] = transformers_version
    rs = d.pop("rope_scaling", None)
    theta = d.pop("rope_theta", dft["rope_theta"])
    L = d["num_hidden_layers"]
    max_pos = d.get("max_position_embeddings", dft["max_position_embeddings"])

    def add_omp(p, top=None):
        if p.get("rope_type") in ("llama3", "yarn", "longrope"):
            if top is not None:
                p["original_max_position_embeddings"] = top
            else:
                p.setdefault("original_max_position_embeddings", max_pos)

    if mt == "gemma3_text":
        local = d.pop("rope_local_base_freq", 10000.0)
        full = {"rope_type": "default"}
        if rs:
            full.update(rs)
        full.setdefault("rope_theta", theta)
        full.setdefault("rope_type", full.get("type", "default"))
        add_omp(full)
        d["rope_parameters"] = {"sliding_attention": {"rope_type": "default", "rope_theta": local},
                                "full_attention": full}
        pat = d.pop("sliding_window_pattern", 6)
        if d.get("layer_types") is None:
            d["layer_types"] = ["sliding_attention" if (i + 1) % pat else "full_attention" for i in range(L)]
        d.setdefault("use_bidirectional_attention", False)
        return d
    p = dict(rs or {})
    p.setdefault("rope_theta", theta)
    p.setdefault("rope_type", p.get("type", "default"))
    if mt == "phi3" and p["rope_type"] in ("su", "yarn"):
        p["rope_type"] = "longrope"
    if d.get("partial_rotary_factor") is not None:
        p["partial_rotary_factor"] = d["partial_rotary_factor"]
    add_omp(p, d.get("original_max_position_embeddings") if mt == "phi3" else None)
    d["rope_parameters"] = p
    if mt == "qwen3":
        usw = d.get("use_sliding_window", False)
        if not usw:
            d["sliding_window"] = None
        if d.get("layer_types") is None:
            mwl = d.get("max_window_layers", 28)
            d["layer_types"] = ["sliding_attention" if d.get("sliding_window") is not None and i >= mwl
                                else "full_attention" for i in range(L)]
    elif mt == "smollm3":
        nrl = d.get("no_rope_layers")
        if nrl is None:
            nrl = d["no_rope_layers"] = [int((i + 1) % d.get("no_rope_layer_interval", 4) != 0) for i in range(L)]
        if d.get("layer_types") is None:
            on = d.get("use_sliding_window", False) and d.get("sliding_window") is not None
            d["layer_types"] = ["sliding_attention" if on and not nrl[i] else "full_attention" for i in range(L)]
    elif mt == "phi3":
        if d.get("layer_types") is None:
            d["layer_types"] = ["sliding_attention" if d.get("sliding_window") else "full_attention"] * L
    return d


# ------------------------------------------------------------------------------------------------
# Blocks
# ------------------------------------------------------------------------------------------------

class GemmaRMSNorm(nn.Module):
    """Gemma3RMSNorm: y = (x * rsqrt(mean(x^2) + eps)) * (1 + w), the norm in float32 (or float64 in the reference
    path), (1 + w) formed in float32 first (1.0 + weight.float()); weight initialised to zeros. Not LlamaRMSNorm's
    weight * y: the order and the float32 (1 + w) are HF's (a w of 1e-9 disappears in 1 + w)."""

    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.zeros(dim))

    def forward(self, x):
        y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return y * (1.0 + self.weight.float()).to(x.dtype)


def make_norm(cfg, dim):
    return GemmaRMSNorm(dim, cfg.rms_norm_eps) if cfg.recipe["norm"] == "gemma" else clm.RMSNorm(dim, eps=cfg.rms_norm_eps)


def embed_scale(cfg, dtype):
    """Gemma3TextScaledWordEmbedding's factor: torch.tensor(hidden_size ** 0.5) is float32(sqrt(E)) (the float64 sqrt
    rounded once), then .to(weight dtype): float32 in a float32 model (what attnwasm computes in), but bfloat16 when
    transformers runs the model in bfloat16 (sqrt(640) = 25.298 -> 25.25; see docs/families.md)."""
    return torch.tensor(cfg.hidden_size ** 0.5).to(dtype)


class Attention(nn.Module):
    def __init__(self, cfg, layer_idx):
        super().__init__()
        self.cfg, self.layer_idx = cfg, layer_idx
        self.H, self.Hkv, self.D = cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim
        E, b = cfg.hidden_size, cfg.attention_bias
        if cfg.recipe["fused"]:
            self.qkv_proj = nn.Linear(E, (self.H + 2 * self.Hkv) * self.D, bias=False)   # rows: q, then k, then v
        else:
            self.q_proj = nn.Linear(E, self.H * self.D, bias=b)
            self.k_proj = nn.Linear(E, self.Hkv * self.D, bias=b)
            self.v_proj = nn.Linear(E, self.Hkv * self.D, bias=b)
        self.o_proj = nn.Linear(self.H * self.D, E, bias=b)
        if cfg.recipe["qk_norm"]:
            self.q_norm = make_norm(cfg, self.D)
            self.k_norm = make_norm(cfg, self.D)

    def forward(self, h, rope, cache=None, need_weights=False):
        """h (B, T, E); rope: (cos, sin) (1, T, R) or None (NoPE). Returns (B, T, E)."""
        B, T, _ = h.shape
        H, Hkv, D = self.H, self.Hkv, self.D
        if self.cfg.recipe["fused"]:
            qkv = self.qkv_proj(h)
            q, k, v = qkv[..., :H * D], qkv[..., H * D:(H + Hkv) * D], qkv[..., (H + Hkv) * D:]
        else:
            q, k, v = self.q_proj(h), self.k_proj(h), self.v_proj(h)
        q, k, v = q.view(B, T, H, D), k.view(B, T, Hkv, D), v.view(B, T, Hkv, D)
        if self.cfg.recipe["qk_norm"]:
            q, k = self.q_norm(q), self.k_norm(k)
        if rope is not None:
            q, k = apply_rope_partial(q, *rope), apply_rope_partial(k, *rope)
        if cache is not None:
            k, v = cache.update(self.layer_idx, k, v)
        S = k.shape[1]
        rep = H // Hkv
        qh = q.transpose(1, 2)
        kh = k.transpose(1, 2).repeat_interleave(rep, dim=1)
        vh = v.transpose(1, 2).repeat_interleave(rep, dim=1)
        scores = torch.matmul(qh, kh.transpose(-2, -1)) * self.cfg.attn_scale
        cap = self.cfg.attn_logit_softcapping
        if cap is not None:
            scores = torch.tanh(scores / cap) * cap
        window = self.cfg.layers[self.layer_idx].window
        if self.cfg.bidirectional:  # EmbeddingGemma: every key, or those with |p - j| < window
            p = torch.arange(S - T, S).view(T, 1)
            allow = torch.ones(T, S, dtype=torch.bool) if window is None else (p - torch.arange(S).view(1, S)).abs() < window
        else:
            allow = clm.causal_lower_right(T, S) if window is None else clm.causal_window(T, S, window)
        w = torch.softmax(scores.masked_fill(~allow, float("-inf")), dim=-1)
        a = torch.matmul(w, vh).transpose(1, 2).reshape(B, T, H * D)
        out = self.o_proj(a)
        return (out, w) if need_weights else out


class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        E, F_, b = cfg.hidden_size, cfg.intermediate_size, cfg.mlp_bias
        self.fused = cfg.recipe["fused"]
        self.gelu = cfg.recipe["act"] == "gelu_pytorch_tanh"
        if self.fused:
            self.gate_up_proj = nn.Linear(E, 2 * F_, bias=False)      # rows 0..F-1 gate, F..2F-1 up
        else:
            self.gate_proj = nn.Linear(E, F_, bias=b)
            self.up_proj = nn.Linear(E, F_, bias=b)
        self.down_proj = nn.Linear(F_, E, bias=b)

    def act(self, x):
        return F.gelu(x, approximate="tanh") if self.gelu else F.silu(x)

    def forward(self, x):
        if self.fused:
            gate, up = self.gate_up_proj(x).chunk(2, dim=-1)          # Phi3MLP: up_states * act(gate)
            return self.down_proj(up * self.act(gate))
        return self.down_proj(self.act(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, cfg, i):
        super().__init__()
        self.sandwich = cfg.recipe["sandwich"]
        self.self_attn = Attention(cfg, i)
        self.mlp = MLP(cfg)
        E = cfg.hidden_size
        self.input_layernorm = make_norm(cfg, E)
        self.post_attention_layernorm = make_norm(cfg, E)
        if self.sandwich:
            self.pre_feedforward_layernorm = make_norm(cfg, E)
            self.post_feedforward_layernorm = make_norm(cfg, E)

    def forward(self, x, rope, cache=None, attentions=None):
        if attentions is None:
            a = self.self_attn(self.input_layernorm(x), rope, cache)
        else:
            a, w = self.self_attn(self.input_layernorm(x), rope, cache, need_weights=True)
            attentions.append(w)
        if self.sandwich:
            x = x + self.post_attention_layernorm(a)
            return x + self.post_feedforward_layernorm(self.mlp(self.pre_feedforward_layernorm(x)))
        x = x + a
        return x + self.mlp(self.post_attention_layernorm(x))


class Backbone(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList([DecoderLayer(cfg, i) for i in range(cfg.num_hidden_layers)])
        self.norm = make_norm(cfg, cfg.hidden_size)


class FamilyLM(nn.Module):
    """<Family>ForCausalLM for the model_types of RECIPES. cfg: FamilyConfig or a config.json dict.
    forward(ids (B, T), cache=None, attentions=None) -> logits (B, T, V); positions are P .. P + T - 1 with P the
    cache length; the RoPE tables of dynamic / longrope use seq_len = P + T (HF: max(position_ids) + 1), without
    HF's state (see docs/families.md: a fresh HF model and every generate() agree with this)."""

    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg if isinstance(cfg, FamilyConfig) else config_from_hf(cfg)
        self.model = Backbone(self.cfg)
        self.lm_head = None if self.cfg.tie_word_embeddings else nn.Linear(self.cfg.hidden_size, self.cfg.vocab_size,
                                                                           bias=False)
        self.embed_scale_dtype = torch.float32    # HF in a float32 model; torch.bfloat16 = HF running in bfloat16

    def rope_tables(self, positions, seq_len, dtype):
        """{id(RopeSpec): (cos, sin)} for the distinct RoPEs of the layers."""
        out = {}
        for layer in self.cfg.layers:
            if layer.rope is not None and id(layer.rope) not in out:
                inv, att = layer.rope.tables(seq_len)
                out[id(layer.rope)] = rope_cos_sin(positions, inv, att, dtype)
        return out

    def forward(self, ids, cache=None, attentions=None):
        T = ids.shape[1]
        P = cache.length() if cache is not None else 0
        positions = torch.arange(P, P + T)
        x = self.model.embed_tokens(ids.long())
        if self.cfg.recipe["embed_scale"]:
            x = x * embed_scale(self.cfg, self.embed_scale_dtype).to(x.dtype)
        tables = self.rope_tables(positions, P + T, x.dtype)
        for spec, layer in zip(self.cfg.layers, self.model.layers):
            x = layer(x, tables.get(id(spec.rope)) if spec.rope is not None else None, cache, attentions)
        h = self.model.norm(x)
        w = self.model.embed_tokens.weight if self.lm_head is None else self.lm_head.weight
        logits = F.linear(h, w)
        cap = self.cfg.final_logit_softcapping
        if cap is not None:
            logits = torch.tanh(logits / cap) * cap
        return logits


def expected_param_shapes(cfg):
    """OrderedDict hub name -> shape, in the model's order (lm_head last, absent when tied)."""
    E, H, Hkv, D, F_ = cfg.hidden_size, cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim, \
        cfg.intermediate_size
    rec = cfg.recipe
    out = collections.OrderedDict()
    out["model.embed_tokens.weight"] = (cfg.vocab_size, E)
    for i in range(cfg.num_hidden_layers):
        p = f"model.layers.{i}."
        if rec["fused"]:
            out[p + "self_attn.qkv_proj.weight"] = ((H + 2 * Hkv) * D, E)
        else:
            for n, rows in (("q", H * D), ("k", Hkv * D), ("v", Hkv * D)):
                out[p + f"self_attn.{n}_proj.weight"] = (rows, E)
                if cfg.attention_bias:
                    out[p + f"self_attn.{n}_proj.bias"] = (rows,)
        out[p + "self_attn.o_proj.weight"] = (E, H * D)
        if cfg.attention_bias:
            out[p + "self_attn.o_proj.bias"] = (E,)
        if rec["qk_norm"]:
            out[p + "self_attn.q_norm.weight"] = (D,)
            out[p + "self_attn.k_norm.weight"] = (D,)
        if rec["fused"]:
            out[p + "mlp.gate_up_proj.weight"] = (2 * F_, E)
        else:
            out[p + "mlp.gate_proj.weight"] = (F_, E)
            if cfg.mlp_bias:
                out[p + "mlp.gate_proj.bias"] = (F_,)
            out[p + "mlp.up_proj.weight"] = (F_, E)
            if cfg.mlp_bias:
                out[p + "mlp.up_proj.bias"] = (F_,)
        out[p + "mlp.down_proj.weight"] = (E, F_)
        if cfg.mlp_bias:
            out[p + "mlp.down_proj.bias"] = (E,)
        out[p + "input_layernorm.weight"] = (E,)
        out[p + "post_attention_layernorm.weight"] = (E,)
        if rec["sandwich"]:
            out[p + "pre_feedforward_layernorm.weight"] = (E,)
            out[p + "post_feedforward_layernorm.weight"] = (E,)
    out["model.norm.weight"] = (E,)
    if not cfg.tie_word_embeddings:
        out["lm_head.weight"] = (cfg.vocab_size, E)
    return out


def hf_state_dict(model):
    sd = model.state_dict()
    return collections.OrderedDict((k, sd[k]) for k in expected_param_shapes(model.cfg))


def load_state_dict_hf(model, sd):
    """Strict load by hub names (a tied model's lm_head.weight, if present, must equal the embedding)."""
    want = expected_param_shapes(model.cfg)
    sd = collections.OrderedDict(sd)
    if model.cfg.tie_word_embeddings and "lm_head.weight" in sd:
        if not torch.equal(sd.pop("lm_head.weight").float(), sd["model.embed_tokens.weight"].float()):
            raise ValueError("lm_head.weight: tie_word_embeddings is true but lm_head.weight differs from "
                             "model.embed_tokens.weight")
    for k, shape in want.items():
        if k not in sd:
            raise ValueError(f"{k}: missing from the state dict")
        if tuple(sd[k].shape) != tuple(shape):
            raise ValueError(f"{k}: expected shape {tuple(shape)}, got {tuple(sd[k].shape)}")
    extra = [k for k in sd if k not in want and not clm.IGNORED_KEYS.fullmatch(k)]
    if extra:
        raise ValueError(f"{extra[0]}: not a parameter of this configuration")
    dtype = next(model.parameters()).dtype
    model.load_state_dict({k: sd[k].to(dtype) for k in want}, strict=True)
    return model


# ------------------------------------------------------------------------------------------------
# The generate path: KV cache, Phi-3's longrope cache reset
# ------------------------------------------------------------------------------------------------

class Session:
    """One sequence through a KV cache, as transformers' generate() feeds it: append(ids (1, n)) -> logits (1, n, V)
    of those tokens. Phi-3 with longrope (Phi3ForCausalLM.prepare_inputs_for_generation): when the cache is not empty,
    the sequence after this append reaches original_max_position_embeddings + 1 tokens and the cache holds at most
    original_max_position_embeddings, the cache is dropped and the whole sequence is recomputed (so every key gets
    the long factors). Dynamic NTK has no such reset: cached keys keep the rotation of the call that made them."""

    def __init__(self, model):
        self.model, self.cache, self.ids = model, clm.KVCache(), None
        self.resets = []

    @torch.no_grad()
    def append(self, new):
        full = new if self.ids is None else torch.cat([self.ids, new], 1)
        omp = self.model.cfg.longrope_reset
        past = self.cache.length()
        if omp is not None and past > 0 and full.shape[1] >= omp + 1 and past <= omp:
            self.cache = clm.KVCache()
            self.resets.append(full.shape[1])
            logits = self.model(full, cache=self.cache)[:, -new.shape[1]:]
        else:
            logits = self.model(new, cache=self.cache)
        self.ids = full
        return logits


@torch.no_grad()
def kv_logits(model, ids, prefill):
    """Logits (B, T, V) of ids through the generate path: ids[:, :prefill] in one call, then one token per call."""
    out = []
    for b in range(ids.shape[0]):
        s = Session(model)
        parts = [s.append(ids[b:b + 1, :prefill])]
        for t in range(prefill, ids.shape[1]):
            parts.append(s.append(ids[b:b + 1, t:t + 1]))
        out.append(torch.cat(parts, 1))
    return torch.cat(out, 0)


@torch.no_grad()
def greedy(model, prompt, max_new_tokens):
    """Greedy continuation of prompt (1, P) through the generate path. Returns (ids (N,) int64, margins (N,) float64
    = top-1 minus top-2 logit, step logits (N, V): row n chose ids[n])."""
    s = Session(model)
    logits = s.append(prompt)[:, -1]
    ids, margins, steps = [], [], []
    for n in range(max_new_tokens):
        top = torch.topk(logits, 2, dim=-1).values
        margins.append(float(top[0, 0] - top[0, 1]))
        steps.append(logits[0])
        nxt = logits.argmax(-1)
        ids.append(int(nxt))
        if n + 1 < max_new_tokens:
            logits = s.append(nxt.view(1, 1))[:, -1]
    return torch.tensor(ids), torch.tensor(margins, dtype=torch.float64), torch.stack(steps)


# ------------------------------------------------------------------------------------------------
# Self-test
# ------------------------------------------------------------------------------------------------

def _self_test():
    torch.manual_seed(0)
    # RoPE tables against direct formulas (float64 where HF's float32 chain is not the point).
    inv, att = rope_default(8, 10000.0)
    assert torch.equal(inv, clm.rope_inv_freq(8, 10000.0)) and att == 1.0
    inv_l, _ = rope_linear(8, 10000.0, 4.0)
    assert torch.allclose(inv_l * 4, inv, rtol=1e-7, atol=0)
    # dynamic: the default at seq_len <= max; the NTK base beyond.
    assert torch.equal(rope_dynamic(16, 10000.0, 2.0, 32, 32)[0], rope_default(16, 10000.0)[0])
    d64 = 1 / ((10000.0 * (2.0 * 48 / 32 - 1) ** (16 / 14)) ** (torch.arange(0, 16, 2).double() / 16))
    assert torch.allclose(rope_dynamic(16, 10000.0, 2.0, 32, 48)[0].double(), d64, rtol=3e-7, atol=0)
    # llama3: high frequencies kept, low ones divided by factor, the middle interpolated.
    inv3, _ = rope_llama3(16, 10000.0, 8.0, 1.0, 4.0, 32)
    base = rope_default(16, 10000.0)[0]
    wl = 2 * math.pi / base.double()
    for i in range(8):
        if wl[i] < 8:
            assert inv3[i] == base[i]
        elif wl[i] > 32:
            assert torch.isclose(inv3[i], base[i] / 8, rtol=1e-6)
        else:
            assert base[i] / 8 < inv3[i] < base[i]
    # yarn: extrapolated (high freq) dims kept, interpolated ones / factor; attention factor 0.1 ln f + 1.
    invy, atty = rope_yarn(16, 10000.0, 4.0, 64)
    assert abs(atty - (0.1 * math.log(4) + 1)) < 1e-15
    assert torch.isclose(invy[0], base[0]) and torch.isclose(invy[-1], base[-1] / 4, rtol=1e-6)
    # longrope: short below / at original_max, long above.
    sf, lf = [1.0, 1.5, 2.0], [3.0, 4.0, 5.0]
    s_inv = rope_longrope(6, 10000.0, sf, lf, 16, 16)[0]
    l_inv = rope_longrope(6, 10000.0, sf, lf, 16, 17)[0]
    assert torch.allclose(s_inv * torch.tensor(sf), rope_default(6, 10000.0)[0], rtol=1e-6)
    assert torch.allclose(l_inv * torch.tensor(lf), rope_default(6, 10000.0)[0], rtol=1e-6)
    assert abs(longrope_attention_factor(64, 16) - math.sqrt(1 + math.log(4) / math.log(16))) < 1e-15
    # Partial rotary: the pass-through dims are untouched; full R = D is apply_rope of causal_lm.
    x = torch.randn(2, 5, 3, 8)
    cos, sin = rope_cos_sin(torch.arange(5), rope_default(4, 100.0)[0], 1.0, torch.float32)
    y = apply_rope_partial(x, cos, sin)
    assert torch.equal(y[..., 4:], x[..., 4:])
    cos8, sin8 = rope_cos_sin(torch.arange(5), rope_default(8, 100.0)[0], 1.0, torch.float32)
    ref = clm.apply_rope(x, clm.rope_angles(torch.arange(5), rope_default(8, 100.0)[0]).unsqueeze(0), False)
    assert torch.allclose(apply_rope_partial(x, cos8, sin8), ref, atol=1e-6)
    # Each family: 4.x and 5.x configs parse to the same math; KV cache == recomputation where HF's is.
    base_cfg = {"vocab_size": 31, "hidden_size": 16, "intermediate_size": 24, "num_hidden_layers": 3,
                "num_attention_heads": 4, "num_key_value_heads": 2, "rms_norm_eps": 1e-5, "max_position_embeddings": 64,
                "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": None}
    variants = [
        {"model_type": "llama", "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                                 "high_freq_factor": 4.0, "original_max_position_embeddings": 16}},
        {"model_type": "qwen3", "head_dim": 8, "tie_word_embeddings": True},
        {"model_type": "mistral", "sliding_window": 3, "head_dim": 6},
        {"model_type": "gemma3_text", "head_dim": 8, "sliding_window": 3, "sliding_window_pattern": 2,
         "query_pre_attn_scalar": 10, "final_logit_softcapping": 4.0,
         "rope_scaling": {"rope_type": "linear", "factor": 2.0}, "pad_token_id": 0},
        {"model_type": "phi3", "num_attention_heads": 2, "num_key_value_heads": 1, "partial_rotary_factor": 0.5,
         "sliding_window": 4,
         "original_max_position_embeddings": 8, "rope_scaling": {"type": "longrope", "short_factor": [1.0, 1.2],
                                                                 "long_factor": [2.0, 3.0]}},
        {"model_type": "smollm3", "no_rope_layers": [1, 0, 1], "use_sliding_window": True, "sliding_window": 3},
    ]
    ids = torch.randint(0, 31, (2, 11))
    for v in variants:
        d4 = dict(base_cfg, **v)
        c4, c5 = config_from_hf(d4), config_from_hf(hf_config_v5(d4))
        assert c4 == c5, (v["model_type"], c4, c5)
        m = FamilyLM(c4).eval()
        with torch.no_grad():
            for p in m.parameters():
                p.copy_(torch.randn(p.shape) * (0.3 if p.dim() == 1 else 1 / math.sqrt(p.shape[-1])))
        assert list(hf_state_dict(m)) == list(expected_param_shapes(m.cfg))
        with torch.no_grad():
            full = m(ids)
            step = kv_logits(m, ids, 4)
            m64 = load_state_dict_hf(FamilyLM(c4).double().eval(), hf_state_dict(m))
            d64 = float((m64(ids) - full.double()).abs().max())
        d = float((full - step).abs().max())
        if v["model_type"] == "phi3":            # crossing original_max (8): positions < 8 used the short factors
            assert d > 1e-3 and float((full[:, 8:] - step[:, 8:]).abs().max()) < 1e-5, d
        else:
            assert d < 1e-5, (v["model_type"], d)
        assert d64 < 1e-4, (v["model_type"], d64)
    # Refusals name the key.
    for patch, key in ((dict(model_type="gemma3"), "model_type"),
                       (dict(model_type="llama", rope_scaling={"rope_type": "longrope", "short_factor": [1.0]}),
                        "rope_scaling.rope_type"),
                       (dict(model_type="llama", attn_logit_softcapping=30.0), "attn_logit_softcapping"),
                       (dict(model_type="gemma3_text", head_dim=4, attn_logit_softcapping=30.0), "attn_logit_softcapping"),
                       (dict(model_type="qwen3", use_sliding_window=True), "use_sliding_window"),
                       (dict(model_type="smollm3", no_rope_layers=[1, 0]), "no_rope_layers"),
                       (dict(model_type="phi3", rope_scaling={"type": "longrope", "short_factor": [1.0],
                                                              "long_factor": [1.0, 1.0]}), "rope_scaling.short_factor")):
        try:
            config_from_hf(dict(base_cfg, **patch))
        except ValueError as e:
            assert f"config.{key}" in str(e), (key, str(e))
        else:
            raise AssertionError(f"{patch} accepted")
    print("families self-test passed")


if __name__ == "__main__":
    _self_test()
