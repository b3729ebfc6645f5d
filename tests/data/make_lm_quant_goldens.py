#!/usr/bin/python3
"""Golden files for causal LMs loaded with quantized weights (aw.loadModel(..., { dtype: "q8" | "q4" | "q4a16" })):
tests/data/goldens/lm/quant/. Read by tests/js/causal_lm_quant.test.mjs.

Not a test itself: it writes tiny Hugging Face checkpoints and the logits and greedy ids of their
quantized twin (tools/causal_lm.py quantize_model: the arithmetic of src/kernels/qgemm.h), then re-reads
every file and replays it. Run with Debian's torch (1.13):
    /usr/bin/python3 tests/data/make_lm_quant_goldens.py
Deterministic (seeds from the case names, one thread): two runs give identical bytes.

FILES  quant/<name>/
  model.safetensors, config.json   the checkpoint as HF's save_pretrained writes it (metadata {"format": "pt"}
                     only, tensors in name order, no lm_head when tied), in the case's dtype (F32/F16/BF16):
                     load it with aw.loadModel(bytes, { config, dtype })
  expected.safetensors
    "input.ids"                  I32 (B, T)
    "expected.logits.<dtype>"    F32 (B, T, V), dtype "q8", "q4", "q4a16": the float64 forward of quantize_model(model,
                                 dtype), rounded to float32; "f32": the float64 forward of the stored weights
                                 (what dtype 'f32' and the weights as stored must give)
    "input.prompt<k>"            I32 (Tk,); "expected.greedy.<dtype>.<k>" I32 (N,) and
    "expected.margin.<dtype>.<k>" F32 (N,): the quantized float64 twin's greedy continuation (KV cache) and
                                 its top-1 minus top-2 logit at each step; compare ids up to the first step
                                 whose margin < greedyMinMargin (a near tie either way is right)
    __metadata__ "case": JSON {"name", "checkpoint": {"weights", "config", "dtype"}, "dtypes", "inputs",
                 "tolerance": {dtype: {"atol", "rtol"}}, "greedy": {dtype: [{"prompt", "ids", "margins",
                 "maxNewTokens"}]}, "greedyMinMargin": {dtype: m}, "shape", "note", "twin": {dtype: {...}}}
    "twin": what this script measured per dtype, all max |difference| over the logits: "sensitivity" (below),
                 the float32 twin against the float64 one, the twin with unquantized activations against it,
                 the quantized logits against the float ones ("maxAbsQuantizedVsFloat": asserted > 20 atol, q4:
                 > 5 atol, so a runtime that does not quantize fails; "meanAbsQuantizedVsFloat", and
                 "top1AgreesWithFloat" of "positions": the accuracy docs/weights.md quotes, summed over the cases
                 at the end of a run), max |logit|, the smallest greedy margin.

TOLERANCE  per dtype, "tolerance": {dtype: {"atol", "rtol"}}, |got - expected| <= atol + rtol |expected|:
  f32     1e-4 / 1e-4, as the other LM goldens.
  q8, q4, q4a16  rtol 0, atol = max(1e-4, 2 * sensitivity), where sensitivity ("twin" in the file) is how far the
          float64 twin's own logits move when its activations are nudged by one float32 ulp before each
          quantization (each element -1, 0 or +1 ulp, NUDGES seeded draws, the largest move). Why not 1e-4
          flat: quantizing an activation is a step function, and an activation within a rounding error of a
          half-step rounds to the neighbouring int16 value in one float implementation and not in another.
          Each such flip moves the next product's inputs by about one step t = max|a| / 32767, the next layer
          then has more values near half-steps that differ, and so on: after a layer or two any two correct
          float32 implementations (the float32 twin against the float64 one; the runtime against either)
          differ by up to ~5e-5 of the logits' size, far more than float32 rounding alone (~1e-7). The nudged twin
          measures exactly that spread for each case; a runtime that quantizes differently moves the logits
          by far more (measured once on these cases: scales per 64 inputs instead of 32, 90-2600x the
          tolerance; int8 activations for q8 or q4a16, 80-180x; the float weights, "quantized vs float",
          0.03-2.5).
          What this cannot see: the activations' int16 rounding itself. Its whole effect on the logits is of
          the size of the flips' (one step t per value either way): the twin with the weights quantized and
          the activations not ("maxAbsActivationsUnquantized") stays within the tolerance too. That part of
          the arithmetic is pinned by tests/kernels/qgemm_test.cpp against the scalar reference instead.
  q4      the same rule, with int8 activations per group of 32 (kernels::q4_gemm_a8): a step is max|a| / 127,
          256x int16's, so a flip is rarer and moves the logits far more. Two cases see none in their nudges
          (atol 1e-4: int16 activations for q4 miss it 390x); two do (atol 0.082 and 0.32 of max |logit| 4.3
          and 10.8), and there a q4 load is also checked against q4a16's golden, which it must miss
          (tests/js/causal_lm_quant.test.mjs; the arithmetics differ by 0.03-0.2 there). The runtime itself
          lands within 2e-6 of this twin in every case (both builds, 1 and 2 threads: no flip).
"""

