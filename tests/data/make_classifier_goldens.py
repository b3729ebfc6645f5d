#!/usr/bin/python3
"""Golden hub folders for the encoder families' task heads (issue 42): tests/data/goldens/classifiers/.

Not a test itself. It writes tiny random checkpoints saved by Hugging Face transformers itself (v4.40.2, see
tools/hf_env/__init__.py) as real hub folders, and what transformers computes for them:
  - *ForSequenceClassification: logits (float64 forward of the stored float32 weights, rounded to float32), and the
    text-classification pipeline's output for several (top_k, function_to_apply) choices, singles and pairs;
  - sentence-transformers' CrossEncoder on top (predict / rank): its activation chosen as CrossEncoder 4.x chooses
    it (config.json "sentence_transformers".activation_fn, else the legacy "sbert_ce_default_activation_function",
    else Sigmoid for one label and Identity otherwise), scores sorted descending for rank (a stable sort);
  - *ForTokenClassification: per-token logits, and the token-classification pipeline's entities for every
    aggregation_strategy ('none', 'simple', 'first', 'average', 'max'): bert_ner with tokenizer.json (ner_golden);
    roberta_ner (vocab.json + merges.txt) and xlmr_ner (a Unigram sentencepiece.bpe.model) with only the slow
    tokenizer's files (ner_golden_converted), with ignore_labels default and [], on hard texts (NER_HARD_TEXTS).
Token ids come from transformers' slow tokenizers (BertTokenizer on vocab.txt, RobertaTokenizer on vocab.json +
merges.txt, XLMRobertaTokenizer on sentencepiece.bpe.model); pairs truncated 'only_second' to max_length as
tokenizer(text, pair, truncation='only_second', max_length=...) gives them. A folder shipping tokenizer.json
gets the same vocabulary as a vocab.txt for the slow tokenizer (the two agree on these texts; the test checks the
JS tokenizer's ids against these).

The slow folders' entities are what pipeline('token-classification', model=folder) gives a user of transformers.
The pipeline needs character offsets, which no slow tokenizer gives: AutoTokenizer (use_fast=True, the pipeline's
default) builds RobertaTokenizerFast / XLMRobertaTokenizerFast by converting the slow files
(convert_slow_tokenizer's RobertaConverter, XLMRobertaConverter). That converted tokenizer is made here by
transformers' own converter (convert_slow_tokenizers.py) and run by the Rust library (ner_reference.mjs; the
`tokenizers` Python package is not on this machine); its ids are checked equal to the slow class's on every text.
Their random heads are rescaled and centred (center_head) so every tag wins somewhere, and every choice the pipeline
makes is checked to be at least NER_MARGIN (in probability) from its runner-up (decision_margin): float-order
differences cannot flip a tag, a word or a group. The seeds are ones that pass.

Run: /usr/bin/python3 tests/data/make_classifier_goldens.py [folder …]   (deterministic: fixed seeds, one thread;
  names: only those folders). The float32 pipeline scores depend on the CPU's float32 kernels: on another machine
  they may move in their last bits (well inside the tolerance), so regenerate only the folders you change.
  The Rust reference: build/tokenizer-ref (node tests/data/make_tokenizer_goldens.mjs installs it).
expected.json: name, like, generator, tolerance {atol, rtol}, labels (id2label in id order), problemType,
  maxLength (tokenizer_config.json's model_max_length), singles [{text, ids, types}], pairs [{text, pair, ids, types}], logitsSingles (N, C), logitsPairs
  (P, C), pipeline [{input: 'singles' | 'pairs', inputs (texts, or [text, pair]s that fit max_length whole: the
  pipeline does not truncate), options: {top_k, function_to_apply}, output}], crossEncoder
  {activation, scores (P,), rank [{query, documents, top_k, output: [{corpus_id, score}]}]}, tokenLogits (per
  single: (T, C)) for token classifiers, and ner {texts, encodings [{ids, offsets (code points), special}],
  ignoreLabels, outputs {strategy: per text, the pipeline's entities}, and for the slow folders outputsIgnoreNone
  (ignore_labels=[]) and decisionMargin}.
"""

import json
import math
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(ROOT, "tools"))
import hf_env  # noqa: E402

hf_env.setup()
import torch  # noqa: E402
import transformers  # noqa: E402
from transformers import pipeline  # noqa: E402

