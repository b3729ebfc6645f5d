#!/usr/bin/python3
"""Train the tiny character-level Llama-style LM on fortune cookies and export it for attnwasm.

    /usr/bin/python3 tools/models/train_lm.py             # fetch data, train, evaluate, export
    /usr/bin/python3 tools/models/train_lm.py --bench     # time a few steps, print params, exit
    /usr/bin/python3 tools/models/train_lm.py --evaluate models/lm/lm.safetensors --threads 1
                                        # held-out figures of the exported model, no training

Data: Debian's `fortunes` and `fortunes-min` packages (source package fortune-mod; BSD licence,
see models/lm/README.md), read from /usr/share/games/fortunes when installed, else fetched with
`apt-get download` into a cache folder and unpacked with `dpkg-deb -x` (nothing installed). The
files in CORPUS_FILES are split at "%" lines into fortunes; overstrike (X BACKSPACE Y) and bells
are removed, line ends stripped; fortunes with characters outside printable ASCII, tab and
newline are dropped; exact duplicates are dropped. random.Random(seed) shuffles the fortunes once;
the last 5 % are held out (never trained on), the rest is the training stream: each fortune's
characters then <eos> (id 0), in the shuffled order.

Model (tools/causal_lm.py, HF LlamaForCausalLM names and config): RMSNorm, RoPE (HF rotate_half,
theta 10000), grouped-query attention, SwiGLU MLP, tied embeddings; vocabulary = <eos> + tab +
newline + the 95 printable ASCII characters (98 ids). Training: AdamW (betas 0.9/0.95, weight decay
0.1 on matrices), linear warm-up then cosine to 10 %, random windows of --ctx + 1 characters drawn
by a seeded torch.Generator (one fixed data order), grad clip 1, 2 threads.
Evaluation: held-out bits per character (every character and every <eos> of the held-out stream
predicted once, with up to --ctx characters of context: sliding windows of --ctx with stride
--ctx/2), with the weights rounded to F16 as exported; unigram and bigram baselines (add-0.5
smoothing, counts from the training stream).
Writes models/lm/: lm.safetensors (F16, attnwasm.config = {"model": "causal_lm", "hf_config",
"tokenizer"}), config.json, reference.json, metrics.json, train_log.txt. The model card
(models/lm/README.md) is written by hand from the log.
"""

import os
import sys

# tools/models/numbers.py shadows the standard library's `numbers` (torch imports it): drop this folder.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
# Spinning OpenMP workers on a shared 2-core machine: passive waiting (see train_translator.py).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse  # noqa: E402
import glob  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import random  # noqa: E402
import re  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(_HERE))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.dont_write_bytecode = True
import causal_lm as clm  # noqa: E402
from export_safetensors import export_causal_lm, load_safetensors  # noqa: E402

PACKAGES = ("fortunes-min", "fortunes")
SYSTEM_DIR = "/usr/share/games/fortunes"
# General quotations, jokes, poems and riddles. Left out: the files of IRC logs and in-jokes
# (knghtbrd, perl, linuxcookie, debian), ASCII art, disclaimers and news, Zippy's non-sequiturs,
# and the files whose jokes are about groups of people or politics (ethnic, men-women, politics,
# drugs, law, medicine, cookie, definitions): a generator trained on them writes them back.
CORPUS_FILES = ("fortunes", "literature", "riddles", "wisdom", "science", "humorists", "people", "platitudes",
                "education", "work", "kids", "food", "art", "goedel", "love", "pets", "sports", "tao",
                "songs-poems", "magic", "paradoxum", "startrek", "computers", "miscellaneous")
EOS = "<eos>"
VOCAB = [EOS, "\t", "\n"] + [chr(c) for c in range(32, 127)]
OUT_DIR = os.path.join(ROOT, "models", "lm")
HELDOUT_FRACTION = 0.05


