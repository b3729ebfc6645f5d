#!/usr/bin/python3
"""Golden files for the small-LM blocks and the causal-LM family (issue 24): tests/data/goldens/lm/.

Not a test itself: it writes reference inputs, parameters and outputs that the C++ and JS tests
load, then re-reads every file and checks it. Run with Debian's torch (1.13):
    /usr/bin/python3 tests/data/make_lm_goldens.py
Deterministic (fixed seeds, one thread): two runs give identical bytes.

torch 1.13 has no nn.RMSNorm, no enable_gqa, no causal_lower_right / causal_upper_left and no
RoPE module: every expected output is computed in float64 from the formulas (tools/causal_lm.py,
whose header states each convention) and rounded to float32; each is also cross-checked against
the same computation in float32 torch (the runtime's precision), which must agree within 1e-5
(elementwise) / 5e-5 (attention, models).

FILES
  blocks/<case>.safetensors   one case per file, the layout of make_transformer_goldens.py:
      "param.<key>"   the module's parameters (torch state_dict keys: "weight")
      "input.<name>"  F32 activations; I32 positions (input_pos)
      "expected.output"  F32; RoPE cases also "expected.theta" (F32 (D/2,), the inv_freq torch
                         computes in float32: 1 / base ** (float32(2i) / D))
      __metadata__ "case": JSON {"name", "module", "args", "options", "inputs", "forward",
                   "atol", "rtol", "note"?}; "generator"; "torch"
    modules (JS API names, torch's arguments in camelCase):
      RMSNorm(normalizedShape: int | [int], {eps: number | null, elementwiseAffine})   forward(x)
          eps null = torch's None = float32 machine epsilon 2^-23
      SiLU()                                                                           forward(x)
      RotaryPositionalEmbeddings(dim, {maxSeqLen, base, interleaved})   forward(x, {inputPos})
          x (B, S, H, D); inputPos I32 (B, S) or (S) or absent (= 0 .. S-1)
          interleaved true: torchtune pairs (2i, 2i+1); false: HF rotate_half pairs (i, i + D/2)
      scaledDotProductAttention(query, key, value, {attnMask, enableGqa, scale: null})
          query (B, Hq, L, E), key (B, Hkv, S, E), value (B, Hkv, S, Ev); attnMask is the string
          "causalLowerRight" (query i sees keys 0 .. i + S - L) or "causalUpperLeft" (0 .. i) or
          null; "fullyMaskedRows": true when some query sees no key: those rows are 0 (the
          convention of our SDPA goldens: PyTorch >= 2.5's safe softmax).
  models/<name>/   a tiny causal LM as a Hugging Face checkpoint folder:
      model.safetensors  HF names (model.embed_tokens.weight, model.layers.{i}.self_attn.{q,k,v,o}_proj.*,
                         model.layers.{i}.mlp.{gate,up,down}_proj.weight, ..., model.norm.weight,
                         lm_head.weight unless tied), all in the case's dtype (F32 / F16 / BF16).
                         "attnwasmMetadata" false: written as HF's save_pretrained writes it
                         (metadata {"format": "pt"} only, tensors in name order): load it with
                         aw.loadModel(bytes, { config }). true: written by
                         tools/export_safetensors.py export_causal_lm (attnwasm.config in the
                         metadata): aw.loadModel(bytes) alone.
      config.json        as HF writes it (indent 2, sorted keys, transformers 4.46 keys)
      expected.safetensors
          "input.ids"        I32 (B, T), T odd
          "expected.logits"  F32 (B, T, V): the float64 forward of the stored weights (16-bit
                             weights widened exactly), rounded to float32
          "expected.last_attention"  F32 (layers, B, H, T): the softmax weights of the last query
                             (position T-1) over the T keys, per layer and query head, same forward
          "input.prompt<k>"  I32 (Tk,) and "expected.greedy<k>" I32 (N,): the greedy continuation
                             of the float32 torch model (KV cache); "expected.margin<k>" F32 (N,):
                             top-1 minus top-2 logit at each step. Compare ids exactly at every step
                             before the first one whose margin < "greedyMinMargin" (a near tie
                             either way is right); stop there. None is below it today.
          __metadata__ "case": {"name", "module": "CausalLM", "checkpoint": {"weights", "config",
                       "dtype", "attnwasmMetadata"}, "inputs": ["ids"], "atol", "rtol",
                       "kvCache": {"prefill": P}, "greedy": [{"prompt", "ids", "margins"}],
                       "greedyMinMargin", "shape": {...}, "note"}
          kvCache: prefill ids[:, :P] in one call, then feed ids[:, t] one at a time; the logits
          of every call must match expected.logits at those positions (same tolerance).

  refusals/<name>/{model.safetensors, config.json} and refusals/cases.json
      tiny HF checkpoints (F32, {"format": "pt"} only) that aw.loadModel(bytes, { config }) must
      refuse before using any weight, with an error message containing "errorMentions" (the config
      key or tensor name), or accept ("expect": "accepted"); tools/causal_lm.py does the same.

  quant/  the q8 / q4 goldens: written by tests/data/make_lm_quant_goldens.py, not by this script.

TOLERANCES  |got - expected| <= atol + rtol * |expected| elementwise: 1e-5 / 1e-5 for RMSNorm,
SiLU, RoPE (float32 rounding of a few operations); 1e-4 / 1e-4 for attention and whole models
(matmuls, softmax, many layers; summation order may differ). The issue's targets.
"""

import collections
import json
import math
import os
import shutil
import sys
import zlib

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
import causal_lm as clm  # noqa: E402
from export_safetensors import (export_causal_lm, hf_config_json, load_safetensors,  # noqa: E402
                                save_safetensors)

