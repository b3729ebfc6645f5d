#!/usr/bin/python3
"""Goldens of ModernBERT as an embedder (issue 42): tests/data/goldens/modernbert/.

Run: /usr/bin/python3 tests/data/make_modernbert_goldens.py (Debian's torch 1.13; node with npm tokenizers 0.23.2 in
build/tokenizer-ref/, as make_tokenizer_goldens.mjs installs it). Deterministic: fixed seed, one thread; two runs
write identical bytes.

embed/: laid out as Alibaba-NLP/gte-modernbert-base's folder: config.json in transformers 4.x's keys
(architectures ModernBertModel, global_attn_every_n_layers 3, local_attention 8 so that local layers see
|i - j| <= 4, global_rope_theta 160000, local_rope_theta 10000), model.safetensors as ModernBertModel saves it (F32),
a byte-level tokenizer.json whose TemplateProcessing is [CLS] text [SEP] (GPT-2's first 3 000 merges, added [CLS],
[SEP], [PAD], [MASK]), modules.json (Transformer, 1_Pooling with CLS, 2_Normalize), sentence_bert_config.json
(max_seq_length 40). mlm/: the same encoder as a ModernBertForMaskedLM save (tensors under "model.", head.dense,
head.norm, decoder.bias; config.json in 5.x's keys: layer_types and rope_parameters), no sentence-transformers files.
classify/: the same encoder as a ModernBertForSequenceClassification save (classifier_pooling mean, 3 labels) in two
shards, the encoder's being embed/'s model.safetensors (the test puts it beside; only the head's shard is here), its
logits for both poolings (head.dense, erf GELU, head.norm without bias, classifier) from the same float64 rows.
token/: a ModernBertForTokenClassification save, sharded the same way (5 tags), every row's logits.

The reference: ids from the Rust tokenizers (truncated to max_seq_length), tools/modernbert.py's twin (written from
transformers' modeling_modernbert.py) in float64 on the stored weights: each text alone, its last_hidden_state;
CLS pooling + L2 normalization (embed/'s embeddings) and mean pooling, not normalized (what mlm/ gives, as
sentence-transformers pools a plain transformers folder). Also one padded batch of all texts through the twin with
the attention mask, which must give each text's rows: the unpadded runs equal the padded model.
expected.json: {cases: [{text, ids, cls, mean, logits_cls, logits_mean, token_logits (T × 5)}], atol, rtol}.
"""

import collections
import json
import os
import subprocess
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(ROOT, "tools"))
import modernbert as mb  # noqa: E402
sys.path.insert(0, HERE)
from make_decoder_embedder_goldens import f32, pooling_config, st_modules, write_folder  # noqa: E402

SEED = 20261206
OUT = os.path.join(HERE, "goldens", "modernbert")
MAX_SEQ = 40
TOL = (1e-4, 1e-4)
TEXTS = ["What is the capital of China?", "The capital of China is Beijing.", "café naïve 😀", "a",
         "Gravity is a force that attracts two bodies towards each other, and it keeps the planets in orbit.",
         " ".join(["long"] * 60)]

NODE = r"""
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
const job = JSON.parse(readFileSync(0, 'utf8'));
const require = createRequire(job.root + '/build/tokenizer-ref/package.json');
const { Tokenizer } = require('tokenizers');
const base = JSON.parse(readFileSync(job.root + '/tests/data/goldens/tokenizer/gpt2_3k.json', 'utf8'));
let next = Tokenizer.fromString(JSON.stringify(base)).getVocabSize(true);
const added = ['[CLS]', '[SEP]', '[PAD]', '[MASK]'].map((content) => ({ id: next++, content, single_word: false,
  lstrip: content === '[MASK]', rstrip: false, normalized: false, special: true }));
const special = (id) => ({ SpecialToken: { id, type_id: 0 } });
const seq = (id) => ({ Sequence: { id, type_id: 0 } });
const json = { ...base, added_tokens: [...base.added_tokens, ...added],
  post_processor: { type: 'TemplateProcessing', single: [special('[CLS]'), seq('A'), special('[SEP]')],
    pair: [special('[CLS]'), seq('A'), special('[SEP]'), seq('B'), special('[SEP]')],
    special_tokens: Object.fromEntries(['[CLS]', '[SEP]'].map((t) => [t, { id: t, ids: [added.find((a) => a.content === t).id], tokens: [t] }])) } };
const tok = Tokenizer.fromString(JSON.stringify(json));
tok.setTruncation(job.maxLength);
const ids = [];
for (const t of job.texts) ids.push((await tok.encode(t)).getIds());
console.log(JSON.stringify({ json, ids, vocabSize: tok.getVocabSize(true) }));
"""