import collections
import contextlib
import json
import math
import os
import shutil
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
import causal_lm as clm  # noqa: E402
from export_safetensors import hf_config_json, load_safetensors, save_safetensors  # noqa: E402
from make_lm_goldens import PARAM_DTYPES, TORCH_DTYPE_NAME, gen_for, llama, qwen2, randomize_lm, write_case  # noqa: E402

GENERATOR = "tests/data/make_lm_quant_goldens.py"
OUT_DIR = os.path.join(HERE, "goldens", "lm", "quant")
DTYPES = ("q8", "q4", "q4a16")
TOL_FLOAT = (1e-4, 1e-4)    # f32 logits, as tests/data/make_lm_goldens.py
ATOL_FLOOR = 1e-4           # q8 / q4: max(this, 2 * sensitivity), rtol 0
NUDGES = 8                  # seeded draws of one-ulp nudges for the sensitivity
GREEDY_MIN_MARGIN = 1e-3    # and at least 2 * atol
MAX_FILE_BYTES = 300 * 1024


def cases():
    """(name, hf config, stored dtype, batch, T, prompt lengths, new tokens, head scale, note)."""
    return [
        ("llama_tied_hd64_e72_bf16",
         llama(vocab_size=53, hidden_size=72, intermediate_size=80, num_hidden_layers=2, num_attention_heads=2,
               num_key_value_heads=1, head_dim=64, rms_norm_eps=1e-5, rope_theta=10000.0,
               max_position_embeddings=64, tie_word_embeddings=True, attention_bias=False),
         "BF16", 2, 9, (1, 5), 10, 0.3,
         "tied head (the quantized embedding table serves both), head_dim 64 (H*D = 128 != hidden 72), GQA 2; "
         "inputs of 72 and 80 (not multiples of 32: groups padded with zeros); BF16 as stored"),
        ("qwen2_untied_bias_hd20_e60",
         qwen2(vocab_size=41, hidden_size=60, intermediate_size=100, num_hidden_layers=2, num_attention_heads=3,
               num_key_value_heads=1, rms_norm_eps=1e-6, rope_theta=1000000.0, max_position_embeddings=64,
               tie_word_embeddings=False),
         "F32", 2, 11, (3, 7), 10, 1.0,
         "Qwen2: q/k/v biases (added after the quantized product), untied lm_head quantized on its own; "
         "head_dim 20; every input width (60, 100) off a multiple of 32; GQA 3"),
        ("llama_untied_obias_hd16_e48_f16",
         llama(vocab_size=37, hidden_size=48, intermediate_size=64, num_hidden_layers=1, num_attention_heads=4,
               num_key_value_heads=2, head_dim=16, rms_norm_eps=1e-5, rope_theta=10000.0,
               max_position_embeddings=64, tie_word_embeddings=False, attention_bias=True),
         "F16", 1, 7, (2,), 8, 1.0, "Llama attention_bias: q/k/v and o_proj biases; F16 as stored; one layer"),
        ("llama_untied_ffn544_bf16",
         llama(vocab_size=29, hidden_size=40, intermediate_size=544, num_hidden_layers=1, num_attention_heads=2,
               num_key_value_heads=2, head_dim=32, rms_norm_eps=1e-5, rope_theta=10000.0,
               max_position_embeddings=64, tie_word_embeddings=False, attention_bias=False),
         "BF16", 1, 9, (3,), 8, 1.0,
         "down_proj reads 544 inputs = 17 groups: two blocks of the packed layout (16 groups, then 1), "
         "gate/up 544 outputs = 68 panels; BF16 as stored"),
    ]


@contextlib.contextmanager
def activations_through(fn):
    """Within: quantize_model's twins quantize each activation a as fn(a, plain quantize_activations) does
    (_quantize_input and CausalLM.forward look clm.quantize_activations up at each call)."""
    plain = clm.quantize_activations
    clm.quantize_activations = lambda a, parts=False, bits="q8": fn(a, lambda x: plain(x, bits=bits))
    try:
        yield
    finally:
        clm.quantize_activations = plain


def nudged(g):
    """Each element nudged by -1, 0 or +1 float32 ulp (drawn from g), then quantized: the twin as another
    correct float32 implementation might compute it."""
    def fn(a, plain):
        a32 = a.float()
        step = torch.randint(-1, 2, a32.shape, generator=g).float()
        return plain(torch.where(step == 0, a32, torch.nextafter(a32, step * math.inf)).to(a.dtype))
    return fn


