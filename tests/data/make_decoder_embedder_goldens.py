#!/usr/bin/python3
"""Goldens of the decoder-based embedder (issue 42): a Qwen3-Embedding-shaped folder, tests/data/goldens/
decoder_embedders/qwen3_embedding/, and its sentence embeddings from the torch twin.

Run: /usr/bin/python3 tests/data/make_decoder_embedder_goldens.py (Debian's torch 1.13; node with npm tokenizers
0.23.2 in build/tokenizer-ref/, as make_tokenizer_goldens.mjs installs it). Deterministic: fixed seed, one thread;
two runs write identical bytes.

The folder is laid out as Qwen/Qwen3-Embedding-0.6B's: config.json (model_type qwen3, architectures
Qwen3ForCausalLM, tie_word_embeddings true), model.safetensors as Qwen3Model saves it (tensor names without
"model.", no lm_head), a byte-level tokenizer.json whose TemplateProcessing appends <|endoftext|> (GPT-2's first
3 000 merges with Qwen2's regex and NFC, tests/data/tokenizer_cases.mjs's qwen2 variant), tokenizer_config.json
(padding_side left), modules.json (Transformer, 1_Pooling with pooling_mode_lasttoken, 2_Normalize),
config_sentence_transformers.json (Qwen3-Embedding's query instruction prompt) and sentence_bert_config.json
(max_seq_length 40).

The reference: the ids of each prompt + text from the Rust tokenizers (truncation to max_seq_length, as
sentence-transformers' tokenize asks, after its strip()), tools/families.py's FamilyLM (the Qwen3 twin written from transformers'
modeling_qwen3.py, checked against the causal LM goldens) in float64 on the stored BF16 weights, its final norm's
rows (Qwen3Model's last_hidden_state), sentence-transformers' last-token pooling (each text alone: no padding) and
L2 normalization. Also each text's mean over its tokens with the prompt's tokens left out (include_prompt false),
not normalized: the same hidden rows pooled the other way, for loadModel's pooling option.
expected.json: {texts, prompts, cases: [{prompt (name or null), ids, lasttoken, meanWithoutPrompt, promptTokens}],
atol, rtol}.
"""

import base64
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
import families as fam  # noqa: E402
from export_safetensors import serialize_safetensors  # noqa: E402

SEED = 20261205
OUT = os.path.join(HERE, "goldens", "decoder_embedders", "qwen3_embedding")
MAX_SEQ = 40
TOL = (1e-4, 1e-4)
QUERY = "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery:"
TEXTS = ["What is the capital of China?", "Explain gravity", "The capital of China is Beijing.",
         "Gravity is a force that attracts two bodies towards each other.", "  spaces around  ", "café naïve 😀",
         "a", " ".join(["long"] * 60)]

NODE = r"""
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
const job = JSON.parse(readFileSync(0, 'utf8'));
const { variants } = await import(job.root + '/tests/data/tokenizer_cases.mjs');
const base = JSON.parse(readFileSync(job.root + '/tests/data/goldens/tokenizer/gpt2_3k.json', 'utf8'));
const q = variants(base).qwen2;
const special = (id) => ({ SpecialToken: { id, type_id: 0 } });
const seq = (id) => ({ Sequence: { id, type_id: 0 } });
const eot = q.added_tokens.find((t) => t.content === '<|endoftext|>');
const json = { ...q, added_tokens: q.added_tokens.filter((t) => t.special),
  post_processor: { type: 'TemplateProcessing', single: [seq('A'), special('<|endoftext|>')],
    pair: [seq('A'), special('<|endoftext|>'), seq('B'), special('<|endoftext|>')],
    special_tokens: { '<|endoftext|>': { id: '<|endoftext|>', ids: [eot.id], tokens: ['<|endoftext|>'] } } } };
const require = createRequire(job.root + '/build/tokenizer-ref/package.json');
const { Tokenizer } = require('tokenizers');
const tok = Tokenizer.fromString(JSON.stringify(json));
tok.setTruncation(job.maxLength);
const ids = [];
for (const t of job.texts) ids.push((await tok.encode(t)).getIds());
const plain = [];
for (const t of job.prompts) plain.push((await tok.encode(t, null, { addSpecialTokens: false })).getIds());
console.log(JSON.stringify({ json, ids, promptIds: plain, vocabSize: tok.getVocabSize(true) }));
"""


def node(job):
    res = subprocess.run(["node", "--input-type=module", "-e", NODE], input=json.dumps(job).encode(),
                         capture_output=True, check=True)
    return json.loads(res.stdout)


def hidden_rows(m, ids):
    """FamilyLM.forward up to the final norm (Qwen3Model's last_hidden_state): (1, T, E)."""
    T = ids.shape[1]
    positions = torch.arange(T)
    x = m.model.embed_tokens(ids.long())
    tables = m.rope_tables(positions, T, x.dtype)
    for spec, layer in zip(m.cfg.layers, m.model.layers):
        x = layer(x, tables.get(id(spec.rope)) if spec.rope is not None else None, None, None)
    return m.model.norm(x)


def f32(t):
    return [float(v) for v in t.float().tolist()]


