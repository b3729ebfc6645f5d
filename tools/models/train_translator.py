#!/usr/bin/python3
"""Train the tiny English-number-words -> French / German translator and export it for attnwasm.

    /usr/bin/python3 tools/models/train_translator.py            # train, evaluate, export
    /usr/bin/python3 tools/models/train_translator.py --bench    # time a few steps and exit

Writes to models/translator/:
  translator.safetensors   weights (keys = Translator().state_dict(), floats as F16 or F32), config in
                           metadata "attnwasm.config"
  translator.json          the same config
  heldout.json             the held-out test numbers (never trained on, in any spelling)
  heldout_expected.json    their plain spellings and translations (make_heldout_expected.py)
  typed_heldout.json       the same numbers typed as people type them, by an independent generator
                           (make_typed_heldout.py)
  reference.json           torch greedy outputs (and first-step logits) for checking the runtime
  metrics.json, train_log.txt   figures of the run

One model for both languages: the decoder starts with a language token (<fr> or <de>) instead of
BOS and stops at <eos>. The source is the English tokens only (no <eos> appended, srcAddsEos false),
padded with <pad>. Inputs: embed(ids) * sqrt(d) + PE[:len], PE = PyTorch-tutorial sinusoidal table.
Data (tools/models/numbers.py, seed 20240611): held-out = 2000 numbers uniform in 0..999999 + 300 in
0..999 + 200 in 1100..9999 with a hundreds digit (never trained on; the 37 "lexicon" numbers 0..20,
30..90, 100..900 are always trained on and never held out); dev = 500 more (monitoring only);
training = ~100k other numbers: all free numbers < 1000, 700 round thousands k*1000, 5000 round
hundreds k*100, 8000 in 1000..9999, 24000 in 10000..99999, 62000 in 100000..999999, each in both
languages, small / round numbers repeated. Each epoch every pair gets a fresh English spelling
(numbers.english_variant: the plain spelling in 30 % of the draws, else hyphen or space between tens
and units, British "and", "a hundred", "eleven hundred").
Training: AdamW (lr 2e-3, betas 0.9/0.98, wd 0.01), 300 warmup steps then cosine, batch 128 pairs,
8000 steps, label smoothing 0.05, grad clip 1, 2 threads. See models/translator/README.md.
"""

import os
import sys

# This folder holds numbers.py, which would shadow the stdlib module `numbers` (torch imports it):
# drop the script's own folder from sys.path before anything else is imported.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

# With 2 threads on a busy machine, OpenMP's spinning workers made a step 8x slower (1.0 s instead of
# 0.12 s, measured under nice 19); passive waiting keeps 2 threads faster than 1.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import random  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools"))

from export_safetensors import export_module, load_safetensors  # noqa: E402


def _load_numwords():
    """tools/models/numbers.py under another name (a plain `import numbers` is the stdlib module)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("numwords", os.path.join(HERE, "numbers.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


numwords = _load_numwords()

PAD, EOS, FR, DE = "<pad>", "<eos>", "<fr>", "<de>"
LANGS = ("fr", "de")
LANG_TOKEN = {"fr": FR, "de": DE}
OUT_DIR = os.path.join(ROOT, "models", "translator")
MAX_LEN = 64  # longest sequence (source or target, target including the language token) allowed
MAX_STEPS = 20  # greedy decoding steps: at most 19 output tokens (French 797797) + <eos>


# ----------------------------------------------------------------------------- vocabularies
def _ordered_tokens(fn, numbers):
    seen, out = set(), []
    for n in numbers:
        for t in numwords.tokenize(fn(n)):
            if t not in seen:
                seen.add(t)
                out.append(t)
    return out


def build_vocabs():
    cover = list(range(100)) + [100, 200, 1000, 2000]
    # + the two words only the typed variants use: British "and", "a hundred" / "a thousand".
    src = [PAD] + _ordered_tokens(numwords.english, cover) + ["and", "a"]
    fr = _ordered_tokens(numwords.french, cover)
    de = _ordered_tokens(numwords.german, cover)
    tgt = [PAD, EOS, FR, DE] + fr + [t for t in de if t not in fr]
    return src, tgt


# ----------------------------------------------------------------------------- model
def sinusoidal_table(max_len, d):
    """The PyTorch tutorial's positional encoding, float32 [max_len, d]."""
    pe = torch.zeros(max_len, d)
    position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d, 2).float() * (-math.log(10000.0) / d))
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe


