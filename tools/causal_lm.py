#!/usr/bin/python3
"""A reference decoder-only causal LM (Hugging Face's LlamaForCausalLM / Qwen2ForCausalLM) in torch 1.13.

The oracle for attnwasm's causal-LM family (issue 24) and the model tools/models/train_lm.py trains.
Written from the formulas of HF's modeling_llama.py / modeling_qwen2.py and torchtune's
RotaryPositionalEmbeddings; no code of theirs is copied. Not a runtime dependency, not a general
HF loader: the default RoPE only, no rope_scaling, no sliding windows, SiLU only.

Shapes: B batch, T tokens in this call, P tokens already in the KV cache, S = P + T keys,
E hidden_size, H num_attention_heads, Hkv num_key_value_heads (H % Hkv == 0), D head_dim
(default E // H; may differ from it), F intermediate_size, V vocab_size.

The model, per token sequence ids (B, T):
  x = embed_tokens[ids]                                              (B, T, E)
  per layer i:
    h = RMSNorm_in(x)
    q = q_proj(h) -> (B, T, H, D);  k, v = k_proj(h), v_proj(h) -> (B, T, Hkv, D)
    q, k = RoPE(q, pos), RoPE(k, pos)        pos = P, P+1, ..., P+T-1 (or given position ids)
    K, V = cat(cache K, k), cat(cache V, v)                          (B, S, Hkv, D)
    a = softmax(q K^T * D^-0.5 + causal) V, key head j // (H/Hkv) for query head j
        (HF's repeat_kv = repeat_interleave over heads); causal: query t sees keys 0..P+t
        (torch's causal_lower_right for T != S)
    x = x + o_proj(a reshaped (B, T, H*D))
    x = x + down_proj(silu(gate_proj(RMSNorm_post(x))) * up_proj(RMSNorm_post(x)))
  logits = lm_head(RMSNorm_final(x))   (tie_word_embeddings: lm_head.weight = embed_tokens.weight)

Conventions (the numbers the C++ side must reproduce; each deliberate):
  RMSNorm  y = (x * rsqrt(mean(x^2 over the normalised dims) + eps)) * weight: the reciprocal root r
           is computed once per row, x is multiplied by r FIRST, then by weight. This is the order of
           torch.nn.RMSNorm (ATen rms_norm: upcast.mul(rsqrt(pow(2).mean + eps)).type_as(x).mul(w)),
           of HF's LlamaRMSNorm (weight * (x * rsqrt(var + eps)).to(dtype)) and of torchtune. The
           other order, x * (r * weight), rounds differently by up to an ulp and (for 16-bit
           activations) skips the cast between the two products; we do not use it.
           eps None = torch.finfo(torch.float32).eps = 2^-23 (torch's None uses the input dtype's
           eps; this module keeps float32's even in its float64 path, so that path models the
           float32 runtime).
  RoPE     inv_freq[i] = 1 / (base ** (float32(2i) / D)), i < D/2, all in float32 (HF's default rope
           init and torchtune's theta are this same expression); angle[p, i] = float32(p) * inv_freq[i]
           rounded to float32 (HF: a K=1 float32 matmul, torchtune: a float32 outer product: one
           product, one rounding). cos/sin of that float32 angle (in float32 by torch; our float64
           path takes the float64 cos/sin of the same float32 angle). The angle must be formed in
           float32: at p ~ 4000 one float32 ulp of the angle is 2.4e-4, far above our tolerances.
           Two pairings: "half" (HF rotate_half, interleaved=False): pairs (i, i + D/2),
             out[i] = x[i] cos_i - x[i+D/2] sin_i,   out[i+D/2] = x[i+D/2] cos_i + x[i] sin_i;
           "interleaved" (torchtune, interleaved=True): pairs (2i, 2i+1),
             out[2i] = x[2i] cos_i - x[2i+1] sin_i,  out[2i+1] = x[2i+1] cos_i + x[2i] sin_i.
           HF's Llama/Qwen2 checkpoints use "half" (SmolLM's config key rope_interleaved is ignored
           by HF and here).
  Tied     tie_word_embeddings true: logits = h @ embed_tokens.weight^T and the checkpoint has no
           lm_head.weight (HF's save_pretrained omits it); a state dict that has one is accepted
           on load only if equal to the embedding.
  Biases   qwen2: q/k/v with bias, o_proj without (HF Qwen2Attention). llama: q/k/v AND o_proj
           with bias iff attention_bias (HF LlamaAttention puts config.attention_bias on all four);
           gate/up/down with bias iff mlp_bias (llama only; default false).
  Scale    D ** -0.5 (HF's self.scaling), applied to q·k.

API (everything returns fresh tensors owned by the caller):
  config_from_hf(dict) -> LMConfig            validate a HF config.json dict (refuses what we cannot run)
  CausalLM(cfg)                               nn.Module; state_dict keys = HF's names exactly
  model(ids, positions=None, cache=None, attentions=None)
                                              logits (B, T, V); cache (KVCache) is extended in place;
                                              attentions: a list that gets each layer's weights (B, H, T, S)
  model.double()                              the float64 path (RoPE angles still formed in float32)
  KVCache(); prefill/step helpers; greedy(model, ids, n) -> (ids, margins)
  expected_param_shapes(cfg) -> OrderedDict name -> shape (HF order)
  hf_config_dict(cfg, torch_dtype, ...) -> the config.json dict HF's save_pretrained writes
  load_state_dict_hf(model, sd)               strict, HF names; tied lm_head dropped
  quantize_weight(w, bits) / quantize_activations(a, bits) / quantize_model(model, bits)
                                              the twin of attnwasm's q8 / q4 / q4a16 weights (loadModel's dtype):
                                              see "Quantized weights" below and src/kernels/qgemm.h
  self-test: /usr/bin/python3 tools/causal_lm.py
"""

import collections
import math
import re

import torch
import torch.nn as nn
import torch.nn.functional as F

FLOAT32_EPS = float(torch.finfo(torch.float32).eps)  # 1.1920928955078125e-07 = 2^-23
# Tensors a HF checkpoint may hold that are not parameters: older Llama checkpoints saved each
# layer's RoPE table; HF ignores it on load (_keys_to_ignore_on_load_unexpected), and so do we.
IGNORED_KEYS = re.compile(r"model\.layers\.\d+\.self_attn\.rotary_emb\.inv_freq")

# ------------------------------------------------------------------------------------------------
# Config
# ------------------------------------------------------------------------------------------------

