#!/usr/bin/python3
"""Export a random BertForSequenceClassification at cross-encoder/ms-marco-MiniLM-L-6-v2's shape for bench/rerank.mjs:
the same weights as a hub folder (attnwasm) and as ONNX (onnxruntime-web). Not a model converter; inference only.

  bench/onnx/rerank/msmarco/       config.json (ms-marco-MiniLM-L-6-v2's: BertForSequenceClassification, one label,
                                   sentence_transformers.activation_fn Identity), model.safetensors (F32, "bert."
                                   prefix, pooler and classifier), tokenizer.json and tokenizer_config.json (BERT
                                   uncased's real vocabulary, as bench/export_encoder_onnx.py writes them)
  bench/onnx/rerank/msmarco.onnx   tools/bert.py's forward + pooler + classifier traced to ONNX (opset 17, dynamic
                                   batch and sequence): input_ids, attention_mask, token_type_ids (int64, (B, T)) ->
                                   logits (B, 1), as optimum exports BertForSequenceClassification for Transformers.js
  bench/onnx/rerank/check.json     a padded batch and torch's logits for it (rerank.mjs checks both engines)
Run with Debian's torch and python3-onnx: /usr/bin/python3 bench/export_reranker_onnx.py
"""

import base64
import json
import os
import shutil
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, ".."))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, os.path.join(ROOT, "tests", "data"))
sys.path.insert(0, HERE)
import bert  # noqa: E402
from export_safetensors import save_safetensors  # noqa: E402
import export_encoder_onnx as base  # noqa: E402

SEED = 20261206
CONFIG = dict(base.CONFIG, architectures=["BertForSequenceClassification"], id2label={"0": "LABEL_0"},
              label2id={"LABEL_0": 0}, _name_or_path="cross-encoder/ms-marco-MiniLM-L-6-v2",
              sentence_transformers={"activation_fn": "torch.nn.modules.linear.Identity", "version": "4.0.1"})


class OnnxReranker(torch.nn.Module):
    """(input_ids, attention_mask, token_type_ids) (B, T) int64 -> logits (B, 1): classifier(tanh(pooler(x[:, 0])))."""

    def __init__(self, enc, classifier):
        super().__init__()
        self.body = base.OnnxBert(enc)
        self.pooler = enc.pooler
        self.classifier = classifier

    def forward(self, input_ids, attention_mask, token_type_ids):
        x = self.body(input_ids, attention_mask, token_type_ids)
        return self.classifier(self.pooler(x))


def main():
    torch.set_num_threads(1)
    from make_encoder_goldens import random_model, dump_json  # noqa: E402
    out = os.path.join(HERE, "onnx", "rerank")
    folder = os.path.join(out, "msmarco")
    os.makedirs(folder, exist_ok=True)
    g = torch.Generator().manual_seed(SEED)
    model = random_model(bert.config_from_hf(base.CONFIG), True, g)
    classifier = torch.nn.Linear(384, 1)
    with torch.no_grad():
        classifier.weight.copy_(torch.randn(1, 384, generator=g) / 384 ** 0.5)
        classifier.bias.copy_(0.1 * torch.randn(1, generator=g))
    sd = {"bert." + k: v for k, v in model.state_dict().items()}
    sd.update({"classifier.weight": classifier.weight.detach(), "classifier.bias": classifier.bias.detach()})
    save_safetensors(dict(sorted(sd.items())), os.path.join(folder, "model.safetensors"), {"format": "pt"})
    dump_json(CONFIG, os.path.join(folder, "config.json"), sort_keys=True)
    # The tokenizer files of the embedder bench (the same vocabulary); made here when that folder is absent.
    embed = os.path.join(HERE, "onnx", "embed", "minilm")
    if not os.path.exists(os.path.join(embed, "tokenizer.json")):
        base.main(["--out", os.path.join(HERE, "onnx", "embed")])
    for f in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copyfile(os.path.join(embed, f), os.path.join(folder, f))

    lens = (40, 17, 33)
    ids = torch.zeros(3, 40, dtype=torch.long)
    types = torch.zeros_like(ids)
    for b, n in enumerate(lens):
        ids[b, 0], ids[b, 8], ids[b, n - 1] = 101, 102, 102
        ids[b, 1:8] = torch.randint(1000, 30522, (7,), generator=g)
        ids[b, 9:n - 1] = torch.randint(1000, 30522, (n - 10,), generator=g)
        types[b, 9:n] = 1
    mask = (torch.arange(40)[None] < torch.tensor(lens)[:, None]).long()
    wrapper = OnnxReranker(model, classifier).eval()
    with torch.no_grad():
        want = wrapper(ids, mask, types)
    onnx_path = os.path.join(out, "msmarco.onnx")
    with torch.no_grad():
        torch.onnx.export(wrapper, (ids, mask, types), onnx_path, opset_version=base.OPSET,
                          input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["logits"],
                          dynamic_axes={**{n: {0: "batch", 1: "sequence"} for n in
                                           ("input_ids", "attention_mask", "token_type_ids")}, "logits": {0: "batch"}},
                          do_constant_folding=True)
    from onnx_package import require_onnx
    onnx = require_onnx()
    onnx.checker.check_model(onnx.load(onnx_path))
    b64 = base64.b64encode(want.numpy().astype("<f4").tobytes()).decode()
    dump_json({"shape": [3, 40], "lengths": list(lens), "inputIds": ids.tolist(), "attentionMask": mask.tolist(),
               "tokenTypeIds": types.tolist(), "logits": {"dtype": "F32", "shape": list(want.shape), "base64": b64}},
              os.path.join(out, "check.json"), indent=None)
    print(f"{folder}: {os.path.getsize(os.path.join(folder, 'model.safetensors')) >> 20} MB; {onnx_path}")


if __name__ == "__main__":
    main()