class Translator(nn.Module):
    def __init__(self, vs, vt, d, nhead, ne, nd, ff, dropout, activation, norm_first, pad_id):
        super().__init__()
        self.d = d
        self.pad_id = pad_id
        self.src_embed = nn.Embedding(vs, d)
        self.tgt_embed = nn.Embedding(vt, d)
        self.transformer = nn.Transformer(d_model=d, nhead=nhead, num_encoder_layers=ne,
                                          num_decoder_layers=nd, dim_feedforward=ff, dropout=dropout,
                                          activation=activation, batch_first=True, norm_first=norm_first)
        self.generator = nn.Linear(d, vt)
        # Embeddings start at std d^-1/2 so that embed * sqrt(d) has unit scale, like the sinusoidal table
        # (with nn.Embedding's default N(0, 1) the scaled tokens would drown the positions, and the model
        # then confuses repeated words such as "two hundred two").
        nn.init.normal_(self.src_embed.weight, 0.0, d ** -0.5)
        nn.init.normal_(self.tgt_embed.weight, 0.0, d ** -0.5)
        # Not in the state dict: the runtime recomputes it.
        self.register_buffer("pe", sinusoidal_table(MAX_LEN, d), persistent=False)

    def embed_src(self, src_ids):
        return self.src_embed(src_ids) * math.sqrt(self.d) + self.pe[:src_ids.shape[1]]

    def embed_tgt(self, tgt_ids):
        return self.tgt_embed(tgt_ids) * math.sqrt(self.d) + self.pe[:tgt_ids.shape[1]]

    def forward(self, src_ids, tgt_ids):
        src = self.embed_src(src_ids)
        tgt = self.embed_tgt(tgt_ids)
        tgt_mask = nn.Transformer.generate_square_subsequent_mask(tgt_ids.shape[1])
        src_pad = src_ids == self.pad_id
        out = self.transformer(src, tgt, tgt_mask=tgt_mask, src_key_padding_mask=src_pad,
                               tgt_key_padding_mask=tgt_ids == self.pad_id,
                               memory_key_padding_mask=src_pad)
        return self.generator(out)

    # The same computation split in two, for decoding (nn.Transformer.forward = encoder then decoder).
    def encode(self, src_ids):
        src_pad = src_ids == self.pad_id
        return self.transformer.encoder(self.embed_src(src_ids), src_key_padding_mask=src_pad), src_pad

    def decode(self, memory, src_pad, tgt_ids):
        tgt_mask = nn.Transformer.generate_square_subsequent_mask(tgt_ids.shape[1])
        out = self.transformer.decoder(self.embed_tgt(tgt_ids), memory, tgt_mask=tgt_mask,
                                       tgt_key_padding_mask=tgt_ids == self.pad_id,
                                       memory_key_padding_mask=src_pad)
        return self.generator(out)


@torch.no_grad()
def greedy(model, src_ids, lang_ids, eos_id, max_steps):
    """Batched greedy decoding. src_ids [B, S] (pad-padded), lang_ids [B]. Returns token lists
    (without the language token and <eos>)."""
    memory, src_pad = model.encode(src_ids)
    ys = lang_ids.view(-1, 1)
    done = torch.zeros(len(lang_ids), dtype=torch.bool)
    for _ in range(max_steps):
        logits = model.decode(memory, src_pad, ys)[:, -1]
        nxt = logits.argmax(-1)
        ys = torch.cat([ys, nxt.view(-1, 1)], 1)
        done |= nxt == eos_id
        if bool(done.all()):
            break
    out = []
    for row in ys[:, 1:].tolist():
        out.append(row[:row.index(eos_id)] if eos_id in row else row)
    return out


# ----------------------------------------------------------------------------- data
SRC_LEN = 13  # longest English input in tokens: "nine hundred and ninety - nine thousand nine hundred and ninety - nine"


def encode_src(texts, src_index, pad_id):
    """English texts -> src [N, SRC_LEN] token ids, padded."""
    src = torch.full((len(texts), SRC_LEN), pad_id, dtype=torch.long)
    for i, text in enumerate(texts):
        s = [src_index[t] for t in numwords.tokenize(text)]
        src[i, :len(s)] = torch.tensor(s)
    return src