# ----------------------------------------------------------------------------------------- data
def data_dir(cache):
    """The folder holding the fortune files and a description of where it came from."""
    if all(os.path.exists(os.path.join(SYSTEM_DIR, f)) for f in CORPUS_FILES):
        ver = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "fortunes"], capture_output=True, text=True)
        return SYSTEM_DIR, f"installed packages fortunes / fortunes-min {ver.stdout.strip() or '?'}"
    target = os.path.join(cache, "usr", "share", "games", "fortunes")
    debs_dir = os.path.join(cache, "debs")
    if not all(os.path.exists(os.path.join(target, f)) for f in CORPUS_FILES):
        os.makedirs(debs_dir, exist_ok=True)
        subprocess.run(["apt-get", "download", *PACKAGES], cwd=debs_dir, check=True, capture_output=True)
        for deb in sorted(glob.glob(os.path.join(debs_dir, "*.deb"))):
            subprocess.run(["dpkg-deb", "-x", deb, cache], check=True)
    debs = [f"{subprocess.run(['dpkg-deb', '-f', deb, 'Package'], capture_output=True, text=True).stdout.strip()} "
            f"{subprocess.run(['dpkg-deb', '-f', deb, 'Version'], capture_output=True, text=True).stdout.strip()}"
            for deb in sorted(glob.glob(os.path.join(debs_dir, "*.deb")))]
    return target, f"apt-get download ({', '.join(debs)}), unpacked with dpkg-deb -x into {cache}"


def clean(text):
    text = re.sub(r".\x08", "", text)   # overstrike: "_\bX" (underline) and "X\bX" (bold) -> X
    text = text.replace("\x07", "")
    return "\n".join(line.rstrip() for line in text.split("\n")).strip("\n")


def load_fortunes(folder):
    allowed = set(VOCAB[1:])
    out, seen, dropped = [], set(), 0
    for name in CORPUS_FILES:
        with open(os.path.join(folder, name), "rb") as fh:
            text = fh.read().decode("utf-8", errors="replace")
        for f in re.split(r"\n%\n", text.replace("\r", "")):
            f = clean(f.strip("%\n") if f.startswith("%") else f)
            if not f:
                continue
            if not set(f) <= allowed:
                dropped += 1
                continue
            if f not in seen:
                seen.add(f)
                out.append(f)
    return out, dropped


def encode(text):
    index = {c: i for i, c in enumerate(VOCAB)}
    return [index[c] for c in text]


def stream(fortunes):
    ids = []
    for f in fortunes:
        ids.extend(encode(f))
        ids.append(0)
    return torch.tensor(ids, dtype=torch.int64)


def ngram_bits(train, held, V, alpha=0.5):
    """Held-out bits per character of add-alpha unigram and bigram models counted on train."""
    uni = torch.bincount(train, minlength=V).double() + alpha
    p_uni = uni / uni.sum()
    bits_uni = float(-torch.log2(p_uni[held]).mean())
    big = torch.zeros(V, V, dtype=torch.float64)
    big.index_put_((train[:-1], train[1:]), torch.ones(len(train) - 1, dtype=torch.float64), accumulate=True)
    big += alpha
    p_big = big / big.sum(1, keepdim=True)
    # the first held-out character follows an <eos>, as in the training stream
    prev = torch.cat([torch.zeros(1, dtype=torch.int64), held[:-1]])
    bits_big = float(-torch.log2(p_big[prev, held]).mean())
    return bits_uni, bits_big


# ----------------------------------------------------------------------------------------- eval
@torch.no_grad()
def heldout_bits(model, held, ctx, batch=32):
    """Bits per character over the whole held-out stream: each position predicted once, with up to
    ctx - 1 characters of context (windows of ctx + 1 with stride ctx/2, an <eos> in front)."""
    model.eval()
    seq = torch.cat([torch.zeros(1, dtype=torch.int64), held])   # <eos> then the stream
    n = len(seq) - 1                                             # positions to predict: seq[1:]
    stride = ctx // 2
    starts = list(range(0, max(1, n - ctx + stride), stride))
    total, count = 0.0, 0
    jobs = []
    for s in starts:
        e = min(s + ctx, n)
        first = 0 if s == 0 else ctx - stride                    # score only the new positions
        jobs.append((s, e, first))
    for i in range(0, len(jobs), batch):
        chunk = jobs[i:i + batch]
        L = max(e - s for s, e, _ in chunk)
        x = torch.zeros(len(chunk), L, dtype=torch.int64)
        y = torch.full((len(chunk), L), -100, dtype=torch.int64)
        for r, (s, e, first) in enumerate(chunk):
            x[r, :e - s] = seq[s:e]
            y[r, first:e - s] = seq[s + 1 + first:e + 1]
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1), ignore_index=-100,
                               reduction="sum")
        total += float(loss)
        count += int((y != -100).sum())
    assert count == n, (count, n)
    return total / count / math.log(2)


