#!/usr/bin/python3
"""Golden files for the causal-LM families of issue 31 (tools/families.py is the twin): tests/data/goldens/families/.

Not a test itself: it writes tiny checkpoints with their config.json in every generation and their logits, re-reads
every file and replays it. Run with Debian's torch (1.13): /usr/bin/python3 tests/data/make_family_goldens.py
Deterministic (fixed seeds, one thread): two runs give identical bytes.

FILES (JSON; float tensors are {"dtype": "F32", "shape": [...], "base64": little-endian bytes})
  <case>.json, one tiny model each:
    name, family (model_type), features [...], note, generator, torch
    configs       {"v4": config.json as transformers 4.x writes it (rope_theta, rope_scaling, sliding_window_pattern,
                  rope_local_base_freq, torch_dtype), "v5": as 5.x writes it (rope_parameters, per layer type for
                  Gemma 3, layer_types, dtype), and sometimes more ("v4_minimal": keys at their class default
                  omitted, "v4_layer_types", "v4_interval", ...)}: the same weights, the same logits for each
    weights       {"dtype": "F32" | "F16" | "BF16", "base64": the model.safetensors bytes as save_pretrained writes
                  them: the hub's tensor names, sorted, metadata {"format": "pt"}, no lm_head.weight when tied}
    atol, rtol    1e-4, 1e-4: |got - expected| <= atol + rtol * |expected| elementwise
    forward       {"ids": [[...]] (B, T), "logits": (B, T, V)}: float64 forward of the stored weights (16-bit values
                  widened exactly; RoPE tables formed in float32 as torch does), rounded to float32. Checked against
                  the float32 torch forward (<= 5e-5 + 5e-5 |x|).
    kvCache       {"prefill": P, "logits": (B, T, V), "equalsForward": bool, "maxDiffFromForward": float}: the same ids
                  through the generate path (ids[:, :P] in one call, then one token per call). equalsForward false
                  where transformers' cache differs from a recomputation: dynamic NTK past max_position_embeddings
                  (cached keys keep the base of the call that rotated them) and Phi-3 longrope before the reset.
    greedy        [{"prompt": [...], "ids": [...], "margins": [...], "stepLogits": (N, V), "forwardMatchesSteps":
                  bool, "resets": [...]}]: greedy continuation through the generate path (HF generate, greedy);
                  compare ids up to the first step whose margin < greedyMinMargin. stepLogits row n chose ids[n];
                  forwardMatchesSteps: the forward of prompt + ids[:-1] has these rows too. resets: sequence lengths
                  at which Phi-3's longrope cache reset recomputed everything.
    sensitivity   {what: r}: the same weights with that feature turned off miss expected by r tolerances (r > 10:
                  a runtime that ignores the feature fails)
    shape         {layers, hidden, heads, kvHeads, headDim, rotaryDim, vocab, tied, dtype, windows, layerKinds, nope}
  refusals.json   {"checkpoints": {family: weights}, "cases": [{"name", "family", "config", "expect": "refused" |
                  "accepted", "errorMentions": the dotted config path (or tensor name) the message must contain,
                  "weights"?: a checkpoint of its own}]}: aw.loadModel(weights, { config }) must refuse before using
                  any weight, naming the key; tools/families.py refuses the same with "config.<errorMentions>".
"""

import base64
import collections
import copy
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
import families as fam  # noqa: E402
from export_safetensors import load_safetensors, serialize_safetensors  # noqa: E402

SEED = 20261203
GENERATOR = "tests/data/make_family_goldens.py"
OUT_DIR = os.path.join(HERE, "goldens", "families")
TOL = (1e-4, 1e-4)            # the target: atol + rtol * |expected|
XCHECK = 5e-5                 # float32 torch vs the float64 reference (same as make_lm_goldens.py)
GREEDY_MIN_MARGIN = 1e-3
MIN_SENSITIVITY = 10.0        # a feature turned off must miss by more than this many tolerances
MAX_FILE_BYTES = 400_000
DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}
DTYPE_NAMES = {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}
STATS = collections.defaultdict(float)


def gen_for(name):
    """A generator seeded from the case name: adding or reordering cases changes no other file."""
    return torch.Generator().manual_seed(SEED ^ zlib.crc32(name.encode()))


def randn(g, *shape, std=1.0, mean=0.0):
    return torch.randn(*shape, generator=g) * std + mean


def within(got, want, tol):
    got, want = got.double(), want.double()
    return bool(((got - want).abs() <= tol[0] + tol[1] * want.abs()).all())


def ratio_to_tol(got, want, tol=TOL):
    got, want = got.double(), want.double()
    return float(((got - want).abs() / (tol[0] + tol[1] * want.abs())).max())


def f32_tensor(t):
    t = t.detach().to(torch.float32).contiguous()
    return {"dtype": "F32", "shape": list(t.shape), "base64": base64.b64encode(t.numpy().astype("<f4").tobytes()).decode()}


# ------------------------------------------------------------------------------------------------
# config.json as transformers 4.x writes it, per family
# ------------------------------------------------------------------------------------------------

