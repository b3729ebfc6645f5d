#!/usr/bin/python3
"""Goldens of the decoder-based embedders (issue 42): a Qwen3-Embedding-shaped folder, tests/data/goldens/
decoder_embedders/qwen3_embedding/, and an EmbeddingGemma-shaped one, .../embeddinggemma/ (gemma_main), with their
sentence embeddings from the torch twin.

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
const require = createRequire(job.root + '/build/tokenizer-ref/package.json');
const { Tokenizer } = require('tokenizers');
const special = (id) => ({ SpecialToken: { id, type_id: 0 } });
const seq = (id) => ({ Sequence: { id, type_id: 0 } });
const eot = q.added_tokens.find((t) => t.content === '<|endoftext|>');
let json = { ...q, added_tokens: q.added_tokens.filter((t) => t.special),
  post_processor: { type: 'TemplateProcessing', single: [seq('A'), special('<|endoftext|>')],
    pair: [seq('A'), special('<|endoftext|>'), seq('B'), special('<|endoftext|>')],
    special_tokens: { '<|endoftext|>': { id: '<|endoftext|>', ids: [eot.id], tokens: ['<|endoftext|>'] } } } };
if (job.template === 'gemma') {  // EmbeddingGemma's: <bos> text <eos>, both added special tokens
  const next = Tokenizer.fromString(JSON.stringify(json)).getVocabSize(true);  // the id the library gives the next token
  const tok = (content, id) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
  // and, as Gemma 3's tokenizer.json has, one added token past the model's vocab_size (<image_soft_token>)
  const bos = tok('<bos>', next), eos = tok('<eos>', next + 1), image = tok('<image_soft_token>', next + 2);
  json = { ...json, added_tokens: [...json.added_tokens, bos, eos, image],
    post_processor: { type: 'TemplateProcessing', single: [special('<bos>'), seq('A'), special('<eos>')],
      pair: [special('<bos>'), seq('A'), special('<eos>'), seq('B'), special('<eos>')],
      special_tokens: { '<bos>': { id: '<bos>', ids: [bos.id], tokens: ['<bos>'] }, '<eos>': { id: '<eos>', ids: [eos.id], tokens: ['<eos>'] } } } };
}
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
    if m.cfg.recipe["embed_scale"]:
        x = x * fam.embed_scale(m.cfg, m.embed_scale_dtype).to(x.dtype)
    tables = m.rope_tables(positions, T, x.dtype)
    for spec, layer in zip(m.cfg.layers, m.model.layers):
        x = layer(x, tables.get(id(spec.rope)) if spec.rope is not None else None, None, None)
    return m.model.norm(x)


def checked_rows(m64, m32, ids, text):
    """The float64 twin's hidden rows (T, E) of one text, after checking the float32 twin agrees."""
    t = torch.tensor([ids])
    with torch.no_grad():
        h = hidden_rows(m64, t)[0]
        h32 = hidden_rows(m32, t)[0]
    assert float((h32.double() - h).abs().max()) < 5e-5 * (1 + float(h.abs().max())), text
    return h


def pooling_config(dim, mode):
    """1_Pooling/config.json of one pooling mode ("cls_token", "mean_tokens", "lasttoken"), include_prompt true."""
    modes = ("cls_token", "mean_tokens", "max_tokens", "mean_sqrt_len_tokens", "weightedmean_tokens", "lasttoken")
    return {"word_embedding_dimension": dim, **{f"pooling_mode_{m}": m == mode for m in modes}, "include_prompt": True}


def st_modules(*paths):
    """modules.json: the Transformer, then one module per "<idx>_<Type>" folder (1_Pooling, 2_Dense, …)."""
    return [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"}] + [
        {"idx": i + 1, "name": str(i + 1), "path": p, "type": "sentence_transformers.models." + p.split("_", 1)[1]}
        for i, p in enumerate(paths)]