MODEL_TYPES = ("llama", "qwen2")
# HF's defaults (LlamaConfig / Qwen2Config) for keys a config.json may omit.
_DEFAULTS = {
    "llama": {"rms_norm_eps": 1e-6, "rope_theta": 10000.0, "max_position_embeddings": 2048,
              "tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False, "hidden_act": "silu"},
    "qwen2": {"rms_norm_eps": 1e-6, "rope_theta": 10000.0, "max_position_embeddings": 32768,
              "tie_word_embeddings": False, "hidden_act": "silu"},
}


class LMConfig:
    """The validated fields the model needs (attribute names = HF's keys)."""

    FIELDS = ("model_type", "vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers",
              "num_attention_heads", "num_key_value_heads", "head_dim", "rms_norm_eps", "rope_theta",
              "max_position_embeddings", "tie_word_embeddings", "attention_bias", "mlp_bias", "hidden_act")

    def __init__(self, **kw):
        for k in self.FIELDS:
            setattr(self, k, kw[k])

    @property
    def qkv_bias(self):
        return self.model_type == "qwen2" or self.attention_bias

    @property
    def o_bias(self):
        return self.model_type == "llama" and self.attention_bias

    def as_dict(self):
        return collections.OrderedDict((k, getattr(self, k)) for k in self.FIELDS)

    def __repr__(self):
        return "LMConfig(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in self.FIELDS) + ")"


def _int(d, key, lo, hi):
    v = d.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != int(v) or not lo <= v <= hi:
        raise ValueError(f"config.{key}: expected an integer in [{lo}, {hi}], got {v!r}")
    return int(v)


def _bool(d, key, default):
    v = d.get(key, default)
    if not isinstance(v, bool):
        raise ValueError(f"config.{key}: expected a boolean, got {v!r}")
    return v


def _pos_number(d, key, default):
    v = d.get(key, default)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 0:
        raise ValueError(f"config.{key}: expected a finite number > 0, got {v!r}")
    return float(v)


def config_from_hf(d):
    """LMConfig from a HF config.json dict; ValueError naming the key for anything we cannot run
    exactly (another model_type or hidden_act, rope_scaling, sliding windows, partial rotary, ...).
    Keys not read here (architectures, torch_dtype, bos/eos ids, initializer_range, use_cache, ...)
    are ignored, as HF's modelling code ignores them."""
    if not isinstance(d, dict):
        raise ValueError(f"config: expected a JSON object, got {type(d).__name__}")
    mt = d.get("model_type")
    if mt not in MODEL_TYPES:
        raise ValueError(f"config.model_type: expected one of {MODEL_TYPES}, got {mt!r}")
    dft = _DEFAULTS[mt]
    act = d.get("hidden_act", dft["hidden_act"])
    if act != "silu":
        raise ValueError(f"config.hidden_act: expected \"silu\", got {act!r}")
    rs = d.get("rope_scaling")
    if rs is not None and not (isinstance(rs, dict) and set(rs) <= {"rope_type", "type"}
                               and rs.get("rope_type", rs.get("type")) == "default"):
        raise ValueError(f"config.rope_scaling: only the default RoPE (null or {{\"rope_type\": \"default\"}}) "
                         f"is supported, got {rs!r}")
    rp = d.get("rope_parameters")
    if rp is not None:
        # transformers 5.x: {"rope_theta": base, "rope_type": "default"} (and no top-level rope_theta).
        if not isinstance(rp, dict) or rp.get("rope_type", rp.get("type", "default")) != "default":
            raise ValueError(f"config.rope_parameters: only rope_type \"default\" is supported, got {rp!r}")
        extra = set(rp) - {"rope_type", "type", "rope_theta", "partial_rotary_factor"}
        if extra:
            raise ValueError(f"config.rope_parameters.{sorted(extra)[0]}: not a key of the default RoPE")
        if rp.get("partial_rotary_factor", 1.0) != 1.0:
            raise ValueError(f"config.rope_parameters.partial_rotary_factor: expected 1, got {rp['partial_rotary_factor']!r}")
    if d.get("partial_rotary_factor", 1.0) != 1.0:
        raise ValueError(f"config.partial_rotary_factor: expected 1.0, got {d['partial_rotary_factor']!r}")
    if d.get("pretraining_tp", 1) != 1:
        raise ValueError(f"config.pretraining_tp: expected 1, got {d['pretraining_tp']!r}")
    if mt == "qwen2":
        if d.get("use_sliding_window", False):
            raise ValueError("config.use_sliding_window: sliding-window attention is not supported, got true")
        for i, t in enumerate(d.get("layer_types") or []):
            if t != "full_attention":
                raise ValueError(f"config.layer_types[{i}]: expected \"full_attention\", got {t!r}")
    if mt == "llama" and d.get("mlp_bias", False) not in (False, True):
        raise ValueError(f"config.mlp_bias: expected a boolean, got {d['mlp_bias']!r}")
    E = _int(d, "hidden_size", 1, 1 << 16)
    H = _int(d, "num_attention_heads", 1, 1024)
    Hkv = _int(d, "num_key_value_heads", 1, H) if d.get("num_key_value_heads") is not None else H
    if H % Hkv:
        raise ValueError(f"config.num_key_value_heads: expected a divisor of num_attention_heads ({H}), got {Hkv}")
    if d.get("head_dim") is None:
        if E % H:
            raise ValueError(f"config.head_dim: absent, and hidden_size {E} is not a multiple of "
                             f"num_attention_heads {H}")
        D = E // H
    else:
        D = _int(d, "head_dim", 2, 1024)
    if D % 2:
        raise ValueError(f"config.head_dim: expected an even number (RoPE pairs), got {D}")
    # The base: rope_parameters.rope_theta (5.x) or rope_theta (4.x); both given must agree.
    theta = _pos_number(d, "rope_theta", dft["rope_theta"])
    if rp is not None and "rope_theta" in rp:
        inner = rp["rope_theta"]
        if isinstance(inner, bool) or not isinstance(inner, (int, float)) or not math.isfinite(inner) or inner <= 0:
            raise ValueError(f"config.rope_parameters.rope_theta: expected a finite number > 0, got {inner!r}")
        if "rope_theta" in d and inner != theta:
            raise ValueError(f"config.rope_parameters.rope_theta: {inner} differs from rope_theta {theta}")
        theta = inner
    V = _int(d, "vocab_size", 1, 1 << 22)
    # Special-token ids: an id of the vocabulary or null (eos_token_id also a list of ids), as HF checks them.
    for key in ("bos_token_id", "eos_token_id", "pad_token_id"):
        v = d.get(key)
        ids = v if key == "eos_token_id" and isinstance(v, list) else [v]
        for i, x in enumerate(ids):
            if x is None and not isinstance(v, list):
                continue
            if isinstance(x, bool) or not isinstance(x, (int, float)) or x != int(x) or not 0 <= x < V:
                at = f"{key}[{i}]" if isinstance(v, list) else key
                raise ValueError(f"config.{at}: expected an id in [0, {V - 1}] or null, got {x!r}")
    return LMConfig(
        model_type=mt, vocab_size=V, hidden_size=E,
        intermediate_size=_int(d, "intermediate_size", 1, 1 << 20),
        num_hidden_layers=_int(d, "num_hidden_layers", 1, 1024), num_attention_heads=H,
        num_key_value_heads=Hkv, head_dim=D, rms_norm_eps=_pos_number(d, "rms_norm_eps", dft["rms_norm_eps"]),
        rope_theta=theta,
        max_position_embeddings=_int(dict(d, max_position_embeddings=d.get(
            "max_position_embeddings", dft["max_position_embeddings"])), "max_position_embeddings", 1, 1 << 24),
        tie_word_embeddings=_bool(d, "tie_word_embeddings", dft["tie_word_embeddings"]),
        attention_bias=_bool(d, "attention_bias", False) if mt == "llama" else True,
        mlp_bias=_bool(d, "mlp_bias", False) if mt == "llama" else False,
        hidden_act="silu")


