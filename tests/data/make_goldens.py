#!/usr/bin/python3
"""Golden files for the attention tests: tests/data/goldens/{sdpa,mha}.json.

Not a test itself: it writes reference inputs/outputs that the C++ and JS tests load.
Run with Debian's torch (1.13): `/usr/bin/python3 tests/data/make_goldens.py`.
Deterministic (fixed seed, one thread): running it twice gives identical bytes.
Semantics are those of PyTorch 2.x; every spot where torch 1.13 differs is commented.

Tensor encoding in JSON: {"shape": [..], "dtype": "float32" | "bool", "data": [flat row-major]}.
float32 data are the exact f32 values written as JSON numbers (the Python float of the f32 value,
so parsing the number gives that f32 exactly); non-finite values are the strings "inf", "-inf",
"nan". bool data are 0/1.
"""

import json
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

SEED = 20240607
GENERATOR = "tests/data/make_goldens.py"
OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "goldens")

# Tolerance for "our float64 reference agrees with torch's float32 computation".
REF_TOL = 1e-5

NEG_INF = float("-inf")


# ----------------------------------------------------------------------------------------------
# JSON encoding
# ----------------------------------------------------------------------------------------------

def _num(x):
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def enc(t):
    """Tensor -> {"shape", "dtype", "data"}. Float tensors are rounded to float32 first."""
    if t is None:
        return None
    t = t.detach()
    if t.dtype == torch.bool:
        return {"shape": list(t.shape), "dtype": "bool",
                "data": [int(b) for b in t.reshape(-1).tolist()]}
    t32 = t.to(torch.float32).contiguous()
    # tolist() of a float32 tensor gives Python floats equal to the f32 values exactly.
    return {"shape": list(t32.shape), "dtype": "float32",
            "data": [_num(x) for x in t32.reshape(-1).tolist()]}


def f32(x):
    """A Python float rounded to the nearest float32 (so JSON carries an exact f32 value)."""
    return float(torch.tensor(x, dtype=torch.float32).item())


def write_json(path, header, cases):
    # One case per line: readable diffs, compact numbers. allow_nan=False guards against a
    # stray float NaN (non-finite values must already be strings).
    parts = []
    for key, val in header.items():
        parts.append(json.dumps(key) + ":" + json.dumps(val, separators=(",", ":"), allow_nan=False))
    body = ",\n".join(json.dumps(c, separators=(",", ":"), allow_nan=False) for c in cases)
    text = "{" + ",".join(parts) + ',"cases":[\n' + body + "\n]}\n"
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    return len(text.encode("utf-8"))


# ----------------------------------------------------------------------------------------------
# Shared math
# ----------------------------------------------------------------------------------------------

def safe_softmax(x):
    """softmax over the last dim, except rows whose every entry is -inf give all zeros.

    This is our deliberate choice (= PyTorch >= 2.5 `_safe_softmax` in the SDPA math path);
    plain torch.softmax gives NaN for such rows.
    """
    fully_masked = torch.isneginf(x).all(dim=-1, keepdim=True)
    w = torch.softmax(x, dim=-1)
    return torch.where(fully_masked, torch.zeros_like(w), w)


def has_fully_masked_row(scores):
    return bool(torch.isneginf(scores).all(dim=-1).any())


def max_abs_diff_finite(a, b):
    """max |a - b| over positions where b (torch) is finite; a and b must agree on non-finite."""
    a = a.detach().double()
    b = b.detach().double()
    assert a.shape == b.shape, (a.shape, b.shape)
    fin = torch.isfinite(b)
    if not bool(fin.any()):
        return 0.0
    return float((a[fin] - b[fin]).abs().max())


# ----------------------------------------------------------------------------------------------
# scaled_dot_product_attention (torch 1.13 has no public F.scaled_dot_product_attention)
# ----------------------------------------------------------------------------------------------

def ref_sdpa(query, key, value, attn_mask=None, is_causal=False, scale=None, enable_gqa=False):
    """PyTorch 2.x F.scaled_dot_product_attention, documented math definition, in float64.

    query (..., L, E), key (..., S, E), value (..., S, Ev); leading dims broadcast.
    attn_mask bool (True = takes part) or float (added), broadcastable to (..., L, S).
    Returns (output (..., L, Ev), weights (..., L, S), fully_masked: bool).
    """
    q, k, v = query.double(), key.double(), value.double()
    L, S = q.size(-2), k.size(-2)
    scale_factor = 1.0 / math.sqrt(q.size(-1)) if scale is None else scale
    attn_bias = torch.zeros(L, S, dtype=torch.float64)
    if is_causal:
        assert attn_mask is None  # torch 2.x: "Explicit attn_mask should not be set when is_causal=True"
        # Upper-left aligned: row i attends to keys 0..i, whatever L and S are.
        attn_bias.masked_fill_(~torch.ones(L, S, dtype=torch.bool).tril(0), NEG_INF)
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            attn_bias = attn_bias.masked_fill(~attn_mask, NEG_INF)  # broadcasts to the mask's shape
        else:
            attn_bias = attn_mask.double() + attn_bias
    if enable_gqa:
        rep_k = q.size(-3) // k.size(-3)
        rep_v = q.size(-3) // v.size(-3)
        k = k.repeat_interleave(rep_k, dim=-3)
        v = v.repeat_interleave(rep_v, dim=-3)
    scores = q @ k.transpose(-2, -1) * scale_factor + attn_bias
    w = safe_softmax(scores)
    out = w @ v
    return out, w, has_fully_masked_row(scores)