@torch.no_grad()
def sample(model, prompt, n, temperature, gen, stop_at_eos=True):
    ids = torch.tensor([[0] + encode(prompt)])
    cache = clm.KVCache()
    logits = model(ids, cache=cache)[0, -1]
    out = []
    for _ in range(n):
        probs = torch.softmax(logits.double() / temperature, -1)
        nxt = int(torch.multinomial(probs, 1, generator=gen))
        if nxt == 0 and stop_at_eos:
            break
        out.append(nxt)
        logits = model(torch.tensor([[nxt]]), cache=cache)[0, -1]
    return prompt + "".join(VOCAB[i] for i in out)


# ----------------------------------------------------------------------------------------- main
def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--kv-heads", type=int, default=2)
    ap.add_argument("--intermediate", type=int, default=384)
    ap.add_argument("--ctx", type=int, default=128)
    ap.add_argument("--batch", type=int, default=24)
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--seed", type=int, default=20261125)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--eval-every", type=int, default=250)
    ap.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "attnwasm-fortunes"))
    ap.add_argument("--out", default=OUT_DIR)
    ap.add_argument("--bench", action="store_true", help="time 20 steps, print params and exit")
    ap.add_argument("--evaluate", metavar="FILE", help="no training: held-out figures of an exported model "
                    "(bits/char, and by position past the training context with full and windowed attention)")
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    os.makedirs(args.out, exist_ok=True)
    log_fh = None if args.bench or args.evaluate else open(os.path.join(args.out, "train_log.txt"), "w",
                                                           encoding="utf-8")

    def log(*a):
        s = " ".join(str(x) for x in a)
        print(s, flush=True)
        if log_fh:
            log_fh.write(s + "\n")
            log_fh.flush()

    log("command:", " ".join([sys.executable] + sys.argv))
    log("torch", torch.__version__, "threads", torch.get_num_threads())
    folder, source = data_dir(args.cache)
    fortunes, dropped = load_fortunes(folder)
    digest = hashlib.sha256("\x00".join(fortunes).encode()).hexdigest()
    random.Random(args.seed).shuffle(fortunes)
    n_held = round(len(fortunes) * HELDOUT_FRACTION)
    train_f, held_f = fortunes[:-n_held], fortunes[-n_held:]
    train, held = stream(train_f), stream(held_f)
    V = len(VOCAB)
    log(f"data: {source}; files {', '.join(CORPUS_FILES)}")
    log(f"data: {len(fortunes)} unique fortunes ({dropped} dropped for characters outside the vocabulary), "
        f"sha256 of the cleaned fortunes in file order {digest[:16]}; train {len(train_f)} fortunes "
        f"{len(train)} characters (<eos> included), held-out {len(held_f)} fortunes {len(held)} characters")
    bits_uni, bits_big = ngram_bits(train, held, V)
    log(f"baselines on held-out: unigram {bits_uni:.4f} bits/char, bigram {bits_big:.4f} bits/char (add-0.5)")
    if args.evaluate:
        return evaluate_file(args.evaluate, held, args.ctx, log)

    hf = {"model_type": "llama", "vocab_size": V, "hidden_size": args.hidden, "intermediate_size": args.intermediate,
          "num_hidden_layers": args.layers, "num_attention_heads": args.heads, "num_key_value_heads": args.kv_heads,
          "head_dim": args.hidden // args.heads, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
          "max_position_embeddings": 1024, "tie_word_embeddings": True, "attention_bias": False,
          "mlp_bias": False, "hidden_act": "silu", "bos_token_id": 0, "eos_token_id": 0}
    model = clm.CausalLM(hf)
    with torch.no_grad():   # HF's init: N(0, 0.02) for matrices and the embedding, norms 1
        for name, p in model.named_parameters():
            if p.dim() == 2:
                p.normal_(0.0, 0.02)
    n_params = sum(p.numel() for p in model.parameters())
    log(f"model: {json.dumps(hf)}: {n_params} params ({2 * n_params} bytes as F16)")

    decay = [p for p in model.parameters() if p.dim() == 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.95))

    def lr_at(step):
        if step < args.warmup:
            return args.lr * (step + 1) / args.warmup
        p = (step - args.warmup) / max(1, args.steps - args.warmup)
        return args.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * p)))

    gen = torch.Generator().manual_seed(args.seed)
    steps = 20 if args.bench else args.steps
    offs = torch.arange(args.ctx + 1)
    t0 = time.time()
    run_loss, run_n = 0.0, 0
    for step in range(steps):
        model.train()
        starts = torch.randint(0, len(train) - args.ctx - 1, (args.batch,), generator=gen)
        win = train[starts.unsqueeze(1) + offs]
        logits = model(win[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, V), win[:, 1:].reshape(-1))
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        run_loss += float(loss)
        run_n += 1
        if (step + 1) % 100 == 0 or args.bench and step == steps - 1:
            log(f"step {step + 1}/{steps} loss {run_loss / run_n / math.log(2):.4f} bits/char lr {lr_at(step):.2e} "
                f"elapsed {time.time() - t0:.1f}s")
            run_loss, run_n = 0.0, 0
        if not args.bench and (step + 1) % args.eval_every == 0 and step + 1 < steps:
            te = time.time()
            b = heldout_bits(model, held[:20000], args.ctx)
            t0 += time.time() - te   # evaluation time is not training time
            log(f"  held-out (first 20000 characters) {b:.4f} bits/char (eval {time.time() - te:.1f}s)")
    train_time = time.time() - t0
    if args.bench:
        log(f"bench: {train_time / steps * 1000:.1f} ms/step, {args.batch * args.ctx / (train_time / steps):.0f} "
            f"chars/s, {n_params} params")
        return 0
    log(f"training time {train_time:.1f}s ({steps} steps x {args.batch} windows x {args.ctx} characters = "
        f"{steps * args.batch * args.ctx / len(train):.2f} passes over the training characters)")

    # Round to F16 (what is exported), evaluate, export.
    model.eval()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(p.half().float())
    te = time.time()
    bits = heldout_bits(model, held, args.ctx)
    log(f"held-out: {bits:.4f} bits/char with the F16 weights (unigram {bits_uni:.4f}, bigram {bits_big:.4f}) "
        f"(eval {time.time() - te:.1f}s)")
    tokenizer = {"type": "chars", "vocab": VOCAB, "special": [0], "bos": 0, "eos": 0, "unknown": "refuse",
                 "note": "one id per character; <eos> (id 0) ends a fortune and starts a prompt"}
    path = os.path.join(args.out, "lm.safetensors")
    size = export_causal_lm(path, model, hf, dtype="F16", tokenizer=tokenizer, attention_window=args.ctx)
    log(f"wrote {path}: {size} bytes (F16) and {os.path.join(args.out, 'config.json')}")

    # Reload the file the way a user would and check it gives the same numbers.
    tensors, meta = load_safetensors(path)
    awc = json.loads(meta["attnwasm.config"])
    m = clm.load_state_dict_hf(clm.CausalLM(awc["hf_config"]).eval(), {k: v.float() for k, v in tensors.items()})
    for (k, v), (k2, v2) in zip(clm.hf_state_dict(m).items(), clm.hf_state_dict(model).items()):
        assert k == k2 and torch.equal(v, v2), k

    write_reference(m, os.path.join(args.out, "reference.json"))
    samples = []
    gen_s = torch.Generator().manual_seed(args.seed + 1)
    for prompt in ("", "The ", "A man ", "Love is ", "Computers ", "Q: "):
        samples.append(sample(m, prompt, 300, 0.8, gen_s))
        log(f"sample (temperature 0.8) from {prompt!r}:\n{samples[-1]}\n---")
    metrics = {"params": n_params, "fileBytes": size, "trainTimeSeconds": round(train_time, 1), "steps": steps,
               "batch": args.batch, "ctx": args.ctx, "seed": args.seed, "threads": torch.get_num_threads(),
               "fortunes": {"train": len(train_f), "heldout": len(held_f), "dropped": dropped},
               "characters": {"train": len(train), "heldout": len(held)},
               "heldoutBitsPerChar": {"model": round(bits, 4), "unigram": round(bits_uni, 4),
                                      "bigram": round(bits_big, 4)},
               "samplesTemperature0.8Seed": args.seed + 1, "samples": samples, "hf_config": awc["hf_config"]}
    with open(os.path.join(args.out, "metrics.json"), "w", encoding="utf-8") as fh:
        json.dump(metrics, fh, indent=1)
        fh.write("\n")
    log(f"summary: params {n_params}, file {size} bytes (F16), train {train_time:.1f}s, held-out {bits:.4f} "
        f"bits/char vs unigram {bits_uni:.4f}, bigram {bits_big:.4f}")
    return 0