def write_folder(out, files, tensors):
    """JSON files (expected.json at indent 1, the others 2) and safetensors files {name: (tensors, dtype)} under out."""
    for name, obj in files.items():
        os.makedirs(os.path.dirname(os.path.join(out, name)), exist_ok=True)
        with open(os.path.join(out, name), "w") as f:
            json.dump(obj, f, indent=1 if name == "expected.json" else 2, ensure_ascii=False)
            f.write("\n")
    for name, (weights, dtype) in tensors.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(serialize_safetensors(collections.OrderedDict(weights), {"format": "pt"}, dtype))


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
        h = checked_rows(m64, m32, ids, text)
        last = h[-1]
        last = last / last.norm().clamp(min=1e-12)
        skip = prompt_tokens if name else 0
        mean = h[skip:].mean(0) if skip < len(ids) else torch.zeros(h.shape[1], dtype=h.dtype)
        cases.append({"text": text, "prompt": name, "ids": ids, "lasttoken": f32(last), "meanWithoutPrompt": f32(mean)})
    # Files as the hub lays them out: Qwen3Model's tensor names (no "model.", no lm_head: tied).
    weights = collections.OrderedDict(sorted((k[len("model."):], v) for k, v in sd.items() if k.startswith("model.")))
    files = {
        "config.json": config,
        "tokenizer.json": ref["json"],
        "tokenizer_config.json": {"tokenizer_class": "Qwen2Tokenizer", "padding_side": "left", "model_max_length": 131072,
                                  "eos_token": "<|endoftext|>", "pad_token": "<|endoftext|>", "bos_token": None,
                                  "clean_up_tokenization_spaces": False, "errors": "replace", "split_special_tokens": False},
        "modules.json": st_modules("1_Pooling", "2_Normalize"),
        "1_Pooling/config.json": pooling_config(32, "lasttoken"),
        "config_sentence_transformers.json": {"prompts": prompts, "default_prompt_name": None, "similarity_fn_name": "cosine",
                                              "__version__": {"sentence_transformers": "3.4.1", "transformers": "4.51.3"}},
        "sentence_bert_config.json": {"max_seq_length": MAX_SEQ, "do_lower_case": False},
        "expected.json": {"generator": "tests/data/make_decoder_embedder_goldens.py", "torch": torch.__version__,
                          "reference": "tools/families.py FamilyLM (Qwen3) float64, final norm rows; ids from npm tokenizers 0.23.2",
                          "prompts": prompts, "promptTokens": prompt_tokens, "maxSeqLength": MAX_SEQ,
                          "atol": TOL[0], "rtol": TOL[1], "cases": cases},
    }
    write_folder(OUT, files, {"model.safetensors": (weights, "BF16")})
    print("wrote", OUT, len(cases), "cases; prompt tokens", prompt_tokens, "; vocab", vocab)


GEMMA_OUT = os.path.join(HERE, "goldens", "decoder_embedders", "embeddinggemma")
GEMMA_MAX_SEQ = 48
GEMMA_PROMPTS = {"query": "task: search result | query: ", "document": "title: none | text: ",
                 "Classification": "task: classification | query: "}
GEMMA_TEXTS = ["What is the capital of China?", "The capital of China is Beijing.", "café naïve 😀", "a",
               "Gravity is a force that attracts two bodies towards each other, and it keeps the planets in orbit.",
               " ".join(["long"] * 60)]


