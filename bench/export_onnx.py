#!/usr/bin/python3
"""Export the benchmark's torch modules to ONNX (opset 17) and their weights to safetensors.

Every engine runs the same torch module with the same weights and the same inputs:
  bench/onnx/<case>.onnx                 the module traced to ONNX (onnxruntime-web)
  bench/onnx/<case>.safetensors          module.state_dict() with exact torch keys (attnwasm,
                                         tfjs, plain JS), written by tools/export_safetensors.py
  bench/onnx/<case>.io.safetensors       the inputs and torch's own output ("expected")
  bench/onnx/cases.json                  the manifest the JS runners read (shapes, FLOPs, runs)
Not a model converter: fixed shapes, inference only, no masks. Run with Debian's torch:
  /usr/bin/python3 bench/export_onnx.py [--out DIR]
Shapes: (L, B, E) sequence-first, as torch.nn.MultiheadAttention with batch_first=False.
"""

import argparse
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
from export_safetensors import export_module, save_safetensors  # noqa: E402

OPSET = 17

# name: (B, L, S, E, H). S5 is decode: one query attending to S = 128 keys (cross-attention).
SHAPES = {
    "S1": (1, 32, 32, 128, 4),
    "S2": (1, 65, 65, 192, 3),
    "S3": (1, 256, 256, 256, 8),
    "S4": (4, 512, 512, 512, 8),
    "S5": (1, 1, 128, 256, 4),
}
# Timed runs (after WARMUP warm-up runs) per case; S4 is slow (GFLOPs per call), so fewer.
WARMUP = 5
RUNS = {"S1": 30, "S2": 30, "S3": 25, "S4": 10, "S5": 40, "matmul": 20}


class MhaSelf(torch.nn.Module):
    """MultiheadAttention self-attention, need_weights=False: x (L, B, E) -> (L, B, E)."""

    def __init__(self, e, h):
        super().__init__()
        self.mha = torch.nn.MultiheadAttention(e, h)

    def forward(self, x):
        return self.mha(x, x, x, need_weights=False)[0]


class MhaCross(torch.nn.Module):
    """MultiheadAttention cross-attention, need_weights=False:
    query (L, B, E), memory (S, B, E) used as key and value -> (L, B, E)."""

    def __init__(self, e, h):
        super().__init__()
        self.mha = torch.nn.MultiheadAttention(e, h)

    def forward(self, query, memory):
        return self.mha(query, memory, memory, need_weights=False)[0]


def randomize_(module, gen):
    """Non-trivial biases and LayerNorm affines (torch initializes them to 0 and 1, which
    would hide a wrong bias or norm path); weights keep torch's default init."""
    with torch.no_grad():
        for name, p in module.named_parameters():
            if name.endswith("bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=gen))
            elif "norm" in name and name.endswith("weight"):
                p.copy_(1 + 0.1 * torch.randn(p.shape, generator=gen))


def mha_flops(b, l, s, e):
    """2·m·n·k per matmul: Q and output projections (L rows), K and V projections (S rows),
    Q·Kᵀ and P·V over all heads (H · L · S · E/H each)."""
    return 2 * b * l * e * e * 2 + 2 * b * s * e * e * 2 + 2 * 2 * b * l * s * e


def cases():
    """(name, kind, shape name, module factory, inputs, flops, extra manifest fields)."""
    out = []
    for sn, (b, l, s, e, h) in SHAPES.items():
        cfg = dict(B=b, L=l, S=s, E=e, H=h)
        if l == s:
            out.append(("mha_" + sn, "mha", sn, lambda e=e, h=h: MhaSelf(e, h),
                        {"x": (l, b, e)}, mha_flops(b, l, s, e), cfg))
            ff = 4 * e
            out.append(("encoder_" + sn, "encoder", sn,
                        lambda e=e, h=h, ff=ff: torch.nn.TransformerEncoderLayer(
                            e, h, dim_feedforward=ff, dropout=0.1, activation="relu",
                            norm_first=False, batch_first=False),
                        {"x": (l, b, e)}, mha_flops(b, l, s, e) + 2 * 2 * b * l * e * ff,
                        dict(cfg, FF=ff)))
        else:
            out.append(("mha_" + sn, "mha", sn, lambda e=e, h=h: MhaCross(e, h),
                        {"query": (l, b, e), "memory": (s, b, e)}, mha_flops(b, l, s, e), cfg))
    out.append(("matmul", "matmul", "matmul",
                lambda: torch.nn.Linear(512, 512, bias=False),
                {"x": (512, 512)}, 2 * 512 ** 3, dict(M=512, N=512, K=512)))
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=os.path.join(HERE, "onnx"))
    args = p.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(1)
    manifest = {"opset": OPSET, "torch": torch.__version__, "warmup": WARMUP, "cases": []}
    for i, (name, kind, shape, make, inputs, flops, cfg) in enumerate(cases()):
        torch.manual_seed(1000 + i)
        gen = torch.Generator().manual_seed(2000 + i)
        module = make().eval()
        randomize_(module, gen)
        xs = {k: torch.randn(shp, generator=gen) for k, shp in inputs.items()}
        with torch.no_grad():
            expected = module(*xs.values())
        # The MHA wrappers hold the layer as `.mha`: export the layer's own torch keys.
        weights = module.mha if isinstance(module, (MhaSelf, MhaCross)) else module
        export_module(weights, os.path.join(args.out, name + ".safetensors"))
        save_safetensors(dict(xs, expected=expected), os.path.join(args.out, name + ".io.safetensors"))
        onnx_path = os.path.join(args.out, name + ".onnx")
        with torch.no_grad():
            torch.onnx.export(module, tuple(xs.values()), onnx_path, opset_version=OPSET,
                              input_names=list(xs), output_names=["y"], do_constant_folding=True)
        try:
            from onnx_package import require_onnx
            onnx = require_onnx()
            model = onnx.load(onnx_path)
            onnx.checker.check_model(model)
            ops = sorted({n.op_type for n in model.graph.node})
        except ImportError:
            ops = []
        manifest["cases"].append({
            "name": name, "kind": kind, "shape": shape, "config": cfg,
            "inputs": {k: list(shp) for k, shp in inputs.items()},
            "output": list(expected.shape), "flops": flops, "runs": RUNS[shape],
            "onnxOps": ops,
        })
        print(f"{name}: {cfg} flops {flops / 1e6:.1f} M, onnx ops {' '.join(ops)}")
    with open(os.path.join(args.out, "cases.json"), "w", encoding="utf-8") as fh:
        json.dump(manifest, fh, indent=2)
        fh.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