SEED = 20261125
GENERATOR = "tests/data/make_lm_goldens.py"
OUT_DIR = os.path.join(HERE, "goldens", "lm")
TOL_ELEMENTWISE = (1e-5, 1e-5)
TOL_LAYER = (1e-4, 1e-4)
XCHECK_ELEMENTWISE = 1e-5   # float32 torch vs the float64 reference
XCHECK_LAYER = 5e-5
GREEDY_MIN_MARGIN = 1e-3
STATS = collections.defaultdict(float)
REFUSALS_DOC = ("HF checkpoints (model.safetensors with metadata {\"format\": \"pt\"} only, config.json) that "
                "aw.loadModel(bytes, { config }) must refuse with an error whose message contains errorMentions "
                "(the config key or the tensor name), before using any weight; or load (expect accepted). "
                "checkpoint: the folder, relative to tests/data/goldens/lm.")


def gen_for(name):
    """A generator seeded from the case name: adding or reordering cases changes no other file."""
    return torch.Generator().manual_seed(SEED ^ zlib.crc32(name.encode()))


def randn(g, *shape, std=1.0, mean=0.0):
    return torch.randn(*shape, generator=g) * std + mean


def f32(x):
    return float(torch.tensor(x, dtype=torch.float32).item())


def within(got, want, tol):
    """max |got - want| / (atol + rtol |want|) <= 1 ?"""
    got, want = got.double(), want.double()
    return bool(((got - want).abs() <= tol[0] + tol[1] * want.abs()).all())


def write_case(path, spec, tensors):
    metadata = {"case": json.dumps(spec, separators=(",", ":"), allow_nan=False),
                "generator": GENERATOR, "torch": torch.__version__}
    return save_safetensors(tensors, path, metadata, float_dtype=None)


# ------------------------------------------------------------------------------------------------
# 1. RMSNorm and SiLU
# ------------------------------------------------------------------------------------------------

def rmsnorm_ref(x, weight, shape, eps):
    """float64: (x * rsqrt(mean(x^2) + eps)) * weight; eps None = float32 epsilon."""
    x = x.double()
    dims = tuple(range(-len(shape), 0))
    e = clm.FLOAT32_EPS if eps is None else eps
    y = x * torch.rsqrt(x.pow(2).mean(dims, keepdim=True) + e)
    return y * weight.double() if weight is not None else y


def rmsnorm_case(name, shape, x, eps, affine, note=None):
    g = gen_for(name + "/w")
    shape_t = (shape,) if isinstance(shape, int) else tuple(shape)
    weight = randn(g, *shape_t, std=0.5, mean=1.0) if affine else None
    want = rmsnorm_ref(x, weight, shape_t, eps)
    mod = clm.RMSNorm(shape, eps=eps, elementwise_affine=affine)
    if affine:
        with torch.no_grad():
            mod.weight.copy_(weight)
    with torch.no_grad():
        got32 = mod(x)
    assert within(got32, want, (XCHECK_ELEMENTWISE, XCHECK_ELEMENTWISE)), (name, (got32 - want).abs().max())
    spec = {"name": name, "module": "RMSNorm", "args": [shape], "options": {"eps": eps, "elementwiseAffine": affine},
            "inputs": ["x"], "forward": {}, "atol": TOL_ELEMENTWISE[0], "rtol": TOL_ELEMENTWISE[1]}
    if note:
        spec["note"] = note
    t = collections.OrderedDict()
    if affine:
        t["param.weight"] = weight
    t["input.x"] = x
    t["expected.output"] = want.float()
    return spec, t


def silu_case(name, x):
    want = x.double() * torch.sigmoid(x.double())
    assert within(torch.nn.functional.silu(x), want, (XCHECK_ELEMENTWISE, XCHECK_ELEMENTWISE)), name
    spec = {"name": name, "module": "SiLU", "args": [], "options": {}, "inputs": ["x"], "forward": {},
            "atol": TOL_ELEMENTWISE[0], "rtol": TOL_ELEMENTWISE[1], "note": "x * sigmoid(x) in float64"}
    return spec, collections.OrderedDict([("input.x", x), ("expected.output", want.float())])


def block_cases():
    c = []
    R = lambda name, *a, **k: c.append((name, lambda n=name: rmsnorm_case(n, *a, **k)))  # noqa: E731

    def X(name, *shape, std=1.0, mean=0.0):
        return randn(gen_for(name), *shape, std=std, mean=mean)
    R("rmsnorm_e16_eps_none", 16, X("rmsnorm_e16_eps_none", 2, 3, 16), None, True)
    R("rmsnorm_e64_eps1e-6", 64, X("rmsnorm_e64_eps1e-6", 3, 64, std=2.0, mean=0.5), 1e-6, True)
    R("rmsnorm_e7_noaffine", 7, X("rmsnorm_e7_noaffine", 4, 7), None, False, note="odd width, no weight")
    R("rmsnorm_shape_3x8", [3, 8], X("rmsnorm_shape_3x8", 2, 5, 3, 8), 1e-5, True,
      note="normalizedShape [3, 8]: mean over the last two dims, weight (3, 8)")
    R("rmsnorm_small_x_eps_none", 32, X("rmsnorm_small_x_eps_none", 3, 32, std=3e-4), None, True,
      note="mean(x^2) ~ 9e-8, comparable to eps = 2^-23: a wrong default eps fails")
    R("rmsnorm_small_x_eps1e-6", 32, X("rmsnorm_small_x_eps_none", 3, 32, std=3e-4), 1e-6, True,
      note="same input as rmsnorm_small_x_eps_none, eps 1e-6 dominates")
    R("rmsnorm_large_e33", 33, X("rmsnorm_large_e33", 5, 33, std=1e3), 1e-5, True, note="|x| ~ 1e3, odd width")
    R("rmsnorm_1d_e128", 128, X("rmsnorm_1d_e128", 128), 1e-6, True, note="an unbatched (128,) input")
    R("rmsnorm_e576_rows", 576, X("rmsnorm_e576_rows", 3, 576), 1e-5, True, note="SmolLM2's width")
    xs = torch.cat([torch.linspace(-30, 30, 61), torch.tensor([-100.0, -88.7, -1e-3, 0.0, 1e-3, 88.7, 100.0])])
    c.append(("silu", lambda: silu_case("silu", (xs + randn(gen_for("silu"), xs.numel(), std=0.05)).view(4, 17))))
    return c