def hf_config_dict(cfg, torch_dtype="float32", bos_token_id=None, eos_token_id=None,
                   transformers_version="4.46.3"):
    """The config.json dict HF's save_pretrained writes for this config (transformers 4.46 keys;
    json.dumps(d, indent=2, sort_keys=True) + "\\n" gives the file as HF writes it)."""
    c = cfg if isinstance(cfg, LMConfig) else config_from_hf(cfg)
    d = {
        "architectures": ["LlamaForCausalLM" if c.model_type == "llama" else "Qwen2ForCausalLM"],
        "attention_dropout": 0.0, "bos_token_id": bos_token_id, "eos_token_id": eos_token_id,
        "hidden_act": "silu", "hidden_size": c.hidden_size, "initializer_range": 0.02,
        "intermediate_size": c.intermediate_size, "max_position_embeddings": c.max_position_embeddings,
        "model_type": c.model_type, "num_attention_heads": c.num_attention_heads,
        "num_hidden_layers": c.num_hidden_layers, "num_key_value_heads": c.num_key_value_heads,
        "rms_norm_eps": c.rms_norm_eps, "rope_scaling": None, "rope_theta": c.rope_theta,
        "tie_word_embeddings": c.tie_word_embeddings, "torch_dtype": torch_dtype,
        "transformers_version": transformers_version, "use_cache": True, "vocab_size": c.vocab_size,
    }
    if c.model_type == "llama":
        d.update({"attention_bias": c.attention_bias, "head_dim": c.head_dim, "mlp_bias": c.mlp_bias,
                  "pretraining_tp": 1})
    else:
        # Qwen2Config has no head_dim key (Qwen2Attention falls back to hidden // heads); write it
        # only when it differs, as a user's config would have to.
        if c.head_dim != c.hidden_size // c.num_attention_heads:
            d["head_dim"] = c.head_dim
        d.update({"max_window_layers": c.num_hidden_layers, "sliding_window": None,
                  "use_sliding_window": False})
    if bos_token_id is None:
        del d["bos_token_id"]
    if eos_token_id is None:
        del d["eos_token_id"]
    return d


def hf_config_dict_v5(cfg, dtype="float32", bos_token_id=None, eos_token_id=None, transformers_version="5.17.0"):
    """The config.json dict transformers 5.x writes: the RoPE base only in rope_parameters, "dtype" for
    "torch_dtype", layer_types for Qwen2 (every layer "full_attention" without sliding windows)."""
    d = hf_config_dict(cfg, torch_dtype=dtype, bos_token_id=bos_token_id, eos_token_id=eos_token_id,
                       transformers_version=transformers_version)
    del d["rope_theta"], d["rope_scaling"], d["torch_dtype"]
    d["dtype"] = dtype
    d["rope_parameters"] = {"rope_theta": cfg.rope_theta, "rope_type": "default"}
    if cfg.model_type == "qwen2":
        d["layer_types"] = ["full_attention"] * cfg.num_hidden_layers
    return d


def expected_param_shapes(cfg):
    """OrderedDict HF name -> shape, in the model's order (lm_head last, absent when tied)."""
    E, H, Hkv, D, F_ = cfg.hidden_size, cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim, \
        cfg.intermediate_size
    out = collections.OrderedDict()
    out["model.embed_tokens.weight"] = (cfg.vocab_size, E)
    for i in range(cfg.num_hidden_layers):
        p = f"model.layers.{i}."
        for n, rows in (("q", H * D), ("k", Hkv * D), ("v", Hkv * D)):
            out[p + f"self_attn.{n}_proj.weight"] = (rows, E)
            if cfg.qkv_bias:
                out[p + f"self_attn.{n}_proj.bias"] = (rows,)
        out[p + "self_attn.o_proj.weight"] = (E, H * D)
        if cfg.o_bias:
            out[p + "self_attn.o_proj.bias"] = (E,)
        for n, shape in (("gate", (F_, E)), ("up", (F_, E)), ("down", (E, F_))):
            out[p + f"mlp.{n}_proj.weight"] = shape
            if cfg.mlp_bias:
                out[p + f"mlp.{n}_proj.bias"] = (shape[0],)
        out[p + "input_layernorm.weight"] = (E,)
        out[p + "post_attention_layernorm.weight"] = (E,)
    out["model.norm.weight"] = (E,)
    if not cfg.tie_word_embeddings:
        out["lm_head.weight"] = (cfg.vocab_size, E)
    return out


# ------------------------------------------------------------------------------------------------
# Blocks
# ------------------------------------------------------------------------------------------------