torch.set_num_threads(1)
OUT = os.path.join(HERE, "goldens", "classifiers")
SPM = os.path.join(HERE, "goldens", "spm")
ENC = os.path.join(HERE, "goldens", "encoders")
SEED = 20261205
TOL = {"atol": 1e-4, "rtol": 1e-4}

SINGLES = ["I loved this movie!", "terrible, awful plot.", "it was fine", "hello world",
           "the cat sat on the mat and looked around the room for a while"]
PAIRS = [("what is the capital of france?", "paris is the capital of france."),
         ("what is the capital of france?", "the cat sat on the mat."),
         ("how do cats sleep", "cats sleep a lot during the day, often in the sun, and they dream of mice and birds "
          "and the garden and many other things that happen in the house"),
         ("hello", "world")]
QUERY = "what do cats eat"
DOCS = ["cats eat fish and mice.", "the capital of france is paris.", "a cat eats meat, mostly.",
        "dogs eat anything they can find on the floor of the kitchen", "what"]


def f32(x):
    return [float(v) for v in torch.as_tensor(x, dtype=torch.float64).to(torch.float32).reshape(-1).tolist()]


def small_config(cls_config, vocab, **kw):
    if cls_config is transformers.DistilBertConfig:
        return cls_config(vocab_size=vocab, dim=32, n_layers=2, n_heads=4, hidden_dim=64, max_position_embeddings=80,
                          **kw)
    return cls_config(vocab_size=vocab, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                      intermediate_size=64, max_position_embeddings=80, **kw)


