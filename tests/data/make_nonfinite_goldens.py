#!/usr/bin/python3
"""Golden file for NaN/Infinity propagation: tests/data/goldens/nonfinite.json.

NaN and ±Infinity in input *data* are not errors: they must propagate exactly as in PyTorch.
Each case feeds one op (functional or a module with seeded weights) an input holding NaN or
±Infinity at a few places and records torch's output (float32, one thread). The JS tests
(`non-finite: …` in each op's file of tests/js/layers/, run by nonFiniteTests in
tests/js/helpers.mjs) require the same NaN positions, the same infinities and the
finite values within 1e-5.

Run with Debian's torch (1.13): `/usr/bin/python3 tests/data/make_nonfinite_goldens.py`.
Deterministic: fixed seed, one thread.

Encoding as in make_goldens.py: {"shape", "dtype": "float32", "data"} with non-finite values as
the strings "nan", "inf", "-inf".
"""

import json
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

from make_goldens import enc  # same tensor encoding as the other goldens

SEED = 20261122
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "goldens", "nonfinite.json")
NAN, INF = float("nan"), float("inf")


def with_values(shape, spots):
    """A seeded random tensor with the given {index tuple: value} spots overwritten."""
    t = torch.randn(*shape)
    for idx, val in spots.items():
        t[idx] = val
    return t


def sdpa(q, k, v, mask=None):
    """PyTorch 2.x F.scaled_dot_product_attention's math path, float32 (torch 1.13 has none)."""
    s = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.size(-1)))
    if mask is not None:
        s = s + mask
    return torch.softmax(s, dim=-1) @ v


def state(module):
    return {k: enc(v) for k, v in module.state_dict().items()}


def main():
    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    cases = []

    def add(name, op, inputs, expected, args=None, module_state=None):
        cases.append({"name": name, "op": op, "args": args or {}, "inputs": {k: enc(v) for k, v in inputs.items()},
                      "state": module_state, "expected": enc(expected)})

    # Functional SDPA: (B, H, L, E).
    q, k, v = torch.randn(1, 2, 4, 8), torch.randn(1, 2, 5, 8), torch.randn(1, 2, 5, 8)
    qn = q.clone(); qn[0, 0, 1, 3] = NAN
    add("sdpa: NaN in one query row", "sdpa", {"query": qn, "key": k, "value": v}, sdpa(qn, k, v))
    kn = k.clone(); kn[0, 1, 2, 0] = NAN
    add("sdpa: NaN in one key (every query of that head)", "sdpa", {"query": q, "key": kn, "value": v}, sdpa(q, kn, v))
    vi = v.clone(); vi[0, 0, 3, 5] = INF
    add("sdpa: +Inf in one value", "sdpa", {"query": q, "key": k, "value": vi}, sdpa(q, k, vi))
    ki = k.clone(); ki[0, 0, 0, :] = INF
    add("sdpa: +Inf key row (scores ±inf: inf - inf = NaN)", "sdpa", {"query": q, "key": ki, "value": v}, sdpa(q, ki, v))
    m = torch.zeros(4, 5); m[2, 1] = NAN
    add("sdpa: NaN in a float mask", "sdpa", {"query": q, "key": k, "value": v, "attnMask": m}, sdpa(q, k, v, m))
    m = torch.zeros(4, 5); m[1, 4] = INF
    add("sdpa: +Inf in a float mask", "sdpa", {"query": q, "key": k, "value": v, "attnMask": m}, sdpa(q, k, v, m))

    # nn.MultiheadAttention, batch_first, E=8, H=2.
    mha = nn.MultiheadAttention(8, 2, batch_first=True).eval()
    x, mem = torch.randn(2, 3, 8), torch.randn(2, 5, 8)
    xn = x.clone(); xn[1, 2, 4] = NAN
    with torch.no_grad():
        add("MultiheadAttention: NaN in one query token", "mha", {"query": xn, "key": mem, "value": mem},
            mha(xn, mem, mem, need_weights=False)[0], {"embedDim": 8, "numHeads": 2}, state(mha))
        mi = mem.clone(); mi[0, 1, 0] = -INF
        add("MultiheadAttention: -Inf in one memory token", "mha", {"query": x, "key": mi, "value": mi},
            mha(x, mi, mi, need_weights=False)[0], {"embedDim": 8, "numHeads": 2}, state(mha))

    # Linear, LayerNorm, activations.
    lin = nn.Linear(6, 4)
    xi = with_values((3, 6), {(0, 1): NAN, (1, 2): INF, (2, 5): -INF})
    with torch.no_grad():
        add("Linear: NaN, +Inf, -Inf in three rows", "linear", {"input": xi}, lin(xi),
            {"inFeatures": 6, "outFeatures": 4}, state(lin))
        ln = nn.LayerNorm(6)
        ln.weight.copy_(torch.randn(6)); ln.bias.copy_(torch.randn(6))
        add("LayerNorm: NaN, +Inf, -Inf rows", "layernorm", {"input": xi}, ln(xi), {"normalizedShape": 6}, state(ln))
    xa = torch.tensor([[NAN, INF, -INF, 0.0, -1.5, 2.0, -0.0, 1e-8]])
    add("relu: NaN, ±Inf", "relu", {"input": xa}, F.relu(xa))
    add("gelu: NaN, ±Inf", "gelu", {"input": xa}, F.gelu(xa))
    add("gelu tanh: NaN, ±Inf", "gelu_tanh", {"input": xa}, F.gelu(xa, approximate="tanh"))

    # nn.TransformerEncoderLayer: a NaN token reaches every token through self-attention.
    enc_layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True).eval()
    src = torch.randn(2, 4, 8)
    sn = src.clone(); sn[0, 2, 1] = NAN
    # Autograd enabled keeps torch 1.13 off its fast path (as in make_transformer_goldens.py).
    assert torch.is_grad_enabled()
    out = enc_layer(sn)
    if True:
        add("TransformerEncoderLayer: NaN in one token of batch 0", "encoder_layer", {"src": sn}, out,
            {"dModel": 8, "nhead": 2, "dimFeedforward": 16}, state(enc_layer))

    text = json.dumps({"generator": "tests/data/make_nonfinite_goldens.py", "seed": SEED, "torch": torch.__version__,
                       "cases": cases}, separators=(",", ":"), allow_nan=False)
    with open(OUT, "w", encoding="utf-8") as fh:
        fh.write(text + "\n")
    print(f"wrote {OUT}: {len(cases)} cases, {len(text)} bytes")


if __name__ == "__main__":
    main()