def node(job):
    res = subprocess.run(["node", "--input-type=module", "-e", NODE], input=json.dumps(job).encode(),
                         capture_output=True, check=True)
    return json.loads(res.stdout)


def main():
    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(SEED)
    # sentence-transformers tokenizes the stripped text (Transformer.tokenize)
    ref = node({"root": ROOT, "maxLength": MAX_SEQ, "texts": [t.strip() for t in TEXTS]})
    vocab = ref["vocabSize"]
    ids_of = {t["content"]: t["id"] for t in ref["json"]["added_tokens"]}
    config = {"architectures": ["ModernBertModel"], "attention_bias": False, "attention_dropout": 0.0,
              "bos_token_id": ids_of["[CLS]"], "classifier_activation": "gelu", "classifier_bias": False,
              "classifier_dropout": 0.0, "classifier_pooling": "mean", "cls_token_id": ids_of["[CLS]"],
              "decoder_bias": True, "deterministic_flash_attn": False, "embedding_dropout": 0.0,
              "eos_token_id": ids_of["[SEP]"], "global_attn_every_n_layers": 3, "global_rope_theta": 160000.0,
              "hidden_activation": "gelu", "hidden_size": 32, "initializer_cutoff_factor": 2.0,
              "initializer_range": 0.02, "intermediate_size": 48, "layer_norm_eps": 1e-05, "local_attention": 8,
              "local_rope_theta": 10000.0, "max_position_embeddings": 64, "mlp_bias": False, "mlp_dropout": 0.0,
              "model_type": "modernbert", "norm_bias": False, "norm_eps": 1e-05, "num_attention_heads": 4,
              "num_hidden_layers": 4, "pad_token_id": ids_of["[PAD]"], "sep_token_id": ids_of["[SEP]"],
              "torch_dtype": "float32", "transformers_version": "4.48.0", "vocab_size": vocab}
    m32 = mb.ModernBert(config).eval()
    with torch.no_grad():
        for name, p in m32.named_parameters():
            p.copy_(1 + 0.2 * torch.randn(p.shape, generator=g) if name.endswith("norm.weight")
                    else torch.randn(p.shape, generator=g) * (0.5 if "embeddings" in name else p.shape[-1] ** -0.5 * 1.5))
    sd = collections.OrderedDict(sorted(m32.state_dict().items()))
    m64 = mb.ModernBert(config).double().eval()
    m64.load_state_dict(sd)
    cases, rows64 = [], []
    for text, ids in zip(TEXTS, ref["ids"]):
        t = torch.tensor([ids])
        with torch.no_grad():
            h = m64(t)[0]
            h32 = m32(t)[0]
        assert float((h32.double() - h).abs().max()) < 5e-5 * (1 + float(h.abs().max())), text
        rows64.append(h)
        cls = h[0] / h[0].norm().clamp(min=1e-12)
        cases.append({"text": text, "ids": ids, "cls": f32(cls), "mean": f32(h.mean(0))})
    assert any(len(c["ids"]) == MAX_SEQ for c in cases)
    # The padded batch (right padding with [PAD], the mask hiding it) gives each text's own rows.
    T = max(len(i) for i in ref["ids"])
    batch = torch.tensor([i + [ids_of["[PAD]"]] * (T - len(i)) for i in ref["ids"]])
    mask = torch.tensor([[1] * len(i) + [0] * (T - len(i)) for i in ref["ids"]])
    with torch.no_grad():
        padded = m64(batch, mask)
    for k, h in enumerate(rows64):
        assert float((padded[k, :h.shape[0]] - h).abs().max()) < 1e-12, (k, float((padded[k, :h.shape[0]] - h).abs().max()))
    # A sequence classifier on the same encoder (ModernBertForSequenceClassification: head.dense, head.norm with
    # classifier_bias false and norm_bias false, classifier with its bias), its logits by either pooling.
    head = {"head.dense.weight": torch.randn(32, 32, generator=g) * 32 ** -0.5, "head.norm.weight": 1 + 0.2 * torch.randn(32, generator=g),
            "classifier.weight": torch.randn(3, 32, generator=g) * 0.5, "classifier.bias": torch.randn(3, generator=g) * 0.1}
    h64 = {k: v.double() for k, v in head.items()}
    for c, h in zip(cases, rows64):
        for mode, pooled in (("cls", h[0]), ("mean", h.mean(0))):
            y = torch.nn.functional.layer_norm(torch.nn.functional.gelu(pooled @ h64["head.dense.weight"].T), (32,),
                                               h64["head.norm.weight"], None, 1e-5)
            c["logits_" + mode] = f32(y @ h64["classifier.weight"].T + h64["classifier.bias"])
    # A masked-LM save of the same encoder: "model." names, the prediction head and the decoder's bias; 5.x's keys.
    mlm = collections.OrderedDict((f"model.{k}", v) for k, v in sd.items())
    mlm["head.dense.weight"] = torch.randn(32, 32, generator=g)
    mlm["head.norm.weight"] = torch.ones(32)
    mlm["decoder.bias"] = torch.zeros(vocab)
    # A token classifier on the same encoder (ModernBertForTokenClassification: the same head on every row), 5 tags.
    tok_head = {"head.dense.weight": torch.randn(32, 32, generator=g) * 32 ** -0.5,
                "head.norm.weight": 1 + 0.2 * torch.randn(32, generator=g),
                "classifier.weight": torch.randn(5, 32, generator=g) * 0.5, "classifier.bias": torch.randn(5, generator=g) * 0.1}
    t64 = {k: v.double() for k, v in tok_head.items()}
    for c, h in zip(cases, rows64):
        y = torch.nn.functional.layer_norm(torch.nn.functional.gelu(h @ t64["head.dense.weight"].T), (32,),
                                           t64["head.norm.weight"], None, 1e-5)
        c["token_logits"] = f32((y @ t64["classifier.weight"].T + t64["classifier.bias"]).reshape(-1))
    config5 = {k: v for k, v in config.items() if k not in ("global_attn_every_n_layers", "global_rope_theta",
                                                             "local_rope_theta", "torch_dtype")}
    config5.update({"architectures": ["ModernBertForMaskedLM"], "dtype": "float32", "transformers_version": "5.0.0",
                    "layer_types": ["full_attention" if i % 3 == 0 else "sliding_attention" for i in range(4)],
                    "rope_parameters": {"full_attention": {"rope_theta": 160000.0, "rope_type": "default"},
                                        "sliding_attention": {"rope_theta": 10000.0, "rope_type": "default"}}})
    tokenizer_config = {"tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": 8192, "cls_token": "[CLS]",
                        "sep_token": "[SEP]", "pad_token": "[PAD]", "mask_token": "[MASK]",
                        "clean_up_tokenization_spaces": True}
    write_folder(os.path.join(OUT, "embed"), {
        "config.json": config,
        "tokenizer.json": ref["json"],
        "tokenizer_config.json": tokenizer_config,
        "modules.json": st_modules("1_Pooling", "2_Normalize"),
        "1_Pooling/config.json": pooling_config(32, "cls_token"),
        "sentence_bert_config.json": {"max_seq_length": MAX_SEQ, "do_lower_case": False},
        "expected.json": {"generator": "tests/data/make_modernbert_goldens.py", "torch": torch.__version__,
                          "reference": "tools/modernbert.py float64 (each text alone; a padded batch checked to give the "
                                       "same rows); ids from npm tokenizers 0.23.2",
                          "maxSeqLength": MAX_SEQ, "localAttention": 8, "atol": TOL[0], "rtol": TOL[1], "cases": cases},
    }, {"model.safetensors": (sd, "F32")})
    configc = dict(config, architectures=["ModernBertForSequenceClassification"], classifier_pooling="mean",
                   id2label={"0": "negative", "1": "neutral", "2": "positive"},
                   label2id={"negative": 0, "neutral": 1, "positive": 2})
    # Sharded as the hub shards: the encoder's shard is embed/'s model.safetensors (the test gives it), the head's
    # its own file.
    index = {"metadata": {"total_size": 0}, "weight_map": {**{k: "model.safetensors" for k in sd},
                                                            **{k: "head.safetensors" for k in head}}}
    write_folder(os.path.join(OUT, "classify"), {"config.json": configc, "model.safetensors.index.json": index,
                                                 "tokenizer_config.json": dict(tokenizer_config, model_max_length=MAX_SEQ)},
                 {"head.safetensors": (head, "F32")})
    tags = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
    index_t = {"metadata": {"total_size": 0}, "weight_map": {**{k: "model.safetensors" for k in sd},
                                                              **{k: "head.safetensors" for k in tok_head}}}
    write_folder(os.path.join(OUT, "token"), {
        "config.json": dict(config, architectures=["ModernBertForTokenClassification"],
                            id2label={str(i): t for i, t in enumerate(tags)}, label2id={t: i for i, t in enumerate(tags)}),
        "model.safetensors.index.json": index_t,
        "tokenizer_config.json": dict(tokenizer_config, model_max_length=MAX_SEQ)}, {"head.safetensors": (tok_head, "F32")})
    write_folder(os.path.join(OUT, "mlm"), {"config.json": config5, "tokenizer.json": ref["json"],
                                            "tokenizer_config.json": tokenizer_config}, {"model.safetensors": (mlm, "F32")})
    print("wrote", OUT, len(cases), "cases; vocab", vocab, "; lengths", [len(c["ids"]) for c in cases])


if __name__ == "__main__":
    main()