# ------------------------------------------------------------------------------------------------
# 2. RoPE
# ------------------------------------------------------------------------------------------------

def rope_case(name, dim, base, interleaved, max_seq_len, x_shape, pos=None, note=None):
    g = gen_for(name)
    x = randn(g, *x_shape)
    mod = clm.RotaryPositionalEmbeddings(dim, max_seq_len, base, interleaved)
    want = mod(x.double(), pos)          # float64 cos/sin of the float32 angles
    got32 = mod(x, pos)
    assert within(got32, want, (XCHECK_ELEMENTWISE, XCHECK_ELEMENTWISE)), (name, (got32 - want).abs().max())
    spec = {"name": name, "module": "RotaryPositionalEmbeddings", "args": [dim],
            "options": {"maxSeqLen": max_seq_len, "base": base, "interleaved": interleaved},
            "inputs": ["x"], "forward": {} if pos is None else {"inputPos": "input.input_pos"},
            "atol": TOL_ELEMENTWISE[0], "rtol": TOL_ELEMENTWISE[1]}
    if note:
        spec["note"] = note
    t = collections.OrderedDict([("input.x", x)])
    if pos is not None:
        t["input.input_pos"] = pos.to(torch.int32)
    t["expected.output"] = want.float()
    t["expected.theta"] = mod.inv_freq()
    return spec, t


def angle_sensitivity(dim, base, pos):
    """max |cos(float32 angle) - cos(float64 angle)|: how much a float64 angle would be off."""
    inv = clm.rope_inv_freq(dim, base)
    a32 = clm.rope_angles(pos, inv).double()
    a64 = pos.double().unsqueeze(-1) * inv.double()
    return float((torch.cos(a32) - torch.cos(a64)).abs().max())


def rope_cases():
    c = []

    def P(name, *shape, hi):
        return torch.randint(0, hi, shape, generator=gen_for(name + "/pos"))
    R = lambda name, *a, **k: c.append((name, lambda n=name: rope_case(n, *a, **k)))  # noqa: E731
    R("rope_tt_d8_nopos", 8, 10000, True, 16, (2, 5, 3, 8))
    R("rope_hf_d8_nopos", 8, 10000, False, 16, (2, 5, 3, 8))
    R("rope_tt_d16_pos_bs", 16, 10000, True, 4096, (2, 7, 2, 16), P("rope_tt_d16_pos_bs", 2, 7, hi=4096),
      note="inputPos (B, S), positions up to 4095")
    R("rope_hf_d16_pos_bs_s13", 16, 10000, False, 4096, (2, 13, 1, 16), P("rope_hf_d16_pos_bs_s13", 2, 13, hi=4096))
    R("rope_hf_d32_pos_s_base5e5", 32, 500000, False, 8192, (1, 9, 4, 32), torch.arange(3, 12),
      note="inputPos (S) = 3..11 (a prefill after 3 cached tokens), base 500000 (Llama 3)")
    R("rope_tt_d32_pos_s", 32, 10000, True, 64, (3, 5, 2, 32), torch.tensor([7, 0, 63, 5, 5]),
      note="inputPos (S) out of order and repeated")
    R("rope_hf_d64_decode_base1e6", 64, 1000000, False, 8192, (3, 1, 2, 64), torch.tensor([[17], [250], [4000]]),
      note="one token per sequence at different positions (batched decoding), base 1e6 (Qwen2)")
    R("rope_tt_d128_pos_s", 128, 10000, True, 32768, (1, 3, 1, 128), torch.tensor([0, 1000, 32767]))
    R("rope_hf_d128_base100_nopos", 128, 100, False, 8, (2, 5, 2, 128), note="a small base")
    R("rope_hf_d64_large_pos", 64, 10000, False, 65536, (1, 3, 2, 64), torch.tensor([65000, 65535, 40001]),
      note="positions near 2^16: one float32 ulp of the angle is 0.004-0.008 rad; the angle must be "
           "float32(float32(p) * inv_freq) as torch forms it, a float64 angle fails this case")
    R("rope_tt_d8_s1_nopos", 8, 10000, True, 4, (4, 1, 3, 8), note="S = 1, position 0 (identity)")
    return c


# ------------------------------------------------------------------------------------------------
# 3. SDPA with GQA and the causal_lower_right / causal_upper_left masks
# ------------------------------------------------------------------------------------------------

def sdpa_ref(q, k, v, mask_kind, dtype):
    """float64 (or 32) SDPA: scale 1/sqrt(E), GQA by repeat_interleave over heads, bool mask
    True = may attend, fully masked rows -> 0."""
    q, k, v = q.to(dtype), k.to(dtype), v.to(dtype)
    L, S = q.shape[-2], k.shape[-2]
    rep = q.shape[-3] // k.shape[-3]
    k = k.repeat_interleave(rep, dim=-3)
    v = v.repeat_interleave(rep, dim=-3)
    scores = q @ k.transpose(-2, -1) * (1.0 / math.sqrt(q.shape[-1]))
    if mask_kind is not None:
        allow = clm.causal_lower_right(L, S) if mask_kind == "causalLowerRight" else clm.causal_upper_left(L, S)
        scores = scores.masked_fill(~allow, float("-inf"))
    full = torch.isneginf(scores).all(-1, keepdim=True)
    w = torch.softmax(scores, -1)
    w = torch.where(full, torch.zeros_like(w), w)
    return w @ v, bool(full.any())