def build_case(name, hf, dtype, batch, T, prompts, new_tokens, head_scale, note):
    g = gen_for("quant/" + name)
    cfg = clm.config_from_hf(hf)
    m32 = clm.CausalLM(cfg).eval()
    randomize_lm(m32, g)
    pdt = PARAM_DTYPES[dtype]
    with torch.no_grad():
        # Logits of order 1-10: a tied head reads the embedding table (N(0, 1) from randomize_lm gives logits
        # of std sqrt(hidden)), so scale it down.
        m32.model.embed_tokens.weight.mul_(head_scale)
        for p in m32.parameters():                   # the stored (rounded) weights
            p.copy_(p.to(pdt).float())
    sd = clm.hf_state_dict(m32)
    ids = torch.randint(0, cfg.vocab_size, (batch, T), generator=g)
    prompt_ids = [torch.randint(0, cfg.vocab_size, (1, n), generator=g) for n in prompts]

    def twin(bits, dt=torch.float64):
        m = clm.load_state_dict_hf(clm.CausalLM(cfg).to(dt).eval(), sd)
        return m if bits == "f32" else clm.quantize_model(m, bits)

    tensors = collections.OrderedDict([("input.ids", ids.to(torch.int32))])
    tolerance = {"f32": {"atol": TOL_FLOAT[0], "rtol": TOL_FLOAT[1]}}
    measured, greedy = {}, {}
    with torch.no_grad():
        ref = twin("f32")(ids)
        tensors["expected.logits.f32"] = ref.float()
        for bits in DTYPES:
            m64 = twin(bits)
            want = m64(ids)
            step = float((clm.cached_logits(m64, ids, T // 2) - want).abs().max())
            assert step < 1e-9, (name, bits, step)
            d32 = float((twin(bits, torch.float32)(ids).double() - want).abs().max())
            gn = gen_for(f"quant/{name}/nudge/{bits}")
            sens = 0.0
            for _ in range(NUDGES):
                with activations_through(nudged(gn)):
                    sens = max(sens, float((m64(ids) - want).abs().max()))
            with activations_through(lambda a, plain: a):     # the weights quantized, the activations not
                unq = float((m64(ids) - want).abs().max())
            atol = float(f"{max(ATOL_FLOOR, 2 * sens):.2g}")
            if atol < 2 * sens:
                atol = float(f"{atol * 1.1:.2g}")
            moved = float((want - ref).abs().max())
            assert moved > (5 if bits == "q4" else 20) * atol, (name, bits, moved, atol)
            assert d32 <= atol, (name, bits, d32, atol)
            tolerance[bits] = {"atol": atol, "rtol": 0}
            measured[bits] = {"sensitivity": float(f"{sens:.3g}"), "maxAbsF32TwinVsF64Twin": float(f"{d32:.3g}"),
                              "maxAbsActivationsUnquantized": float(f"{unq:.3g}"),
                              "maxAbsQuantizedVsFloat": float(f"{moved:.3g}"),
                              "meanAbsQuantizedVsFloat": float(f"{float((want - ref).abs().mean()):.3g}"),
                              "top1AgreesWithFloat": int((want.argmax(-1) == ref.argmax(-1)).sum()),
                              "positions": int(ids.numel()),
                              "maxAbsLogit": float(f"{float(want.abs().max()):.3g}")}
            tensors[f"expected.logits.{bits}"] = want.float()
            greedy[bits] = []
            for k, prompt in enumerate(prompt_ids):
                out, margins = clm.greedy(m64, prompt, new_tokens)
                tensors[f"input.prompt{k}"] = prompt[0].to(torch.int32)   # the same prompts for every dtype
                tensors[f"expected.greedy.{bits}.{k}"] = out[0].to(torch.int32)
                tensors[f"expected.margin.{bits}.{k}"] = margins[0].float()
                greedy[bits].append({"prompt": f"input.prompt{k}", "ids": f"expected.greedy.{bits}.{k}",
                                     "margins": f"expected.margin.{bits}.{k}", "maxNewTokens": new_tokens})
                measured[bits]["minGreedyMargin"] = min(measured[bits].get("minGreedyMargin", math.inf),
                                                        float(f"{float(margins.min()):.3g}"))
    folder = os.path.join(OUT_DIR, name)
    os.makedirs(folder)
    config = clm.hf_config_dict(cfg, torch_dtype=TORCH_DTYPE_NAME[dtype], bos_token_id=hf.get("bos_token_id"),
                                eos_token_id=hf.get("eos_token_id"))
    config.update(hf)
    config["torch_dtype"] = TORCH_DTYPE_NAME[dtype]
    save_safetensors(collections.OrderedDict(sorted(sd.items())), os.path.join(folder, "model.safetensors"),
                     {"format": "pt"}, dtype)
    with open(os.path.join(folder, "config.json"), "w", encoding="utf-8") as fh:
        fh.write(hf_config_json(config))
    spec = {"name": name, "module": "CausalLM",
            "checkpoint": {"weights": "model.safetensors", "config": "config.json", "dtype": dtype},
            "dtypes": list(DTYPES), "inputs": ["ids"], "tolerance": tolerance, "greedy": greedy,
            "greedyMinMargin": {b: max(GREEDY_MIN_MARGIN, 2 * tolerance[b]["atol"]) for b in DTYPES},
            "shape": {"modelType": cfg.model_type, "layers": cfg.num_hidden_layers, "hidden": cfg.hidden_size,
                      "heads": cfg.num_attention_heads, "kvHeads": cfg.num_key_value_heads,
                      "headDim": cfg.head_dim, "intermediate": cfg.intermediate_size, "vocab": cfg.vocab_size,
                      "tied": cfg.tie_word_embeddings, "qkvBias": cfg.qkv_bias, "oBias": cfg.o_bias},
            "note": note, "twin": measured}
    write_case(os.path.join(folder, "expected.safetensors"), spec, tensors)
    return spec


def verify(folder):
    """Replay from the files alone: the checkpoint as a user loads it, the float64 quantized twin."""
    with open(os.path.join(folder, "config.json"), encoding="utf-8") as fh:
        hf = json.load(fh)
    weights, _ = load_safetensors(os.path.join(folder, "model.safetensors"))
    exp, meta = load_safetensors(os.path.join(folder, "expected.safetensors"))
    spec = json.loads(meta["case"])
    sd = {k: v.double() for k, v in weights.items()}
    ids = exp["input.ids"].long()
    for bits in ("f32",) + DTYPES:
        m = clm.load_state_dict_hf(clm.CausalLM(hf).double().eval(), sd)
        if bits != "f32":
            clm.quantize_model(m, bits)
        with torch.no_grad():
            assert torch.equal(m(ids).float(), exp[f"expected.logits.{bits}"]), (folder, bits)
        for gs in spec["greedy"].get(bits, []):
            out, _ = clm.greedy(m, exp[gs["prompt"]].long().view(1, -1), gs["maxNewTokens"])
            assert torch.equal(out[0].to(torch.int32), exp[gs["ids"]]), (folder, bits)
    for f in os.listdir(folder):
        assert os.path.getsize(os.path.join(folder, f)) < MAX_FILE_BYTES, (folder, f)
    return spec


def main():
    torch.set_num_threads(1)
    if os.path.isdir(OUT_DIR):
        shutil.rmtree(OUT_DIR)            # every file here is made by this script
    os.makedirs(OUT_DIR)
    rows, specs = [], []
    for c in cases():
        spec = build_case(*c)
        specs.append(spec)
        folder = os.path.join(OUT_DIR, c[0])
        verify(folder)
        for f in ("model.safetensors", "config.json", "expected.safetensors"):
            rows.append((f"quant/{c[0]}/{f}", os.path.getsize(os.path.join(folder, f))))
        for bits, m in spec["twin"].items():
            print(f"{c[0]} {bits}: max |logit| {m['maxAbsLogit']}, quantized vs float {m['maxAbsQuantizedVsFloat']}, "
                  f"float32 twin vs float64 twin {m['maxAbsF32TwinVsF64Twin']:.2e}, activations unquantized "
                  f"{m['maxAbsActivationsUnquantized']:.2e}, sensitivity {m['sensitivity']:.2e} "
                  f"-> atol {spec['tolerance'][bits]['atol']:.2e}, smallest greedy margin {m['minGreedyMargin']}")
    # What each quantized type costs against the float twin (the f32 logits), over every case's positions: the
    # figures docs/weights.md quotes.
    print("accuracy against f32 over the cases' positions (mean |logit - f32|, worst, top-1 = f32's):")
    for bits in DTYPES:
        ms = [sp["twin"][bits] for sp in specs]
        n = sum(m["positions"] for m in ms)
        mean = sum(m["meanAbsQuantizedVsFloat"] * m["positions"] for m in ms) / n
        print(f"  {bits:6s} mean {mean:.4f}, worst {max(m['maxAbsQuantizedVsFloat'] for m in ms):.3f}, "
              f"top-1 {sum(m['top1AgreesWithFloat'] for m in ms)}/{n}")
    w = max(len(r[0]) for r in rows)
    for path, size in rows:
        print(f"{path:<{w}} {size:>8} B")
    print(f"{len(rows)} files, {sum(r[1] for r in rows) / 1024:.1f} KiB in {os.path.relpath(OUT_DIR)}; all re-read and "
          f"replayed OK")


if __name__ == "__main__":
    main()
