#!/usr/bin/python3
"""Golden folders for sentence-transformers' Dense modules (issue 42): tests/data/goldens/dense/.

Not a test itself. Each case is an encoder golden folder of tests/data/goldens/encoders/ (its model, tokenizer and
pooling) with Dense modules added after the pooling, as LaBSE, the distiluse models and EmbeddingGemma have them:
modules.json naming them, each module's folder with config.json (in_features, out_features, bias,
activation_function) and model.safetensors (linear.weight, linear.bias) as Dense.save writes them. The expected
embeddings are sentence-transformers' Dense.forward, activation(linear(x)), applied in float64 to the base folder's
pooled embeddings (its expected.json "pooled", float32), then Normalize (F.normalize) where the folder has it, rounded
to float32. The base folder's own checks cover the encoder and the pooling.

Run: /usr/bin/python3 tests/data/make_dense_goldens.py   (deterministic: fixed seeds)
expected.json: name, like, base (the encoder golden folder), texts, dense [{in, out, bias, activation}], normalize,
  tolerance, sentenceEmbedding {dtype F32, shape, base64}; and refusals: cases of one folder changed, each with the
  words its error must contain.
"""

import base64
import json
import os
import shutil
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(ROOT, "tools"))
from export_safetensors import serialize_safetensors  # noqa: E402

ENC = os.path.join(HERE, "goldens", "encoders")
OUT = os.path.join(HERE, "goldens", "dense")
SEED = 20261207
ACT = {"torch.nn.modules.activation.Tanh": torch.tanh, "torch.nn.modules.linear.Identity": lambda x: x}


def tensor(t):
    b = base64.b64decode(t["base64"])
    return torch.frombuffer(bytearray(b), dtype=torch.float32).reshape(t["shape"]).clone()


def f32_b64(x):
    return {"dtype": "F32", "shape": list(x.shape), "base64": base64.b64encode(x.to(torch.float32).numpy().tobytes()).decode()}


def make(name, base, like, layers, normalize):
    src = os.path.join(ENC, base)
    exp = json.load(open(os.path.join(src, "expected.json")))
    folder = os.path.join(OUT, name)
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(src, folder, ignore=shutil.ignore_patterns("expected.json", "modules.json"))
    modules = json.load(open(os.path.join(src, "modules.json")))[:2]
    g = torch.Generator().manual_seed(SEED + len(name))
    x = tensor(exp["pooled"]).to(torch.float64)
    width = x.shape[1]
    desc = []
    for i, (out, bias, act) in enumerate(layers):
        path = f"{i + 2}_Dense"
        os.makedirs(os.path.join(folder, path))
        w = (torch.randn(out, width, generator=g) / width ** 0.5).to(torch.float32)
        b = (0.1 * torch.randn(out, generator=g)).to(torch.float32)
        with open(os.path.join(folder, path, "config.json"), "w") as f:
            json.dump({"in_features": width, "out_features": out, "bias": bias, "activation_function": act}, f)
        tensors = {"linear.weight": w, **({"linear.bias": b} if bias else {})}
        with open(os.path.join(folder, path, "model.safetensors"), "wb") as f:
            f.write(serialize_safetensors(tensors, {"format": "pt"}))
        y = x @ w.to(torch.float64).T + (b.to(torch.float64) if bias else 0)
        # torch runs Dense in float32: each step's output is a float32 tensor.
        x = ACT[act](y.to(torch.float32).to(torch.float64)).to(torch.float32).to(torch.float64)
        modules.append({"idx": len(modules), "name": str(len(modules)), "path": path, "type": "sentence_transformers.models.Dense"})
        desc.append({"in": width, "out": out, "bias": bias, "activation": act})
        width = out
    if normalize:
        x = x / x.norm(dim=1, keepdim=True).clamp_min(1e-12)
        path = f"{len(modules)}_Normalize"
        modules.append({"idx": len(modules), "name": str(len(modules)), "path": path, "type": "sentence_transformers.models.Normalize"})
    with open(os.path.join(folder, "modules.json"), "w") as f:
        json.dump(modules, f, indent=2)
    result = {"name": name, "like": like, "base": base, "generator": "tests/data/make_dense_goldens.py",
              "texts": exp["texts"], "dense": desc, "normalize": normalize, "tolerance": {"atol": 1e-4, "rtol": 1e-4},
              "sentenceEmbedding": f32_b64(x)}
    with open(os.path.join(folder, "expected.json"), "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    print(name, [d["out"] for d in desc], "normalize" if normalize else "")


def main():
    os.makedirs(OUT, exist_ok=True)
    make("bert_dense_tanh_norm", "bert_mean_norm_pooler", "distiluse-base-multilingual / LaBSE: Dense(tanh), Normalize",
         [(16, True, "torch.nn.modules.activation.Tanh")], True)
    make("bert_two_dense", "bert_cls_norm_lower", "EmbeddingGemma's 2_Dense, 3_Dense (identity, no bias), no Normalize",
         [(48, False, "torch.nn.modules.linear.Identity"), (24, False, "torch.nn.modules.linear.Identity")], False)


if __name__ == "__main__":
    main()