def v4_config(mt, dtype, version, **kw):
    """A config.json of transformers 4.x for model_type mt: the keys its configuration class writes, then kw.
    A kw value of ... deletes the key (as to_diff_dict leaves out values equal to the class and base defaults)."""
    d = {"architectures": [fam.RECIPES[mt]["arch"]], "model_type": mt, "torch_dtype": DTYPE_NAMES[dtype],
         "transformers_version": version, "use_cache": True, "initializer_range": 0.02, "attention_dropout": 0.0,
         "rope_scaling": None}
    fam_keys = {
        "llama": {"hidden_act": "silu", "attention_bias": False, "mlp_bias": False, "pretraining_tp": 1,
                  "bos_token_id": 1, "eos_token_id": 2},
        "qwen3": {"hidden_act": "silu", "attention_bias": False, "use_sliding_window": False, "sliding_window": None,
                  "max_window_layers": 28, "bos_token_id": 0, "eos_token_id": 1},
        "mistral": {"hidden_act": "silu", "bos_token_id": 1, "eos_token_id": 2},
        "gemma3_text": {"hidden_activation": "gelu_pytorch_tanh", "attention_bias": False,
                        "attn_logit_softcapping": None, "final_logit_softcapping": None, "cache_implementation": "hybrid",
                        "rope_local_base_freq": 10000.0, "sliding_window_pattern": 6, "pad_token_id": 0,
                        "eos_token_id": 1, "bos_token_id": 2},
        "phi3": {"hidden_act": "silu", "embd_pdrop": 0.0, "resid_pdrop": 0.0, "partial_rotary_factor": 1.0,
                 "original_max_position_embeddings": 4096, "sliding_window": None, "bos_token_id": 1,
                 "eos_token_id": 2, "pad_token_id": 3},
        "smollm3": {"hidden_act": "silu", "attention_bias": False, "mlp_bias": False, "use_sliding_window": False,
                    "sliding_window": None, "no_rope_layer_interval": 4, "pretraining_tp": 1, "bos_token_id": 1,
                    "eos_token_id": 2, "pad_token_id": 3},
    }[mt]
    d.update(fam_keys)
    if mt == "mistral":
        del d["rope_scaling"]           # MistralConfig 4.x has no rope_scaling argument
    for k, v in kw.items():
        if v is ...:
            d.pop(k, None)
        else:
            d[k] = v
    return d


# ------------------------------------------------------------------------------------------------
# The cases
# ------------------------------------------------------------------------------------------------

def case(name, features, config, dtype, batch, T, prefill, prompts, new_tokens, note, variants=None,
         sensitivity=None):
    return dict(name=name, features=features, config=config, dtype=dtype, batch=batch, T=T, prefill=prefill,
                prompts=prompts, new_tokens=new_tokens, note=note, variants=variants or {},
                sensitivity=sensitivity or {})


def drop(d, *keys):
    d = copy.deepcopy(d)
    for k in keys:
        d.pop(k, None)
    return d