def randomize(model, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("LayerNorm.weight"):
                p.copy_(1 + 0.1 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(0.25 * torch.randn(p.shape, generator=g))


def center_head(model, tok, scale, boost):
    """A random encoder's token head favours one or two tags on every token (its tokens' hidden states differ
    little): the head's weight is multiplied by `scale` (wider gaps between the tags, so no decision is within
    float noise) and its bias set so that each tag's logit averages boost[tag] (0 when not given) over the tokens
    of SINGLES. Every tag then wins somewhere, and 'O' more often when boosted."""
    model.eval()
    with torch.no_grad():
        logits = torch.cat([model(input_ids=torch.tensor([tok(t)["input_ids"]])).logits[0] for t in SINGLES])
        mean = logits.mean(0) - model.classifier.bias  # (C,) the weight's part
        model.classifier.weight.mul_(scale)
        model.classifier.bias.copy_(-scale * mean + torch.tensor([boost.get(k, 0.0) for k in range(mean.numel())]))


def encode(tok, text, pair, max_length):
    e = tok(text, pair, truncation="only_second" if pair is not None else True, max_length=max_length)
    return e["input_ids"], e.get("token_type_ids")  # None where the tokenizer gives none (DistilBERT)


def logits_of(model, rows):
    out = []
    m = model.double().eval()
    with torch.no_grad():
        for ids, types in rows:
            kw = {"input_ids": torch.tensor([ids])}
            if types is not None and m.config.model_type == "bert":
                kw["token_type_ids"] = torch.tensor([types])
            out.append(m(**kw).logits[0])
    model.float()
    return out


def activation_of(config):
    st = getattr(config, "sentence_transformers", None)
    path = st.get("activation_fn") if isinstance(st, dict) else None
    path = path or getattr(config, "sbert_ce_default_activation_function", None)
    if path:
        return path
    return "torch.nn.modules.activation.Sigmoid" if config.num_labels == 1 else "torch.nn.modules.linear.Identity"


def apply_activation(path, x):
    x = torch.as_tensor(x, dtype=torch.float64)
    return {"torch.nn.modules.activation.Sigmoid": torch.sigmoid, "torch.nn.modules.linear.Identity": lambda v: v,
            "torch.nn.modules.activation.Tanh": torch.tanh}[path](x)


def write_folder(case):
    folder = os.path.join(OUT, case["name"])
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    tok = case["tokenizer"]()
    torch.manual_seed(SEED + case["seed"])
    config = small_config(case["config_cls"], len(tok), **case["config"])
    model = case["model_cls"](config)
    randomize(model, SEED + case["seed"])
    if "head" in case:
        center_head(model, tok, **case["head"])
    model.eval()
    model.save_pretrained(folder, safe_serialization=True)
    # The references are what transformers computes for the folder as it loads it (from_pretrained).
    model = case["model_cls"].from_pretrained(folder).eval()
    for name, src in case["files"].items():
        shutil.copyfile(src, os.path.join(folder, name))
    max_length = case["max_length"]
    # The tokenizer's model_max_length is the length inputs are cut to (as the hub's files say 512).
    tc_path = os.path.join(folder, "tokenizer_config.json")
    tc = json.load(open(tc_path)) if os.path.exists(tc_path) else {}
    tc["model_max_length"] = max_length
    with open(tc_path, "w") as f:
        json.dump(tc, f, indent=2)
        f.write("\n")
    singles = [encode(tok, t, None, max_length) for t in SINGLES]
    pairs = [encode(tok, a, b, max_length) for a, b in PAIRS]
    exp = {"name": case["name"], "like": case["like"], "generator": "tests/data/make_classifier_goldens.py",
           "transformers": transformers.__version__, "torch": torch.__version__, "tolerance": TOL,
           "labels": [config.id2label[i] for i in range(config.num_labels)], "problemType": config.problem_type,
           "maxLength": max_length,
           "singles": [{"text": t, "ids": i, "types": ty} for t, (i, ty) in zip(SINGLES, singles)],
           "pairs": [{"text": a, "pair": b, "ids": i, "types": ty} for (a, b), (i, ty) in zip(PAIRS, pairs)]}
    if case["task"] == "token":
        exp["tokenLogits"] = [[f32(r) for r in lg] for lg in logits_of(model, singles)]
        if case.get("converted"):
            exp["ner"] = ner_golden_converted(model, tok, folder, max_length)
        else:
            exp["ner"] = ner_golden(model, tok, os.path.join(folder, "tokenizer.json"))
    else:
        exp["logitsSingles"] = [f32(lg) for lg in logits_of(model, singles)]
        exp["logitsPairs"] = [f32(lg) for lg in logits_of(model, pairs)]
        pipe = pipeline("text-classification", model=model, tokenizer=tok, framework="pt", device="cpu")
        runs = []
        for options in ({"top_k": None}, {"top_k": 2}, {"top_k": None, "function_to_apply": "sigmoid"},
                        {"top_k": None, "function_to_apply": "softmax"}, {"top_k": 1, "function_to_apply": "none"}):
            runs.append({"input": "singles", "inputs": SINGLES[:4], "options": options,
                         "output": pipe(SINGLES[:4], **options)})
        # The pipeline does not truncate: the pairs that fit max_length whole.
        short = [[a, b] for a, b in PAIRS if len(tok(a, b)["input_ids"]) <= max_length]
        runs.append({"input": "pairs", "inputs": short, "options": {"top_k": None},
                     "output": [pipe({"text": a, "text_pair": b}, top_k=None) for a, b in short]})
        exp["pipeline"] = runs
        act = activation_of(config)
        pair_logits = torch.tensor(exp["logitsPairs"], dtype=torch.float64)
        scores = apply_activation(act, pair_logits)
        ce = {"activation": act, "scores": [f32(s) for s in scores]}
        if config.num_labels == 1:
            rank_rows = [encode(tok, QUERY, d, max_length) for d in DOCS]
            rs = apply_activation(act, torch.stack(logits_of(model, rank_rows)))[:, 0]
            order = sorted(range(len(DOCS)), key=lambda i: -float(rs[i]))
            ce["rank"] = {"query": QUERY, "documents": DOCS, "ids": [r[0] for r in rank_rows],
                          "output": [{"corpus_id": i, "score": f32(rs[i])[0]} for i in order]}
        exp["crossEncoder"] = ce
    with open(os.path.join(folder, "expected.json"), "w") as f:
        json.dump(exp, f, indent=1, sort_keys=True)
        f.write("\n")
    return exp


NER_TEXTS = ["John Smith lives in New York and works for Acme Corporation.",
             "Hello Marie, welcome to Paris!", "the unbelievable journey of anna karenina",
             "Café owners in São Paulo don't sleep.", "nothing here", "Berlin",
             "\U0001F600 Emoji before Paris, then \U0001D53Eood Anna in 東京."]
NODE_RUST = r"""
import { createRequire } from 'node:module';
const require = createRequire(process.env.REF_DIR + '/');
const { Tokenizer, wordPieceDecoder } = require('tokenizers');
const job = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));
const tok = Tokenizer.fromFile(job.file);
const out = { encodings: [], decoded: [] };
for (const t of job.texts) {
  const e = await tok.encode(t);
  out.encodings.push({ ids: e.getIds(), offsets: e.getOffsets(), special: e.getSpecialTokensMask() });
}
const dec = wordPieceDecoder(job.decoder.prefix, job.decoder.cleanup);
for (const tokens of job.tokenLists) out.decoded.push(dec.decode(tokens));
console.log(JSON.stringify(out));
"""


def rust(file, texts, token_lists, decoder):
    import subprocess
    ref = os.path.join(ROOT, "build", "tokenizer-ref")
    job = {"file": file, "texts": texts, "tokenLists": token_lists, "decoder": decoder}
    res = subprocess.run(["node", "--input-type=module", "-e", NODE_RUST], input=json.dumps(job).encode(),
                         capture_output=True, env={**os.environ, "REF_DIR": ref}, check=True)
    return json.loads(res.stdout)


def ner_golden(model, tok, tokenizer_json):
    """transformers' TokenClassificationPipeline.postprocess, as a fast tokenizer feeds it: ids, offsets and special
    tokens from Hugging Face's Rust tokenizers (npm tokenizers 0.23.2, build/tokenizer-ref), the model's float32
    logits, and the Rust WordPiece decoder for convert_tokens_to_string (the words are asked for, then decoded by
    the reference in one batch and put in)."""
    import types
    from transformers.pipelines.token_classification import AggregationStrategy
    decoder = json.load(open(tokenizer_json))["decoder"]
    enc = rust(tokenizer_json, NER_TEXTS, [], decoder)["encodings"]
    pipe = pipeline("token-classification", model=model.float(), tokenizer=tok, framework="pt", device="cpu")
    asked = []
    pipe.tokenizer._tokenizer = types.SimpleNamespace(model=types.SimpleNamespace(continuing_subword_prefix="##"))
    pipe.tokenizer.convert_tokens_to_string = lambda tokens: asked.append(list(tokens)) or f"\x00{len(asked) - 1}"
    outputs = {}
    for strategy in ("none", "simple", "first", "average", "max"):
        per_text = []
        for text, e in zip(NER_TEXTS, enc):
            assert tok(text)["input_ids"] == e["ids"], (text, tok(text)["input_ids"], e["ids"])
            ids = torch.tensor([e["ids"]])
            with torch.no_grad():
                logits = model(input_ids=ids).logits
            mo = {"logits": logits, "sentence": text, "input_ids": ids, "offset_mapping": [[tuple(o) for o in e["offsets"]]],
                  "special_tokens_mask": torch.tensor([e["special"]]), "is_last": True}
            ents = pipe.postprocess([mo], aggregation_strategy=AggregationStrategy(strategy))
            per_text.append([{k: (float(v) if k == "score" else int(v) if k in ("index", "start", "end") else v)
                              for k, v in x.items()} for x in ents])
        outputs[strategy] = per_text
    # Words asked for are decoded by the reference; a word made of words asked for before (group_sub_entities on
    # aggregate_word's words) waits for those.
    decoded = [None] * len(asked)
    ref = lambda t: int(t[1:]) if t.startswith("\x00") else None  # noqa: E731
    while None in decoded:
        ready = [i for i, d in enumerate(decoded) if d is None and all(ref(t) is None or decoded[ref(t)] is not None
                                                                        for t in asked[i])]
        lists = [[t if ref(t) is None else decoded[ref(t)] for t in asked[i]] for i in ready]
        for i, d in zip(ready, rust(tokenizer_json, [], lists, decoder)["decoded"]):
            decoded[i] = d
    for per_text in outputs.values():
        for ents in per_text:
            for x in ents:
                if x["word"].startswith("\x00"):
                    x["word"] = decoded[int(x["word"][1:])]
    return {"texts": NER_TEXTS, "encodings": enc, "ignoreLabels": ["O"], "outputs": outputs,
            "reference": "transformers 4.40.2 TokenClassificationPipeline.postprocess; ids, offsets and words from "
                         "npm tokenizers 0.23.2 (Rust)"}


# The hard texts for the folders whose fast tokenizer transformers converts from the slow files: accents (a word the
# pipeline decodes twice, 'Café' → 'Caf\ufffd' by RoBERTa's ByteLevel decoder), digits, runs of spaces,
# punctuation glued to words, one word in many sub-tokens, a leading space, non-Latin text (unknown pieces for the
# small spm model), characters beyond U+FFFF, the special tokens typed in the text, the empty string, and a text
# over model_max_length (cut by the pipeline's truncation=True).
ROBERTA_TAGS = ["O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC"]
XLMR_TAGS = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "MISC"]
NER_HARD_TEXTS = ["John Smith lives in New York and works for Acme Corporation.",
                  "Café owners in São Paulo don't sleep.",
                  "Call 555-0199 before 10:30, or visit Room 42B on the 3rd floor.",
                  "Anna   and    Marie   met  in Rome  ",
                  "(Berlin),Paris;Rome!Tokyo?Marie's \"Anna\"",
                  "Supercalifragilisticexpialidocious Karenina",
                  " Leading space before London",
                  "Владимир живёт в Москве, 東京 too.",
                  "",
                  "\U0001F600 Emoji before Paris, then \U0001D53Eood Anna.",
                  "Hello<unk>world and the <mask> here",
                  " ".join(["Anna Karenina visited Saint Petersburg."] * 8)]
NER_MARGIN = 1e-3  # in probability: ~1000× the scores' float error (the logits agree to ~1e-6)


def converted_tokenizer(folder, texts, max_length, unk_token, token_lists=()):
    """The fast tokenizer transformers converts `folder`'s slow files to (AutoTokenizer's use_fast=True, what
    pipeline('token-classification', model=folder) runs): convert_slow_tokenizers.py records transformers' own
    converter, ner_reference.mjs writes it as tokenizer.json and runs it with the Rust library (npm tokenizers
    0.23.2, build/tokenizer-ref): each text's ids, offsets, special-tokens mask, id → token for the ids met, the
    unknown token's id; token_lists joined by its decoder."""
    import subprocess
    files = {}
    for f in sorted(os.listdir(folder)):
        if f == "tokenizer_config.json":
            files[f] = {"json": json.load(open(os.path.join(folder, f)))}
        elif f in ("vocab.json", "merges.txt", "sentencepiece.bpe.model"):
            files[f] = {"path": os.path.join(folder, f)}
    req = {"texts": [], "folders": {"folder": files}}
    res = subprocess.run(["/usr/bin/python3", os.path.join(HERE, "convert_slow_tokenizers.py")],
                         input=json.dumps(req).encode(), capture_output=True, check=True)
    c = json.loads(res.stdout)["folders"]["folder"]
    job = {"transcript": c["tokenizer"], "added": c["added_tokens"], "texts": texts, "maxLength": max_length,
           "unkToken": unk_token, "tokenLists": [list(t) for t in token_lists]}
    res = subprocess.run(["node", os.path.join(HERE, "ner_reference.mjs")], input=json.dumps(job).encode(),
                         capture_output=True, check=True)
    return json.loads(res.stdout)


def decision_margin(pipe, text, e, logits):
    """The smallest gap between the best and the second-best choice the pipeline makes on this text, from the
    model's float32 logits: each token's label (none, simple, first), each word's label from its averaged scores
    (average) and which of a word's tokens is the most confident (max, see below). A gap this wide cannot be closed
    by the float-order differences between attnwasm's forward and torch's (~1e-6 in the scores)."""
    import warnings
    import numpy as np
    from transformers.pipelines.token_classification import AggregationStrategy
    scores = torch.softmax(logits.double(), -1).numpy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pre = pipe.gather_pre_entities(text, np.array(e["ids"]), scores, [tuple(o) for o in e["offsets"]],
                                       np.array(e["special"]), AggregationStrategy.FIRST)
    gap = lambda v: float(np.sort(v)[-1] - np.sort(v)[-2])  # noqa: E731
    gaps = [gap(p["scores"]) for p in pre]
    words = []
    for p in pre:
        if words and p["is_subword"]:
            words[-1].append(p)
        else:
            words.append([p])
    for w in words:
        gaps.append(gap(np.mean([p["scores"] for p in w], axis=0)))
        # max: the most confident token's scores. A rival within the margin is harmless when it has the same tag
        # and a score within 1e-5 (the tolerance is 1e-4 + 1e-4·score): either choice gives the same entity.
        best = max(w, key=lambda p: p["scores"].max())
        for p in w:
            d = float(best["scores"].max() - p["scores"].max())
            if p is not best and not (d < 1e-5 and p["scores"].argmax() == best["scores"].argmax()):
                gaps.append(d)
    return min(gaps, default=1.0)


def ner_golden_converted(model, tok, folder, max_length):
    """transformers' TokenClassificationPipeline.postprocess on a folder with only the slow tokenizer's files. The
    pipeline needs offsets, which only a fast tokenizer gives: pipeline('token-classification', model=folder) loads
    AutoTokenizer with use_fast=True, which converts the slow files (RobertaConverter, XLMRobertaConverter). Its ids,
    offsets, special-tokens mask, tokens (convert_ids_to_tokens), unk id and words (its decoder, for
    convert_tokens_to_string) come from that converted tokenizer run by the Rust library (converted_tokenizer); the
    slow class's ids are checked equal per text. Logits: the float32 model. Every strategy, with ignore_labels
    default (['O']) and []."""
    import types
    from transformers.pipelines.token_classification import AggregationStrategy
    ref = converted_tokenizer(folder, NER_HARD_TEXTS, max_length, tok.unk_token)
    enc = ref["encodings"]
    assert ref["unkId"] == tok.unk_token_id, (ref["unkId"], tok.unk_token_id)
    pipe = pipeline("token-classification", model=model.float(), tokenizer=tok, framework="pt", device="cpu")
    m = ref["tokenizer"]["model"]
    # The word-aware path reads the Rust model's continuing_subword_prefix: '' (RoBERTa's BPE) and none (Unigram)
    # both take the pipeline's heuristic.
    prefix = {"continuing_subword_prefix": m["continuing_subword_prefix"]} if "continuing_subword_prefix" in m else {}
    pipe.tokenizer._tokenizer = types.SimpleNamespace(model=types.SimpleNamespace(**prefix))
    id_to_token = {int(k): v for k, v in ref["idToToken"].items()}
    slow_ids_to_tokens = tok.convert_ids_to_tokens  # len(tok) and the slow class's own calls keep theirs
    pipe.tokenizer.convert_ids_to_tokens = lambda i: id_to_token[i] if isinstance(i, int) else slow_ids_to_tokens(i)
    asked = []
    pipe.tokenizer.convert_tokens_to_string = lambda tokens: asked.append(list(tokens)) or f"\x00{len(asked) - 1}"
    outputs, outputs_all, margins = {}, {}, []
    logits_of_text = []
    for text, e in zip(NER_HARD_TEXTS, enc):
        slow = tok(text, truncation=True, max_length=max_length)["input_ids"]
        assert slow == e["ids"], (text, slow, e["ids"])
        with torch.no_grad():
            logits_of_text.append(model(input_ids=torch.tensor([e["ids"]])).logits)
        margins.append(decision_margin(pipe, text, e, logits_of_text[-1][0]))
    worst = min(margins)
    assert worst >= NER_MARGIN, f"{folder}: a choice within {worst:.2e} (text {margins.index(worst)}): another seed"
    for strategy in ("none", "simple", "first", "average", "max"):
        for ignore, into in ((None, outputs), ([], outputs_all)):
            per_text = []
            for text, e, logits in zip(NER_HARD_TEXTS, enc, logits_of_text):
                mo = {"logits": logits, "sentence": text, "input_ids": torch.tensor([e["ids"]]),
                      "offset_mapping": [[tuple(o) for o in e["offsets"]]],
                      "special_tokens_mask": torch.tensor([e["special"]]), "is_last": True}
                ents = pipe.postprocess([mo], aggregation_strategy=AggregationStrategy(strategy), ignore_labels=ignore)
                per_text.append([{k: (float(v) if k == "score" else int(v) if k in ("index", "start", "end") else v)
                                  for k, v in x.items()} for x in ents])
            into[strategy] = per_text
    # Words asked for are decoded by the converted tokenizer's decoder; a word made of words asked for before
    # (group_sub_entities on aggregate_word's words) waits for those.
    decoded = [None] * len(asked)
    ref_of = lambda t: int(t[1:]) if t.startswith("\x00") else None  # noqa: E731
    while None in decoded:
        ready = [i for i, d in enumerate(decoded)
                 if d is None and all(ref_of(t) is None or decoded[ref_of(t)] is not None for t in asked[i])]
        lists = [[t if ref_of(t) is None else decoded[ref_of(t)] for t in asked[i]] for i in ready]
        for i, d in zip(ready, converted_tokenizer(folder, [], max_length, tok.unk_token, lists)["decoded"]):
            decoded[i] = d
    for out in (outputs, outputs_all):
        for per_text in out.values():
            for ents in per_text:
                for x in ents:
                    if x["word"].startswith("\x00"):
                        x["word"] = decoded[int(x["word"][1:])]
    return {"texts": NER_HARD_TEXTS, "encodings": [{k: e[k] for k in ("ids", "offsets", "special")} for e in enc],
            "ignoreLabels": ["O"], "outputs": outputs, "outputsIgnoreNone": outputs_all,
            "decisionMargin": worst,
            "reference": "transformers 4.40.2 TokenClassificationPipeline.postprocess; ids, offsets, tokens and words "
                         "from the fast tokenizer transformers' converter makes of the slow files "
                         "(convert_slow_tokenizers.py), run by npm tokenizers 0.23.2 (Rust)"}


def vocab_from_tokenizer_json(path):
    t = json.load(open(path))
    vocab = sorted(t["model"]["vocab"].items(), key=lambda kv: kv[1])
    tmp = tempfile.mkdtemp()
    with open(os.path.join(tmp, "vocab.txt"), "w") as f:
        f.write("".join(k + "\n" for k, _ in vocab))
    return os.path.join(tmp, "vocab.txt")


def main():
    os.makedirs(OUT, exist_ok=True)
    bert_hub = os.path.join(SPM, "folders", "bert_hub")
    fast = os.path.join(ENC, "bert_cls_norm_lower")
    fast_vocab = vocab_from_tokenizer_json(os.path.join(fast, "tokenizer.json"))
    xlmr = os.path.join(SPM, "folders", "xlmr_saved")
    xlmr_model = os.path.join(SPM, "models", "bpe_rules.model")
    roberta = os.path.join(SPM, "folders", "roberta_hub")
    # XLM-R's NER folder has a Unigram model: XLMRobertaConverter's BPE guesses merges and gives other ids than the
    # slow class on most texts, so xlmr_reranker's BPE model would give no offsets (slow_converters.js).
    xlmr_unigram = os.path.join(SPM, "models", "uni_nfkc.model")
    B = transformers
    cases = [
        {"name": "bert_sentiment", "like": "distilbert-sst2 / nlptown sentiment (a BERT with 3 labels), vocab.txt only",
         "seed": 1, "task": "sequence", "max_length": 64,
         "tokenizer": lambda: B.BertTokenizer(os.path.join(bert_hub, "vocab.txt"), do_lower_case=True),
         "files": {"vocab.txt": os.path.join(bert_hub, "vocab.txt"),
                   "tokenizer_config.json": os.path.join(bert_hub, "tokenizer_config.json")},
         "config_cls": B.BertConfig, "model_cls": B.BertForSequenceClassification,
         "config": {"id2label": {0: "negative", 1: "neutral", 2: "positive"},
                    "label2id": {"negative": 0, "neutral": 1, "positive": 2}}},
        {"name": "bert_multilabel", "like": "a toxicity model (multi-label, sigmoid), tokenizer.json",
         "seed": 2, "task": "sequence", "max_length": 64,
         "tokenizer": lambda: B.BertTokenizer(fast_vocab, do_lower_case=True),
         "files": {"tokenizer.json": os.path.join(fast, "tokenizer.json"),
                   "tokenizer_config.json": os.path.join(fast, "tokenizer_config.json")},
         "config_cls": B.BertConfig, "model_cls": B.BertForSequenceClassification,
         "config": {"id2label": {0: "toxic", 1: "insult", 2: "threat", 3: "obscene"},
                    "label2id": {"toxic": 0, "insult": 1, "threat": 2, "obscene": 3},
                    "problem_type": "multi_label_classification"}},
        {"name": "bert_reranker", "like": "cross-encoder/ms-marco-MiniLM-L-6-v2 (1 label, Identity activation)",
         "seed": 3, "task": "sequence", "max_length": 24,
         "tokenizer": lambda: B.BertTokenizer(fast_vocab, do_lower_case=True),
         "files": {"tokenizer.json": os.path.join(fast, "tokenizer.json"),
                   "tokenizer_config.json": os.path.join(fast, "tokenizer_config.json")},
         "config_cls": B.BertConfig, "model_cls": B.BertForSequenceClassification,
         "config": {"num_labels": 1, "sentence_transformers": {"activation_fn": "torch.nn.modules.linear.Identity",
                                                                "version": "4.0.1"}}},
        {"name": "xlmr_reranker", "like": "BAAI/bge-reranker-base (XLM-R, 1 label, no activation named: Sigmoid)",
         "seed": 4, "task": "sequence", "max_length": 32,
         "tokenizer": lambda: B.XLMRobertaTokenizer(xlmr_model),
         "files": {"sentencepiece.bpe.model": xlmr_model,
                   "tokenizer_config.json": os.path.join(xlmr, "tokenizer_config.json")},
         "config_cls": B.XLMRobertaConfig, "model_cls": B.XLMRobertaForSequenceClassification,
         "config": {"num_labels": 1, "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2}},
        {"name": "roberta_nli", "like": "roberta-large-mnli (3 labels, pairs), vocab.json + merges.txt",
         "seed": 5, "task": "sequence", "max_length": 40,
         "tokenizer": lambda: B.RobertaTokenizer(os.path.join(roberta, "vocab.json"), os.path.join(roberta, "merges.txt")),
         "files": {"vocab.json": os.path.join(roberta, "vocab.json"), "merges.txt": os.path.join(roberta, "merges.txt")},
         "config_cls": B.RobertaConfig, "model_cls": B.RobertaForSequenceClassification,
         "config": {"id2label": {0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"},
                    "label2id": {"CONTRADICTION": 0, "NEUTRAL": 1, "ENTAILMENT": 2}, "pad_token_id": 1,
                    "bos_token_id": 0, "eos_token_id": 2}},
        {"name": "distilbert_sst2", "like": "distilbert-base-uncased-finetuned-sst-2-english (2 labels), "
         "sinusoidal positions", "seed": 7, "task": "sequence", "max_length": 64,
         "tokenizer": lambda: B.DistilBertTokenizer(fast_vocab, do_lower_case=True),
         "files": {"tokenizer.json": os.path.join(fast, "tokenizer.json"),
                   "tokenizer_config.json": os.path.join(fast, "tokenizer_config.json")},
         "config_cls": B.DistilBertConfig, "model_cls": B.DistilBertForSequenceClassification,
         "config": {"id2label": {0: "NEGATIVE", 1: "POSITIVE"}, "label2id": {"NEGATIVE": 0, "POSITIVE": 1},
                    "sinusoidal_pos_embds": True}},
        {"name": "bert_ner", "like": "dslim/bert-base-NER (token classification, 5 labels)",
         "seed": 6, "task": "token", "max_length": 64,
         "tokenizer": lambda: B.BertTokenizer(fast_vocab, do_lower_case=True),
         "files": {"tokenizer.json": os.path.join(fast, "tokenizer.json"),
                   "tokenizer_config.json": os.path.join(fast, "tokenizer_config.json")},
         "config_cls": B.BertConfig, "model_cls": B.BertForTokenClassification,
         "config": {"id2label": {0: "O", 1: "B-PER", 2: "I-PER", 3: "B-LOC", 4: "I-LOC"},
                    "label2id": {"O": 0, "B-PER": 1, "I-PER": 2, "B-LOC": 3, "I-LOC": 4}}},
        {"name": "roberta_ner", "like": "a RoBERTa NER model (7 BIO tags), vocab.json + merges.txt only",
         "seed": 38, "task": "token", "converted": True, "max_length": 64, "head": {"scale": 6.0, "boost": {0: 2.0}},
         "tokenizer": lambda: B.RobertaTokenizer(os.path.join(roberta, "vocab.json"), os.path.join(roberta, "merges.txt")),
         "files": {"vocab.json": os.path.join(roberta, "vocab.json"), "merges.txt": os.path.join(roberta, "merges.txt")},
         "config_cls": B.RobertaConfig, "model_cls": B.RobertaForTokenClassification,
         "config": {"id2label": dict(enumerate(ROBERTA_TAGS)), "label2id": {t: i for i, t in enumerate(ROBERTA_TAGS)},
                    "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2}},
        {"name": "xlmr_ner", "like": "an XLM-R NER model (5 BIO tags and a tag without prefix), a Unigram "
         "sentencepiece.bpe.model only", "seed": 10, "task": "token", "converted": True, "max_length": 64,
         "head": {"scale": 6.0, "boost": {0: 2.0}},
         "tokenizer": lambda: B.XLMRobertaTokenizer(xlmr_unigram),
         "files": {"sentencepiece.bpe.model": xlmr_unigram},
         "config_cls": B.XLMRobertaConfig, "model_cls": B.XLMRobertaForTokenClassification,
         "config": {"id2label": dict(enumerate(XLMR_TAGS)), "label2id": {t: i for i, t in enumerate(XLMR_TAGS)},
                    "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2}},
    ]
    only = set(sys.argv[1:])
    unknown = only - {c["name"] for c in cases}
    if unknown:
        raise SystemExit(f"no such folder: {sorted(unknown)}")
    for case in cases:
        if only and case["name"] not in only:
            continue
        exp = write_folder(case)
        print(case["name"], "labels", len(exp["labels"]), "pairs", [len(p["ids"]) for p in exp["pairs"]])


if __name__ == "__main__":
    main()
