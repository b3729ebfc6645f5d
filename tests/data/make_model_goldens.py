#!/usr/bin/python3
"""Golden files for loading one's own models: tests/data/goldens/models/.

Builds two models the demos do not ship, with shapes of their own, exports them with
tools/export_safetensors.py (export_seq2seq / export_vit, as the README tells users to), and
records what PyTorch computes from the same weights. tests/js/models_custom.test.mjs loads the
files with aw.loadModel and compares. Run with Debian's torch (1.13):
    /usr/bin/python3 tests/data/make_model_goldens.py
Deterministic (fixed seed, one thread): two runs give identical bytes.

  seq2seq.safetensors  nn.Transformer d_model 32, 2 heads, 1 encoder and 3 decoder layers,
                       gelu, post-norm, eps 1e-6, batch_first=False; 12 source / 11 target tokens;
                       trained for 300 steps on a toy task (w_i → t_(i mod 8), reversed) so its choices are clear.
  vit.safetensors      12×12 RGB images, 3×3 patches (grid 4), d 24, 3 heads, 2 layers, relu,
                       pre-norm; 5 classes; mean 0.5, std 0.25.
  expected.json        seq2seq: per source, torch's greedy ids (argmax of full recomputation,
                       maxLength steps or eos), the beam-3 ids (the beam search of
                       src/models/translator.h re-run on torch's float64 log-softmax), and the
                       logits of the greedy path; vit: per image, the probabilities, the class
                       token's per-head attention to the patches and the rollout.
"""
import json
import math
import os
import sys

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "models"))
from export_safetensors import export_seq2seq, export_vit  # noqa: E402
from train_translator import sinusoidal_table  # noqa: E402

OUT = os.path.join(HERE, "goldens", "models")
SEED = 20261124
MAX_LEN = 12