def cases():
    out = []
    # ---- Llama 3.x: rope types llama3, linear, dynamic, yarn ----
    c = v4_config("llama", "BF16", "4.57.1", vocab_size=96, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                  num_attention_heads=2, num_key_value_heads=1, head_dim=16, rms_norm_eps=1e-5, rope_theta=500000.0,
                  max_position_embeddings=1024, tie_word_embeddings=True,
                  rope_scaling={"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                                "original_max_position_embeddings": 256, "rope_type": "llama3"})
    out.append(case("llama3_rope_tied_bf16", ["rope llama3 (high / medium / low frequency bands)", "tied", "BF16",
                                              "GQA 2", "base 500000"], c, "BF16", 2, 21, 9, (3, 8), 10,
                    "Llama 3.2's RoPE: with head_dim 16 and original_max_position_embeddings 256, dims 0-1 keep their "
                    "frequency, dim 2 is smoothed, dims 3-7 are divided by 8",
                    sensitivity={"rope_scaling null (default RoPE)": dict(rope_scaling=None)}))
    c = v4_config("llama", "F32", "4.57.1", vocab_size=80, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, head_dim=8, rms_norm_eps=1e-6, rope_theta=10000.0,
                  max_position_embeddings=128, tie_word_embeddings=False, attention_bias=True, mlp_bias=True,
                  rope_scaling={"factor": 4.0, "rope_type": "linear"})
    out.append(case("llama_rope_linear_bias_untied_f32", ["rope linear", "attention_bias (q/k/v/o)", "mlp_bias",
                                                          "untied"], c, "F32", 2, 17, 7, (4,), 8,
                    "linear scaling: inv_freq / factor", variants={"v4_type_key": dict(c, rope_scaling={
                        "factor": 4.0, "type": "linear"})},
                    sensitivity={"rope_scaling null": dict(rope_scaling=None)}))
    c = v4_config("llama", "F16", "4.57.1", vocab_size=72, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=1, head_dim=8, rms_norm_eps=1e-5, rope_theta=10000.0,
                  max_position_embeddings=16, tie_word_embeddings=False,
                  rope_scaling={"factor": 2.0, "rope_type": "dynamic"})
    out.append(case("llama_rope_dynamic_gqa4_f16", ["rope dynamic (NTK) past max_position_embeddings", "GQA 4", "F16",
                                                    "untied", "positions past max_position_embeddings"],
                    c, "F16", 2, 24, 10, (12,), 10,
                    "dynamic NTK: max_position_embeddings 16, sequences of 24: the forward uses the base of seq_len 24 "
                    "for every position; the generate path rotates each call's keys with the base of that call's "
                    "length (kvCache.equalsForward false), as transformers' cache does. The runtime must accept "
                    "positions past max_position_embeddings for this rope type",
                    sensitivity={"rope_scaling null": dict(rope_scaling=None)}))
    c = v4_config("llama", "F32", "4.57.1", vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                  num_attention_heads=2, num_key_value_heads=2, head_dim=16, rms_norm_eps=1e-5, rope_theta=10000.0,
                  max_position_embeddings=64, tie_word_embeddings=True,
                  rope_scaling={"factor": 4.0, "rope_type": "yarn"})
    out.append(case("llama_rope_yarn_tied_f32", ["rope yarn (ramp, attention factor 0.1 ln 4 + 1)", "tied", "GQA 1"],
                    c, "F32", 2, 19, 8, (5,), 8,
                    "YaRN without original_max_position_embeddings: every transformers generation then uses "
                    "max_position_embeddings (64) for the correction range; 5.x writes it into rope_parameters",
                    sensitivity={"rope_scaling null": dict(rope_scaling=None),
                                 "attention_factor 1": dict(rope_scaling={"factor": 4.0, "rope_type": "yarn",
                                                                          "attention_factor": 1.0})}))
    # ---- Qwen3 ----
    c = v4_config("qwen3", "BF16", "4.57.1", vocab_size=128, hidden_size=48, intermediate_size=96, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, head_dim=16, rms_norm_eps=1e-6, rope_theta=1000000.0,
                  max_position_embeddings=256, tie_word_embeddings=True)
    out.append(case("qwen3_qk_norm_tied_bf16", ["q_norm / k_norm", "explicit head_dim (H*D = 64 != hidden 48)", "tied",
                                                "BF16", "GQA 2"], c, "BF16", 2, 15, 6, (3, 7), 10,
                    "Qwen3: RMSNorm over head_dim per head on q and k before RoPE",
                    variants={"v4_minimal": drop(c, "rms_norm_eps", "attention_bias", "use_sliding_window",
                                                 "sliding_window", "max_window_layers", "rope_scaling")},
                    sensitivity={"rope_theta 10000": dict(rope_theta=10000.0)}))
    c = v4_config("qwen3", "F32", "4.57.1", vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=1, head_dim=16, rms_norm_eps=1e-6, rope_theta=10000.0,
                  max_position_embeddings=64, tie_word_embeddings=False, attention_bias=True,
                  rope_scaling={"factor": 4.0, "original_max_position_embeddings": 16, "rope_type": "yarn"})
    out.append(case("qwen3_rope_yarn_bias_untied_f32", ["rope yarn with original_max_position_embeddings",
                                                        "attention_bias", "untied", "GQA 4"],
                    c, "F32", 2, 18, 7, (6,), 8,
                    "Qwen3's YaRN: original_max_position_embeddings 16, max_position_embeddings 64 = 4 x 16 (every "
                    "generation agrees when factor is that ratio)",
                    sensitivity={"rope_scaling null": dict(rope_scaling=None)}))
    # ---- Mistral ----
    c = v4_config("mistral", "BF16", "4.57.1", vocab_size=90, hidden_size=32, intermediate_size=64, num_hidden_layers=3,
                  num_attention_heads=4, num_key_value_heads=2, head_dim=16, rms_norm_eps=1e-5, rope_theta=1000000.0,
                  max_position_embeddings=256, sliding_window=5, tie_word_embeddings=False)
    out.append(case("mistral_window5_untied_bf16", ["sliding_window 5 < prompt 20", "explicit head_dim", "untied",
                                                    "BF16"], c, "BF16", 2, 20, 8, (4, 11), 10,
                    "Mistral's sliding window: the query at position p sees keys p-4 .. p",
                    sensitivity={"sliding_window null": dict(sliding_window=None),
                                 "sliding_window 6 (one key too many)": dict(sliding_window=6)}))
    c = v4_config("mistral", "F32", "4.57.1", vocab_size=70, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=4, rms_norm_eps=1e-6, rope_theta=10000.0,
                  max_position_embeddings=128, sliding_window=None, tie_word_embeddings=True)
    out.append(case("mistral_nowindow_tied_f32", ["sliding_window null", "tied", "GQA 1", "head_dim from hidden"],
                    c, "F32", 1, 13, 5, (3,), 8, "Mistral 7B v0.2 / v0.3 style: no window",
                    variants={"v4_minimal": drop(c, "rope_theta", "rms_norm_eps")},
                    sensitivity={"sliding_window 3": dict(sliding_window=3)}))
    # ---- Gemma 3 text ----
    c = v4_config("gemma3_text", "BF16", "4.50.0", vocab_size=112, hidden_size=48, intermediate_size=96,
                  num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=1, head_dim=16,
                  query_pre_attn_scalar=24, rms_norm_eps=1e-6, rope_theta=1000000.0, rope_local_base_freq=10000.0,
                  max_position_embeddings=512, sliding_window=4, sliding_window_pattern=2)
    out.append(case("gemma3_text_pattern2_tied_bf16", [
        "embeddings x float32(sqrt(48))", "Gemma RMSNorm (1 + w)", "GeGLU gelu tanh", "four norms per layer",
        "q_norm / k_norm", "query_pre_attn_scalar 24 != head_dim 16", "sliding_window_pattern 2 (layers 0, 2 sliding)",
        "sliding_window 4 < prompt", "two RoPE bases (1e6 full, 1e4 sliding)", "tied (key omitted: default true)",
        "BF16", "GQA 4"], c, "BF16", 2, 20, 8, (5, 9), 10,
        "Gemma 3 text as transformers 4.50 writes it (no tie_word_embeddings key: Gemma3TextConfig's default true)",
        variants={"v4_layer_types": dict(c, layer_types=["sliding_attention", "full_attention", "sliding_attention",
                                                         "full_attention"], transformers_version="4.57.1")},
        sensitivity={"every layer full attention": dict(sliding_window_pattern=1),
                     "sliding_window 5 (one key too many)": dict(sliding_window=5),
                     "embed scale rounded to bfloat16 (6.9375)": {"__embed_scale_dtype__": torch.bfloat16},
                     "query_pre_attn_scalar = head_dim": dict(query_pre_attn_scalar=16),
                     "rope_local_base_freq = rope_theta": dict(rope_local_base_freq=1000000.0)}))
    c = v4_config("gemma3_text", "F32", "4.50.0", vocab_size=64, hidden_size=32, intermediate_size=64,
                  num_hidden_layers=3, num_attention_heads=2, num_key_value_heads=2, head_dim=16,
                  query_pre_attn_scalar=16, rms_norm_eps=1e-6, rope_theta=1000000.0, rope_local_base_freq=10000.0,
                  max_position_embeddings=256, sliding_window=6, sliding_window_pattern=3, tie_word_embeddings=False,
                  final_logit_softcapping=4.0, rope_scaling={"factor": 8.0, "rope_type": "linear"})
    out.append(case("gemma3_text_softcap_linear_untied_f32", [
        "final_logit_softcapping 4", "rope linear 8 on full-attention layers only", "sliding_window_pattern 3",
        "sliding_window 6", "untied (tie_word_embeddings false written)", "GQA 1"], c, "F32", 2, 17, 7, (4,), 8,
        "Gemma 3 4B-style linear RoPE scaling (global layers; local layers keep the default RoPE at "
        "rope_local_base_freq) and final logit soft-capping (attn_logit_softcapping is ignored by transformers' "
        "Gemma 3 and refused: refusals.json)",
        sensitivity={"final_logit_softcapping null": dict(final_logit_softcapping=None),
                     "rope_scaling null": dict(rope_scaling=None)}))
    # ---- Phi-3 / Phi-3.5 / Phi-4-mini ----
    short = [1.0, 1.05, 1.3, 1.9, 2.6, 3.1]
    long_ = [1.2, 2.0, 3.5, 6.0, 9.0, 12.0]
    c = v4_config("phi3", "BF16", "4.57.1", vocab_size=100, hidden_size=48, intermediate_size=64, num_hidden_layers=2,
                  num_attention_heads=3, num_key_value_heads=1, rms_norm_eps=1e-5, rope_theta=10000.0,
                  partial_rotary_factor=0.75, original_max_position_embeddings=16, max_position_embeddings=64,
                  sliding_window=9, tie_word_embeddings=True,
                  rope_scaling={"long_factor": long_, "short_factor": short, "type": "longrope"})
    out.append(case("phi3_longrope_partial_window_tied_bf16", [
        "fused qkv_proj / gate_up_proj", "partial_rotary_factor 0.75 (12 of 16 dims)", "longrope (short <= 16 < long)",
        "longrope attention factor sqrt(1 + ln 4 / ln 16)", "cache reset when crossing original_max_position_embeddings",
        "sliding_window 9 < prompt", "tied (Phi-4-mini)", "BF16", "GQA 3"], c, "BF16", 2, 24, 10, (12,), 10,
        "Phi-4-mini-style: the forward of 24 tokens uses the long factors everywhere; the generate path prefills "
        "10 tokens with the short factors and, on reaching 17 tokens, drops the cache and recomputes (Phi3ForCausalLM."
        "prepare_inputs_for_generation), so kvCache rows < 16 differ from the forward and rows >= 16 equal it",
        sensitivity={"rope_scaling null": dict(rope_scaling=None),
                     "sliding_window null": dict(sliding_window=None)}))
    c = v4_config("phi3", "F32", "4.57.1", vocab_size=64, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                  num_attention_heads=2, num_key_value_heads=2, rms_norm_eps=1e-5, rope_theta=10000.0,
                  partial_rotary_factor=0.5, max_position_embeddings=128, tie_word_embeddings=False)
    out.append(case("phi3_default_partial_untied_f32", ["fused qkv_proj / gate_up_proj", "partial_rotary_factor 0.5",
                                                        "default RoPE", "untied", "GQA 1"], c, "F32", 2, 14, 6, (4,), 8,
                    "Phi-3 with rope_scaling null and half the head dims rotated",
                    sensitivity={"partial_rotary_factor 1": dict(partial_rotary_factor=1.0)}))
    # ---- SmolLM3 ----
    c = v4_config("smollm3", "BF16", "4.57.1", vocab_size=96, hidden_size=32, intermediate_size=64, num_hidden_layers=4,
                  num_attention_heads=4, num_key_value_heads=2, rms_norm_eps=1e-6, rope_theta=50000.0,
                  max_position_embeddings=256, no_rope_layer_interval=2, no_rope_layers=[1, 0, 1, 0],
                  layer_types=["full_attention"] * 4, tie_word_embeddings=True)
    out.append(case("smollm3_nope_tied_bf16", ["no_rope_layers [1, 0, 1, 0] (layers 1, 3 without RoPE)", "tied",
                                               "BF16", "GQA 2"], c, "BF16", 2, 16, 6, (4, 6), 10,
                    "SmolLM3's NoPE layers",
                    variants={"v4_interval": drop(c, "no_rope_layers", "layer_types")},
                    sensitivity={"RoPE on every layer": dict(no_rope_layers=[1, 1, 1, 1])}))
    c = v4_config("smollm3", "F32", "4.57.1", vocab_size=80, hidden_size=32, intermediate_size=48, num_hidden_layers=4,
                  num_attention_heads=2, num_key_value_heads=1, rms_norm_eps=1e-6, rope_theta=2000000.0,
                  max_position_embeddings=256, no_rope_layers=[1, 0, 1, 0], use_sliding_window=True, sliding_window=5,
                  attention_bias=True, mlp_bias=True, tie_word_embeddings=False,
                  layer_types=["full_attention", "sliding_attention", "full_attention", "sliding_attention"])
    out.append(case("smollm3_nope_sliding_bias_untied_f32", [
        "use_sliding_window: the NoPE layers slide (window 5)", "attention_bias", "mlp_bias", "untied", "GQA 2"],
        c, "F32", 2, 18, 7, (5,), 8, "SmolLM3 with its sliding windows enabled (layer_types derived from no_rope_layers)",
        variants={"v4_derived_layer_types": drop(c, "layer_types")},
        sensitivity={"use_sliding_window false": dict(use_sliding_window=False, layer_types=...)}))
    return out


# ------------------------------------------------------------------------------------------------
# Building one case
# ------------------------------------------------------------------------------------------------

def randomize(model, g):
    """Order-1 activations: matrices N(0, 1/fan_in), biases N(0, 0.2^2), embeddings N(0, 1); norm weights N(1, 0.3^2)
    (Gemma's (1 + w) norms: N(0, 0.3^2), HF initialises them to zeros)."""
    gemma = model.cfg.recipe["norm"] == "gemma"
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("embed_tokens.weight"):
                std, mean = 1.0, 0.0
            elif "norm" in name:
                std, mean = 0.3, (0.0 if gemma else 1.0)
            elif p.dim() == 2:
                std, mean = 1.0 / math.sqrt(p.shape[1]), 0.0
            else:
                std, mean = 0.2, 0.0
            p.copy_(randn(g, *p.shape, std=std, mean=mean))


def patched(config, patch):
    d = copy.deepcopy(config)
    for k, v in patch.items():
        if v is ...:
            d.pop(k, None)
        else:
            d[k] = v
    return d


def shape_of(cfg, dtype):
    rot = [layer.rope.dim if layer.rope else 0 for layer in cfg.layers]
    return {"modelType": cfg.model_type, "layers": cfg.num_hidden_layers, "hidden": cfg.hidden_size,
            "heads": cfg.num_attention_heads, "kvHeads": cfg.num_key_value_heads, "headDim": cfg.head_dim,
            "gqaRatio": cfg.num_attention_heads // cfg.num_key_value_heads, "rotaryDim": max(rot),
            "intermediate": cfg.intermediate_size, "vocab": cfg.vocab_size, "tied": cfg.tie_word_embeddings,
            "dtype": dtype, "layerKinds": [layer.kind for layer in cfg.layers],
            "windows": [layer.window for layer in cfg.layers],
            "ropeTypes": [layer.rope.rope_type if layer.rope else None for layer in cfg.layers]}


def build(c):
    name = c["name"]
    g = gen_for(name)
    cfg = fam.config_from_hf(c["config"])
    configs = collections.OrderedDict([("v4", c["config"]), ("v5", fam.hf_config_v5(c["config"]))])
    configs.update(c["variants"])
    for gen, d in configs.items():
        assert fam.config_from_hf(d) == cfg, (name, gen)
    m32 = fam.FamilyLM(cfg).eval()
    randomize(m32, g)
    pdt = DTYPES[c["dtype"]]
    with torch.no_grad():                        # torch computes with the stored (rounded) weights
        for p in m32.parameters():
            p.copy_(p.to(pdt).float())
    sd = fam.hf_state_dict(m32)
    m64 = fam.load_state_dict_hf(fam.FamilyLM(cfg).double().eval(), sd)
    B, T, P = c["batch"], c["T"], c["prefill"]
    ids = torch.randint(0, cfg.vocab_size, (B, T), generator=g)
    with torch.no_grad():
        want = m64(ids)
        got32 = m32(ids)
        kv64 = fam.kv_logits(m64, ids, P)
        kv32 = fam.kv_logits(m32, ids, P)
    assert within(got32, want, (XCHECK, XCHECK)), (name, float((got32.double() - want).abs().max()))
    assert within(kv32, kv64, (XCHECK, XCHECK)), (name, float((kv32.double() - kv64).abs().max()))
    kv_diff = float((kv64 - want).abs().max())
    STATS["max_f32_vs_f64"] = max(STATS["max_f32_vs_f64"], float((got32.double() - want).abs().max()))
    # Each feature matters: the same weights with it turned off miss by far more than the tolerance.
    sens = collections.OrderedDict()
    for label, patch in c["sensitivity"].items():
        patch = dict(patch)
        scale_dtype = patch.pop("__embed_scale_dtype__", None)
        alt = fam.load_state_dict_hf(fam.FamilyLM(patched(c["config"], patch)).double().eval(), sd)
        if scale_dtype is not None:
            alt.embed_scale_dtype = scale_dtype
        with torch.no_grad():
            r = ratio_to_tol(alt(ids), want)
        assert r > MIN_SENSITIVITY, (name, label, r)
        sens[label] = round(r, 1)
    greedy = []
    for k, plen in enumerate(c["prompts"]):
        prompt = torch.randint(0, cfg.vocab_size, (1, plen), generator=g)
        ids64, margins64, steps64 = fam.greedy(m64, prompt, c["new_tokens"])
        ids32, margins32, steps32 = fam.greedy(m32, prompt, c["new_tokens"])
        for i in range(c["new_tokens"]):        # float32 and float64 agree up to the first near tie
            if int(ids32[i]) != int(ids64[i]):
                assert float(margins64[:i + 1].min()) < GREEDY_MIN_MARGIN, (name, k, i)
                break
        assert within(steps32[:1], steps64[:1], (XCHECK, XCHECK)), name
        seq = torch.cat([prompt[0], ids64[:-1]]).view(1, -1)
        with torch.no_grad():
            rows = m64(seq)[0, plen - 1:]
        s = fam.Session(m64)
        s.append(prompt)
        for t in ids64[:-1]:
            s.append(t.view(1, 1))
        greedy.append({"prompt": prompt[0].tolist(), "ids": ids64.tolist(),
                       "margins": [float(torch.tensor(x, dtype=torch.float32)) for x in margins64.tolist()],
                       "stepLogits": f32_tensor(steps64),
                       "forwardMatchesSteps": float((rows - steps64).abs().max()) < 1e-9,
                       "resets": s.resets})
        STATS["min_greedy_margin"] = min(STATS.get("min_greedy_margin", 1e9), float(margins64.min()))
    weights = serialize_safetensors(collections.OrderedDict(sorted(sd.items())), {"format": "pt"}, c["dtype"])
    g_json = collections.OrderedDict([
        ("name", name), ("family", cfg.model_type), ("features", c["features"]), ("note", c["note"]),
        ("generator", GENERATOR), ("torch", torch.__version__),
        ("configs", configs),
        ("weights", {"dtype": c["dtype"], "bytes": len(weights), "base64": base64.b64encode(weights).decode()}),
        ("atol", TOL[0]), ("rtol", TOL[1]),
        ("forward", {"ids": ids.tolist(), "logits": f32_tensor(want)}),
        ("kvCache", {"prefill": P, "logits": f32_tensor(kv64), "equalsForward": kv_diff < 1e-9,
                     "maxDiffFromForward": kv_diff}),
        ("greedy", greedy), ("greedyMinMargin", GREEDY_MIN_MARGIN),
        ("sensitivity", sens),
        ("embedScale", float(fam.embed_scale(cfg, torch.float32)) if cfg.recipe["embed_scale"] else None),
        ("shape", shape_of(cfg, c["dtype"])),
    ])
    return g_json


# ------------------------------------------------------------------------------------------------
# Refusals
# ------------------------------------------------------------------------------------------------

def tiny_base(mt):
    kw = dict(vocab_size=16, hidden_size=8, intermediate_size=8, num_hidden_layers=2, num_attention_heads=2,
              num_key_value_heads=1, rms_norm_eps=1e-6, rope_theta=10000.0, max_position_embeddings=64)
    if mt == "gemma3_text":
        kw.update(head_dim=4, query_pre_attn_scalar=4, sliding_window=4, sliding_window_pattern=2)
    if mt in ("qwen3", "mistral"):
        kw["head_dim"] = 4
    if mt == "mistral":
        kw["sliding_window"] = None
    return v4_config(mt, "F32", "4.57.1", **kw)


def tiny_weights(cfg_dict, name, edits=None):
    cfg = fam.config_from_hf(cfg_dict)
    m = fam.FamilyLM(cfg)
    randomize(m, gen_for("refusal/" + name))
    sd = fam.hf_state_dict(m)
    for k in (edits or {}).get("drop", []):
        del sd[k]
    blob = serialize_safetensors(collections.OrderedDict(sorted(sd.items())), {"format": "pt"}, "F32")
    return {"dtype": "F32", "bytes": len(blob), "base64": base64.b64encode(blob).decode()}


def refusal_cases():
    """(name, family, patch of the tiny 4.x config (... deletes a key) or a callable on it, errorMentions or None
    (accepted), tensor edits, note)."""
    rs = "rope_scaling"
    v5 = fam.hf_config_v5
    return [
        ("model_type_gemma2", "llama", dict(model_type="gemma2"), "model_type", None, "not a family of issue 31"),
        ("gemma3_multimodal_config", "gemma3_text", dict(model_type="gemma3"), "model_type", None,
         "Gemma 3's multimodal config.json: its text_config is the gemma3_text model"),
        ("llama_rope_type_unknown", "llama", {rs: {"rope_type": "ntk-by-parts", "factor": 2.0}}, "rope_scaling.rope_type",
         None, None),
        ("llama_rope_type_unknown_v5", "llama", lambda d: dict(v5(d), rope_parameters={"rope_type": "su",
                                                                                        "rope_theta": 10000.0}),
         "rope_parameters.rope_type", None, "5.x layout"),
        ("llama_longrope", "llama", {rs: {"rope_type": "longrope", "short_factor": [1.0, 1.0],
                                          "long_factor": [2.0, 2.0]}}, "rope_scaling.rope_type", None,
         "longrope (and its cache reset) is Phi-3's"),
        ("llama3_missing_low_freq_factor", "llama", {rs: {"rope_type": "llama3", "factor": 8.0, "high_freq_factor": 4.0,
                                                          "original_max_position_embeddings": 32}},
         "rope_scaling.low_freq_factor", None, None),
        ("llama3_v5_missing_factor", "llama", lambda d: dict(v5(d), rope_parameters={
            "rope_type": "llama3", "rope_theta": 500000.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
            "original_max_position_embeddings": 32}), "rope_parameters.factor", None, None),
        ("llama_yarn_unknown_key", "llama", {rs: {"rope_type": "yarn", "factor": 2.0, "beta_medium": 8.0}},
         "rope_scaling.beta_medium", None, "a key no transformers version reads"),
        ("llama_dynamic_factor_zero", "llama", {rs: {"rope_type": "dynamic", "factor": 0}}, "rope_scaling.factor",
         None, "transformers only warns below 1; 0 divides by zero"),
        ("llama_rope_scaling_and_parameters", "llama", lambda d: dict(v5(d), rope_scaling={"rope_type": "linear",
                                                                                           "factor": 2.0}),
         "rope_scaling", None, "both layouts at once (5.x lets rope_scaling win)"),
        ("llama_attn_logit_softcapping", "llama", dict(attn_logit_softcapping=50.0), "attn_logit_softcapping", None,
         "a Gemma key on a family without soft-capping"),
        ("llama_partial_rotary_factor", "llama", dict(partial_rotary_factor=0.5), "partial_rotary_factor", None, None),
        ("qwen3_use_sliding_window", "qwen3", dict(use_sliding_window=True, sliding_window=4, max_window_layers=1),
         "use_sliding_window", None, "transformers 4.51-4.52 and 4.53+ disagree on which layers slide"),
        ("qwen3_head_dim_odd", "qwen3", dict(head_dim=5), "head_dim", None, None),
        ("qwen3_mlp_bias", "qwen3", dict(mlp_bias=True), "mlp_bias", None, "Qwen3's MLP has no bias"),
        ("qwen3_missing_k_norm", "qwen3", {}, "model.layers.1.self_attn.k_norm.weight",
         {"drop": ["model.layers.1.self_attn.k_norm.weight"]}, "a tensor the family needs"),
        ("mistral_window_zero", "mistral", dict(sliding_window=0), "sliding_window", None, None),
        ("mistral_layer_types", "mistral", dict(layer_types=["sliding_attention", "full_attention"], sliding_window=4),
         "layer_types", None, "MistralModel ignores layer_types (Ministral reads them)"),
        ("mistral_final_logit_softcapping", "mistral", dict(final_logit_softcapping=30.0), "final_logit_softcapping",
         None, None),
        ("mistral_attention_bias", "mistral", dict(attention_bias=True), "attention_bias", None,
         "MistralAttention has no biases"),
        ("gemma3_hidden_activation_gelu", "gemma3_text", dict(hidden_activation="gelu"), "hidden_activation", None,
         "erf GELU instead of the tanh approximation"),
        ("gemma3_v5_flat_rope_parameters", "gemma3_text", lambda d: dict(v5(d), rope_parameters={
            "rope_type": "default", "rope_theta": 1000000.0}), "rope_parameters", None,
         "Gemma 3 keeps one RoPE per layer type"),
        ("gemma3_layer_types_vs_pattern", "gemma3_text", dict(layer_types=["full_attention", "sliding_attention"]),
         "layer_types", None, "disagrees with sliding_window_pattern 2"),
        ("gemma3_attn_logit_softcapping", "gemma3_text", dict(attn_logit_softcapping=50.0), "attn_logit_softcapping",
         None, "Gemma3Attention never applies it (Gemma 2 does): refused rather than guessed"),
        ("gemma3_query_pre_attn_scalar_zero", "gemma3_text", dict(query_pre_attn_scalar=0), "query_pre_attn_scalar",
         None, None),
        ("phi3_rope_linear", "phi3", {rs: {"type": "linear", "factor": 2.0}}, "rope_scaling.type", None,
         "Phi3Config accepts only longrope (and its old names su / yarn)"),
        ("phi3_short_factor_length", "phi3", {rs: {"type": "longrope", "short_factor": [1.0], "long_factor": [1.0, 2.0]},
                                              "original_max_position_embeddings": 16}, "rope_scaling.short_factor",
         None, "head_dim 4: 2 factors"),
        ("phi3_partial_rotary_odd", "phi3", dict(partial_rotary_factor=0.25), "partial_rotary_factor", None,
         "head_dim 4 * 0.25 = 1 rotary dim"),
        ("phi3_head_dim", "phi3", dict(head_dim=8), "head_dim", None, "Phi-3 splits hidden_size into the heads"),
        ("phi3_longrope_factor_disagrees", "phi3", {rs: {"type": "longrope", "short_factor": [1.0, 1.0],
                                                         "long_factor": [2.0, 2.0], "factor": 3.0},
                                                    "original_max_position_embeddings": 16},
         "rope_scaling.factor", None, "4.x ignores factor (uses 64 / 16), 5.x uses it"),
        ("phi3_su_is_longrope", "phi3", {rs: {"type": "su", "short_factor": [1.0, 1.0], "long_factor": [2.0, 2.0]},
                                         "original_max_position_embeddings": 16}, None, None,
         "accepted: Phi3Config renames su (and yarn) to longrope"),
        ("smollm3_no_rope_layers_short", "smollm3", dict(no_rope_layers=[1]), "no_rope_layers", None, None),
        ("smollm3_no_rope_layers_value", "smollm3", dict(no_rope_layers=[1, 2]), "no_rope_layers[1]", None, None),
        ("smollm3_layer_types_chunked", "smollm3", dict(layer_types=["chunked_attention", "full_attention"]),
         "layer_types[0]", None, None),
        ("smollm3_sliding_without_use", "smollm3", dict(layer_types=["full_attention", "sliding_attention"],
                                                        sliding_window=4, use_sliding_window=False),
         "use_sliding_window", None, "eager / sdpa would slide (mask), flash attention would not"),
    ]


def build_refusals():
    fams = sorted(fam.RECIPES)
    checkpoints = {mt: tiny_weights(tiny_base(mt), "base/" + mt) for mt in fams}
    out = []
    for name, mt, patch, mentions, edits, note in refusal_cases():
        base = tiny_base(mt)
        config = patch(base) if callable(patch) else patched(base, patch)
        entry = collections.OrderedDict([("name", name), ("family", mt), ("config", config),
                                         ("expect", "accepted" if mentions is None else "refused")])
        if mentions is not None:
            entry["errorMentions"] = mentions
        if edits:
            entry["weights"] = tiny_weights(base, name, edits)
        if note:
            entry["note"] = note
        # Our twin behaves as the runtime must.
        weights = entry.get("weights", checkpoints[mt])
        try:
            cfg = fam.config_from_hf(config)
            sd, _ = load_blob(base64.b64decode(weights["base64"]))
            fam.load_state_dict_hf(fam.FamilyLM(cfg), {k: v.float() for k, v in sd.items()})
            got = "accepted"
        except ValueError as e:
            got = "refused"
            assert mentions is not None and mentions in str(e), (name, str(e))
            if not mentions.startswith("model."):
                assert f"config.{mentions}" in str(e), (name, str(e))
        assert got == entry["expect"], (name, got)
        out.append(entry)
    return {"generator": GENERATOR,
            "description": "aw.loadModel(weights, { config }) must refuse each 'refused' case before using any weight, "
                           "with an error whose message contains errorMentions (the dotted config path, or the tensor "
                           "name), and load each 'accepted' one. weights: the case's own, else checkpoints[family].",
            "checkpoints": checkpoints, "baseConfigs": {mt: tiny_base(mt) for mt in fams}, "cases": out}


def load_blob(blob):
    import tempfile
    with tempfile.NamedTemporaryFile(suffix=".safetensors") as fh:
        fh.write(blob)
        fh.flush()
        return load_safetensors(fh.name)


# ------------------------------------------------------------------------------------------------
# Verify: re-read every file, replay it with the float32 twin
# ------------------------------------------------------------------------------------------------

def tensor_of(t):
    import numpy as np
    arr = np.frombuffer(base64.b64decode(t["base64"]), dtype="<f4").copy()
    return torch.from_numpy(arr).view(*t["shape"])


def verify(path):
    with open(path, encoding="utf-8") as fh:
        g = json.load(fh)
    sd, meta = load_blob(base64.b64decode(g["weights"]["base64"]))
    assert meta == {"format": "pt"} and list(sd) == sorted(sd), path
    assert {str(v.dtype) for v in sd.values()} == {str(DTYPES[g["weights"]["dtype"]])}, path
    tol = (g["atol"], g["rtol"])
    ids = torch.tensor(g["forward"]["ids"])
    want = tensor_of(g["forward"]["logits"])
    for gen, config in g["configs"].items():
        m = fam.load_state_dict_hf(fam.FamilyLM(config).eval(), {k: v.float() for k, v in sd.items()})
        with torch.no_grad():
            assert within(m(ids), want, tol), (path, gen)
            assert within(fam.kv_logits(m, ids, g["kvCache"]["prefill"]), tensor_of(g["kvCache"]["logits"]), tol), path
        for gr in g["greedy"]:
            out, margins, _ = fam.greedy(m, torch.tensor([gr["prompt"]]), len(gr["ids"]))
            n = next((i for i, x in enumerate(gr["margins"]) if x < g["greedyMinMargin"]), len(gr["ids"]))
            assert out.tolist()[:n] == gr["ids"][:n], (path, gen)


def main():
    torch.set_num_threads(1)
    if os.path.isdir(OUT_DIR):
        shutil.rmtree(OUT_DIR)
    os.makedirs(OUT_DIR)
    rows = []
    for c in cases():
        g = build(c)
        path = os.path.join(OUT_DIR, c["name"] + ".json")
        text = json.dumps(g, indent=1, allow_nan=False) + "\n"
        assert len(text) < MAX_FILE_BYTES, (c["name"], len(text))
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        verify(path)
        rows.append((c["name"] + ".json", g["family"], g["weights"]["dtype"], len(text),
                     "kv==fwd" if g["kvCache"]["equalsForward"] else f"kv!=fwd ({g['kvCache']['maxDiffFromForward']:.1e})",
                     ", ".join(f"{k} x{v:g}" for k, v in g["sensitivity"].items())))
    ref = build_refusals()
    path = os.path.join(OUT_DIR, "refusals.json")
    text = json.dumps(ref, indent=1) + "\n"
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    rows.append(("refusals.json", f"{len(ref['cases'])} cases", "F32", len(text), "", ""))
    w = max(len(r[0]) for r in rows)
    for r in rows:
        print(f"{r[0]:<{w}}  {r[1]:<12} {r[2]:<5} {r[3]:>7} B  {r[4]:<20} {r[5]}")
    total = sum(r[3] for r in rows)
    print(f"{len(rows)} files, {total / 1024:.1f} KiB in {os.path.relpath(OUT_DIR)}; all re-read and replayed OK")
    print(f"float32 torch vs float64 reference: max |diff| {STATS['max_f32_vs_f64']:.2e}; smallest greedy margin "
          f"{STATS['min_greedy_margin']:.2e}")


if __name__ == "__main__":
    main()