def torch113_sdpa(query, key, value, attn_mask, is_causal, scale, enable_gqa):
    """Cross-check through torch 1.13's private math SDPA (float32) where it can express the case:
    bool masks (True = takes part) or none, default scale (else q pre-scaled), GQA via explicit
    repeat_interleave. Returns (output, weights) or None."""
    if attn_mask is not None and attn_mask.dtype != torch.bool:
        return None
    q, k, v = query, key, value
    if enable_gqa:
        k = k.repeat_interleave(q.size(-3) // k.size(-3), dim=-3)
        v = v.repeat_interleave(q.size(-3) // v.size(-3), dim=-3)
    if scale is not None:
        q = q * (scale * math.sqrt(q.size(-1)))
    try:
        out, w = torch._C._nn._scaled_dot_product_attention(q, k, v, attn_mask, 0.0, True, is_causal)
    except Exception:  # noqa: BLE001 - shapes 1.13 does not support; nothing to cross-check
        return None
    return out, w


# ----------------------------------------------------------------------------------------------
# Random inputs
# ----------------------------------------------------------------------------------------------

def randn(*shape):
    return torch.randn(*shape, dtype=torch.float32)


def sdpa_bool_mask(shape, p_false=0.3, allow_full=False):
    """SDPA bool mask, True = takes part. Unless allow_full, every row (last dim) keeps one True."""
    m = torch.rand(shape) >= p_false
    if not allow_full:
        rows = m.reshape(-1, shape[-1])
        for r in range(rows.shape[0]):
            if not bool(rows[r].any()):
                rows[r, int(torch.randint(shape[-1], (1,)))] = True
        m = rows.reshape(shape)
    return m


def float_mask(shape, p_inf=0.2, allow_full=False, std=1.0):
    """Additive float mask: N(0, std) with -inf at random places; unless allow_full, every row
    (last dim) keeps one finite entry."""
    m = randn(*shape) * std
    m = m.masked_fill(torch.rand(shape) < p_inf, NEG_INF)
    if not allow_full:
        rows = m.reshape(-1, shape[-1])
        for r in range(rows.shape[0]):
            if bool(torch.isneginf(rows[r]).all()):
                rows[r, int(torch.randint(shape[-1], (1,)))] = float(randn(1))
        m = rows.reshape(shape)
    return m


# ----------------------------------------------------------------------------------------------
# SDPA cases
# ----------------------------------------------------------------------------------------------

SDPA_STATS = {"cross_checked": 0, "max_diff_vs_torch113": 0.0}


def sdpa_case(name, qs, ks, vs, mask=None, is_causal=False, scale=None, enable_gqa=False,
              fully_masked=False):
    """qs/ks/vs: shapes. mask: None or a tensor built by the caller."""
    q, k, v = randn(*qs), randn(*ks), randn(*vs)
    out, w, full = ref_sdpa(q, k, v, mask, is_causal, scale, enable_gqa)
    assert full == fully_masked, f"{name}: fully masked row present={full}, declared={fully_masked}"
    assert not torch.isnan(out).any() and not torch.isnan(w).any(), name
    if not full:
        chk = torch113_sdpa(q, k, v, mask, is_causal, scale, enable_gqa)
        if chk is not None:
            d = max(max_abs_diff_finite(out, chk[0]), max_abs_diff_finite(w, chk[1]))
            assert d < REF_TOL, f"{name}: ref_sdpa vs torch 1.13 private SDPA differ by {d}"
            SDPA_STATS["cross_checked"] += 1
            SDPA_STATS["max_diff_vs_torch113"] = max(SDPA_STATS["max_diff_vs_torch113"], d)
    return {
        "name": name,
        "query": enc(q), "key": enc(k), "value": enc(v),
        "attnMask": enc(mask),
        "isCausal": is_causal,
        "scale": scale,
        "enableGqa": enable_gqa,
        "expected": {"output": enc(out), "weights": enc(w)},
    }


def make_sdpa_cases():
    c = []
    add = lambda *a, **kw: c.append(sdpa_case(*a, **kw))  # noqa: E731

    # --- plain shapes: 3-D / 4-D / 5-D, Ev != E, L vs S, L=1, S=1, odd E ---
    add("3d_basic", (2, 4, 8), (2, 6, 8), (2, 6, 8))
    add("4d_basic", (2, 3, 5, 8), (2, 3, 7, 8), (2, 3, 7, 8))
    add("5d_basic", (2, 2, 2, 3, 8), (2, 2, 2, 5, 8), (2, 2, 2, 5, 8))
    add("3d_ev_ne_e", (2, 4, 8), (2, 6, 8), (2, 6, 5))
    add("4d_ev_ne_e_e5", (1, 2, 4, 5), (1, 2, 6, 5), (1, 2, 6, 9))
    add("4d_l_gt_s", (2, 2, 9, 8), (2, 2, 4, 8), (2, 2, 4, 8))
    add("4d_l_lt_s", (2, 2, 3, 8), (2, 2, 11, 8), (2, 2, 11, 8))
    add("4d_l1", (2, 3, 1, 8), (2, 3, 9, 8), (2, 3, 9, 8))
    add("4d_s1", (2, 3, 5, 8), (2, 3, 1, 8), (2, 3, 1, 6))
    add("3d_l1_s1", (3, 1, 4), (3, 1, 4), (3, 1, 4))
    add("3d_e7", (2, 5, 7), (2, 6, 7), (2, 6, 7))
    add("4d_e13_ev3", (1, 2, 4, 13), (1, 2, 5, 13), (1, 2, 5, 3))
    add("3d_e1", (2, 3, 1), (2, 4, 1), (2, 4, 2))

    # --- broadcasting of leading batch dims between q, k, v ---
    add("bcast_key_value_batch1", (2, 3, 4, 8), (1, 3, 5, 8), (1, 3, 5, 8))
    add("bcast_key_value_heads1", (2, 3, 4, 8), (2, 1, 5, 8), (2, 1, 5, 6))
    add("bcast_query_batch1", (1, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 8))
    add("bcast_5d_mixed", (2, 1, 3, 4, 5), (1, 2, 3, 6, 5), (2, 2, 1, 6, 7))
    add("bcast_value_only", (2, 2, 3, 8), (2, 2, 5, 8), (1, 1, 5, 8))

    # --- bool masks (True = takes part) ---
    add("bool_mask_ls", (2, 2, 4, 8), (2, 2, 6, 8), (2, 2, 6, 8), mask=sdpa_bool_mask((4, 6)))
    add("bool_mask_row_bcast_1s", (2, 2, 4, 8), (2, 2, 6, 8), (2, 2, 6, 8),
        mask=sdpa_bool_mask((1, 6)))
    m = torch.tensor([[True], [False], [True], [True]])  # (L, 1): row 1 fully masked
    add("bool_mask_col_bcast_l1_fully_masked_row", (2, 2, 4, 8), (2, 2, 6, 8), (2, 2, 6, 8),
        mask=m, fully_masked=True)
    add("bool_mask_n1ls", (2, 3, 4, 7), (2, 3, 5, 7), (2, 3, 5, 7), mask=sdpa_bool_mask((2, 1, 4, 5)))
    add("bool_mask_key_padding_n11s", (2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 8),
        mask=sdpa_bool_mask((2, 1, 1, 6)))
    add("bool_mask_full_4d", (2, 2, 3, 8), (2, 2, 5, 8), (2, 2, 5, 4), mask=sdpa_bool_mask((2, 2, 3, 5)))
    add("bool_mask_full_3d", (3, 4, 6), (3, 5, 6), (3, 5, 6), mask=sdpa_bool_mask((3, 4, 5)))
    add("bool_mask_5d_ls", (2, 2, 2, 3, 5), (2, 2, 2, 4, 5), (2, 2, 2, 4, 5), mask=sdpa_bool_mask((3, 4)))
    add("bool_mask_l_gt_s_bcast_kv", (2, 2, 7, 8), (1, 2, 3, 8), (1, 2, 3, 8), mask=sdpa_bool_mask((7, 3)))
    m = sdpa_bool_mask((4, 6))
    m[2] = False
    add("bool_mask_fully_masked_row", (2, 2, 4, 8), (2, 2, 6, 8), (2, 2, 6, 8), mask=m, fully_masked=True)
    m = sdpa_bool_mask((2, 3, 4, 5))
    m[1, 2, 0] = False
    m[0, 0, 3] = False
    add("bool_mask_full_fully_masked_rows_some_heads", (2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 8),
        mask=m, fully_masked=True)
    add("bool_mask_all_false", (1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4),
        mask=torch.zeros(3, 5, dtype=torch.bool), fully_masked=True)

    # --- float masks (added), some with -inf ---
    add("float_mask_ls", (2, 2, 4, 8), (2, 2, 6, 8), (2, 2, 6, 8), mask=float_mask((4, 6), p_inf=0.0))
    add("float_mask_ls_neginf", (2, 2, 4, 8), (2, 2, 6, 8), (2, 2, 6, 8), mask=float_mask((4, 6)))
    add("float_mask_row_bcast_1s_neginf", (2, 2, 4, 8), (2, 2, 6, 8), (2, 2, 6, 8),
        mask=float_mask((1, 6)))
    add("float_mask_col_bcast_l1", (2, 2, 4, 8), (2, 2, 6, 8), (2, 2, 6, 8),
        mask=float_mask((4, 1), p_inf=0.0))
    add("float_mask_n1ls_neginf", (2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5), mask=float_mask((2, 1, 4, 6)))
    add("float_mask_full_4d_neginf", (2, 2, 5, 8), (2, 2, 3, 8), (2, 2, 3, 8),
        mask=float_mask((2, 2, 5, 3)))
    add("float_mask_3d_full", (2, 3, 7), (2, 4, 7), (2, 4, 7), mask=float_mask((2, 3, 4), p_inf=0.1))
    m = float_mask((4, 6))
    m[1] = NEG_INF
    add("float_mask_fully_neginf_row", (2, 2, 4, 8), (2, 2, 6, 8), (2, 2, 6, 8), mask=m, fully_masked=True)
    m = float_mask((4, 1), p_inf=0.0)
    m[3, 0] = NEG_INF
    add("float_mask_col_bcast_neginf_fully_masked_row", (1, 2, 4, 8), (1, 2, 5, 8), (1, 2, 5, 8),
        mask=m, fully_masked=True)
    add("float_mask_large_magnitude", (2, 2, 4, 8), (2, 2, 6, 8), (2, 2, 6, 8),
        mask=float_mask((4, 6), p_inf=0.0, std=30.0))

    # --- causal (upper-left aligned) ---
    add("causal_l_eq_s", (2, 2, 5, 8), (2, 2, 5, 8), (2, 2, 5, 8), is_causal=True)
    add("causal_l_lt_s", (2, 2, 3, 8), (2, 2, 7, 8), (2, 2, 7, 8), is_causal=True)
    add("causal_l_gt_s", (2, 2, 7, 8), (2, 2, 3, 8), (2, 2, 3, 6), is_causal=True)
    add("causal_3d_e7", (2, 6, 7), (2, 6, 7), (2, 6, 7), is_causal=True)
    add("causal_l1", (2, 2, 1, 8), (2, 2, 6, 8), (2, 2, 6, 8), is_causal=True)
    add("causal_s1", (1, 2, 4, 8), (1, 2, 1, 8), (1, 2, 1, 8), is_causal=True)
    add("causal_5d_bcast", (2, 1, 2, 4, 5), (1, 2, 2, 4, 5), (2, 2, 2, 4, 5), is_causal=True)

    # --- explicit scale ---
    add("scale_no_mask", (2, 2, 4, 8), (2, 2, 6, 8), (2, 2, 6, 8), scale=f32(0.3))
    add("scale_bool_mask", (2, 2, 4, 8), (2, 2, 6, 8), (2, 2, 6, 8), mask=sdpa_bool_mask((4, 6)),
        scale=f32(1.7))
    add("scale_float_mask_3d", (2, 4, 5), (2, 6, 5), (2, 6, 3), mask=float_mask((2, 4, 6)), scale=f32(0.05))
    add("scale_causal", (1, 3, 5, 8), (1, 3, 5, 8), (1, 3, 5, 8), is_causal=True, scale=f32(0.125))

    # --- grouped-query attention ---
    add("gqa_6_over_2", (2, 6, 4, 8), (2, 2, 5, 8), (2, 2, 5, 8), enable_gqa=True)
    add("gqa_6_over_3_ev_ne_e", (2, 6, 4, 8), (2, 3, 5, 8), (2, 3, 5, 6), enable_gqa=True)
    add("gqa_6_over_2_bool_mask_full", (2, 6, 3, 8), (2, 2, 5, 8), (2, 2, 5, 8),
        mask=sdpa_bool_mask((2, 6, 3, 5)), enable_gqa=True)
    add("gqa_6_over_3_float_mask_n1ls", (2, 6, 4, 5), (2, 3, 6, 5), (2, 3, 6, 5),
        mask=float_mask((2, 1, 4, 6)), enable_gqa=True)
    add("gqa_6_over_2_causal_scale", (1, 6, 5, 8), (1, 2, 5, 8), (1, 2, 5, 8), is_causal=True,
        scale=f32(0.4), enable_gqa=True)
    add("gqa_3d_6_over_2", (6, 4, 8), (2, 5, 8), (2, 5, 8), enable_gqa=True)
    add("gqa_bcast_key_batch1", (2, 6, 3, 8), (1, 3, 4, 8), (1, 3, 4, 8), enable_gqa=True)
    add("gqa_equal_heads", (1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4), enable_gqa=True)
    m = sdpa_bool_mask((1, 6, 3, 4))
    m[0, 4, 1] = False
    add("gqa_fully_masked_row_one_head", (1, 6, 3, 8), (1, 2, 4, 8), (1, 2, 4, 8), mask=m,
        enable_gqa=True, fully_masked=True)

    # --- medium sizes: SIMD main loops and tails ---
    add("medium_e64_l33_s47_bool_mask", (1, 1, 33, 64), (1, 1, 47, 64), (1, 1, 47, 64),
        mask=sdpa_bool_mask((33, 47), p_false=0.2))
    add("medium_e40_l17_s23_float_mask", (2, 1, 17, 40), (2, 1, 23, 40), (2, 1, 23, 40),
        mask=float_mask((2, 1, 17, 23), p_inf=0.1))
    add("medium_e16_l33_s33_causal", (1, 33, 16), (1, 33, 16), (1, 33, 16), is_causal=True)
    add("medium_e36_l9_s19_gqa", (1, 4, 9, 36), (1, 2, 19, 36), (1, 2, 19, 20), enable_gqa=True)
    return c


# ----------------------------------------------------------------------------------------------
# MultiheadAttention
# ----------------------------------------------------------------------------------------------

def to_float_mask(m, dtype=torch.float64):
    """MHA mask -> additive float mask (MHA bool convention: True = masked -> -inf)."""
    if m is None:
        return None
    if m.dtype == torch.bool:
        return torch.zeros(m.shape, dtype=dtype).masked_fill(m, NEG_INF)
    return m.to(dtype)


def ref_mha(query, key, value, sd, cfg, key_padding_mask=None, attn_mask=None,
            need_weights=True, average_attn_weights=True, is_causal=False):
    """PyTorch 2.x F.multi_head_attention_forward (eval, no dropout) in float64.

    query (L, N, E) / (N, L, E) if batchFirst / (L, E) unbatched; key (S, ., kdim), value (S, ., vdim).
    key_padding_mask (N, S) or (S); attn_mask (L, S) or (N*H, L, S) (unbatched: (H, L, S)).
    Both masks: bool (True = masked) or float (added); they are converted to float and added.
    is_causal is a hint only: attn_mask must already be the causal mask.
    Fully masked rows (every key -inf) give weights 0 and head output 0 (safe softmax).
    Returns (output, weights or None, fully_masked: bool).
    """
    E, H = cfg["embedDim"], cfg["numHeads"]
    hd = E // H
    batched = query.dim() == 3
    q_in, k_in, v_in = query.double(), key.double(), value.double()
    if batched and cfg["batchFirst"]:
        q_in, k_in, v_in = (x.transpose(0, 1) for x in (q_in, k_in, v_in))
    kpm = to_float_mask(key_padding_mask)
    am = to_float_mask(attn_mask)
    if not batched:
        q_in, k_in, v_in = (x.unsqueeze(1) for x in (q_in, k_in, v_in))
        if kpm is not None:
            kpm = kpm.unsqueeze(0)
    L, N, _ = q_in.shape
    sd = {k: v.detach().double() for k, v in sd.items()}

    # in-projection
    if "in_proj_weight" in sd:
        wq, wk, wv = sd["in_proj_weight"].chunk(3)
    else:
        wq, wk, wv = sd["q_proj_weight"], sd["k_proj_weight"], sd["v_proj_weight"]
    if "in_proj_bias" in sd:
        bq, bk, bv = sd["in_proj_bias"].chunk(3)
    else:
        bq = bk = bv = None
    q = F.linear(q_in, wq, bq)  # (L, N, E)
    k = F.linear(k_in, wk, bk)  # (S, N, E)
    v = F.linear(v_in, wv, bv)  # (S, N, E)

    if am is not None and am.dim() == 2:
        am = am.unsqueeze(0)  # (1, L, S)

    # bias_k / bias_v: one extra key/value position, always attendable (masks padded with 0)
    if "bias_k" in sd:
        k = torch.cat([k, sd["bias_k"].repeat(1, N, 1)])
        v = torch.cat([v, sd["bias_v"].repeat(1, N, 1)])
        if am is not None:
            am = F.pad(am, (0, 1))
        if kpm is not None:
            kpm = F.pad(kpm, (0, 1))

    q = q.reshape(L, N * H, hd).transpose(0, 1)           # (N*H, L, hd)
    k = k.reshape(k.shape[0], N * H, hd).transpose(0, 1)  # (N*H, S', hd)
    v = v.reshape(v.shape[0], N * H, hd).transpose(0, 1)  # (N*H, S', hd)

    # add_zero_attn: one extra all-zero key/value position, always attendable
    if cfg["addZeroAttn"]:
        z = torch.zeros(N * H, 1, hd, dtype=torch.float64)
        k = torch.cat([k, z], dim=1)
        v = torch.cat([v, z], dim=1)
        if am is not None:
            am = F.pad(am, (0, 1))
        if kpm is not None:
            kpm = F.pad(kpm, (0, 1))
    S2 = k.shape[1]

    if kpm is not None:
        kpm = kpm.view(N, 1, 1, S2).expand(-1, H, -1, -1).reshape(N * H, 1, S2)
        am = kpm if am is None else am + kpm  # 2.x: added (1.13 differs, see mha_torch_inputs)

    scores = (q / math.sqrt(hd)) @ k.transpose(-2, -1)  # (N*H, L, S2)
    if am is not None:
        scores = scores + am
    full = has_fully_masked_row(scores)
    w = safe_softmax(scores)
    o = w @ v  # (N*H, L, hd)
    o = o.transpose(0, 1).reshape(L * N, E)
    o = F.linear(o, sd["out_proj.weight"], sd.get("out_proj.bias")).view(L, N, E)
    w = w.view(N, H, L, S2)
    if average_attn_weights:
        w = w.mean(dim=1)
    if batched and cfg["batchFirst"]:
        o = o.transpose(0, 1)
    if not batched:
        o = o.squeeze(1)
        w = w.squeeze(0)
    return o, (w if need_weights else None), full


def mha_torch_inputs(kpm, am, num_heads, batched):
    """Masks to hand torch 1.13 so that it computes PyTorch 2.x semantics.

    2.x converts each bool mask to float (0 / -inf) and ADDS key_padding_mask to attn_mask.
    torch 1.13 instead merges with `attn_mask.logical_or(kpm)` (bool attn_mask) or
    `attn_mask.masked_fill(kpm, -inf)` (float attn_mask), which:
      (1) float attn_mask + float kpm: raises "Mask tensor can take 0 and 1 values only" (or, if the
          float kpm happens to hold only 0/1, silently treats it as a bool mask);
      (2) bool attn_mask + float kpm: logical_or treats every nonzero float as "masked", so finite
          float padding values mask keys instead of being added;
      float attn_mask + bool kpm and bool + bool are already the same as 2.x.
    For (1) and (2) we pass torch the 2.x merged mask: float, attn_mask broadcast-added to the
    padding mask expanded to (N*H, L, S), as a 3-D attn_mask, and key_padding_mask=None.
    """
    if kpm is None or am is None:
        return kpm, am, False
    if kpm.dtype == torch.bool:
        return kpm, am, False
    # float kpm with an attn_mask (bool or float): merge ourselves.
    kpm_f = to_float_mask(kpm, torch.float32)
    am_f = to_float_mask(am, torch.float32)
    if not batched:
        kpm_f = kpm_f.unsqueeze(0)
    N, S = kpm_f.shape
    L = am_f.shape[-2]
    kpm3 = kpm_f.view(N, 1, 1, S).expand(-1, num_heads, -1, -1).reshape(N * num_heads, 1, S)
    merged = am_f + kpm3  # (N*H, L, S); a 2-D (L, S) attn_mask broadcasts over N*H
    assert merged.shape == (N * num_heads, L, S)
    return None, merged, True


MHA_STATS = {"max_ref_vs_torch": 0.0, "torch_cases": 0, "ref_cases": 0}


def make_module(cfg):
    m = nn.MultiheadAttention(cfg["embedDim"], cfg["numHeads"], dropout=cfg["dropout"], bias=cfg["bias"],
                              add_bias_kv=cfg["addBiasKv"], add_zero_attn=cfg["addZeroAttn"],
                              kdim=cfg["kdim"], vdim=cfg["vdim"], batch_first=cfg["batchFirst"])
    # torch initialises in_proj_bias / out_proj.bias to 0: randomise so zero biases hide nothing.
    if m.in_proj_bias is not None:
        nn.init.normal_(m.in_proj_bias, std=0.5)
    if m.out_proj.bias is not None:
        nn.init.normal_(m.out_proj.bias, std=0.5)
    if m.bias_k is not None:
        nn.init.normal_(m.bias_k, std=0.5)
        nn.init.normal_(m.bias_v, std=0.5)
    # eval(): dropout off. Grad stays enabled and params keep requires_grad, so torch 1.13 never
    # takes the fused fast path (torch._native_multi_head_attention): the plain math path is the oracle.
    m.eval()
    return m


def causal_mask(L, S, dtype):
    masked = torch.ones(L, S, dtype=torch.bool).triu(1)  # True above the diagonal = masked
    return masked if dtype == "bool" else torch.zeros(L, S).masked_fill(masked, NEG_INF)


def mha_bool_mask(shape, p=0.25):
    """MHA bool mask, True = masked (rows are fixed up later if a row ends up fully masked)."""
    return torch.rand(shape) < p


def mha_case(name, E, H, L, S, N=2, *, bias=True, add_bias_kv=False, add_zero_attn=False, kdim=None,
             vdim=None, batch_first=False, dropout=0.0, self_attn=False, kpm=None, am=None,
             need_weights=True, avg=True, is_causal=False, fully_masked=False, fix=None):
    """kpm / am: None, "bool", "float", "float_noinf", "bool3d", "float3d" (3-D attn mask),
    "causal_bool", "causal_float"; or a callable (shape -> tensor). N=None: unbatched input.
    fix: optional callable(kpm_tensor, am_tensor) editing masks in place (e.g. to mask a full row)."""
    cfg = {"embedDim": E, "numHeads": H, "bias": bias, "addBiasKv": add_bias_kv,
           "addZeroAttn": add_zero_attn, "kdim": E if kdim is None else kdim,
           "vdim": E if vdim is None else vdim, "batchFirst": batch_first, "dropout": dropout}
    if self_attn:
        assert L == S and kdim is None and vdim is None
    batched = N is not None
    mod = make_module(cfg)
    sd = {k: v.detach().clone() for k, v in mod.state_dict().items()}

    def shape3(T, D):
        if not batched:
            return (T, D)
        return (N, T, D) if batch_first else (T, N, D)

    query = randn(*shape3(L, E))
    if self_attn:
        key = value = query
    else:
        key = randn(*shape3(S, cfg["kdim"]))
        value = randn(*shape3(S, cfg["vdim"]))

    NH = (N if batched else 1) * H
    kpm_shape = (N, S) if batched else (S,)

    def build(spec, kind):
        if spec is None:
            return None
        if callable(spec):
            return spec()
        if spec == "causal_bool":
            return causal_mask(L, S, "bool")
        if spec == "causal_float":
            return causal_mask(L, S, "float")
        shape = kpm_shape if kind == "kpm" else ((NH, L, S) if spec.endswith("3d") else (L, S))
        base = spec[:-2] if spec.endswith("3d") else spec
        if base == "bool":
            return mha_bool_mask(shape)
        if base == "float":
            return float_mask(shape, p_inf=0.2, allow_full=True)
        if base == "float_noinf":
            return float_mask(shape, p_inf=0.0)
        raise ValueError(spec)

    # Draw masks until no row is fully masked by accident (deterministic under the seed); a case
    # that wants fully masked rows sets them explicitly in `fix`.
    for _attempt in range(200):
        kpm_t = build(kpm, "kpm")
        am_t = build(am, "am")
        if fix is not None:
            fix(kpm_t, am_t)
        _, _, full = ref_mha(query, key, value, sd, cfg, kpm_t, am_t, True, False)
        if full == fully_masked:
            break
        assert not fully_masked, f"{name}: declared fully masked rows but none present"
    else:
        raise AssertionError(f"{name}: could not draw masks without fully masked rows")

    ref_out, ref_w, full = ref_mha(query, key, value, sd, cfg, kpm_t, am_t, need_weights, avg, is_causal)
    assert full == fully_masked

    # torch 1.13 oracle
    t_kpm, t_am, merged = mha_torch_inputs(kpm_t, am_t, H, batched)
    # is_causal: 1.13's MHA has no is_causal; in 2.x it is only a hint that attn_mask IS the causal
    # mask, so computing with that attn_mask is exactly the 2.x result.
    if self_attn:
        t_out, t_w = mod(query, query, query, key_padding_mask=t_kpm, need_weights=need_weights,
                         attn_mask=t_am, average_attn_weights=avg)
    else:
        t_out, t_w = mod(query, key, value, key_padding_mask=t_kpm, need_weights=need_weights,
                         attn_mask=t_am, average_attn_weights=avg)
    t_out = t_out.detach()
    t_w = t_w.detach() if t_w is not None else None
    assert (t_w is None) == (not need_weights)
    torch_nan = bool(torch.isnan(t_out).any()) or (t_w is not None and bool(torch.isnan(t_w).any()))
    # (4) fully masked rows: torch gives NaN (softmax of an all -inf row); 2.x `need_weights=False`
    # goes through SDPA whose math path (>= 2.5) gives 0. Our documented choice: weights 0 and
    # head output 0 before out_proj -> expected values come from ref_mha.
    assert torch_nan == fully_masked, f"{name}: torch NaN={torch_nan}, fully masked={fully_masked}"

    d = max_abs_diff_finite(ref_out, t_out)
    if need_weights:
        d = max(d, max_abs_diff_finite(ref_w, t_w))
    assert d < REF_TOL, f"{name}: ref_mha vs torch differ by {d}"
    MHA_STATS["max_ref_vs_torch"] = max(MHA_STATS["max_ref_vs_torch"], d)

    if torch_nan:
        exp_out, exp_w = ref_out.float(), (ref_w.float() if ref_w is not None else None)
        MHA_STATS["ref_cases"] += 1
    else:
        exp_out, exp_w = t_out, t_w
        MHA_STATS["torch_cases"] += 1
    assert not torch.isnan(exp_out).any() and (exp_w is None or not torch.isnan(exp_w).any()), name
    assert exp_out.shape == ref_out.shape

    return {
        "name": name,
        "config": {k: cfg[k] for k in ("embedDim", "numHeads", "bias", "addBiasKv", "addZeroAttn",
                                      "kdim", "vdim", "batchFirst", "dropout")},
        "stateDict": {k: enc(v) for k, v in sd.items()},
        "selfAttention": self_attn,
        "query": enc(query), "key": enc(key), "value": enc(value),
        "keyPaddingMask": enc(kpm_t), "attnMask": enc(am_t),
        "needWeights": need_weights, "averageAttnWeights": avg, "isCausal": is_causal,
        "expected": {"output": enc(exp_out), "weights": enc(exp_w)},
        "_merged_for_torch113": merged,
    }


def make_mha_cases():
    c = []
    add = lambda *a, **kw: c.append(mha_case(*a, **kw))  # noqa: E731

    # --- layouts ---
    add("self_seq_first", 8, 2, 4, 4, self_attn=True)
    add("self_batch_first", 8, 2, 4, 4, self_attn=True, batch_first=True)
    add("cross_l_lt_s_seq_first", 8, 2, 3, 5)
    add("cross_l_gt_s_batch_first", 8, 2, 5, 3, batch_first=True)
    add("batch3_batch_first_bool_kpm", 8, 4, 3, 4, N=3, batch_first=True, kpm="bool")

    # --- unbatched (2-D input) ---
    add("unbatched_self", 8, 2, 4, 4, N=None, self_attn=True)
    add("unbatched_cross_batch_first_ignored", 8, 2, 3, 6, N=None, batch_first=True)
    add("unbatched_bool_kpm_bool_am2d", 8, 2, 3, 5, N=None, kpm="bool", am="bool")
    add("unbatched_float_am3d_h_l_s", 8, 2, 4, 5, N=None, am="float3d")
    add("unbatched_float_kpm_float_am2d", 8, 2, 3, 5, N=None, kpm="float", am="float")
    add("unbatched_bool_am3d_per_head_weights", 12, 3, 3, 4, N=None, am="bool3d", avg=False)

    # --- kdim / vdim != embedDim (separate q/k/v_proj_weight) ---
    add("kdim5_vdim7_seq_first", 8, 2, 3, 4, kdim=5, vdim=7)
    add("kdim5_vdim7_batch_first_bool_kpm", 8, 2, 4, 3, kdim=5, vdim=7, batch_first=True, kpm="bool")
    add("kdim_only_12", 8, 2, 2, 5, kdim=12)

    # --- bias / bias_kv / zero_attn ---
    add("no_bias_self", 8, 2, 4, 4, self_attn=True, bias=False)
    add("no_bias_kdim_vdim", 8, 2, 3, 5, bias=False, kdim=6, vdim=3)
    add("add_bias_kv", 8, 2, 3, 4, add_bias_kv=True)
    add("add_zero_attn", 8, 2, 3, 4, add_zero_attn=True)
    add("bias_kv_and_zero_attn_bool_kpm_float_am", 8, 2, 3, 4, add_bias_kv=True, add_zero_attn=True,
        kpm="bool", am="float")
    add("bias_kv_float_kpm_bool_am3d_merged", 8, 2, 3, 4, add_bias_kv=True, kpm="float", am="bool3d")
    add("no_bias_add_bias_kv_batch_first", 8, 2, 3, 3, bias=False, add_bias_kv=True, batch_first=True,
        self_attn=True)
    add("zero_attn_kdim_vdim_float_am3d", 8, 2, 2, 3, add_zero_attn=True, kdim=4, vdim=6, am="float3d")

    # --- single masks ---
    add("kpm_bool", 8, 2, 4, 5, kpm="bool")
    add("kpm_float_neginf", 8, 2, 4, 5, kpm="float")
    add("kpm_float_finite", 8, 2, 4, 5, kpm="float_noinf", batch_first=True)
    add("am2d_bool", 8, 2, 4, 5, am="bool")
    add("am2d_float_neginf", 8, 2, 4, 5, am="float")
    add("am3d_bool", 8, 2, 4, 5, am="bool3d")
    add("am3d_float_neginf_batch_first", 8, 2, 4, 5, am="float3d", batch_first=True)

    # --- key padding + attn mask, all dtype combinations ---
    add("kpm_bool_am2d_bool", 8, 2, 4, 5, kpm="bool", am="bool")
    add("kpm_bool_am2d_float", 8, 2, 4, 5, kpm="bool", am="float")
    add("kpm_float_am2d_bool_merged", 8, 2, 4, 5, kpm="float", am="bool")
    add("kpm_float_am2d_float_merged", 8, 2, 4, 5, kpm="float", am="float")
    add("kpm_bool_am3d_bool_batch_first", 8, 2, 3, 4, kpm="bool", am="bool3d", batch_first=True)
    add("kpm_bool_am3d_float", 8, 2, 3, 4, kpm="bool", am="float3d")
    add("kpm_float_am3d_bool_merged", 8, 2, 3, 4, kpm="float", am="bool3d")
    add("kpm_float_am3d_float_merged_batch_first", 8, 2, 3, 4, kpm="float", am="float3d", batch_first=True)
    add("kpm_float_finite_am2d_bool_merged", 8, 2, 3, 4, kpm="float_noinf", am="bool")

    # --- need_weights / average_attn_weights ---
    add("no_weights", 8, 2, 3, 4, need_weights=False, kpm="bool")
    add("weights_per_head", 8, 2, 3, 4, avg=False, am="float")
    add("no_weights_avg_false", 8, 4, 3, 4, need_weights=False, avg=False, batch_first=True)

    # --- is_causal (hint; attn_mask is the causal mask) ---
    add("causal_bool_self", 8, 2, 5, 5, self_attn=True, am="causal_bool", is_causal=True)
    add("causal_float_self_batch_first_no_weights", 8, 2, 5, 5, self_attn=True, am="causal_float",
        is_causal=True, batch_first=True, need_weights=False)
    add("causal_bool_with_bool_kpm", 8, 2, 4, 4, self_attn=True, am="causal_bool", is_causal=True,
        kpm="bool")
    add("causal_unbatched_per_head", 8, 2, 4, 4, N=None, self_attn=True, am="causal_float",
        is_causal=True, avg=False)

    # --- small / odd sizes ---
    add("l1_decode", 8, 2, 1, 7, kpm="bool")
    add("s1", 8, 2, 4, 1)
    add("l1_s1_unbatched", 8, 2, 1, 1, N=None)
    add("hd5_e10_h2", 10, 2, 3, 4, kpm="bool", am="float")
    add("hd7_e21_h3_batch_first", 21, 3, 3, 3, N=1, self_attn=True, batch_first=True, am="bool3d",
        avg=False)
    add("one_head", 8, 1, 3, 4, am="float")
    add("hd1_e4_h4", 4, 4, 3, 5, kpm="bool")

    # --- fully masked rows (torch: NaN; ours: weights 0, head output 0 before out_proj) ---
    def kpm_batch1_all(kpm_t, am_t):
        kpm_t[1] = True
    add("fully_masked_kpm_all_true_batch1", 8, 2, 3, 4, kpm="bool", fix=kpm_batch1_all,
        fully_masked=True)
    add("fully_masked_kpm_all_true_batch1_per_head_no_bias", 8, 2, 3, 4, kpm="bool",
        fix=kpm_batch1_all, fully_masked=True, avg=False, bias=False)

    def am3d_one_head_row(kpm_t, am_t):
        am_t[3, 1, :] = True  # batch 1, head 1, query row 1
    add("fully_masked_am3d_one_head_row", 8, 2, 3, 4, am="bool3d", fix=am3d_one_head_row,
        fully_masked=True, avg=False, batch_first=True)

    def am2d_row_neginf(kpm_t, am_t):
        am_t[0, :] = NEG_INF
    add("fully_masked_unbatched_float_am_row", 8, 2, 3, 4, N=None, am="float", fix=am2d_row_neginf,
        fully_masked=True)

    def kpm_float_all_neginf(kpm_t, am_t):
        kpm_t[0, :] = NEG_INF
    add("fully_masked_float_kpm_plus_bool_am_no_weights", 8, 2, 3, 4, kpm="float", am="bool",
        fix=kpm_float_all_neginf, fully_masked=True, need_weights=False)

    # With add_zero_attn / add_bias_kv the extra key column is never masked, so a row whose real
    # keys are all masked is NOT fully masked: torch gives finite values (no NaN).
    add("kpm_all_true_batch1_but_zero_attn", 8, 2, 3, 4, kpm="bool", fix=kpm_batch1_all,
        add_zero_attn=True)
    add("kpm_all_true_batch1_but_bias_kv", 8, 2, 3, 4, kpm="bool", fix=kpm_batch1_all,
        add_bias_kv=True)

    # --- dropout in the config: eval() must make it a no-op ---
    add("dropout_0p1_eval", 8, 2, 3, 4, dropout=0.1, kpm="bool")

    # --- medium: SIMD paths ---
    add("medium_e64_h4_l33_s40_n1_bool_kpm", 64, 4, 33, 40, N=1, kpm="bool")
    return c


def main():
    torch.manual_seed(SEED)
    torch.set_num_threads(1)  # reproducible float summation order
    os.makedirs(OUT_DIR, exist_ok=True)
    header = {"generator": GENERATOR, "torch": torch.__version__, "seed": SEED}

    sdpa = make_sdpa_cases()
    mha = make_mha_cases()
    for cases in (sdpa, mha):
        names = [c["name"] for c in cases]
        assert len(names) == len(set(names)), "duplicate case names"
    merged = sum(1 for c in mha if c.pop("_merged_for_torch113"))

    sdpa_bytes = write_json(os.path.join(OUT_DIR, "sdpa.json"), header, sdpa)
    mha_bytes = write_json(os.path.join(OUT_DIR, "mha.json"), header, mha)

    print(f"torch {torch.__version__}, seed {SEED}")
    print(f"sdpa.json: {len(sdpa)} cases, {sdpa_bytes} bytes; "
          f"{SDPA_STATS['cross_checked']} cross-checked against torch 1.13 private SDPA, "
          f"max |ref - torch| = {SDPA_STATS['max_diff_vs_torch113']:.3g}")
    print(f"mha.json:  {len(mha)} cases, {mha_bytes} bytes; expected from torch module: "
          f"{MHA_STATS['torch_cases']}, from ref_mha (fully masked rows): {MHA_STATS['ref_cases']}; "
          f"torch given a pre-merged mask: {merged}")
    print(f"max |ref_mha - torch| over finite entries of all cases: {MHA_STATS['max_ref_vs_torch']:.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
