#!/usr/bin/python3
"""Writes the seed corpus of the fuzz targets: tests/fuzz/corpus/<target>/.

Standard library only (struct, json). Run from anywhere:
    /usr/bin/python3 tests/fuzz/make_seeds.py

Files named valid-* must be accepted by their target (corpus_replay_test.cpp
checks it); crash-* files are reproducers of fixed bugs and are never written
or deleted here. The model configs are read from models/*/*.safetensors, so
the seeds follow the shipped models.
"""
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CORPUS = os.path.join(HERE, "corpus")


def write(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# ---- safetensors ----------------------------------------------------------

DTYPES = {  # name: (struct code, byte size)
    "F64": ("d", 8), "F32": ("f", 4), "F16": ("e", 2), "BF16": (None, 2), "I64": ("q", 8),
    "I32": ("i", 4), "I16": ("h", 2), "I8": ("b", 1), "U8": ("B", 1), "BOOL": ("B", 1),
}


def pack(dtype, values):
    code, _ = DTYPES[dtype]
    if dtype == "BF16":  # the top half of the float32 bits
        return b"".join(struct.pack("<I", struct.unpack("<I", struct.pack("<f", v))[0])[2:] for v in values)
    return struct.pack("<%d%s" % (len(values), code), *values)


def safetensors(tensors, metadata=None, pad=0):
    """tensors: list of (name, dtype, shape, values) -> file bytes."""
    header, data = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dtype, shape, values in tensors:
        raw = pack(dtype, values)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    h = json.dumps(header, separators=(",", ":")).encode("utf-8") + b" " * pad
    return struct.pack("<Q", len(h)) + h + data


def model_config(path):
    with open(os.path.join(ROOT, path), "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
    return header["__metadata__"]["attnwasm.config"]


VIT = model_config("models/vit/vit.safetensors")
TRANSLATOR = model_config("models/translator/translator.safetensors")


def safetensors_seeds():
    t = "safetensors"
    write(t, "valid-f32-metadata", safetensors(
        [("a", "F32", [2, 3], [1, -2.5, 3.25, 0, 1e-3, -7]), ("b", "F32", [2], [42, -0.0])],
        {"format": "pt", "note": "h\u00e9"}))
    write(t, "valid-every-dtype", safetensors([
        ("f64", "F64", [2], [0.1, -1e300]), ("f16", "F16", [3], [1.0, -0.5, 65504.0]),
        ("bf16", "BF16", [2], [1.5, -3.0]), ("i64", "I64", [2], [-5, 2**31 - 1]),
        ("i32", "I32", [1], [-7]), ("i16", "I16", [2], [300, -300]), ("i8", "I8", [2], [-128, 127]),
        ("u8", "U8", [2], [0, 255]), ("bool", "BOOL", [3], [1, 0, 1]), ("empty", "F32", [0, 4], []),
        ("scalar", "F32", [], [2.0]),
    ]))
    write(t, "valid-padded-header", safetensors([("x", "F16", [2, 2], [1, 2, 3, 4])], pad=7))
    write(t, "valid-no-tensors", safetensors([], {"k": "v"}))
    write(t, "valid-vit-config", safetensors([("w", "F32", [1], [0.5])], {"attnwasm.config": VIT}))
    # Refused: an I64 value outside int32 (read error), a BOOL byte of 2, overlap.
    write(t, "i64-out-of-range", safetensors([("i", "I64", [1], [2**40])]))
    write(t, "bool-byte-2", safetensors([("b", "BOOL", [1], [2])]))
    f = bytearray(safetensors([("a", "F32", [1], [1]), ("b", "F32", [1], [2])]))
    write(t, "overlap", bytes(f).replace(b"[4,8]", b"[0,4]"))


# ---- model config ---------------------------------------------------------

def config_seeds():
    t = "model_config"
    write(t, "valid-vit", VIT)
    write(t, "valid-translator", TRANSLATOR)
    write(t, "valid-translator-minimal", json.dumps({
        "model": "translator", "dModel": 8, "nhead": 2, "numEncoderLayers": 1, "numDecoderLayers": 1,
        "dimFeedforward": 16, "maxLen": 8, "srcVocab": ["<pad>", "a"], "tgtVocab": ["<pad>", "<eos>", "<x>"],
        "pad": 0, "eos": 1, "langTokens": {"x": 2}, "maxSrcTokens": 4, "maxTgtTokens": 4}))
    write(t, "valid-vit-minimal", json.dumps({
        "model": "vit", "imageSize": 4, "patchSize": 2, "inChannels": 1, "dModel": 4, "nhead": 1,
        "numLayers": 1, "dimFeedforward": 4, "numClasses": 2, "labels": ["no", "yes"], "std": 1}))
    write(t, "nhead-not-a-divisor", json.dumps({"model": "vit", "imageSize": 4, "patchSize": 2,
                                                "inChannels": 1, "dModel": 6, "nhead": 4}))
    write(t, "not-json", '{"model": "vit", "dModel": 4,}')


# ---- attention (byte layout: fuzz_targets.h) ---------------------------------

def shape(*dims):
    return bytes([len(dims)] + list(dims))


def sdpa(flags, scale, q, k, v, mask=None, seed=5):
    return bytes([0, flags, scale]) + q + k + v + (mask or b"") + bytes([seed])


def mha(e_index, heads, kdim, vdim, cflags, fflags, q, k, v, kpm=None, am=None, seed=5):
    return bytes([1, e_index, heads, kdim, vdim, cflags, fflags]) + q + k + v + (kpm or b"") + (am or b"") + bytes([seed])


CAUSAL, HAS_SCALE, GQA, WEIGHTS, MASK, MASK_BOOL = 1, 2, 4, 8, 16, 32
M_WEIGHTS, M_AVERAGE, M_CAUSAL, M_KPM, M_KPM_BOOL, M_AM, M_AM_BOOL = 1, 2, 4, 8, 16, 32, 64
BIAS, BIAS_KV, ZERO_ATTN, BATCH_FIRST = 1, 2, 4, 8
E_REF = 0xA3  # a dim byte naming pool entry 3: embed_dim (after num_heads, kdim, vdim)


def attention_seeds():
    t = "attention"
    write(t, "valid-sdpa-basic", sdpa(WEIGHTS, 0, shape(2, 3, 4), shape(2, 5, 4), shape(2, 5, 3)))
    write(t, "valid-sdpa-gqa-causal", sdpa(CAUSAL | GQA | WEIGHTS, 0, shape(1, 4, 3, 2), shape(1, 2, 5, 2),
                                           shape(1, 2, 5, 3)))
    write(t, "valid-sdpa-bool-mask-scale", sdpa(HAS_SCALE | WEIGHTS | MASK | MASK_BOOL, 1, shape(2, 3, 4),
                                                shape(2, 5, 4), shape(2, 5, 4), shape(1, 5)))
    write(t, "valid-sdpa-float-mask-along-s", sdpa(WEIGHTS | MASK, 0, shape(2, 3, 4), shape(2, 5, 4),
                                                   shape(2, 5, 4), shape(2, 3, 1)))
    write(t, "valid-sdpa-broadcast-5d", sdpa(0, 0, shape(2, 1, 2, 3, 4), shape(2, 2, 5, 4), shape(1, 5, 3)))
    write(t, "valid-mha-basic", mha(6, 2, 0, 0, BIAS, M_WEIGHTS | M_AVERAGE,
                                    shape(3, 2, 8), shape(4, 2, 8), shape(4, 2, 8)))
    write(t, "valid-mha-kdim-vdim-masks", mha(6, 4, 5, 3, BIAS | BIAS_KV | ZERO_ATTN | BATCH_FIRST,
                                              M_WEIGHTS | M_KPM | M_KPM_BOOL | M_AM,
                                              shape(2, 3, 8), shape(2, 4, 5), shape(2, 4, 3),
                                              kpm=shape(2, 4), am=shape(3, 4)))
    write(t, "valid-mha-unbatched-causal", mha(4, 1, 0, 0, BIAS, M_WEIGHTS | M_AVERAGE | M_CAUSAL | M_AM | M_AM_BOOL,
                                               shape(3, 4), shape(3, 4), shape(3, 4), am=shape(3, 3)))
    write(t, "valid-mha-per-head-3d-mask", mha(5, 3, 0, 0, 0, M_WEIGHTS | M_AM,
                                               shape(2, 2, 6), shape(5, 2, 6), shape(5, 2, 6), am=shape(6, 2, 5)))
    write(t, "valid-mha-e12-no-weights", mha(7, 3, 0, 0, BIAS, 0,
                                             shape(2, 1, E_REF), shape(4, 1, E_REF), shape(4, 1, E_REF)))
    # Refused: a query of 1 dim; a huge embed dim.
    write(t, "mha-query-1d", mha(4, 1, 0, 0, BIAS, M_WEIGHTS, shape(4), shape(3, 4), shape(3, 4)))
    write(t, "sdpa-huge-dim", sdpa(0, 0, shape(0xF6, 0, 4), shape(2, 0xF6, 4), shape(2, 3, 4)))


if __name__ == "__main__":
    safetensors_seeds()
    config_seeds()
    attention_seeds()
    for target in sorted(os.listdir(CORPUS)):
        files = os.listdir(os.path.join(CORPUS, target))
        size = sum(os.path.getsize(os.path.join(CORPUS, target, f)) for f in files)
        print("%-14s %2d files, %5d bytes" % (target, len(files), size))