def sdpa_case(name, B, Hq, Hkv, L, S, E, Ev, mask_kind, note=None):
    g = gen_for(name)
    q, k, v = randn(g, B, Hq, L, E), randn(g, B, Hkv, S, E), randn(g, B, Hkv, S, Ev)
    want, full = sdpa_ref(q, k, v, mask_kind, torch.float64)
    got32, _ = sdpa_ref(q, k, v, mask_kind, torch.float32)
    assert within(got32, want, (XCHECK_LAYER, XCHECK_LAYER)), (name, (got32 - want).abs().max())
    spec = {"name": name, "module": "scaledDotProductAttention", "args": [], "options": {},
            "inputs": ["query", "key", "value"],
            "forward": {"attnMask": mask_kind, "enableGqa": Hq != Hkv or name.endswith("_gqa1"), "scale": None},
            "fullyMaskedRows": full, "atol": TOL_LAYER[0], "rtol": TOL_LAYER[1]}
    if note:
        spec["note"] = note
    t = collections.OrderedDict([("input.query", q), ("input.key", k), ("input.value", v),
                                 ("expected.output", want.float())])
    return spec, t


def sdpa_cases():
    c = []
    A = lambda name, *a, **k: c.append((name, lambda n=name: sdpa_case(n, *a, **k)))  # noqa: E731
    A("sdpa_upperleft_l5_s5_gqa1", 2, 2, 2, 5, 5, 8, 8, "causalUpperLeft",
      note="GQA ratio 1 with enableGqa true; L = S: both masks are is_causal")
    A("sdpa_lowerright_l3_s7_gqa2", 2, 4, 2, 3, 7, 16, 16, "causalLowerRight",
      note="a prefill of 3 tokens after 4 cached ones")
    A("sdpa_upperleft_l7_s3_gqa3", 1, 6, 2, 7, 3, 8, 8, "causalUpperLeft", note="L > S: row i sees keys 0..min(i, 2)")
    A("sdpa_lowerright_l1_s9_gqa4", 2, 8, 2, 1, 9, 32, 32, "causalLowerRight",
      note="one decoding step: the query sees every key")
    A("sdpa_lowerright_l6_s4_gqa5", 1, 5, 1, 6, 4, 8, 8, "causalLowerRight",
      note="L > S: rows 0 and 1 see no key -> zeros")
    A("sdpa_lowerright_l9_s9_gqa6_e128", 1, 6, 1, 9, 9, 128, 128, "causalLowerRight", note="head dim 128")
    A("sdpa_lowerright_l2_s5_gqa7_ev12", 1, 7, 1, 2, 5, 8, 12, "causalLowerRight", note="Ev 12 != E 8")
    A("sdpa_upperleft_l4_s11_gqa8_e64", 2, 8, 1, 4, 11, 64, 64, "causalUpperLeft",
      note="L < S upper-left: row i sees keys 0..i only")
    A("sdpa_nomask_l3_s5_gqa4", 1, 4, 1, 3, 5, 16, 16, None, note="enableGqa alone")
    A("sdpa_lowerright_l13_s33_gqa3_e64", 1, 3, 1, 13, 33, 64, 64, "causalLowerRight",
      note="longer: blocked kernels and their tails")
    return c


# ------------------------------------------------------------------------------------------------
# 4. Whole tiny causal LMs as HF checkpoints
# ------------------------------------------------------------------------------------------------

PARAM_DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}
TORCH_DTYPE_NAME = {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}