def encode_tgt(pairs, tgt_index, tgt_len, pad_id, eos_id):
    """pairs: list of (n, lang) -> tgt [N, tgt_len] (lang token ... <eos>), padded."""
    tgt = torch.full((len(pairs), tgt_len), pad_id, dtype=torch.long)
    for i, (n, lang) in enumerate(pairs):
        t = ([tgt_index[LANG_TOKEN[lang]]] + [tgt_index[x] for x in numwords.tokenize(numwords.TARGETS[lang](n))]
             + [eos_id])
        tgt[i, :len(t)] = torch.tensor(t)
    return tgt


# The "lexicon": numbers whose English is ONE word (0..20, the tens 30..90) and the hundreds 100..900.
# Each is the only example of its word or pattern standing alone ("zero" and its translations "zéro" /
# "null" occur in no other number; a number that is exactly "<k> cents" exists only for 200..900), so
# they are always trained on (never held out) and repeated more often.
LEXICON = frozenset(list(range(21)) + list(range(30, 100, 10)) + list(range(100, 1000, 100)))
LEXICON_REPEAT = 30  # times per epoch (per language)
SMALL_REPEAT = 6     # other numbers < 1000, times per epoch (per language)
# "Round" numbers k*100 (k = 10..9999 not a multiple of 10) and k*1000 (k = 1..999) have SHORT English
# ("twelve thousand", "five hundred thousand") while random numbers are mostly long; a sample of them is
# added to training and repeated, so short inputs do not end in repetitions ("douze mille douze").
ROUND_HUNDREDS = [k * 100 for k in range(10, 10000) if k % 10]
ROUND_THOUSANDS = [k * 1000 for k in range(1, 1000)]
ROUND_REPEAT = 2
# The numbers that can also be written with hundreds counted past ten: 1100..9999 whose hundreds digit is
# not 0 ("eleven hundred", "nineteen hundred and eighty-four"). Few of them fall in a uniform sample, so
# some are held out on their own.
HUNDREDS_COUNTED = [n for n in range(1100, 10000) if (n // 100) % 10]


def make_splits(seed, n_heldout_large, n_heldout_small, n_heldout_hundreds, n_dev, train_counts):
    rng = random.Random(seed)
    heldout_large = rng.sample([n for n in range(numwords.LIMIT) if n not in LEXICON], n_heldout_large)
    taken = set(heldout_large) | LEXICON
    heldout_small = rng.sample([n for n in range(1000) if n not in taken], n_heldout_small)
    taken.update(heldout_small)
    heldout_hundreds = rng.sample([n for n in HUNDREDS_COUNTED if n not in taken], n_heldout_hundreds)
    taken.update(heldout_hundreds)
    dev = []
    while len(dev) < n_dev:
        n = rng.randrange(numwords.LIMIT)
        if n not in taken:
            taken.add(n)
            dev.append(n)
    train = sorted(LEXICON)
    for band, count in train_counts:  # band: (lo, hi) range or a list; "all" = every free number in it
        if isinstance(band, tuple):
            lo, hi = band
            free = [n for n in range(lo, hi) if n not in taken] if hi - lo <= 200_000 else None
        else:
            free = [n for n in band if n not in taken]
        if count == "all":
            pick = free
        elif free is not None:
            pick = rng.sample(free, min(count, len(free)))
        else:
            pick, seen = [], set()
            while len(pick) < count:
                n = rng.randrange(lo, hi)
                if n not in taken and n not in seen:
                    seen.add(n)
                    pick.append(n)
        taken.update(pick)
        train.extend(pick)
    return heldout_large, heldout_small, heldout_hundreds, dev, train


# ----------------------------------------------------------------------------- evaluation
def evaluate(model, items, src_index, tgt_vocab, tgt_index, pad_id, eos_id, batch=512):
    """Exact match per language (greedy). items: numbers n (input english(n)) or (n, English text) pairs.
    Returns {lang: (correct, total, [failures])}, a failure being (n, output) or (n, text, output)."""
    model.eval()
    items = [(x, numwords.english(x)) if isinstance(x, int) else tuple(x) for x in items]
    res = {}
    for lang in LANGS:
        correct, fails = 0, []
        for i in range(0, len(items), batch):
            chunk = items[i:i + batch]
            src = encode_src([text for _, text in chunk], src_index, pad_id)
            src = src[:, :int((src != pad_id).sum(1).max())]
            lang_ids = torch.full((len(chunk),), tgt_index[LANG_TOKEN[lang]], dtype=torch.long)
            outs = greedy(model, src, lang_ids, eos_id, max_steps=MAX_STEPS)
            for (n, text), o in zip(chunk, outs):
                want = numwords.tokenize(numwords.TARGETS[lang](n))
                got = [tgt_vocab[j] for j in o]
                if got == want:
                    correct += 1
                else:
                    fails.append((n, " ".join(got)) if text == numwords.english(n) else (n, text, " ".join(got)))
        res[lang] = (correct, len(items), fails)
    return res


def fmt_eval(res):
    return "  ".join(f"{lang} {c}/{t} = {100.0 * c / t:.2f}%" for lang, (c, t, _) in res.items())


def rounded_copy(model, dtype):
    """A copy of the model whose float weights are rounded to dtype (and back to float32)."""
    import copy
    m = copy.deepcopy(model)
    with torch.no_grad():
        for p in m.state_dict().values():
            if p.is_floating_point():
                p.copy_(p.to(dtype).float())
    m.eval()
    return m


def fmt_fail(lang, fail):
    """One failure of evaluate() as a log line."""
    n, *text, got = fail
    src = f" {text[0]!r}" if text else ""
    return f"{lang} FAIL {n}{src}: got {got!r} want {' '.join(numwords.tokenize(numwords.TARGETS[lang](n)))!r}"


def eval_record(res):
    """evaluate()'s result as metrics.json holds it."""
    return {lang: {"correct": c, "total": t, "exactMatch": c / t, "failures": [list(f) for f in fails]}
            for lang, (c, t, fails) in res.items()}


def run_script(name, model_dir, log):
    """Runs a data generator of this folder on model_dir with this Python; logs its output."""
    out = subprocess.run([sys.executable, os.path.join(HERE, name), model_dir], check=True, capture_output=True,
                         text=True)
    log(f"{name}: {out.stdout.strip()}")


# ----------------------------------------------------------------------------- main
def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--d", type=int, default=64)
    ap.add_argument("--nhead", type=int, default=4)
    ap.add_argument("--enc", type=int, default=2)
    ap.add_argument("--dec", type=int, default=2)
    ap.add_argument("--ff", type=int, default=128)
    ap.add_argument("--dropout", type=float, default=0.0)
    ap.add_argument("--activation", default="relu", choices=("relu", "gelu"))
    ap.add_argument("--post-norm", action="store_true", help="norm_first=False (default: pre-norm)")
    ap.add_argument("--steps", type=int, default=8000)
    ap.add_argument("--batch", type=int, default=128, help="pairs per step")
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--warmup", type=int, default=300)
    ap.add_argument("--label-smoothing", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=20240611)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--eval-every", type=int, default=1000)
    ap.add_argument("--out", default=OUT_DIR)
    ap.add_argument("--bench", action="store_true", help="time 30 steps, print params and exit")
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    os.makedirs(args.out, exist_ok=True)
    log_path = os.path.join(args.out, "train_log.txt")
    log_fh = None if args.bench else open(log_path, "w", encoding="utf-8")

    def log(*a):
        s = " ".join(str(x) for x in a)
        print(s, flush=True)
        if log_fh:
            log_fh.write(s + "\n")
            log_fh.flush()

    log("command:", " ".join([sys.executable] + sys.argv))
    log("torch", torch.__version__, "threads", torch.get_num_threads())
    src_vocab, tgt_vocab = build_vocabs()
    src_index = {t: i for i, t in enumerate(src_vocab)}
    tgt_index = {t: i for i, t in enumerate(tgt_vocab)}
    pad_id, eos_id = tgt_index[PAD], tgt_index[EOS]
    assert src_index[PAD] == pad_id == 0
    log(f"srcVocab ({len(src_vocab)}): {src_vocab}")
    log(f"tgtVocab ({len(tgt_vocab)}): {tgt_vocab}")

    # Data. Train bands: every free number below 1000, then random numbers per magnitude.
    train_counts = [((0, 1000), "all"), (ROUND_THOUSANDS, 700), (ROUND_HUNDREDS, 5000), ((1000, 10000), 8000),
                    ((10000, 100000), 24000), ((100000, 1000000), 62000)]
    heldout_large, heldout_small, heldout_hundreds, dev, train = make_splits(args.seed, 2000, 300, 200, 500,
                                                                             train_counts)
    heldout = heldout_large + heldout_small + heldout_hundreds
    assert not set(heldout) & set(train) and not set(dev) & set(train) and not set(dev) & set(heldout)
    log(f"data: train {len(train)} numbers x 2 languages, heldout {len(heldout)} "
        f"({len(heldout_large)} uniform 0..999999 + {len(heldout_small)} from 0..999 + {len(heldout_hundreds)} "
        f"from 1100..9999 with a hundreds digit, which can be written 'eleven hundred'), dev {len(dev)}")
    if not args.bench:
        # The held-out numbers first: the test sets are made from them by their own scripts, the typed
        # variants by a generator independent of this one (make_typed_heldout.py).
        with open(os.path.join(args.out, "heldout.json"), "w", encoding="utf-8") as fh:
            json.dump({"seed": args.seed, "description": "held-out test numbers, never in training (in any "
                       f"spelling): {len(heldout_large)} drawn uniformly from 0..999999, {len(heldout_small)} from "
                       f"0..999 and {len(heldout_hundreds)} from the numbers 1100..9999 whose hundreds digit is not "
                       "0 (random.Random(seed).sample), none of them a lexicon number 0..20, 30, 40, ..., 90, "
                       "100, 200, ..., 900 (always trained on); dev numbers (monitoring only) are also excluded "
                       "from training", "uniform": heldout_large, "small": heldout_small,
                       "hundreds": heldout_hundreds}, fh)
            fh.write("\n")
        run_script("make_heldout_expected.py", args.out, log)
        run_script("make_typed_heldout.py", args.out, log)
        with open(os.path.join(args.out, "typed_heldout.json"), encoding="utf-8") as fh:
            typed = json.load(fh)
        col = {c: i for i, c in enumerate(typed["columns"])}
        heldout_typed = [(row[col["n"]], row[col["words"]]) for row in typed["items"]]
        assert {n for n, _ in heldout_typed} <= set(heldout)

    n_small = sum(1 for n in train if n < 1000)
    # Small numbers are few: repeat them per epoch so they are seen often enough.
    round_train = {n for n in train if n >= 1000 and n % 100 == 0}

    def repeat(n):
        return (LEXICON_REPEAT if n in LEXICON else SMALL_REPEAT if n < 1000
                else ROUND_REPEAT if n in round_train else 1)
    pairs = [(n, lang) for n in train for lang in LANGS for _ in range(repeat(n))]
    tgt_len = MAX_STEPS + 1  # <lang> + at most 19 tokens + <eos>
    tgt_all = encode_tgt(pairs, tgt_index, tgt_len, pad_id, eos_id)
    # Every pair gets a fresh spelling each epoch: english(n) in 30 % of the draws, otherwise a
    # typed variant (numbers.english_variant), so the model learns the variants of every number.
    spell_rng = random.Random(args.seed + 2)

    def spell_epoch():
        return encode_src([numwords.english_variant(n, spell_rng) for n, _ in pairs], src_index, pad_id)
    src_all = spell_epoch()
    log(f"pairs per epoch {len(pairs)} (train numbers < 1000: {n_small}: the {len(LEXICON)} lexicon numbers "
        f"repeated {LEXICON_REPEAT}x, the others {SMALL_REPEAT}x; {len(round_train)} round numbers "
        f"(multiples of 100 >= 1000) repeated {ROUND_REPEAT}x); spellings drawn anew each epoch")
    dev_rng = random.Random(args.seed + 3)
    dev_variants = [(n, numwords.english_variant(n, dev_rng)) for n in dev]

    model = Translator(len(src_vocab), len(tgt_vocab), args.d, args.nhead, args.enc, args.dec, args.ff,
                       args.dropout, args.activation, not args.post_norm, pad_id)
    n_params = sum(p.numel() for p in model.parameters())
    log(f"model: d={args.d} nhead={args.nhead} enc={args.enc} dec={args.dec} ff={args.ff} "
        f"act={args.activation} norm_first={not args.post_norm} dropout={args.dropout}: {n_params} params")

    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.98), weight_decay=0.01)

    def lr_at(step):  # linear warmup, cosine decay to 2% of peak
        if step < args.warmup:
            return args.lr * (step + 1) / args.warmup
        p = (step - args.warmup) / max(1, args.steps - args.warmup)
        return args.lr * (0.02 + 0.98 * 0.5 * (1 + math.cos(math.pi * p)))

    gen = torch.Generator().manual_seed(args.seed)
    perm, pos = torch.randperm(len(pairs), generator=gen), 0
    steps = 30 if args.bench else args.steps
    t0 = time.time()
    run_loss, run_n = 0.0, 0
    for step in range(steps):
        model.train()
        if pos + args.batch > len(perm):
            perm, pos = torch.randperm(len(pairs), generator=gen), 0
            src_all = spell_epoch()
        idx = perm[pos:pos + args.batch]
        pos += args.batch
        src, tgt = src_all[idx], tgt_all[idx]
        src = src[:, :int((src != pad_id).sum(1).max())]
        tgt = tgt[:, :int((tgt != pad_id).sum(1).max())]
        logits = model(src, tgt[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt[:, 1:].reshape(-1),
                               ignore_index=pad_id, label_smoothing=args.label_smoothing)
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        run_loss += loss.item()
        run_n += 1
        if (step + 1) % 200 == 0 or args.bench and step == steps - 1:
            log(f"step {step + 1}/{steps} loss {run_loss / run_n:.4f} lr {lr_at(step):.2e} "
                f"elapsed {time.time() - t0:.1f}s")
            run_loss, run_n = 0.0, 0
        if not args.bench and ((step + 1) % args.eval_every == 0):
            te = time.time()
            res = evaluate(model, dev, src_index, tgt_vocab, tgt_index, pad_id, eos_id)
            res_var = evaluate(model, dev_variants, src_index, tgt_vocab, tgt_index, pad_id, eos_id)
            t0 += time.time() - te  # evaluation time is not training time
            log(f"  dev exact match: {fmt_eval(res)}; spelling variants: {fmt_eval(res_var)}  "
                f"(eval {time.time() - te:.1f}s)")
    train_time = time.time() - t0
    if args.bench:
        log(f"bench: {train_time / steps * 1000:.1f} ms/step, {n_params} params")
        return 0
    log(f"training time {train_time:.1f}s ({args.steps} steps, batch {args.batch}, "
        f"{args.steps * args.batch / len(pairs):.2f} epochs)")

    # Evaluate on held-out numbers: float32 weights and weights rounded to F16.
    model.eval()
    metrics = {"params": n_params, "trainTimeSeconds": round(train_time, 1), "steps": args.steps,
               "batch": args.batch, "seed": args.seed, "threads": torch.get_num_threads(),
               "trainNumbers": len(train), "heldoutNumbers": len(heldout), "heldoutTypedItems": len(heldout_typed)}
    def evaluate_logged(m, items, title, prefix):
        """evaluate(), logging the result under `title` and up to 10 failures per language."""
        res = evaluate(m, items, src_index, tgt_vocab, tgt_index, pad_id, eos_id)
        log(f"{title}: {fmt_eval(res)}")
        for lang, (_, _, fails) in res.items():
            for f in fails[:10]:
                log(f"  {prefix} {fmt_fail(lang, f)}")
        return res

    te = time.time()
    variants = {"F32": model, "F16": rounded_copy(model, torch.float16)}
    sets = {"heldout": heldout, "heldoutTyped": heldout_typed, "heldoutSmall": heldout_small,
            "heldoutHundreds": heldout_hundreds, "all0to999": list(range(1000))}
    for name, m in variants.items():
        for set_name, items in sets.items():
            res = evaluate_logged(m, items, f"{set_name} ({len(items)}, greedy, {name} weights)", name)
            metrics.setdefault(set_name, {})[name] = eval_record(res)
    log(f"evaluation time {time.time() - te:.1f}s")

    def meets(dtype):
        return all(v["exactMatch"] >= 0.995 for s in ("heldout", "heldoutTyped") for v in metrics[s][dtype].values())
    f16_ok, f32_ok = meets("F16"), meets("F32")
    dtype = "F16" if f16_ok or not f32_ok else "F32"
    final = variants[dtype]
    log(f"export dtype {dtype} (F16 meets 99.5% on held-out and typed held-out: {f16_ok}; F32: {f32_ok})")
    # Extra diagnostics on the exported weights, numbers NOT in training (but not the held-out set):
    # spelled english(n), and spelled by the training generator's variants.
    train_set = set(train)
    unseen_random = [n for n in random.Random(args.seed + 1).sample(range(numwords.LIMIT), 5500)
                     if n not in train_set][:5000]
    variant_rng = random.Random(args.seed + 4)
    extra_sets = {
        "unseenRound": [n for n in [0] + ROUND_HUNDREDS + ROUND_THOUSANDS if n not in train_set],
        "unseenRandom5000": unseen_random,
        "unseenRandom5000Variants": [(n, numwords.english_variant(n, variant_rng)) for n in unseen_random],
        "unseenHundredsCounted": [(n, numwords.english_spelled(n, hundreds_count=True))
                                  for n in HUNDREDS_COUNTED if n not in train_set],
    }
    metrics["extra"] = {}
    for name, items in extra_sets.items():
        res = evaluate_logged(final, items, f"{name} ({len(items)} numbers not trained on, {dtype})", name)
        metrics["extra"][name] = eval_record(res)

    config = {
        "model": "translator",
        "dModel": args.d, "nhead": args.nhead, "numEncoderLayers": args.enc, "numDecoderLayers": args.dec,
        "dimFeedforward": args.ff, "activation": args.activation, "normFirst": not args.post_norm,
        "layerNormEps": 1e-5, "maxLen": MAX_LEN, "embedScale": math.sqrt(args.d),
        "positionalEncoding": "sinusoidal: pe[pos, 2i] = sin(pos * exp(2i * -ln(10000)/d)), "
                              "pe[pos, 2i+1] = cos(same), float32, added after scaling; no dropout",
        "srcVocab": src_vocab, "tgtVocab": tgt_vocab, "pad": pad_id, "eos": eos_id,
        "langTokens": {lang: tgt_index[LANG_TOKEN[lang]] for lang in LANGS},
        "srcAddsEos": False, "srcPad": src_index[PAD],
        "maxSrcTokens": SRC_LEN, "maxTgtTokens": tgt_len - 2,
        "languages": {"fr": "French", "de": "German"},
        "detokenize": {"en": "hyphen-join", "fr": "hyphen-join", "de": "concat"},
        "detokenizeRules": {
            "hyphen-join": "join tokens with single spaces, except no space before or after a '-' token",
            "concat": "join tokens with no separator (German morphemes -> one word)"},
        "tokenize": {"en": "split on spaces, then split each word at '-' keeping '-' as its own token; "
                           "source = English token ids, padded with pad (0); no BOS/EOS on the source"},
        "input": "English number words 0..999999 as people type them: hyphen or space between tens and "
                 "units, British 'and', 'a hundred' / 'a thousand', 'eleven hundred'; lower case, single "
                 "spaces, no commas, no digits (the runtime normalises those first)",
        "decoding": "decoder input starts with langTokens[lang] (no BOS); greedy argmax until eos or "
                    "maxTgtTokens + 1 steps; output = tokens between the language token and eos",
        "dtype": dtype, "params": n_params,
    }
    path = os.path.join(args.out, "translator.safetensors")
    size = export_module(model, path, config, float_dtype=dtype)
    log(f"wrote {path}: {size} bytes ({dtype})")

    # Check the file: reload into a fresh model, identical greedy results to the rounded model.
    tensors, meta = load_safetensors(path)
    assert list(tensors) == list(model.state_dict()), "keys must be exactly the state dict"
    assert json.loads(meta["attnwasm.config"]) == config
    reloaded = Translator(len(src_vocab), len(tgt_vocab), args.d, args.nhead, args.enc, args.dec, args.ff,
                          args.dropout, args.activation, not args.post_norm, pad_id)
    reloaded.load_state_dict({k: v.float() for k, v in tensors.items()})
    reloaded.eval()
    for k, v in reloaded.state_dict().items():
        assert torch.equal(v, final.state_dict()[k]), k

    write_reference(reloaded, heldout_large, heldout_small, src_vocab, src_index, tgt_vocab, tgt_index,
                    pad_id, eos_id, dtype, os.path.join(args.out, "reference.json"))

    metrics.update({"dtype": dtype, "fileBytes": size, "config": config})
    with open(os.path.join(args.out, "metrics.json"), "w", encoding="utf-8") as fh:
        json.dump(metrics, fh, indent=1, ensure_ascii=False)
        fh.write("\n")
    log("examples (exported weights, greedy):")
    examples = [(n, numwords.english(n)) for n in (0, 1, 21, 71, 80, 81, 91, 101, 180, 200, 371, 1000, 1080,
                                                    21000, 80000, 101000, 200100, 999999)]
    examples += [(21, "twenty one"), (105, "a hundred and five"), (1001, "a thousand and one"),
                 (1100, "eleven hundred"), (1984, "nineteen hundred and eighty four"),
                 (2006, "two thousand and six"), (105000, "a hundred and five thousand")]
    for lang in LANGS:
        src = encode_src([text for _, text in examples], src_index, pad_id)
        outs = greedy(reloaded, src, torch.full((len(examples),), tgt_index[LANG_TOKEN[lang]]), eos_id, MAX_STEPS)
        for (n, text), o in zip(examples, outs):
            toks = [tgt_vocab[j] for j in o]
            out = numwords.detokenize(toks, "fr") if lang == "fr" else numwords.german_join(toks)
            log(f"  {lang} {n:>6} {text!r} -> {out!r}"
                f"{'' if toks == numwords.tokenize(numwords.TARGETS[lang](n)) else '   WRONG'}")
    log(f"summary: params {n_params}, file {size} bytes ({dtype}), train {train_time:.1f}s, held-out "
        + ", ".join(f"{lang} {100 * v['exactMatch']:.2f}%" for lang, v in metrics["heldout"][dtype].items())
        + ", typed held-out "
        + ", ".join(f"{lang} {100 * v['exactMatch']:.2f}%" for lang, v in metrics["heldoutTyped"][dtype].items()))
    return 0


@torch.no_grad()
def write_reference(model, heldout_large, heldout_small, src_vocab, src_index, tgt_vocab, tgt_index,
                    pad_id, eos_id, dtype, path):
    """~20 held-out numbers, both languages, batch 1 (no padding): ids, greedy output, text; for the
    first 2 numbers also the logits of the first 3 decoding steps (last position, all Vt values).
    Every second number is spelled with every variant at once (spaces, "and", "a", "eleven hundred")."""
    nums = heldout_small[:4] + heldout_large[:16]
    items = []
    for k, n in enumerate(nums):
        en = numwords.english(n) if k % 2 == 0 else numwords.english_spelled(
            n, joiner=lambda: " ", use_and=lambda: True, a_for_one=True, hundreds_count=True)
        src_ids = [src_index[t] for t in numwords.tokenize(en)]
        src = torch.tensor([src_ids])
        for lang in LANGS:
            lang_id = tgt_index[LANG_TOKEN[lang]]
            memory, src_pad = model.encode(src)
            ys = [lang_id]
            step_logits = []
            for _ in range(MAX_STEPS):
                logits = model.decode(memory, src_pad, torch.tensor([ys]))[0, -1]
                if len(step_logits) < 3:
                    step_logits.append(logits.tolist())
                nxt = int(logits.argmax())
                ys.append(nxt)
                if nxt == eos_id:
                    break
            # The full forward (nn.Transformer.forward) must agree with the split encode/decode.
            full = model(src, torch.tensor([ys[:-1]]))[0]
            assert full.argmax(-1).tolist() == ys[1:], (n, lang)
            out_ids = ys[1:-1] if ys[-1] == eos_id else ys[1:]
            toks = [tgt_vocab[j] for j in out_ids]
            item = {"n": n, "lang": lang, "english": en, "srcTokens": numwords.tokenize(en), "srcIds": src_ids,
                    "decoderInputFirst": lang_id, "outputIds": out_ids, "outputIdsWithEos": ys[1:],
                    "outputTokens": toks,
                    "text": numwords.detokenize(toks, "fr") if lang == "fr" else numwords.german_join(toks),
                    "expected": numwords.french(n) if lang == "fr" else numwords.german_join(numwords.german(n)),
                    }
            if k < 2:
                item["firstStepsLogits"] = step_logits
                item["firstStepsDecoderInputs"] = [ys[:i + 1] for i in range(len(step_logits))]
            items.append(item)
    ref = {"description": "torch 1.13 (eval mode, float32 compute) with the weights exactly as stored in "
                          f"translator.safetensors ({dtype} -> float32); batch 1, no padding; greedy decoding. "
                          "firstStepsLogits[t] = generator logits at the last position after feeding "
                          "firstStepsDecoderInputs[t] (the language token and the t tokens chosen so far).",
           "torch": torch.__version__, "dtype": dtype, "items": items}
    # One item per line (readable diffs without one number per line).
    head = json.dumps({k: v for k, v in ref.items() if k != "items"}, indent=1, ensure_ascii=False)
    body = ",\n".join("  " + json.dumps(it, ensure_ascii=False) for it in items)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(head[:-2] + ',\n "items": [\n' + body + "\n ]\n}\n")
    assert json.load(open(path, encoding="utf-8")) == ref


if __name__ == "__main__":
    sys.exit(main())