def main():
    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(SEED)
    prompts = {"query": QUERY, "document": ""}
    inputs = [(name, text) for text in TEXTS for name in ("query", None)]
    # sentence-transformers tokenizes str(prompt + text).strip() (Transformer.tokenize)
    ref = node({"root": ROOT, "maxLength": MAX_SEQ, "texts": [((prompts[n] if n else "") + t).strip() for n, t in inputs],
                "prompts": [QUERY]})
    vocab = ref["vocabSize"]
    config = {"architectures": ["Qwen3ForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
              "bos_token_id": vocab - 3, "eos_token_id": vocab - 3, "head_dim": 8, "hidden_act": "silu",
              "hidden_size": 32, "initializer_range": 0.02, "intermediate_size": 64, "max_position_embeddings": 128,
              "max_window_layers": 28, "model_type": "qwen3", "num_attention_heads": 4, "num_hidden_layers": 2,
              "num_key_value_heads": 2, "rms_norm_eps": 1e-6, "rope_scaling": None, "rope_theta": 1000000.0,
              "sliding_window": None, "tie_word_embeddings": True, "torch_dtype": "bfloat16",
              "transformers_version": "4.51.3", "use_cache": True, "use_sliding_window": False,
              "vocab_size": vocab + 5}
    cfg = fam.config_from_hf(config)
    m32 = fam.FamilyLM(cfg).eval()
    with torch.no_grad():
        for p in m32.parameters():
            p.copy_((torch.randn(p.shape, generator=g) * 0.5).to(torch.bfloat16).float())
        for name, p in m32.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_((1 + 0.2 * torch.randn(p.shape, generator=g)).to(torch.bfloat16).float())
    sd = fam.hf_state_dict(m32)
    m64 = fam.load_state_dict_hf(fam.FamilyLM(cfg).double().eval(), sd)
    prompt_tokens = len(ref["promptIds"][0])
    cases = []
    for (name, text), ids in zip(inputs, ref["ids"]):
        t = torch.tensor([ids])
        with torch.no_grad():
            h = hidden_rows(m64, t)[0]
            h32 = hidden_rows(m32, t)[0]
        assert float((h32.double() - h).abs().max()) < 5e-5 * (1 + float(h.abs().max())), text
        last = h[-1]
        last = last / last.norm().clamp(min=1e-12)
        skip = prompt_tokens if name else 0
        mean = h[skip:].mean(0) if skip < len(ids) else torch.zeros(h.shape[1], dtype=h.dtype)
        cases.append({"text": text, "prompt": name, "ids": ids, "lasttoken": f32(last), "meanWithoutPrompt": f32(mean)})
    # Files as the hub lays them out: Qwen3Model's tensor names (no "model.", no lm_head: tied).
    weights = collections.OrderedDict(sorted((k[len("model."):], v) for k, v in sd.items() if k.startswith("model.")))
    os.makedirs(os.path.join(OUT, "1_Pooling"), exist_ok=True)
    files = {
        "config.json": config,
        "tokenizer.json": ref["json"],
        "tokenizer_config.json": {"tokenizer_class": "Qwen2Tokenizer", "padding_side": "left", "model_max_length": 131072,
                                  "eos_token": "<|endoftext|>", "pad_token": "<|endoftext|>", "bos_token": None,
                                  "clean_up_tokenization_spaces": False, "errors": "replace", "split_special_tokens": False},
        "modules.json": [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
                         {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
                         {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}],
        "1_Pooling/config.json": {"word_embedding_dimension": 32, "pooling_mode_cls_token": False,
                                  "pooling_mode_mean_tokens": False, "pooling_mode_max_tokens": False,
                                  "pooling_mode_mean_sqrt_len_tokens": False, "pooling_mode_weightedmean_tokens": False,
                                  "pooling_mode_lasttoken": True, "include_prompt": True},
        "config_sentence_transformers.json": {"prompts": prompts, "default_prompt_name": None, "similarity_fn_name": "cosine",
                                              "__version__": {"sentence_transformers": "3.4.1", "transformers": "4.51.3"}},
        "sentence_bert_config.json": {"max_seq_length": MAX_SEQ, "do_lower_case": False},
        "expected.json": {"generator": "tests/data/make_decoder_embedder_goldens.py", "torch": torch.__version__,
                          "reference": "tools/families.py FamilyLM (Qwen3) float64, final norm rows; ids from npm tokenizers 0.23.2",
                          "prompts": prompts, "promptTokens": prompt_tokens, "maxSeqLength": MAX_SEQ,
                          "atol": TOL[0], "rtol": TOL[1], "cases": cases},
    }
    for name, obj in files.items():
        with open(os.path.join(OUT, name), "w") as f:
            json.dump(obj, f, indent=1 if name == "expected.json" else 2, ensure_ascii=False)
            f.write("\n")
    with open(os.path.join(OUT, "model.safetensors"), "wb") as f:
        f.write(serialize_safetensors(weights, {"format": "pt"}, "BF16"))
    print("wrote", OUT, len(cases), "cases; prompt tokens", prompt_tokens, "; vocab", vocab)


if __name__ == "__main__":
    main()