@torch.no_grad()
def bits_by_position(model, held, length, buckets):
    """Mean bits/char at each position bucket [a, b) of windows of `length` characters cut from
    the held-out stream (an <eos> in front; full windows only)."""
    seq = torch.cat([torch.zeros(1, dtype=torch.int64), held])
    n = (len(seq) - 1) // length
    x, y = seq[:n * length].view(n, length), seq[1:n * length + 1].view(n, length)
    total = torch.zeros(length, dtype=torch.float64)
    for i in range(0, n, 16):
        logits = model(x[i:i + 16])
        total += F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y[i:i + 16].reshape(-1),
                                 reduction="none").view(-1, length).double().sum(0)
    bits = total / n / math.log(2)
    return n, [float(bits[a:b].mean()) for a, b in buckets]


def evaluate_file(path, held, ctx, log):
    tensors, meta = load_safetensors(path)
    hf = json.loads(meta["attnwasm.config"])["hf_config"]
    weights = {k: v.float() for k, v in tensors.items()}
    model = clm.load_state_dict_hf(clm.CausalLM(hf).eval(), weights)
    log(f"{path}: held-out {heldout_bits(model, held, ctx):.4f} bits/char (windows of {ctx}, stride {ctx // 2})")
    length = 4 * ctx
    buckets = [(a, a + ctx // 2) for a in range(0, length, ctx // 2)]
    for window in (None, ctx):
        m = clm.load_state_dict_hf(clm.CausalLM(hf, attention_window=window).eval(), weights)
        n, bits = bits_by_position(m, held, length, buckets)
        log(f"attention {'full causal' if window is None else f'window {window}'}, {n} held-out windows of {length}:"
            + "".join(f"\n  positions {a:>3}-{b - 1:>3}: {v:.3f} bits/char" for (a, b), v in zip(buckets, bits)))
    return 0


@torch.no_grad()
def write_reference(model, path):
    """Greedy continuations (KV cache) and first-step logits of the exported weights in float32
    torch, for checking the runtime: each prompt starts with <eos> (id 0)."""
    items = []
    for prompt in ("", "The ", "Q: What is ", "A penny saved "):
        ids = torch.tensor([[0] + encode(prompt)])
        out, margins = clm.greedy(model, ids, 40)
        first = model(ids)[0, -1]
        items.append({"prompt": prompt, "promptIds": ids[0].tolist(), "greedyIds": out[0].tolist(),
                      "greedyText": "".join(VOCAB[i] for i in out[0].tolist()),
                      "margins": [round(float(x), 6) for x in margins[0]],
                      "firstLogits": [float(x) for x in first]})
    ref = {"description": "torch 1.13 float32, the weights of lm.safetensors (F16 -> float32), KV-cache greedy "
                          "decoding of 40 tokens (no stop at <eos>); margins = top-1 minus top-2 logit per step: "
                          "compare ids up to the first margin < 1e-3; firstLogits = logits after the prompt",
           "torch": torch.__version__, "items": items}
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(json.dumps({k: v for k, v in ref.items() if k != "items"}, indent=1)[:-2] + ',\n "items": [\n'
                 + ",\n".join("  " + json.dumps(it) for it in items) + "\n ]\n}\n")
    assert json.load(open(path, encoding="utf-8")) == ref


if __name__ == "__main__":
    sys.exit(main())