def randomize_lm(model, g):
    """Random weights of order 1 activations: matrices N(0, 1/fan_in), biases N(0, 0.2^2),
    norm weights N(1, 0.3^2), embeddings N(0, 1)."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("embed_tokens.weight"):
                std, mean = 1.0, 0.0
            elif "norm" in name:
                std, mean = 0.3, 1.0
            elif p.dim() == 2:
                std, mean = 1.0 / math.sqrt(p.shape[1]), 0.0
            else:
                std, mean = 0.2, 0.0
            p.copy_(randn(g, *p.shape, std=std, mean=mean))


def lm_model_case(name, hf, dtype, batch, T, prompts, new_tokens, via_export, note):
    g = gen_for(name)
    cfg = clm.config_from_hf(hf)
    m32 = clm.CausalLM(cfg).eval()
    randomize_lm(m32, g)
    pdt = PARAM_DTYPES[dtype]
    with torch.no_grad():                        # torch computes with the stored (rounded) weights
        for p in m32.parameters():
            p.copy_(p.to(pdt).float())
    m64 = clm.load_state_dict_hf(clm.CausalLM(cfg).double().eval(), clm.hf_state_dict(m32))
    ids = torch.randint(0, cfg.vocab_size, (batch, T), generator=g)
    with torch.no_grad():
        att64 = []
        want = m64(ids, attentions=att64)
        got32 = m32(ids)
        prefill = T // 2
        cached = clm.cached_logits(m32, ids, prefill)
    assert within(got32, want, (XCHECK_LAYER, XCHECK_LAYER)), (name, (got32.double() - want).abs().max())
    d_cache = float((cached - got32).abs().max())
    assert d_cache < 1e-5, (name, d_cache)
    STATS["max_model_f32_vs_f64"] = max(STATS["max_model_f32_vs_f64"], float((got32.double() - want).abs().max()))
    STATS["max_kv_cache_vs_full"] = max(STATS["max_kv_cache_vs_full"], d_cache)

    folder = os.path.join(OUT_DIR, "models", name)
    os.makedirs(folder, exist_ok=True)
    weights = os.path.join(folder, "model.safetensors")
    if "rope_parameters" in hf:
        # transformers 5.x's layout: the base only in rope_parameters (issue 28: it used to be ignored).
        full_config = clm.hf_config_dict_v5(cfg, dtype=TORCH_DTYPE_NAME[dtype], bos_token_id=hf.get("bos_token_id"),
                                            eos_token_id=hf.get("eos_token_id"))
        full_config.update(hf)
    else:
        full_config = clm.hf_config_dict(cfg, torch_dtype=TORCH_DTYPE_NAME[dtype],
                                         bos_token_id=hf.get("bos_token_id"), eos_token_id=hf.get("eos_token_id"))
        full_config.update(hf)
        full_config["torch_dtype"] = TORCH_DTYPE_NAME[dtype]
    if cfg.rope_theta != 10000.0:
        # The base matters at these lengths: the same weights with the default base miss by far more than
        # the tolerance (so a loader that ignores where the base is written fails this case).
        other = clm.config_from_hf(dict(hf, rope_theta=10000.0, rope_parameters=None))
        m_default = clm.load_state_dict_hf(clm.CausalLM(other).double().eval(), clm.hf_state_dict(m32))
        with torch.no_grad():
            miss = float((m_default(ids) - want).abs().max())
        assert miss > 100 * (TOL_LAYER[0] + TOL_LAYER[1] * float(want.abs().max())), (name, miss)
    if via_export:
        export_causal_lm(weights, m32, full_config, dtype=dtype)     # also writes config.json
    else:
        # As HF's save_pretrained: safetensors with {"format": "pt"}, tensors in name order, no
        # lm_head when tied; config.json beside.
        sd = clm.hf_state_dict(m32)
        save_safetensors(collections.OrderedDict(sorted(sd.items())), weights, {"format": "pt"}, dtype)
        with open(os.path.join(folder, "config.json"), "w", encoding="utf-8") as fh:
            fh.write(hf_config_json(full_config))

    # The newest token's attention over the whole context, per layer and head (the demo's heatmap).
    last_att = torch.stack([w[:, :, -1, :] for w in att64]).float()      # (layers, B, H, T)
    tensors = collections.OrderedDict([("input.ids", ids.to(torch.int32)), ("expected.logits", want.float()),
                                       ("expected.last_attention", last_att)])
    greedy_spec = []
    for kk, plen in enumerate(prompts):
        prompt = torch.randint(0, cfg.vocab_size, (1, plen), generator=g)
        with torch.no_grad():
            out32, margins = clm.greedy(m32, prompt, new_tokens)
            out64, _ = clm.greedy(m64, prompt, new_tokens)
        # float64 and float32 agree up to the first near tie.
        for i in range(new_tokens):
            if int(out32[0, i]) != int(out64[0, i]):
                assert float(margins[0, :i + 1].min()) < GREEDY_MIN_MARGIN, (name, kk, i)
                break
        tensors[f"input.prompt{kk}"] = prompt[0].to(torch.int32)
        tensors[f"expected.greedy{kk}"] = out32[0].to(torch.int32)
        tensors[f"expected.margin{kk}"] = margins[0].float()
        greedy_spec.append({"prompt": f"input.prompt{kk}", "ids": f"expected.greedy{kk}",
                            "margins": f"expected.margin{kk}", "maxNewTokens": new_tokens})
        STATS["min_greedy_margin"] = min(STATS.get("min_greedy_margin", 1e9), float(margins.min()))
    spec = {"name": name, "module": "CausalLM",
            "checkpoint": {"weights": "model.safetensors", "config": "config.json", "dtype": dtype,
                           "attnwasmMetadata": via_export},
            "inputs": ["ids"], "atol": TOL_LAYER[0], "rtol": TOL_LAYER[1],
            "kvCache": {"prefill": prefill}, "lastAttention": "expected.last_attention", "greedy": greedy_spec, "greedyMinMargin": GREEDY_MIN_MARGIN,
            "shape": {"modelType": cfg.model_type, "layers": cfg.num_hidden_layers, "hidden": cfg.hidden_size,
                      "heads": cfg.num_attention_heads, "kvHeads": cfg.num_key_value_heads,
                      "headDim": cfg.head_dim, "gqaRatio": cfg.num_attention_heads // cfg.num_key_value_heads,
                      "intermediate": cfg.intermediate_size, "vocab": cfg.vocab_size,
                      "tied": cfg.tie_word_embeddings, "qkvBias": cfg.qkv_bias, "oBias": cfg.o_bias},
            "note": note}
    write_case(os.path.join(folder, "expected.safetensors"), spec, tensors)
    return spec


def llama(**kw):
    d = {"model_type": "llama", "hidden_act": "silu", "bos_token_id": 1, "eos_token_id": 2}
    d.update(kw)
    return d


def qwen2(**kw):
    d = {"model_type": "qwen2", "hidden_act": "silu", "bos_token_id": 0, "eos_token_id": 0}
    d.update(kw)
    return d


def model_cases():
    return [
        ("llama_untied_gqa2_hd8", llama(vocab_size=61, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                        num_attention_heads=4, num_key_value_heads=2, rms_norm_eps=1e-5,
                                        rope_theta=10000.0, max_position_embeddings=128,
                                        tie_word_embeddings=False, attention_bias=False),
         "F32", 2, 9, (1, 4, 7), 12, False, "plain Llama: untied lm_head, no biases"),
        ("llama_tied_bias_gqa8_hd8", llama(vocab_size=50, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                           num_attention_heads=8, num_key_value_heads=1, head_dim=8,
                                           rms_norm_eps=1e-6, rope_theta=500000.0, max_position_embeddings=64,
                                           tie_word_embeddings=True, attention_bias=True),
         "F32", 2, 7, (1, 5), 10, True,
         "written by export_causal_lm (attnwasm.config in the metadata); attention_bias: q/k/v AND o_proj "
         "biases (HF Llama); head_dim 8 with 8 heads: H*D = 64 != hidden 32; tied"),
        ("qwen2_tied_gqa3_hd16_bf16", qwen2(vocab_size=64, hidden_size=48, intermediate_size=80,
                                            num_hidden_layers=2, num_attention_heads=3, num_key_value_heads=1,
                                            rms_norm_eps=1e-6, rope_theta=1000000.0, max_position_embeddings=256,
                                            tie_word_embeddings=True),
         "BF16", 2, 11, (3, 6), 12, False, "Qwen2: q/k/v biases, no o_proj bias; BF16 weights; tied"),
        ("qwen2_untied_gqa1_hd32_f16", qwen2(vocab_size=40, hidden_size=64, intermediate_size=32,
                                             num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
                                             rms_norm_eps=1e-5, rope_theta=10000.0, max_position_embeddings=64,
                                             tie_word_embeddings=False),
         "F16", 1, 5, (2, 9), 12, False, "Qwen2, F16 weights, no GQA (ratio 1), untied"),
        ("llama_bias_gqa4_hd64", llama(vocab_size=37, hidden_size=32, intermediate_size=48, num_hidden_layers=1,
                                       num_attention_heads=4, num_key_value_heads=1, head_dim=64,
                                       rms_norm_eps=1e-5, rope_theta=10000.0, max_position_embeddings=64,
                                       tie_word_embeddings=False, attention_bias=True),
         "F32", 2, 5, (1, 3), 8, False, "head_dim 64 given explicitly (H*D = 256 != hidden 32), GQA ratio 4"),
        ("llama_tied_gqa2_hd128_bf16", llama(vocab_size=29, hidden_size=32, intermediate_size=40,
                                             num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1,
                                             head_dim=128, rms_norm_eps=1e-5, rope_theta=10000.0,
                                             max_position_embeddings=32, tie_word_embeddings=True,
                                             attention_bias=False),
         "BF16", 2, 7, (1, 4), 8, True, "head_dim 128, BF16, tied; written by export_causal_lm"),
        # Issue 28: the RoPE base from either generation of config.json, random bases (log-uniform 1e3-1e7,
        # drawn once with a fixed seed: random_base).
        ("llama_v5_rope_parameters", llama(vocab_size=53, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                                           num_attention_heads=4, num_key_value_heads=2, rms_norm_eps=1e-5,
                                           rope_parameters={"rope_theta": random_base("llama_v5"), "rope_type": "default"},
                                           max_position_embeddings=64, tie_word_embeddings=False, attention_bias=False),
         "BF16", 2, 17, (2, 5), 8, False, "transformers 5.x config.json: the base only in rope_parameters, "
         "dtype for torch_dtype; a random base"),
        ("qwen2_v5_rope_parameters", qwen2(vocab_size=47, hidden_size=32, intermediate_size=40, num_hidden_layers=2,
                                           num_attention_heads=4, num_key_value_heads=1, rms_norm_eps=1e-6,
                                           rope_parameters={"rope_theta": random_base("qwen2_v5"), "rope_type": "default"},
                                           max_position_embeddings=64, tie_word_embeddings=True),
         "F32", 1, 21, (3,), 8, False, "transformers 5.x Qwen2 config.json (layer_types, rope_parameters); a random base"),
        ("llama_v4_random_base", llama(vocab_size=41, hidden_size=32, intermediate_size=48, num_hidden_layers=1,
                                       num_attention_heads=2, num_key_value_heads=2, rms_norm_eps=1e-5,
                                       rope_theta=random_base("llama_v4"), max_position_embeddings=64,
                                       tie_word_embeddings=True, attention_bias=False),
         "F32", 2, 15, (4,), 8, False, "transformers 4.x config.json (rope_theta at the top level); a random base"),
    ]


def random_base(name):
    """A RoPE base drawn log-uniformly from [1e3, 1e7] by a generator seeded from the name; rounded to 6
    significant digits, as a config.json would write it."""
    u = float(torch.rand(1, generator=gen_for("base/" + name)))
    return float(f"{10 ** (3 + 4 * u):.6g}")


# ------------------------------------------------------------------------------------------------
# 5. Checkpoints the loader must refuse (or accept) before any weight is used
# ------------------------------------------------------------------------------------------------

REFUSAL_BASE = {
    "llama": llama(vocab_size=8, hidden_size=8, intermediate_size=8, num_hidden_layers=2, num_attention_heads=2,
                   num_key_value_heads=1, head_dim=4, rms_norm_eps=1e-5, rope_theta=10000.0,
                   max_position_embeddings=16, tie_word_embeddings=False, attention_bias=False),
    "qwen2": qwen2(vocab_size=8, hidden_size=8, intermediate_size=8, num_hidden_layers=1, num_attention_heads=2,
                   num_key_value_heads=1, rms_norm_eps=1e-6, rope_theta=10000.0, max_position_embeddings=16,
                   tie_word_embeddings=True),
}


def refusal_cases():
    """(name, base, config patch (None value = delete the key), tensor edits, expect, errorMentions, note)."""
    L1 = "model.layers.1."
    return [
        ("rope_scaling_unknown_type", "llama", {"rope_scaling": {"rope_type": "su", "factor": 2.0}}, {}, "refused",
         "rope_scaling", "a RoPE type HF does not have"),
        ("rope_scaling_llama3_incomplete", "llama", {"rope_scaling": {"rope_type": "llama3", "factor": 8.0,
                                                                      "high_freq_factor": 4.0,
                                                                      "original_max_position_embeddings": 8192}}, {},
         "refused", "rope_scaling", "Llama 3.1's RoPE without its low_freq_factor"),
        ("rope_scaling_default", "llama", {"rope_scaling": {"rope_type": "default"}}, {}, "accepted", None,
         "an explicit default RoPE is the default RoPE"),
        ("rope_parameters_theta_zero", "llama", {"rope_theta": None, "rope_parameters": {"rope_theta": 0, "rope_type": "default"}},
         {}, "refused", "rope_parameters.rope_theta", "a base of 0 (issue 28: accepted when rope_parameters was ignored)"),
        ("rope_parameters_theta_negative", "llama", {"rope_theta": None, "rope_parameters": {"rope_theta": -10000.0,
                                                                                          "rope_type": "default"}},
         {}, "refused", "rope_parameters.rope_theta", None),
        ("rope_parameters_disagrees", "llama", {"rope_parameters": {"rope_theta": 500000.0, "rope_type": "default"}},
         {}, "refused", "rope_parameters.rope_theta", "rope_theta 10000 and rope_parameters.rope_theta 500000"),
        ("rope_parameters_unknown_type", "llama", {"rope_theta": None, "rope_parameters": {
            "rope_type": "su", "rope_theta": 500000.0, "factor": 8.0}}, {}, "refused", "rope_parameters",
         "5.x's form of an unknown RoPE type"),
        ("eos_token_id_string", "llama", {"eos_token_id": "two"}, {}, "refused", "eos_token_id",
         "issue 28: accepted, and generation never stopped"),
        ("eos_token_id_past_vocab", "llama", {"eos_token_id": [2, 8]}, {}, "refused", "eos_token_id[1]",
         "vocab_size 8: ids 0-7"),
        ("pad_token_id_past_vocab", "llama", {"pad_token_id": 8}, {}, "refused", "pad_token_id", None),
        ("hidden_act_gelu", "llama", {"hidden_act": "gelu"}, {}, "refused", "hidden_act", None),
        ("model_type_gpt2", "llama", {"model_type": "gpt2"}, {}, "refused", "model_type", None),
        ("qwen2_sliding_window_not_boolean", "qwen2", {"use_sliding_window": "yes", "sliding_window": 4}, {},
         "refused", "use_sliding_window", None),
        ("kv_heads_not_a_divisor", "llama", {"num_attention_heads": 2, "num_key_value_heads": 3}, {}, "refused",
         "num_key_value_heads", None),
        ("partial_rotary_factor", "llama", {"partial_rotary_factor": 0.5}, {}, "refused", "partial_rotary_factor",
         None),
        ("head_dim_odd", "llama", {"head_dim": 5}, {}, "refused", "head_dim", "RoPE needs pairs"),
        ("missing_tensor", "llama", {}, {"drop": [L1 + "mlp.up_proj.weight"]}, "refused",
         L1 + "mlp.up_proj.weight", None),
        ("misshapen_tensor", "llama", {}, {"reshape": {"model.norm.weight": [7]}}, "refused", "model.norm.weight",
         None),
        ("untied_without_lm_head", "llama", {}, {"drop": ["lm_head.weight"]}, "refused", "lm_head.weight",
         "tie_word_embeddings false needs lm_head.weight"),
        ("unexpected_bias", "llama", {}, {"add": {"model.layers.0.self_attn.o_proj.bias": [8]}}, "refused",
         "model.layers.0.self_attn.o_proj.bias", "attention_bias is false"),
        ("old_rope_buffers", "llama", {}, {"add": {"model.layers.0.self_attn.rotary_emb.inv_freq": [2],
                                                   L1 + "self_attn.rotary_emb.inv_freq": [2]}},
         "accepted", None, "older HF Llama checkpoints saved each layer's inv_freq; HF ignores them"),
        ("tied_with_equal_lm_head", "qwen2", {}, {"lm_head_copy": True}, "accepted", None,
         "tie_word_embeddings true and an lm_head.weight equal to the embedding (older saves keep it)"),
    ]


def refusal_case(name, base, patch, edits, expect, mentions, note):
    g = gen_for("refusal/" + name)
    hf = dict(REFUSAL_BASE[base])
    cfg = clm.config_from_hf(hf)
    m = clm.CausalLM(cfg)
    randomize_lm(m, g)
    sd = clm.hf_state_dict(m)
    for k in edits.get("drop", []):
        del sd[k]
    for k, shape in edits.get("reshape", {}).items():
        sd[k] = randn(g, *shape)
    for k, shape in edits.get("add", {}).items():
        sd[k] = randn(g, *shape)
    if edits.get("lm_head_copy"):
        sd["lm_head.weight"] = sd["model.embed_tokens.weight"].clone()
    config = clm.hf_config_dict(cfg, bos_token_id=hf["bos_token_id"], eos_token_id=hf["eos_token_id"])
    for k, v in patch.items():
        if v is None:
            config.pop(k, None)
        else:
            config[k] = v
    folder = os.path.join(OUT_DIR, "refusals", name)
    os.makedirs(folder)
    save_safetensors(collections.OrderedDict(sorted(sd.items())), os.path.join(folder, "model.safetensors"),
                     {"format": "pt"}, "F32")
    with open(os.path.join(folder, "config.json"), "w", encoding="utf-8") as fh:
        fh.write(hf_config_json(config))
    # Our reference loader behaves as the runtime must.
    try:
        weights, _ = load_safetensors(os.path.join(folder, "model.safetensors"))
        clm.load_state_dict_hf(clm.CausalLM(config), weights)
        got = "accepted"
    except ValueError as e:
        got = "refused"
        assert mentions and mentions in str(e), (name, str(e))
    assert got == expect, (name, got)
    case = {"name": name, "checkpoint": f"refusals/{name}", "expect": expect}
    if mentions:
        case["errorMentions"] = mentions
    if note:
        case["note"] = note
    return case


# ------------------------------------------------------------------------------------------------
# Verify: re-read every file
# ------------------------------------------------------------------------------------------------

def verify_block(path):
    """Replay a block case from the file alone with the float32 torch modules."""
    tensors, meta = load_safetensors(path)
    spec = json.loads(meta["case"])
    m = spec["module"]
    if m == "RMSNorm":
        mod = clm.RMSNorm(spec["args"][0], spec["options"]["eps"], spec["options"]["elementwiseAffine"])
        if "param.weight" in tensors:
            with torch.no_grad():
                mod.weight.copy_(tensors["param.weight"])
        with torch.no_grad():
            got = mod(tensors["input.x"])
    elif m == "SiLU":
        got = torch.nn.functional.silu(tensors["input.x"])
    elif m == "RotaryPositionalEmbeddings":
        o = spec["options"]
        mod = clm.RotaryPositionalEmbeddings(spec["args"][0], o["maxSeqLen"], o["base"], o["interleaved"])
        pos = tensors.get("input.input_pos")
        got = mod(tensors["input.x"], None if pos is None else pos.long())
        assert torch.equal(mod.inv_freq(), tensors["expected.theta"]), path
    else:
        got, _ = sdpa_ref(tensors["input.query"], tensors["input.key"], tensors["input.value"],
                          spec["forward"]["attnMask"], torch.float32)
    assert within(got, tensors["expected.output"], (spec["atol"], spec["rtol"])), path
    return spec


def verify_model(folder):
    """Load the checkpoint as a user would (config.json + model.safetensors), run float32 torch."""
    with open(os.path.join(folder, "config.json"), encoding="utf-8") as fh:
        hf = json.load(fh)
    weights, meta = load_safetensors(os.path.join(folder, "model.safetensors"))
    exp, emeta = load_safetensors(os.path.join(folder, "expected.safetensors"))
    spec = json.loads(emeta["case"])
    assert ("attnwasm.config" in meta) == spec["checkpoint"]["attnwasmMetadata"], folder
    if "attnwasm.config" in meta:
        assert json.loads(meta["attnwasm.config"])["hf_config"] == hf, folder
    m = clm.load_state_dict_hf(clm.CausalLM(hf).eval(), {k: v.float() for k, v in weights.items()})
    ids = exp["input.ids"].long()
    with torch.no_grad():
        att = []
        got = m(ids, attentions=att)
        cached = clm.cached_logits(m, ids, spec["kvCache"]["prefill"])
    tol = (spec["atol"], spec["rtol"])
    assert within(got, exp["expected.logits"], tol) and within(cached, exp["expected.logits"], tol), folder
    assert within(torch.stack([w[:, :, -1, :] for w in att]), exp["expected.last_attention"], tol), folder
    for gs in spec["greedy"]:
        out, _ = clm.greedy(m, exp[gs["prompt"]].long().view(1, -1), gs["maxNewTokens"])
        assert torch.equal(out[0].to(torch.int32), exp[gs["ids"]]), folder
    return spec


def main():
    torch.set_num_threads(1)
    for sub in ("blocks", "models", "refusals"):   # every file in these is made by this script (quant/: by
        if os.path.isdir(os.path.join(OUT_DIR, sub)):   # make_lm_quant_goldens.py, left alone)
            shutil.rmtree(os.path.join(OUT_DIR, sub))
    os.makedirs(os.path.join(OUT_DIR, "blocks"))
    rows = []
    for name, build in block_cases() + rope_cases() + sdpa_cases():
        spec, tensors = build()
        assert spec["name"] == name
        path = os.path.join(OUT_DIR, "blocks", name + ".safetensors")
        rows.append((f"blocks/{name}.safetensors", spec["module"], write_case(path, spec, tensors)))
        verify_block(path)
    for name, hf, dtype, batch, T, prompts, new_tokens, via_export, note in model_cases():
        spec = lm_model_case(name, hf, dtype, batch, T, prompts, new_tokens, via_export, note)
        folder = os.path.join(OUT_DIR, "models", name)
        verify_model(folder)
        for f in ("model.safetensors", "config.json", "expected.safetensors"):
            rows.append((f"models/{name}/{f}", "CausalLM/" + dtype, os.path.getsize(os.path.join(folder, f))))
    refusals = [refusal_case(*c) for c in refusal_cases()]
    path = os.path.join(OUT_DIR, "refusals", "cases.json")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(json.dumps({"generator": GENERATOR, "description": REFUSALS_DOC}, indent=1)[:-2] + ',\n "cases": [\n'
                 + ",\n".join("  " + json.dumps(c) for c in refusals) + "\n ]\n}\n")
    for c in refusals:
        for f in ("model.safetensors", "config.json"):
            rows.append((f"{c['checkpoint']}/{f}", "refusal/" + c["expect"],
                         os.path.getsize(os.path.join(OUT_DIR, c["checkpoint"], f))))
    rows.append(("refusals/cases.json", "refusals", os.path.getsize(path)))
    sens = angle_sensitivity(64, 10000, torch.tensor([65000, 65535, 40001]))
    w = max(len(r[0]) for r in rows)
    for path, module, size in rows:
        print(f"{path:<{w}}  {module:<28} {size:>8} B")
    total = sum(r[2] for r in rows)
    print(f"{len(rows)} files, total {total} B ({total / 1024:.1f} KiB) in {os.path.relpath(OUT_DIR)}; all re-read "
          f"and replayed OK")
    print(f"float32 torch vs float64 reference, whole models: max |diff| {STATS['max_model_f32_vs_f64']:.2e}; "
          f"KV cache vs full recomputation (float32): {STATS['max_kv_cache_vs_full']:.2e}; smallest greedy "
          f"margin {STATS['min_greedy_margin']:.2e}; rope_hf_d64_large_pos: cos of a float64 angle is off by "
          f"up to {sens:.2e}")


if __name__ == "__main__":
    main()
