#!/usr/bin/python3
"""The quantized arithmetics attnwasm chose against those it did not, measured with the torch twin
(tools/causal_lm.py) on the quantized goldens' checkpoints (tests/data/goldens/lm/quant/): for each, the mean and
worst |logit - f32| over every case's positions, top-1 agreement with f32 and the mean KL(f32 || it), in float64.

  q8, q4, q4a16    what loadModel's dtypes compute (docs/weights.md)
  q4 a8/row        q4's weights with int8 activations per row instead of per group of 32 (not chosen)
  q8 a7/group      q8's weights with 7-bit activations per group ([-63, 63]: the operand i16x8.relaxed_dot_i8x16_i7x16_s
                   could take for q8, whose weights fill its 8-bit one; not chosen)

Then the same with two channels of every RMSNorm weight x 30 (trained models have a few channels 10-100x the rest).
Not a test. Run: /usr/bin/python3 bench/quant_choices.py
"""
import json
import os
import sys

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "data"))
import causal_lm as clm  # noqa: E402
from export_safetensors import load_safetensors  # noqa: E402

GOLDENS = os.path.join(HERE, "..", "tests", "data", "goldens", "lm", "quant")


def a8_row(a):
    """int8 per row: t = max|a| / 127, x = round(a * (127 / max|a|)), float32 steps as the runtime's."""
    a32 = a.float()
    amax = a32.abs().amax(-1, keepdim=True)
    t, inv = (amax.double() / 127).float(), (127 / amax.double()).float()
    x = torch.where(amax > 0, torch.round((a32.double() * inv.double()).float()).clamp(-127, 127), torch.zeros(()))
    return (x.double() * t.double()).to(a.dtype)


def a7_group(a):
    """7-bit per group of 32: x in [-63, 63]."""
    a32 = a.float()
    k = a32.shape[-1]
    kq = -(-k // 32) * 32
    g = F.pad(a32, (0, kq - k)).reshape(*a32.shape[:-1], kq // 32, 32)
    amax = g.abs().amax(-1, keepdim=True)
    t, inv = (amax.double() / 63).float(), (63 / amax.double()).float()
    x = torch.where(amax > 0, torch.round((g.double() * inv.double()).float()).clamp(-63, 63), torch.zeros(()))
    return (x.double() * t.double()).reshape(*a32.shape[:-1], kq)[..., :k].to(a.dtype)


CHOICES = [("q8", "q8", None), ("q8 a7/group", "q8", a7_group), ("q4a16", "q4a16", None), ("q4", "q4", None),
           ("q4 a8/row", "q4a16", a8_row)]


def measure(hf, weights, ids):
    sd = {k: v.double() for k, v in weights.items()}
    out = {}
    with torch.no_grad():
        ref = clm.load_state_dict_hf(clm.CausalLM(hf).double().eval(), sd)(ids)
        for label, bits, acts in CHOICES:
            m = clm.quantize_model(clm.load_state_dict_hf(clm.CausalLM(hf).double().eval(), sd), bits)
            plain = clm.quantize_activations
            if acts is not None:
                clm.quantize_activations = lambda a, parts=False, bits="q8": acts(a)
            try:
                got = m(ids)
            finally:
                clm.quantize_activations = plain
            p, q = F.log_softmax(ref, -1), F.log_softmax(got, -1)
            out[label] = {"sum": float((got - ref).abs().mean()) * ids.numel(), "worst": float((got - ref).abs().max()),
                          "top1": int((got.argmax(-1) == ref.argmax(-1)).sum()),
                          "kl": float((p.exp() * (p - q)).sum(-1).sum())}
    return out


def main():
    torch.set_num_threads(1)
    for outliers in (False, True):
        total, n = {}, 0
        for name in sorted(os.listdir(GOLDENS)):
            folder = os.path.join(GOLDENS, name)
            with open(os.path.join(folder, "config.json"), encoding="utf-8") as fh:
                hf = json.load(fh)
            weights, _ = load_safetensors(os.path.join(folder, "model.safetensors"))
            if outliers:
                for k in weights:
                    if k.endswith("layernorm.weight"):
                        weights[k] = weights[k].clone()
                        weights[k][3] *= 30
                        weights[k][11] *= 30
            ids = load_safetensors(os.path.join(folder, "expected.safetensors"))[0]["input.ids"].long()
            n += ids.numel()
            for label, r in measure(hf, weights, ids).items():
                t = total.setdefault(label, {"sum": 0.0, "worst": 0.0, "top1": 0, "kl": 0.0})
                t["sum"] += r["sum"]
                t["worst"] = max(t["worst"], r["worst"])
                t["top1"] += r["top1"]
                t["kl"] += r["kl"]
        print(f"{'two channels of every norm weight x 30' if outliers else 'the goldens as they are'} ({n} positions):")
        for label, t in total.items():
            print(f"  {label:12s} mean |logit - f32| {t['sum'] / n:.4f}, worst {t['worst']:.3f}, top-1 {t['top1']}/{n}, "
                  f"KL(f32 || it) {t['kl'] / n:.2e}")


if __name__ == "__main__":
    main()