class RMSNorm(nn.Module):
    """torch.nn.RMSNorm (torch >= 2.4) for torch 1.13: y = (x * rsqrt(mean(x^2) + eps)) * weight,
    the mean over the last len(normalized_shape) dims; eps None = float32 machine epsilon (see the
    file header for why not the input dtype's); key "weight" (ones at init)."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True):
        super().__init__()
        self.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(self.normalized_shape)) if elementwise_affine else None

    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        eps = FLOAT32_EPS if self.eps is None else self.eps
        r = torch.rsqrt(x.pow(2).mean(dims, keepdim=True) + eps)
        y = x * r
        return y * self.weight if self.weight is not None else y


def rope_inv_freq(dim, base):
    """float32 (dim // 2,): 1 / (base ** (float32(arange(0, dim, 2)) / dim)), as HF and torchtune."""
    return 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64)[: dim // 2].float() / dim))


def rope_angles(positions, inv_freq):
    """float32 (..., dim // 2) = float32(positions) * inv_freq, one float32 rounding per entry."""
    return positions.to(torch.float32).unsqueeze(-1) * inv_freq.to(torch.float32)


def apply_rope(x, angles, interleaved):
    """x (B, S, H, D) in its dtype; angles float32 (B or 1, S, D/2). cos/sin are taken in x's
    dtype from the float32 angles (float32: torch's cos; float64: the exact cos of that angle)."""
    ang = angles.to(x.dtype).unsqueeze(-2)                # (B|1, S, 1, D/2)
    cos, sin = torch.cos(ang), torch.sin(ang)
    half = x.shape[-1] // 2
    if interleaved:
        xs = x.reshape(*x.shape[:-1], half, 2)
        x0, x1 = xs[..., 0], xs[..., 1]
        return torch.stack([x0 * cos - x1 * sin, x1 * cos + x0 * sin], -1).flatten(-2)
    x0, x1 = x[..., :half], x[..., half:]
    return torch.cat([x0 * cos - x1 * sin, x1 * cos + x0 * sin], -1)


class RotaryPositionalEmbeddings(nn.Module):
    """torchtune's RotaryPositionalEmbeddings(dim, max_seq_len=4096, base=10000) with a choice of
    pairing: interleaved=True (torchtune, its default) or False (HF rotate_half).
    forward(x (B, S, H, D), input_pos=None | (B, S) | (S,)) -> same shape and dtype.
    No state: angles are recomputed per call (torchtune caches the same float32 values)."""

    def __init__(self, dim, max_seq_len=4096, base=10000, interleaved=True):
        super().__init__()
        if dim % 2:
            raise ValueError(f"dim: expected an even number, got {dim}")
        self.dim, self.max_seq_len, self.base, self.interleaved = dim, max_seq_len, base, interleaved

    def inv_freq(self):
        return rope_inv_freq(self.dim, self.base)

    def forward(self, x, input_pos=None):
        S = x.shape[1]
        pos = torch.arange(S) if input_pos is None else input_pos
        if int(pos.max()) >= self.max_seq_len or int(pos.min()) < 0:
            raise IndexError(f"input_pos: positions must be in [0, {self.max_seq_len})")  # torchtune indexes a cache
        ang = rope_angles(pos, self.inv_freq())
        if ang.dim() == 2:
            ang = ang.unsqueeze(0)
        return apply_rope(x, ang, self.interleaved)


def silu(x):
    return x * torch.sigmoid(x)


class KVCache:
    """Per-layer keys and values after RoPE, (B, S, Hkv, D), grown by concatenation."""

    def __init__(self):
        self.k, self.v = {}, {}

    def length(self):
        return next(iter(self.k.values())).shape[1] if self.k else 0

    def update(self, layer, k, v):
        if layer in self.k:
            self.k[layer] = torch.cat([self.k[layer], k], 1)
            self.v[layer] = torch.cat([self.v[layer], v], 1)
        else:
            self.k[layer], self.v[layer] = k, v
        return self.k[layer], self.v[layer]


def causal_lower_right(L, S):
    """bool (L, S), True = may attend: query i sees keys 0 .. i + S - L (torch.nn.attention.bias
    causal_lower_right; rows with i + S - L < 0 see nothing)."""
    return torch.ones(L, S, dtype=torch.bool).tril(S - L)


def causal_window(L, S, window):
    """bool (L, S), True = may attend: causal_lower_right restricted to the last `window` keys
    (query i, at absolute position i + S - L, sees keys j with 0 <= i + S - L - j < window: the
    sliding-window mask of HF's Mistral / Qwen2 sliding_window)."""
    return causal_lower_right(L, S) & ~torch.ones(L, S, dtype=torch.bool).tril(S - L - window)


def causal_upper_left(L, S):
    """bool (L, S), True = may attend: query i sees keys 0 .. i (torch's is_causal=True)."""
    return torch.ones(L, S, dtype=torch.bool).tril(0)


class Attention(nn.Module):
    def __init__(self, cfg, layer_idx, rope_interleaved=False):
        super().__init__()
        self.layer_idx = layer_idx
        self.H, self.Hkv, self.D = cfg.num_attention_heads, cfg.num_key_value_heads, cfg.head_dim
        self.theta = cfg.rope_theta
        self.rope_interleaved = rope_interleaved
        self.window = None            # set by CausalLM(attention_window=...)
        E = cfg.hidden_size
        self.q_proj = nn.Linear(E, self.H * self.D, bias=cfg.qkv_bias)
        self.k_proj = nn.Linear(E, self.Hkv * self.D, bias=cfg.qkv_bias)
        self.v_proj = nn.Linear(E, self.Hkv * self.D, bias=cfg.qkv_bias)
        self.o_proj = nn.Linear(self.H * self.D, E, bias=cfg.o_bias)

    def forward(self, h, positions, cache=None, need_weights=False):
        """h (B, T, E); positions (B, T) or (T,) int; returns (B, T, E) [and weights (B, H, T, S)]."""
        B, T, _ = h.shape
        q = self.q_proj(h).view(B, T, self.H, self.D)
        k = self.k_proj(h).view(B, T, self.Hkv, self.D)
        v = self.v_proj(h).view(B, T, self.Hkv, self.D)
        ang = rope_angles(positions, rope_inv_freq(self.D, self.theta))
        if ang.dim() == 2:
            ang = ang.unsqueeze(0)
        q, k = apply_rope(q, ang, self.rope_interleaved), apply_rope(k, ang, self.rope_interleaved)
        if cache is not None:
            k, v = cache.update(self.layer_idx, k, v)
        S = k.shape[1]
        rep = self.H // self.Hkv
        qh = q.transpose(1, 2)                                            # (B, H, T, D)
        kh = k.transpose(1, 2).repeat_interleave(rep, dim=1)              # (B, H, S, D)
        vh = v.transpose(1, 2).repeat_interleave(rep, dim=1)
        scores = torch.matmul(qh, kh.transpose(-2, -1)) * (self.D ** -0.5)
        allow = causal_lower_right(T, S) if self.window is None else causal_window(T, S, self.window)
        scores = scores.masked_fill(~allow, float("-inf"))
        w = torch.softmax(scores, dim=-1)
        a = torch.matmul(w, vh).transpose(1, 2).reshape(B, T, self.H * self.D)
        out = self.o_proj(a)
        return (out, w) if need_weights else out


class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        E, F_ = cfg.hidden_size, cfg.intermediate_size
        self.gate_proj = nn.Linear(E, F_, bias=cfg.mlp_bias)
        self.up_proj = nn.Linear(E, F_, bias=cfg.mlp_bias)
        self.down_proj = nn.Linear(F_, E, bias=cfg.mlp_bias)

    def forward(self, x):
        return self.down_proj(silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, cfg, layer_idx, rope_interleaved=False):
        super().__init__()
        self.self_attn = Attention(cfg, layer_idx, rope_interleaved)
        self.mlp = MLP(cfg)
        self.input_layernorm = RMSNorm(cfg.hidden_size, eps=cfg.rms_norm_eps)
        self.post_attention_layernorm = RMSNorm(cfg.hidden_size, eps=cfg.rms_norm_eps)

    def forward(self, x, positions, cache=None, attentions=None):
        if attentions is None:
            x = x + self.self_attn(self.input_layernorm(x), positions, cache)
        else:
            a, w = self.self_attn(self.input_layernorm(x), positions, cache, need_weights=True)
            attentions.append(w)
            x = x + a
        return x + self.mlp(self.post_attention_layernorm(x))


class Backbone(nn.Module):
    """HF's LlamaModel / Qwen2Model: keys model.embed_tokens, model.layers.{i}, model.norm."""

    def __init__(self, cfg, rope_interleaved=False):
        super().__init__()
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.layers = nn.ModuleList([DecoderLayer(cfg, i, rope_interleaved) for i in range(cfg.num_hidden_layers)])
        self.norm = RMSNorm(cfg.hidden_size, eps=cfg.rms_norm_eps)


class CausalLM(nn.Module):
    """LlamaForCausalLM / Qwen2ForCausalLM. cfg: LMConfig or a HF config dict.
    rope_interleaved: False = HF (the only convention HF checkpoints use); True is offered for
    torchtune-style models and is not representable in a HF config.
    attention_window: None = full causal attention (HF Llama / Qwen2); W = each query sees only the
    last W keys, itself included (positions keep counting; no HF Llama key says this: an option
    for running a model trained on short windows past its training length)."""

    def __init__(self, cfg, rope_interleaved=False, attention_window=None):
        super().__init__()
        self.cfg = cfg if isinstance(cfg, LMConfig) else config_from_hf(cfg)
        self.model = Backbone(self.cfg, rope_interleaved)
        for layer in self.model.layers:
            layer.self_attn.window = attention_window
        self.lm_head = None if self.cfg.tie_word_embeddings else nn.Linear(
            self.cfg.hidden_size, self.cfg.vocab_size, bias=False)
        self.quantized = None         # "q8" / "q4" / "q4a16" after quantize_model: the head's input too

    def hidden(self, ids, positions=None, cache=None, attentions=None):
        """Final-normed hidden states (B, T, E). positions default to P .. P+T-1 (P = cache length).
        attentions: a list to which each layer appends its softmax weights (B, H, T, S)."""
        T = ids.shape[1]
        if positions is None:
            past = cache.length() if cache is not None else 0
            positions = torch.arange(past, past + T)
        x = self.model.embed_tokens(ids.long())
        for layer in self.model.layers:
            x = layer(x, positions, cache, attentions)
        return self.model.norm(x)

    def forward(self, ids, positions=None, cache=None, attentions=None):
        h = self.hidden(ids, positions, cache, attentions)
        w = self.model.embed_tokens.weight if self.lm_head is None else self.lm_head.weight
        if self.quantized is not None:
            h = quantize_activations(h, bits=self.quantized)
        return F.linear(h, w)


def load_state_dict_hf(model, sd):
    """Load a HF-named state dict strictly (shapes and key set checked, messages name the key).
    Tied models: an lm_head.weight present in sd must equal the embedding and is dropped.
    Keys matching IGNORED_KEYS are skipped; any other key the config does not name is refused."""
    want = expected_param_shapes(model.cfg)
    sd = collections.OrderedDict(sd)
    if model.cfg.tie_word_embeddings and "lm_head.weight" in sd:
        lm = sd.pop("lm_head.weight")
        if not torch.equal(lm.float(), sd["model.embed_tokens.weight"].float()):
            raise ValueError("lm_head.weight: tie_word_embeddings is true but lm_head.weight differs from "
                             "model.embed_tokens.weight")
    for k in want:
        if k not in sd:
            raise ValueError(f"{k}: missing from the state dict")
        if tuple(sd[k].shape) != tuple(want[k]):
            raise ValueError(f"{k}: expected shape {tuple(want[k])}, got {tuple(sd[k].shape)}")
    extra = [k for k in sd if k not in want and not IGNORED_KEYS.fullmatch(k)]
    if extra:
        raise ValueError(f"{extra[0]}: not a parameter of this configuration")
    dtype = next(model.parameters()).dtype
    model.load_state_dict({k: sd[k].to(dtype) for k in want}, strict=True)
    return model


def hf_state_dict(model):
    """The HF-named tensors of a CausalLM (no lm_head when tied), in expected_param_shapes order."""
    sd = model.state_dict()
    return collections.OrderedDict((k, sd[k]) for k in expected_param_shapes(model.cfg))


# ------------------------------------------------------------------------------------------------
# Quantized weights: the twin of attnwasm's loadModel(..., { dtype: "q8" | "q4" })
# ------------------------------------------------------------------------------------------------
# The arithmetic is specified at the top of src/kernels/qgemm.h (the scalar reference is
# src/kernels/qgemm_ref.cpp); in short:
#   weights      per output row and group of 32 consecutive inputs (k padded with zeros to a multiple
#                of 32): s = float32(max|w| / Q), Q = 127 (q8) or 7 (q4); q = round_half_even(float32(w / s))
#                clamped to [-Q, Q], 0 where s = 0. Every matrix: q/k/v/o, gate/up/down, the embedding
#                table (a looked-up row is float32(q * s)) and the head, tied or not. Norms and biases
#                stay float32.
#   activations  q8 and q4a16: per input row of each of those products: t = float32(max|a| / 32767),
#                x = round_half_even(float32(a * float32(32767 / max|a|))) as int16 (all 0 when max|a| = 0).
#                q4: per input row and group of 32 inputs: t = float32(max|a| / 127), x =
#                round_half_even(float32(a * float32(127 / max|a|))) as int8 (all 0 and t = 0 when
#                max|a| = 0 or 127 / max|a| overflows float32).
#   product      exact integer sums per group, scaled by s (q4: s * t) and accumulated in float32, then
#                * t (q8, q4a16) (+ bias).
# So the model is the float model run with W = q * s and a' = x * t: this twin computes exactly that
# (in float64 after model.double(), or float32). It differs from the runtime by float32 rounding, and
# that is amplified: an activation within a rounding error of a half-step goes to either int16
# neighbour, each such flip moves the next product's inputs by a step t, and after a layer or two any
# two correct implementations (this twin in float32 and in float64, too) differ by up to ~5e-5 of the
# logits' size, not ~1e-7 (measured, and the goldens' tolerance: tests/data/make_lm_quant_goldens.py).
# Every float32 quotient and product below is formed in float64 and rounded once to float32, which
# is the correctly rounded float32 result (53 >= 2 * 24 + 2 bits), whatever torch's kernels do.

QGROUP = 32                                   # inputs per weight group (kernels::kQGroup)
QMAX = {"q8": 127.0, "q4": 7.0, "q4a16": 7.0}  # largest |q| per weight type
A_QMAX = 32767.0                              # largest |x| of a quantized activation (int16)
A8_QMAX = 127.0                               # q4's: int8, per group of QGROUP inputs


def quantize_weight(w, bits, parts=False):
    """attnwasm's q8 / q4 quantization of a weight matrix w (n outputs, k inputs), as q_pack_row in
    src/kernels/qgemm_ref.cpp: per row and group of 32 inputs, s = float32(max|w| / Q) and
    q = round_half_even(float32(w / s)) in [-Q, Q] (0 where s = 0; a group holding a NaN or inf gets
    s = NaN, so its products are NaN). Returns W = q * s (n, k) in w's dtype: float32 rounds each
    product as q_unpack_row does (the runtime's embedding rows), float64 holds it exactly (what the
    integer products compute). parts=True: (W, q int8 (n, kq), s float32 (n, kq / 32)), kq = k
    rounded up to a multiple of 32."""
    if bits not in QMAX:
        raise ValueError(f"bits: expected one of {tuple(QMAX)}, got {bits!r}")
    if w.dim() != 2:
        raise ValueError(f"w: expected a matrix (n, k), got shape {tuple(w.shape)}")
    Q = QMAX[bits]
    n, k = w.shape
    kq = -(-k // QGROUP) * QGROUP
    w32 = F.pad(w.detach().float(), (0, kq - k)).view(n, kq // QGROUP, QGROUP)
    finite = torch.isfinite(w32).all(-1, keepdim=True)
    amax = w32.abs().nan_to_num(0.0, 0.0, 0.0).amax(-1, keepdim=True)
    s = torch.where(finite, (amax.double() / Q).float(), torch.tensor(float("nan")))
    ratio = (w32.double() / s.double()).float()                  # float32 w / s, rounded once
    q = torch.where(s > 0, torch.round(ratio).clamp(-Q, Q), torch.zeros(()))
    W = (q.to(w.dtype) * s.to(w.dtype)).view(n, kq)[:, :k]       # q * s in w's dtype
    if not parts:
        return W.contiguous()
    return W.contiguous(), q.view(n, kq).to(torch.int8), s.view(n, kq // QGROUP)


def quantize_activations(a, parts=False, bits="q8"):
    """attnwasm's quantization of a product's input rows (the last dim of a) for weights of type bits.
    q8 and q4a16: int16 per row, as i16_quantize_rows_ref in src/kernels/qgemm_ref.cpp: a is taken as
    float32 (the runtime's activations are float32), t = float32(max|a| / 32767), x =
    round_half_even(float32(a * inv)) with inv = float32(32767 / max|a|), clamped to [-32767, 32767];
    x = 0 where max|a| = 0; a row with a NaN or inf gets t = NaN. q4: int8 per group of 32, as
    quantize_activations_a8. Returns a' = x * t in a's dtype (float64: exactly); parts=True: (a', x int16,
    t float32 (..., 1)) (q4: quantize_activations_a8's parts)."""
    if bits == "q4":
        return quantize_activations_a8(a, parts)
    if bits not in QMAX:
        raise ValueError(f"bits: expected one of {tuple(QMAX)}, got {bits!r}")
    a32 = a.float()
    finite = torch.isfinite(a32).all(-1, keepdim=True)
    amax = a32.abs().nan_to_num(0.0, 0.0, 0.0).amax(-1, keepdim=True)
    t = torch.where(finite, (amax.double() / A_QMAX).float(), torch.tensor(float("nan")))
    inv = (A_QMAX / amax.double()).float()                       # inf where amax = 0 (masked below)
    x = torch.round((a32.double() * inv.double()).float()).clamp(-A_QMAX, A_QMAX)
    x = torch.where((amax > 0) & finite, x, torch.zeros(()))
    out = (x.double() * t.double()).to(a.dtype)
    return (out, x.to(torch.int16), t) if parts else out


def quantize_activations_a8(a, parts=False):
    """attnwasm's int8 quantization of a product's input rows for q4 weights, as i8_quantize_rows_ref in
    src/kernels/qgemm_ref.cpp: the last dim of a (float32) in groups of 32 (padded with zeros); per group
    t = float32(max|a| / 127), x = round_half_even(float32(a * inv)) with inv = float32(127 / max|a|),
    clamped to [-127, 127]; x = 0 and t = 0 where inv is not finite (max|a| = 0, or below ~3.7e-37); a
    group with a NaN or inf gets t = NaN. Returns a' = x * t in a's dtype (float64: exactly);
    parts=True: (a', x int8 (..., kq), t float32 (..., kq / 32))."""
    a32 = a.float()
    k = a32.shape[-1]
    kq = -(-k // QGROUP) * QGROUP
    g32 = F.pad(a32, (0, kq - k)).reshape(*a32.shape[:-1], kq // QGROUP, QGROUP)
    finite = torch.isfinite(g32).all(-1, keepdim=True)
    amax = g32.abs().nan_to_num(0.0, 0.0, 0.0).amax(-1, keepdim=True)
    inv = (A8_QMAX / amax.double()).float()                      # float32 127 / max|a|, rounded once
    ok = finite & torch.isfinite(inv)
    t = torch.where(finite, torch.where(ok, (amax.double() / A8_QMAX).float(), torch.zeros(())),
                    torch.tensor(float("nan")))
    x = torch.round((g32.double() * torch.where(ok, inv, torch.zeros(())).double()).float())
    x = torch.where(ok, x.clamp(-A8_QMAX, A8_QMAX), torch.zeros(()))
    out = (x.double() * t.double()).reshape(*a32.shape[:-1], kq)[..., :k].to(a.dtype)
    if not parts:
        return out
    return out, x.reshape(*a32.shape[:-1], kq).to(torch.int8), t.squeeze(-1)


def _quantize_input(bits):
    return lambda module, args: (quantize_activations(args[0], bits=bits),) + tuple(args[1:])


def _round_row_to_float32(module, args, out):
    return out.float().to(out.dtype)


@torch.no_grad()
def quantize_model(model, bits):
    """The CausalLM as attnwasm runs it when loaded with dtype bits ("q8", "q4" or "q4a16"), in place:
    every nn.Linear's weight and the embedding table replaced by quantize_weight's q * s (so a
    tied head uses the quantized table, an untied lm_head its own), every Linear's input and the
    head's input quantized by quantize_activations(a, bits=bits), and each looked-up embedding row rounded to
    float32 (the runtime's float32(q * s)). Norm weights and biases are untouched. For the float64
    path call model.double() first (W = q * s is then exact). Returns the model."""
    if bits not in QMAX:
        raise ValueError(f"bits: expected one of {tuple(QMAX)}, got {bits!r}")
    if getattr(model, "quantized", None) is not None:
        raise ValueError(f"model: already quantized ({model.quantized})")
    for mod in model.modules():
        if isinstance(mod, nn.Linear):
            mod.weight.copy_(quantize_weight(mod.weight, bits))
            mod.register_forward_pre_hook(_quantize_input(bits))   # lm_head: CausalLM.forward quantizes h
    emb = model.model.embed_tokens
    emb.weight.copy_(quantize_weight(emb.weight, bits))
    emb.register_forward_hook(_round_row_to_float32)
    model.quantized = bits
    return model


# ------------------------------------------------------------------------------------------------
# Decoding helpers
# ------------------------------------------------------------------------------------------------

@torch.no_grad()
def greedy(model, ids, max_new_tokens):
    """Greedy continuation against a KV cache. ids (B, T). Returns (new ids (B, N) int64,
    margins (B, N) = top-1 minus top-2 logit at each step, in the model's dtype as float)."""
    cache = KVCache()
    logits = model(ids, cache=cache)[:, -1]
    out, margins = [], []
    for n in range(max_new_tokens):
        top = torch.topk(logits, 2, dim=-1).values
        margins.append((top[:, 0] - top[:, 1]).double())
        nxt = logits.argmax(-1)
        out.append(nxt)
        if n + 1 < max_new_tokens:
            logits = model(nxt.view(-1, 1), cache=cache)[:, -1]
    return torch.stack(out, 1), torch.stack(margins, 1)


@torch.no_grad()
def cached_logits(model, ids, prefill):
    """Logits (B, T, V) of ids through the KV cache: ids[:, :prefill] in one call, then one token
    per call. Equal to model(ids) up to summation order (the check that steps == recomputation)."""
    cache = KVCache()
    parts = [model(ids[:, :prefill], cache=cache)]
    for t in range(prefill, ids.shape[1]):
        parts.append(model(ids[:, t:t + 1], cache=cache))
    return torch.cat(parts, 1)


# ------------------------------------------------------------------------------------------------
# Self-test
# ------------------------------------------------------------------------------------------------

def _self_test():
    torch.manual_seed(0)
    # RoPE: the two pairings are the same rotation up to a permutation of the last dim.
    x = torch.randn(2, 5, 3, 8, dtype=torch.float64)
    pos = torch.tensor([[0, 1, 2, 3, 4], [7, 3, 100, 5, 4000]])
    perm = torch.tensor([0, 4, 1, 5, 2, 6, 3, 7])          # half-layout index of interleaved slot
    a = RotaryPositionalEmbeddings(8, 5000, 10000, interleaved=True)(x[..., perm], pos)
    b = RotaryPositionalEmbeddings(8, 5000, 10000, interleaved=False)(x, pos)
    assert torch.allclose(a, b[..., perm], atol=0, rtol=1e-15), "RoPE pairings disagree"
    # RoPE against the two upstream formulations written out independently (bit-exact in float32):
    # HF: cos/sin of cat(freqs, freqs) from a float32 matmul, q*cos + rotate_half(q)*sin;
    # torchtune: a float32 cache of (cos, sin) pairs indexed by position.
    D, base = 64, 500000
    xf = torch.randn(2, 9, 3, D)
    pf = torch.randint(0, 60000, (2, 9))
    inv = rope_inv_freq(D, base)
    freqs = (inv[None, :, None].expand(2, -1, 1) @ pf[:, None, :].float()).transpose(1, 2)
    emb = torch.cat((freqs, freqs), -1)
    rot = torch.cat((-xf[..., D // 2:], xf[..., :D // 2]), -1)
    hf = xf * emb.cos()[:, :, None, :] + rot * emb.sin()[:, :, None, :]
    assert torch.equal(hf, RotaryPositionalEmbeddings(D, 65536, base, interleaved=False)(xf, pf)), "RoPE vs HF"
    ang = torch.einsum("i,j->ij", torch.arange(65536, dtype=torch.float32), inv).float()
    cache = torch.stack([torch.cos(ang), torch.sin(ang)], -1)[pf].view(-1, 9, 1, D // 2, 2)
    xs = xf.reshape(*xf.shape[:-1], -1, 2)
    tt = torch.stack([xs[..., 0] * cache[..., 0] - xs[..., 1] * cache[..., 1],
                      xs[..., 1] * cache[..., 0] + xs[..., 0] * cache[..., 1]], -1).flatten(3)
    assert torch.equal(tt, RotaryPositionalEmbeddings(D, 65536, base, interleaved=True)(xf, pf)), "RoPE vs torchtune"
    # Attention with GQA ratio 1 and every position 0 (RoPE = identity) is nn.MultiheadAttention.
    acfg = config_from_hf(dict(model_type="llama", vocab_size=10, hidden_size=16, intermediate_size=8,
                               num_hidden_layers=1, num_attention_heads=4, num_key_value_heads=4, attention_bias=True))
    att, mha = Attention(acfg, 0), nn.MultiheadAttention(16, 4, batch_first=True)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.cat([att.q_proj.weight, att.k_proj.weight, att.v_proj.weight]))
        mha.in_proj_bias.copy_(torch.cat([att.q_proj.bias, att.k_proj.bias, att.v_proj.bias]))
        mha.out_proj.weight.copy_(att.o_proj.weight)
        mha.out_proj.bias.copy_(att.o_proj.bias)
        hx = torch.randn(2, 5, 16)
        d = (att(hx, torch.zeros(5, dtype=torch.long)) -
             mha(hx, hx, hx, attn_mask=torch.ones(5, 5, dtype=torch.bool).triu(1), need_weights=False)[0])
    assert d.abs().max() < 1e-6, d.abs().max()
    # RMSNorm: torch.nn.functional.layer_norm of the centred input is not RMSNorm; check the formula.
    n = RMSNorm(6, eps=None)
    y = torch.randn(3, 6)
    ref = y.double() / torch.sqrt(y.double().pow(2).mean(-1, keepdim=True) + FLOAT32_EPS)
    assert (n(y).double() - ref).abs().max() < 1e-6
    # A tiny model: KV cache == full recomputation; float64 path == float32 path.
    for mt, tied, bias in (("llama", False, True), ("qwen2", True, True), ("llama", True, False)):
        cfg = {"model_type": mt, "vocab_size": 23, "hidden_size": 16, "intermediate_size": 24,
               "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
               "tie_word_embeddings": tied, "attention_bias": bias, "rms_norm_eps": 1e-5}
        m = CausalLM(cfg).eval()
        assert list(hf_state_dict(m)) == list(expected_param_shapes(m.cfg))
        assert set(m.state_dict()) == set(expected_param_shapes(m.cfg)), sorted(m.state_dict())
        ids = torch.randint(0, 23, (2, 9))
        with torch.no_grad():
            full = m(ids)
            step = cached_logits(m, ids, 4)
            assert (full - step).abs().max() < 1e-5, (mt, (full - step).abs().max())
            m64 = CausalLM(cfg).double().eval()
            load_state_dict_hf(m64, hf_state_dict(m))
            assert (m64(ids) - full.double()).abs().max() < 1e-5
    # A window as long as the sequence is full attention; a shorter one changes the late positions only.
    mw = CausalLM(cfg, attention_window=9).eval()
    load_state_dict_hf(mw, hf_state_dict(m))
    mw3 = CausalLM(cfg, attention_window=3).eval()
    load_state_dict_hf(mw3, hf_state_dict(m))
    with torch.no_grad():
        assert torch.equal(mw(ids), m(ids))
        full, win = m(ids), mw3(ids)
        assert torch.equal(win[:, :3], full[:, :3]) and not torch.allclose(win[:, 3:], full[:, 3:])
        assert (cached_logits(mw3, ids, 4) - win).abs().max() < 1e-5
    assert torch.equal(causal_window(2, 5, 2), torch.tensor([[0, 0, 1, 1, 0], [0, 0, 0, 1, 1]], dtype=torch.bool))
    _self_test_quantized()
    print("causal_lm self-test passed")


def _self_test_quantized():
    import numpy as np

    def weight_ref(w, Q):          # q_pack_row + q_unpack_row element by element, numpy float32
        w = w.numpy().astype(np.float32)
        out = np.zeros_like(w)
        for r in range(w.shape[0]):
            for g0 in range(0, w.shape[1], QGROUP):
                grp = w[r, g0:g0 + QGROUP]
                s = np.float32(np.abs(grp).max()) / np.float32(Q)
                for i, v in enumerate(grp):
                    q = 0.0 if s == 0 else min(max(np.rint(v / s), -Q), Q)
                    out[r, g0 + i] = np.float32(q) * s
        return torch.from_numpy(out)

    def act_ref(a):                # i16_quantize_rows_ref element by element, numpy float32
        a = a.numpy().astype(np.float32)
        out = np.zeros(a.shape, np.float64)
        for i, row in enumerate(a):
            m = np.float32(np.abs(row).max())
            if m == 0:
                continue
            t, inv = m / np.float32(32767), np.float32(32767) / m
            out[i] = np.clip(np.rint(row * inv), -32767, 32767).astype(np.float64) * np.float64(t)
        return torch.from_numpy(out)

    g = torch.Generator().manual_seed(7)
    for bits in ("q8", "q4"):
        w = torch.randn(5, 72, generator=g)                 # k = 72: the last group is 8 inputs + 24 zeros
        w[1, 32:64] = 0                                     # an all-zero group: s = 0, q = 0
        W, q, s = quantize_weight(w, bits, parts=True)
        assert q.shape == (5, 96) and s.shape == (5, 3) and torch.equal(q[:, 72:], torch.zeros(5, 24, dtype=torch.int8))
        assert torch.equal(W, weight_ref(w, QMAX[bits])), bits
        assert s[1, 1] == 0 and torch.equal(W[1, 32:64], torch.zeros(32))
        assert int(q.abs().max()) == QMAX[bits] and ((W - w).abs() <= s.repeat_interleave(QGROUP, 1)[:, :72] / 2 * (1 + 1e-6)).all()
        W64 = quantize_weight(w.double(), bits)
        assert W64.dtype == torch.float64 and (W64 - W.double()).abs().max() <= 1e-6 * W.abs().max()
    # Ties go to even: amax 7 -> s = 1 (q4); 0.5 -> 0, 1.5 -> 2, 2.5 -> 2, -2.5 -> -2.
    ties = torch.tensor([[7.0, 0.5, 1.5, 2.5, -0.5, -2.5, 3.5, -6.5]])
    assert quantize_weight(ties, "q4").tolist() == [[7.0, 0.0, 2.0, 2.0, -0.0, -2.0, 4.0, -6.0]]
    bad = torch.ones(2, 40)
    bad[0, 3] = float("inf")
    Wb = quantize_weight(bad, "q8")
    assert Wb[0, :32].isnan().all() and torch.equal(Wb[0, 32:], torch.ones(8)) and torch.equal(Wb[1], torch.ones(40))
    a = torch.randn(4, 72, generator=g) * 3
    a[2] = 0
    ap, x, t = quantize_activations(a, parts=True)
    assert ap.dtype == torch.float32 and x.dtype == torch.int16 and int(x.abs().max()) == 32767
    assert torch.equal(quantize_activations(a.double()), act_ref(a)) and torch.equal(ap[2], torch.zeros(72))
    # |a' - a| <= t/2 plus the float32 roundings of inv, t and a * inv (a few ulps of 32767 t)
    assert ((quantize_activations(a.double()) - a.double()).abs() <= t.double() * 0.51).all()
    # q4's int8 activations per group of 32, element by element (numpy float32): zero, tiny, NaN groups.
    def act8_ref(a):
        a = a.numpy().astype(np.float32)
        out = np.zeros(a.shape, np.float64)
        for i, row in enumerate(a):
            for g0 in range(0, row.shape[0], QGROUP):
                grp = row[g0:g0 + QGROUP]
                if not np.isfinite(grp).all():
                    out[i, g0:g0 + QGROUP] = np.nan
                    continue
                m = np.float32(np.abs(grp).max())
                with np.errstate(divide="ignore", over="ignore"):
                    inv = np.float32(127) / m
                if not np.isfinite(inv):
                    continue
                t = m / np.float32(127)
                out[i, g0:g0 + QGROUP] = np.clip(np.rint(grp * inv), -127, 127).astype(np.float64) * np.float64(t)
        return torch.from_numpy(out)
    a8 = torch.randn(5, 72, generator=g) * 3
    a8[1, 32:64] = 0
    a8[2, :32] = 1e-38
    a8[3, 40] = float("nan")
    a8[4, :8] = 1000.0
    ap8, x8, t8 = quantize_activations(a8, parts=True, bits="q4")
    assert x8.dtype == torch.int8 and x8.shape == (5, 96) and t8.shape == (5, 3) and int(x8.abs().max()) == 127
    got8, want8 = quantize_activations(a8.double(), bits="q4"), act8_ref(a8)
    assert torch.equal(got8.isnan(), want8.isnan()) and torch.equal(got8.nan_to_num(), want8.nan_to_num())
    assert t8[1, 1] == 0 and t8[2, 0] == 0 and t8[3, 1].isnan() and torch.equal(x8[:, 72:], torch.zeros(5, 24, dtype=torch.int8))
    ok8 = ~got8.isnan()
    assert ((got8 - a8.double()).abs()[ok8] <= (t8.double().repeat_interleave(QGROUP, 1)[:, :72] * 0.51 + 1e-36)[ok8]).all()
    # A model: quantize_model is the float model with W = q * s and a' = x * t; float32 and float64
    # twins agree; q8 is close to the float model, q4 further; the original is untouched.
    for mt, tied in (("llama", True), ("qwen2", False)):
        cfg = {"model_type": mt, "vocab_size": 37, "hidden_size": 72, "intermediate_size": 40,
               "num_hidden_layers": 2, "num_attention_heads": 3, "num_key_value_heads": 1,
               "tie_word_embeddings": tied, "rms_norm_eps": 1e-5}
        m = CausalLM(cfg).eval()
        ids = torch.randint(0, 37, (2, 7), generator=g)
        with torch.no_grad():
            ref = m(ids).double()
            d = {}
            for bits in ("q8", "q4", "q4a16"):
                m64 = load_state_dict_hf(CausalLM(cfg).double().eval(), hf_state_dict(m))
                m32 = load_state_dict_hf(CausalLM(cfg).eval(), hf_state_dict(m))
                quantize_model(m64, bits), quantize_model(m32, bits)
                got = m64(ids)
                # float32 and float64 activations round to different int16 values here and there (a chain:
                # each flip moves the next layer's inputs by about one step t): ~1e-5 of the logits' size.
                d32 = float((m32(ids).double() - got).abs().max())
                assert d32 < 1e-4 * max(1.0, float(got.abs().max())), (mt, bits, d32)
                assert (cached_logits(m64, ids, 3) - got).abs().max() < 1e-9, (mt, bits)
                d[bits] = float((got - ref).abs().max())
                e = m64.model.embed_tokens.weight
                assert torch.equal(e, quantize_weight(hf_state_dict(m)["model.embed_tokens.weight"].double(), bits))
            assert 0 < d["q8"] < d["q4a16"] < 0.5 * float(ref.abs().max()), (mt, d)
            assert 0 < d["q4"] < 0.5 * float(ref.abs().max()), (mt, d)


if __name__ == "__main__":
    _self_test()