def seq2seq_case():
    torch.manual_seed(SEED)  # the modules' default initialisation
    g = torch.Generator().manual_seed(SEED)
    src_vocab = ["<pad>", "<eos>"] + [f"w{i}" for i in range(10)]
    tgt_vocab = ["<pad>", "<eos>", "<bos>"] + [f"t{i}" for i in range(8)]
    d = 32
    tr = nn.Transformer(d_model=d, nhead=2, num_encoder_layers=1, num_decoder_layers=3, dim_feedforward=48,
                        dropout=0.0, activation="gelu", layer_norm_eps=1e-6, norm_first=False)
    src_embed, tgt_embed = nn.Embedding(len(src_vocab), d), nn.Embedding(len(tgt_vocab), d)
    gen = nn.Linear(d, len(tgt_vocab))
    scale = math.sqrt(d)
    pe = sinusoidal_table(MAX_LEN + 1, d)
    bos, eos = 2, 1

    def embed(emb, ids):  # ids (B, L) → (L, B, d): nn.Transformer is sequence-first here
        return (emb(ids) * scale + pe[:ids.shape[1]]).transpose(0, 1)

    # A toy task so the decoder's choices are clear: w_i → t_(i mod 8), reversed, then <eos>.
    params = [*tr.parameters(), *src_embed.parameters(), *tgt_embed.parameters(), *gen.parameters()]
    opt = torch.optim.Adam(params, lr=3e-3)
    for step in range(300):
        n = int(torch.randint(1, 6, (1,), generator=g))
        src = torch.randint(2, len(src_vocab), (16, n), generator=g)
        out = torch.flip((src - 2) % 8 + 3, [1])
        tgt_in = torch.cat([torch.full((16, 1), bos), out], 1)
        tgt_out = torch.cat([out, torch.full((16, 1), eos)], 1)
        mask = nn.Transformer.generate_square_subsequent_mask(tgt_in.shape[1])
        logits = gen(tr(embed(src_embed, src), embed(tgt_embed, tgt_in), tgt_mask=mask)).transpose(0, 1)
        loss = nn.functional.cross_entropy(logits.reshape(-1, len(tgt_vocab)), tgt_out.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    for m in (tr, src_embed, tgt_embed, gen):
        m.eval()
    def logits_of(src, tgt):  # (T, V), unbatched through the sequence-first nn.Transformer
        s = (src_embed(torch.tensor(src)) * scale + pe[:len(src)]).unsqueeze(1)
        t = (tgt_embed(torch.tensor(tgt)) * scale + pe[:len(tgt)]).unsqueeze(1)
        mask = nn.Transformer.generate_square_subsequent_mask(len(tgt))
        return gen(tr(s, t, tgt_mask=mask)).squeeze(1)

    items = []
    with torch.no_grad():
        for text in ["w1 w2 w3", "w9", "w4 w4 w0 w7 w5", "w8 w3 w6 w2", "w0 w1", "w5 w5 w5", "w2 w9 w4 w6 w8", "w7 w6 w5 w4 w3 w2"]:
            src = [src_vocab.index(w) for w in text.split()]
            ids, logits, margin = [bos], [], math.inf
            while len(ids) - 1 < MAX_LEN - 1:
                row = logits_of(src, ids)[-1]
                top = torch.topk(row, 2).values
                margin = min(margin, float(top[0] - top[1]))
                logits.append([float(v) for v in row])
                ids.append(int(row.argmax()))
                if ids[-1] == eos:
                    break
            assert margin > 1e-3, f"{text}: greedy path has a near tie ({margin})"
            items.append({"text": text, "greedyIds": ids[1:], "greedyLogits": logits,
                          "beam3Ids": beam(lambda tgt: logits_of(src, tgt)[-1], bos, eos, 3, 1.0, MAX_LEN - 1)})
    path = os.path.join(OUT, "seq2seq.safetensors")
    export_seq2seq(path, tr, src_embed, tgt_embed, gen, src_vocab, tgt_vocab, eos=eos,
                   start_tokens={"out": bos}, max_len=MAX_LEN, sidecar=False)
    return {"file": "seq2seq.safetensors", "items": items}


def beam(next_logits, first, eos, beam_size, length_penalty, max_length):
    """The beam search of src/models/translator.h (Translator::Beam) over torch's logits."""
    beams = [([], 0.0)]
    finished = []
    for _ in range(max_length):
        if not beams:
            break
        width = beam_size - len(finished)
        cand = []
        for b, (ids, score) in enumerate(beams):
            lp = torch.log_softmax(next_logits([first] + ids).double(), -1)
            order = sorted(range(len(lp)), key=lambda j: (-float(lp[j]), j))[:width]
            cand += [(score + float(lp[j]), b, j) for j in order]
        cand.sort(key=lambda c: (-c[0], c[1], c[2]))
        nxt = []
        for score, b, j in cand[:width]:
            ids = beams[b][0] + [j]
            (finished if j == eos else nxt).append((ids, score))
        beams = nxt
    pool = [(ids, s / len(ids) ** length_penalty) for ids, s in finished + beams]
    pool.sort(key=lambda x: -x[1])  # stable: finished first on ties
    return pool[0][0]


def vit_case():
    torch.manual_seed(SEED + 1)
    g = torch.Generator().manual_seed(SEED + 1)
    d, image, patch, classes = 24, 12, 3, 5
    grid = image // patch
    proj = nn.Conv2d(3, d, patch, stride=patch)
    cls = nn.Parameter(torch.zeros(1, 1, d))
    pos = nn.Parameter(torch.zeros(1, grid * grid + 1, d))
    layer = nn.TransformerEncoderLayer(d, 3, dim_feedforward=40, dropout=0.0, activation="relu",
                                       batch_first=True, norm_first=True)
    enc = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(d), enable_nested_tensor=False)
    head = nn.Linear(d, classes)
    with torch.no_grad():
        for p in [*proj.parameters(), cls, pos, *enc.parameters(), *head.parameters()]:
            p.copy_(torch.randn(p.shape, generator=g) * 0.4)
    enc.eval()
    mean, std = 0.5, 0.25
    images = torch.rand(3, 3, image, image, generator=g)
    items = []
    with torch.no_grad():
        for x in images:
            t = proj(((x - mean) / std).unsqueeze(0)).flatten(2).transpose(1, 2)
            h = torch.cat([cls.expand(1, 1, d), t], 1) + pos
            attn = []
            for lyr in enc.layers:  # each layer's per-head weights, then the layer itself
                a = lyr.norm1(h) if lyr.norm_first else h
                attn.append(lyr.self_attn(a, a, a, need_weights=True, average_attn_weights=False)[1][0])
                h = lyr(h)
            logits = head(enc.norm(h)[0, 0])
            T = h.shape[1]
            R = None
            for w in attn:
                A = 0.5 * w.double().mean(0) + 0.5 * torch.eye(T, dtype=torch.float64)
                A = A / A.sum(-1, keepdim=True)
                R = A if R is None else A @ R
            roll = R[0, 1:] / R[0, 1:].max()
            items.append({"image": [float(v) for v in x.flatten()],
                          "probabilities": [float(v) for v in torch.softmax(logits, -1)],
                          "attention": [float(v) for v in torch.stack([w[:, 0, 1:] for w in attn]).flatten()],
                          "rollout": [float(v) for v in roll]})
    path = os.path.join(OUT, "vit.safetensors")
    export_vit(path, proj, cls, pos, enc, head, image, labels=["a", "b", "c", "d", "e"], mean=mean, std=std,
               sidecar=False)
    return {"file": "vit.safetensors", "items": items}


def main():
    torch.set_num_threads(1)
    os.makedirs(OUT, exist_ok=True)
    expected = {"generator": "tests/data/make_model_goldens.py", "torch": torch.__version__,
                "seq2seq": seq2seq_case(), "vit": vit_case()}
    with open(os.path.join(OUT, "expected.json"), "w", encoding="utf-8") as fh:
        json.dump(expected, fh, indent=1)
        fh.write("\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
