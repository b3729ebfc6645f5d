#!/usr/bin/python3
"""Export a random ModernBERT at ModernBERT-base's shape for bench/modernbert.mjs: the same weights as a hub folder
(attnwasm) and as ONNX (onnxruntime-web). Not a model converter; inference only.

  bench/onnx/modernbert/base/        config.json (answerdotai/ModernBERT-base's values, 4.x keys, architectures
                                     ModernBertModel) and model.safetensors (F32, ModernBertModel's names)
  bench/onnx/modernbert/base.onnx    tools/modernbert.py's forward traced to ONNX (opset 17, dynamic batch and
                                     sequence): input_ids, attention_mask (int64, (B, T)) -> last_hidden_state
                                     (B, T, 768) float32, padded keys masked, as optimum exports ModernBertModel
  bench/onnx/modernbert/check.json   a padded batch and torch's last_hidden_state for it (both engines are checked)
Run with Debian's torch and python3-onnx: /usr/bin/python3 bench/export_modernbert_onnx.py [--out DIR]
"""

import argparse
import base64
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, ".."))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(ROOT, "tools"))
import modernbert as mb  # noqa: E402
from export_safetensors import save_safetensors  # noqa: E402

OPSET = 17
SEED = 20261205
# answerdotai/ModernBERT-base's config.json (transformers 4.48.0.dev0), the keys the model reads
CONFIG = {
    "architectures": ["ModernBertModel"], "attention_bias": False, "attention_dropout": 0.0, "bos_token_id": 50281,
    "classifier_pooling": "mean", "cls_token_id": 50281, "eos_token_id": 50282, "global_attn_every_n_layers": 3,
    "global_rope_theta": 160000.0, "hidden_activation": "gelu", "hidden_size": 768, "intermediate_size": 1152,
    "local_attention": 128, "local_rope_theta": 10000.0, "max_position_embeddings": 8192, "mlp_bias": False,
    "model_type": "modernbert", "norm_bias": False, "norm_eps": 1e-05, "num_attention_heads": 12,
    "num_hidden_layers": 22, "pad_token_id": 50283, "sep_token_id": 50282, "torch_dtype": "float32",
    "transformers_version": "4.48.0.dev0", "vocab_size": 50368,
}


class Onnx(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, input_ids, attention_mask):
        return self.m(input_ids, attention_mask)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=os.path.join(HERE, "onnx", "modernbert"))
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(SEED)
    model = mb.ModernBert(CONFIG).eval()
    with torch.no_grad():
        for name, t in model.named_parameters():
            t.copy_(1 + 0.1 * torch.randn(t.shape, generator=g) if name.endswith("norm.weight")
                    else torch.randn(t.shape, generator=g) * (0.05 if "embeddings" in name else t.shape[-1] ** -0.5))
    folder = os.path.join(args.out, "base")
    os.makedirs(folder, exist_ok=True)
    save_safetensors(dict(sorted(model.state_dict().items())), os.path.join(folder, "model.safetensors"), {"format": "pt"})
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(CONFIG, f, indent=2, sort_keys=True)
    # check batch: 3 rows padded to 300 (pads 50283, masked): lengths across the local window (128)
    lens = (300, 7, 170)
    ids = torch.full((3, 300), CONFIG["pad_token_id"], dtype=torch.long)
    for b, n in enumerate(lens):
        ids[b, 0], ids[b, n - 1] = 50281, 50282
        ids[b, 1:n - 1] = torch.randint(1000, 50000, (n - 2,), generator=g)
    mask = (torch.arange(300)[None] < torch.tensor(lens)[:, None]).long()
    wrapper = Onnx(model).eval()
    with torch.no_grad():
        want = model(ids, mask)
    path = os.path.join(args.out, "base.onnx")
    with torch.no_grad():
        torch.onnx.export(wrapper, (ids, mask), path, opset_version=OPSET, input_names=["input_ids", "attention_mask"],
                          output_names=["last_hidden_state"],
                          dynamic_axes={n: {0: "batch", 1: "sequence"} for n in ("input_ids", "attention_mask", "last_hidden_state")},
                          do_constant_folding=True)
    from onnx_package import require_onnx
    onnx = require_onnx()
    m = onnx.load(path)
    onnx.checker.check_model(m)
    b64 = lambda t, dt: base64.b64encode(t.numpy().astype(dt).tobytes()).decode()  # noqa: E731
    with open(os.path.join(args.out, "check.json"), "w") as f:
        json.dump({"opset": OPSET, "torch": torch.__version__, "onnxOps": sorted({n.op_type for n in m.graph.node}),
                   "lengths": list(lens), "inputIds": ids.tolist(),
                   "lastHiddenState": {"dtype": "F32", "shape": list(want.shape), "base64": b64(want, "<f4")}}, f)
    print("wrote", folder, path, "ops:", sorted({n.op_type for n in m.graph.node}))


if __name__ == "__main__":
    main()