def gemma_main():
    """EmbeddingGemma's layout (google/embeddinggemma-300m): Gemma3TextModel (model_type gemma3_text,
    use_bidirectional_attention true, layer_types with sliding layers, sliding_window stored as the hub stores it and
    halved on load: 10 -> |i - j| < 6), tensor names without "model.", <bos> text <eos> (and an added token past
    vocab_size, as Gemma 3's tokenizer.json has <image_soft_token> at 262144), modules Transformer,
    1_Pooling (mean), 2_Dense (E -> 4E, no bias, Identity), 3_Dense (4E -> E), 4_Normalize; its prompts. Texts up to
    48 tokens: most pairs of positions are outside the window, so a causal or unwindowed model fails the goldens."""
    g = torch.Generator().manual_seed(SEED + 1)
    inputs = [(name, text) for text in GEMMA_TEXTS for name in ("query", "document", None)]
    ref = node({"root": ROOT, "maxLength": GEMMA_MAX_SEQ, "template": "gemma",
                "texts": [((GEMMA_PROMPTS[n] if n else "") + t).strip() for n, t in inputs], "prompts": []})
    image = next(t["id"] for t in ref["json"]["added_tokens"] if t["content"] == "<image_soft_token>")
    vocab = image  # the model's rows stop before <image_soft_token>, as EmbeddingGemma's 262144 do
    E, F4 = 32, 128
    config = {"architectures": ["Gemma3TextModel"], "attention_bias": False, "attention_dropout": 0.0,
              "attn_logit_softcapping": None, "bos_token_id": vocab - 2, "eos_token_id": vocab - 1,
              "final_logit_softcapping": None, "head_dim": 8, "hidden_activation": "gelu_pytorch_tanh",
              "hidden_size": E, "initializer_range": 0.02, "intermediate_size": 48,
              "layer_types": ["sliding_attention", "sliding_attention", "full_attention"],
              "max_position_embeddings": 128, "model_type": "gemma3_text", "num_attention_heads": 4,
              "num_hidden_layers": 3, "num_key_value_heads": 2, "pad_token_id": 0, "query_pre_attn_scalar": 16,
              "rms_norm_eps": 1e-6, "rope_local_base_freq": 10000.0, "rope_scaling": None, "rope_theta": 1000000.0,
              "sliding_window": 10, "torch_dtype": "float32", "transformers_version": "4.57.0.dev0",
              "use_bidirectional_attention": True, "use_cache": True, "vocab_size": vocab}
    cfg = fam.config_from_hf(config)
    assert cfg.bidirectional and [l.window for l in cfg.layers] == [6, 6, None], cfg
    m32 = fam.FamilyLM(cfg).eval()
    with torch.no_grad():
        for name, p in m32.named_parameters():
            if name.endswith("norm.weight"):  # Gemma's RMSNorm scales by (1 + w)
                p.copy_(0.2 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(torch.randn(p.shape, generator=g) * 0.5)
    sd = fam.hf_state_dict(m32)
    m64 = fam.load_state_dict_hf(fam.FamilyLM(cfg).double().eval(), sd)
    dense2 = torch.randn(F4, E, generator=g, dtype=torch.float64).float() * E ** -0.5
    dense3 = torch.randn(E, F4, generator=g, dtype=torch.float64).float() * F4 ** -0.5
    cases = []
    for (name, text), ids in zip(inputs, ref["ids"]):
        h = checked_rows(m64, m32, ids, text)
        y = (h.mean(0) @ dense2.double().T) @ dense3.double().T
        y = y / y.norm().clamp(min=1e-12)
        cases.append({"text": text, "prompt": name, "ids": ids, "embedding": f32(y)})
    assert any(len(c["ids"]) == GEMMA_MAX_SEQ for c in cases)
    weights = collections.OrderedDict(sorted((k[len("model."):], v) for k, v in sd.items() if k.startswith("model.")))
    dense_cfg = lambda i, o: {"in_features": i, "out_features": o, "bias": False,  # noqa: E731
                              "activation_function": "torch.nn.modules.linear.Identity"}
    files = {
        "config.json": config,
        "tokenizer.json": ref["json"],
        "tokenizer_config.json": {"tokenizer_class": "GemmaTokenizer", "padding_side": "right", "model_max_length": 2048,
                                  "bos_token": "<bos>", "eos_token": "<eos>", "pad_token": "<|endoftext|>",
                                  "add_bos_token": True, "add_eos_token": True, "clean_up_tokenization_spaces": False},
        "modules.json": st_modules("1_Pooling", "2_Dense", "3_Dense", "4_Normalize"),
        "1_Pooling/config.json": pooling_config(E, "mean_tokens"),
        "2_Dense/config.json": dense_cfg(E, F4),
        "3_Dense/config.json": dense_cfg(F4, E),
        "config_sentence_transformers.json": {"prompts": GEMMA_PROMPTS, "default_prompt_name": None,
                                              "similarity_fn_name": "cosine", "model_type": "SentenceTransformer",
                                              "__version__": {"sentence_transformers": "5.1.0", "transformers": "4.57.0.dev0"}},
        "sentence_bert_config.json": {"max_seq_length": GEMMA_MAX_SEQ, "do_lower_case": False},
        "expected.json": {"generator": "tests/data/make_decoder_embedder_goldens.py",  "torch": torch.__version__,
                          "reference": "tools/families.py FamilyLM (gemma3_text, bidirectional) float64, final norm rows, "
                                       "mean, Dense, Dense, L2; ids from npm tokenizers 0.23.2",
                          "prompts": GEMMA_PROMPTS, "maxSeqLength": GEMMA_MAX_SEQ, "slidingWindow": 10,
                          "atol": TOL[0], "rtol": TOL[1], "cases": cases},
    }
    write_folder(GEMMA_OUT, files, {"model.safetensors": (weights, "F32"),
                                    "2_Dense/model.safetensors": ({"linear.weight": dense2}, "F32"),
                                    "3_Dense/model.safetensors": ({"linear.weight": dense3}, "F32")})
    print("wrote", GEMMA_OUT, len(cases), "cases; vocab", vocab)


if __name__ == "__main__":
    main()
    gemma_main()
