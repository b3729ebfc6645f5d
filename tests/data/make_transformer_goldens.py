#!/usr/bin/python3
"""Golden files for the layer / Transformer tests: tests/data/goldens/transformer/<case>.safetensors.

Not a test itself: it writes PyTorch reference inputs, parameters and outputs that the JS (and
C++) tests load, then re-reads every file and replays it from its metadata alone (the same steps
the JS harness takes) as a check. Run with Debian's torch (1.13):
    /usr/bin/python3 tests/data/make_transformer_goldens.py
Deterministic (fixed seeds, one thread): two runs give identical bytes. Files are written with
tools/export_safetensors.py (save_safetensors).

FILE FORMAT — one safetensors file per case (format: see tools/export_safetensors.py or
src/io/safetensors.h). Tensors, in this order in the header and the data:
  "param.<key>"     every parameter of the module, <key> the exact torch state_dict key
                    (e.g. "param.self_attn.in_proj_weight", "param.layers.1.norm2.bias",
                    "param.encoder.layers.0.linear1.weight"). dtype F32, or the case's
                    "paramDtype" (F16 / BF16). No buffers are stored: every module here has
                    state_dict keys == parameter names (the sinusoidal table is recomputed).
                    A case whose module has no parameters (ReLU, ...) has no "param." entries.
  "input.<name>"    inputs: F32 activations, BOOL masks (true = masked / not allowed),
                    F32 additive masks (may hold -inf), I64 token ids.
  "expected.output" torch's forward output, F32.
  "expected.<x>"    extra outputs of composite cases (VitTiny: "expected.features").
__metadata__ (all values are strings):
  "case"       JSON text, the case description (schema below)
  "generator"  "tests/data/make_transformer_goldens.py"
  "torch"      the torch version that computed it (informative only)

"case" schema (JSON object; option names are torch's keyword names in camelCase, i.e. the
attnwasm JS API's; every option the module takes is given explicitly):
  common keys
    "name"        string, = the file name without ".safetensors"
    "module"      "Linear" | "LayerNorm" | "Embedding" | "ReLU" | "GELU"
                  | "SinusoidalPositionalEncoding" | "LearnedPositionalEmbedding" | "PatchEmbedding"
                  | "TransformerEncoderLayer" | "TransformerDecoderLayer"
                  | "TransformerEncoder" | "TransformerDecoder" | "Transformer" | "VitTiny"
    "inputs"      [string]: positional forward arguments, each the tensor "input.<name>"
    "forward"     {optionName: value}: the forward options object. A string value "input.<n>"
                  means the stored tensor "input.<n>"; anything else (true/false) is a literal.
                  Absent keys = option not passed.
    "atol","rtol" numbers: pass iff |got - expected| <= atol + rtol * |expected| elementwise
                  (expected.* never holds NaN or inf); same tolerance for every expected.*.
    "paramDtype"  (optional) "F16" | "BF16": params are stored in that dtype; expected.* were
                  computed with exactly those rounded values, widened to f32 (so a loader that
                  converts F16/BF16 to f32 exactly should match at the usual tolerance).
    "note"        (optional) human-readable remark, no semantics.
  leaf modules and layers: "args": [positional constructor args], "options": {constructor options}
      Linear(inFeatures, outFeatures, {bias})                       forward(x)
      LayerNorm(normalizedShape: int, {eps, elementwiseAffine})     forward(x)
      Embedding(numEmbeddings, embeddingDim, {paddingIdx?})         forward(ids)   ids: I64
      ReLU()  /  GELU({approximate: "none" | "tanh"})               forward(x)
      SinusoidalPositionalEncoding(dModel, {maxLen, batchFirst})    forward(x)
      LearnedPositionalEmbedding(maxLen, dModel, {batchFirst})      forward(x)
      PatchEmbedding(inChannels, embedDim, patchSize, {bias, classToken})  forward(images)
      TransformerEncoderLayer(dModel, nhead, {dimFeedforward, dropout, activation, layerNormEps,
                              batchFirst, normFirst})
          forward(src, {srcMask, srcKeyPaddingMask, isCausal})
      TransformerDecoderLayer(dModel, nhead, {same options})
          forward(tgt, memory, {tgtMask, memoryMask, tgtKeyPaddingMask, memoryKeyPaddingMask,
                                tgtIsCausal, memoryIsCausal})
      Transformer: "args": [] and "options": {dModel, nhead, numEncoderLayers, numDecoderLayers,
                   dimFeedforward, dropout, activation, layerNormEps, batchFirst, normFirst}
          forward(src, tgt, {srcMask, tgtMask, memoryMask, srcKeyPaddingMask,
                             tgtKeyPaddingMask, memoryKeyPaddingMask})
          (torch's nn.Transformer always appends a final LayerNorm(dModel, eps=layerNormEps) to
          both stacks: keys encoder.norm.*, decoder.norm.*, even with normFirst false.)
  stacks: "module": "TransformerEncoder" | "TransformerDecoder",
          "layer": {"args": [...], "options": {...}}  (an encoder / decoder layer as above),
          "numLayers": int, "norm": {"args": [dModel], "options": {eps, elementwiseAffine}} | null
      TransformerEncoder forward(src, {mask, srcKeyPaddingMask, isCausal})      (torch's names)
      TransformerDecoder forward(tgt, memory, {tgtMask, memoryMask, tgtKeyPaddingMask,
                                               memoryKeyPaddingMask, tgtIsCausal, memoryIsCausal})
  VitTiny: "patch": PatchEmbedding spec, "pos": LearnedPositionalEmbedding spec, "encoder":
          TransformerEncoder stack spec (with "module"), "head": Linear spec (each {"module",
          "args", "options", ...}); param prefixes "patch.", "pos.", "encoder.", "head.".
          forward(images):  features = encoder(pos(patch(images)))     -> expected.features
                            output   = head(features[:, 0, :])  (class token) -> expected.output

Semantics (torch's): masks are (L, S) or (N*nhead, L, S) for attention masks, (N, S) for key
padding masks; bool true = not allowed; float masks are added to the scores. Layouts are
(L, N, E) when batchFirst is false, (N, L, E) when true. No case has a query row whose keys are
all masked (torch gives NaN there). A flag isCausal / tgtIsCausal = true is only set when the
mask passed with it is exactly the causal mask (torch 2.x's hint semantics; torch 1.13 has no
such flag, so the goldens come from the mask alone). dropout values are given but inactive
(eval mode). Outputs at padded positions are those of torch's standard path (not zeros).

How torch computed them: module.eval(), autograd ENABLED, parameters requiring grad. In torch
1.13 that keeps TransformerEncoder(Layer) off its "fast path": with no_grad, an encoder stack
with srcKeyPaddingMask runs on nested tensors and returns zeros at padded positions (then the
final norm of zeros), and may even return a shorter sequence when every row is padded at the end.
"""

import collections
import json
import math
import os
import re
import sys
import zlib

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True   # no tools/__pycache__ in the source tree
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
from export_safetensors import load_safetensors, save_safetensors  # noqa: E402

SEED = 20240611
GENERATOR = "tests/data/make_transformer_goldens.py"
OUT_DIR = os.path.join(HERE, "goldens", "transformer")

# Tolerances. Elementwise / small-dot cases: f32 rounding of K <= 32 products is ~1e-6.
# Attention layers and stacks: several matmuls, softmax, LayerNorms; 1e-4 leaves room for a
# different summation order (SIMD, blocked GEMM) without hiding real bugs (those are O(0.1)).
TOL_ELEMENTWISE = (1e-5, 1e-5)
TOL_LAYER = (1e-4, 1e-4)


# ----------------------------------------------------------------------------------------------
# Reference modules that torch.nn does not have (attnwasm's twins)
# ----------------------------------------------------------------------------------------------

class SinusoidalPositionalEncoding(nn.Module):
    """The PyTorch tutorial's PositionalEncoding (table computed in float32 exactly as there),
    dropout omitted, plus batch_first. The table is a non-persistent buffer, not a parameter.
    d_model must be even (the tutorial's pe[:, 1::2] assignment fails for odd d_model)."""

    def __init__(self, d_model, max_len=5000, batch_first=False):
        super().__init__()
        self.batch_first = batch_first
        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, 1, d_model)
        pe[:, 0, 0::2] = torch.sin(position * div_term)
        pe[:, 0, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe, persistent=False)

    def forward(self, x):
        if self.batch_first:                       # x (N, L, E)
            return x + self.pe[:x.size(1)].transpose(0, 1)
        return x + self.pe[:x.size(0)]              # x (L, N, E)


class LearnedPositionalEmbedding(nn.Module):
    """x + weight[:L], weight (maxLen, dModel), broadcast over the batch."""

    def __init__(self, max_len, d_model, batch_first=False):
        super().__init__()
        self.batch_first = batch_first
        self.weight = nn.Parameter(torch.zeros(max_len, d_model))

    def forward(self, x):
        if self.batch_first:                       # x (N, L, E)
            return x + self.weight[:x.size(1)].unsqueeze(0)
        return x + self.weight[:x.size(0)].unsqueeze(1)   # x (L, N, E)


class PatchEmbedding(nn.Module):
    """ViT patchify: Conv2d(kernel = stride = patch) -> (B, H'W', d), H' = floor(H / p);
    optional class token prepended -> (B, 1 + H'W', d). patch_size 1 = DETR's 1x1 projection."""

    def __init__(self, in_channels, embed_dim, patch_size, bias=True, class_token=False):
        super().__init__()
        self.proj = nn.Conv2d(in_channels, embed_dim, patch_size, stride=patch_size, bias=bias)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim)) if class_token else None

    def forward(self, images):                      # images (B, C, H, W)
        x = self.proj(images).flatten(2).transpose(1, 2)
        if self.cls_token is not None:
            x = torch.cat([self.cls_token.expand(x.size(0), -1, -1), x], dim=1)
        return x


class VitTiny(nn.Module):
    """patch -> pos -> encoder -> head(class token). Returns (logits, features)."""

    def __init__(self, patch, pos, encoder, head):
        super().__init__()
        self.patch, self.pos, self.encoder, self.head = patch, pos, encoder, head

    def forward(self, images):
        features = self.encoder(self.pos(self.patch(images)))
        return self.head(features[:, 0, :]), features


# ----------------------------------------------------------------------------------------------
# Building and calling modules from a case description (used to generate AND to verify)
# ----------------------------------------------------------------------------------------------

def snake(name):
    """camelCase option name -> torch keyword name (dimFeedforward -> dim_feedforward)."""
    return re.sub(r"([A-Z])", r"_\1", name).lower()


def kwargs_of(options):
    return {snake(k): v for k, v in options.items()}


def build(spec):
    """nn.Module for a case spec (see the top of this file)."""
    m = spec["module"]
    if m == "TransformerEncoder" or m == "TransformerDecoder":
        kind = nn.TransformerEncoderLayer if m == "TransformerEncoder" else nn.TransformerDecoderLayer
        layer = kind(*spec["layer"]["args"], **kwargs_of(spec["layer"]["options"]))
        norm = spec["norm"]
        norm = None if norm is None else nn.LayerNorm(*norm["args"], **kwargs_of(norm["options"]))
        stack = nn.TransformerEncoder if m == "TransformerEncoder" else nn.TransformerDecoder
        return stack(layer, spec["numLayers"], norm)
    if m == "VitTiny":
        return VitTiny(build(spec["patch"]), build(spec["pos"]), build(spec["encoder"]), build(spec["head"]))
    classes = {
        "Linear": nn.Linear, "LayerNorm": nn.LayerNorm, "Embedding": nn.Embedding,
        "ReLU": nn.ReLU, "GELU": nn.GELU,
        "TransformerEncoderLayer": nn.TransformerEncoderLayer,
        "TransformerDecoderLayer": nn.TransformerDecoderLayer, "Transformer": nn.Transformer,
        "SinusoidalPositionalEncoding": SinusoidalPositionalEncoding,
        "LearnedPositionalEmbedding": LearnedPositionalEmbedding, "PatchEmbedding": PatchEmbedding,
    }
    return classes[m](*spec["args"], **kwargs_of(spec["options"]))


def causal_like(mask):
    """True iff mask is the (L, L) causal mask: float 0 / -inf or bool, true above the diagonal."""
    if mask.dim() != 2 or mask.size(0) != mask.size(1):
        return False
    if mask.dtype == torch.bool:
        return torch.equal(mask, torch.ones_like(mask).triu(1))
    return torch.equal(mask, nn.Transformer.generate_square_subsequent_mask(mask.size(0)))


def call(module, spec, inputs):
    """Run the case's forward on the module -> dict expected-name -> tensor."""
    args = [inputs[n] for n in spec["inputs"]]
    kwargs = {}
    for key, val in spec["forward"].items():
        if isinstance(val, str) and val.startswith("input."):
            val = inputs[val[len("input."):]]
        if key.endswith("sCausal"):   # isCausal / tgtIsCausal / memoryIsCausal: 2.x-only hints
            if val:
                mask_key = {"isCausal": "srcMask" if "srcMask" in spec["forward"] else "mask",
                            "tgtIsCausal": "tgtMask", "memoryIsCausal": "memoryMask"}[key]
                assert causal_like(inputs[spec["forward"][mask_key][len("input."):]]), (spec["name"], key)
            continue
        kwargs[snake(key)] = val
    out = module(*args, **kwargs)
    if spec["module"] == "VitTiny":
        return {"output": out[0], "features": out[1]}
    return {"output": out}


# ----------------------------------------------------------------------------------------------
# Random parameters, inputs and masks
# ----------------------------------------------------------------------------------------------

def gen_for(name):
    """A generator seeded from the case name: adding or reordering cases changes no other file."""
    return torch.Generator().manual_seed(SEED ^ zlib.crc32(name.encode()))


def randn(g, *shape, std=1.0):
    return torch.randn(*shape, generator=g) * std


def randomize(module, g):
    """Every parameter random, biases and LayerNorm weights included, so that a zero bias or a
    unit norm weight cannot hide a bug. Scales keep activations of order 1."""
    done = set()
    with torch.no_grad():
        for mod in module.modules():
            own = dict(mod.named_parameters(recurse=False))
            if isinstance(mod, nn.LayerNorm):
                special = {"weight": (1.0, 0.5), "bias": (0.0, 0.2)}
            elif isinstance(mod, nn.Embedding):
                special = {"weight": (0.0, 1.0)}
            elif isinstance(mod, LearnedPositionalEmbedding):
                special = {"weight": (0.0, 0.5)}
            elif isinstance(mod, PatchEmbedding):
                special = {"cls_token": (0.0, 1.0)}
            else:
                special = {}
            for pname, p in own.items():
                if pname in special:
                    mean, std = special[pname]
                elif p.dim() >= 2:              # weight matrices / conv kernels: 1 / sqrt(fan_in)
                    mean, std = 0.0, 1.0 / math.sqrt(p.numel() // p.size(0))
                else:                           # biases
                    mean, std = 0.0, 0.2
                p.copy_(torch.randn(p.shape, generator=g) * std + mean)
                done.add(id(p))
    assert all(id(p) in done for p in module.parameters())


def seq(g, n, l, e, batch_first):
    """Activations (N, L, E) if batch_first else (L, N, E)."""
    return randn(g, n, l, e) if batch_first else randn(g, l, n, e)


def attn_mask(g, kind, l, s, n_heads_batch=None):
    """An attention mask of the given kind. Column 0 is never masked, so no row is fully
    masked even combined with a key padding mask (which never masks key 0 either)."""
    if kind == "causal_float":
        return nn.Transformer.generate_square_subsequent_mask(l)
    if kind == "causal_bool":
        return torch.ones(l, s, dtype=torch.bool).triu(1)
    shape = (l, s) if n_heads_batch is None else (n_heads_batch, l, s)
    if kind.startswith("bool"):
        m = torch.rand(shape, generator=g) < 0.35
        m[..., 0] = False
        return m
    if kind.startswith("float"):
        m = randn(g, *shape, std=0.7)
        m[(torch.rand(shape, generator=g) < 0.2)] = float("-inf")
        m[..., 0] = randn(g, *m[..., 0].shape, std=0.7)
        return m
    raise ValueError(kind)


def key_padding(g, kind, n, s):
    """(N, S) bool key padding mask. "right": sequences padded at the end (the first one
    unpadded, the others of lengths in [1, S - 1] when S > 1); "random": any pattern except key 0."""
    if kind == "right":
        lengths = [s] + [int(torch.randint(1, max(s, 2), (1,), generator=g)) for _ in range(n - 1)]
        return torch.arange(s).unsqueeze(0) >= torch.tensor(lengths).unsqueeze(1)
    if kind == "random":
        m = torch.rand(n, s, generator=g) < 0.35
        m[:, 0] = False
        return m
    raise ValueError(kind)


def layer_opts(dim_ff, activation="relu", eps=1e-5, batch_first=False, norm_first=False, dropout=0.1):
    return {"dimFeedforward": dim_ff, "dropout": dropout, "activation": activation,
            "layerNormEps": eps, "batchFirst": batch_first, "normFirst": norm_first}


def ln_spec(d, eps=1e-5):
    return {"args": [d], "options": {"eps": eps, "elementwiseAffine": True}}


# ----------------------------------------------------------------------------------------------
# Cases: each returns (spec, inputs). spec["name"] is filled in by the caller.
# ----------------------------------------------------------------------------------------------

def leaf(module, args, options, inputs, tol=TOL_ELEMENTWISE, input_names=None, note=None):
    spec = {"module": module, "args": args, "options": options,
            "inputs": input_names or list(inputs), "forward": {}, "atol": tol[0], "rtol": tol[1]}
    if note:
        spec["note"] = note
    return spec, inputs


def enc_layer_case(g, d, h, opts, n, l, src_mask=None, kpm=None, note=None):
    bf = opts["batchFirst"]
    inputs = collections.OrderedDict(src=seq(g, n, l, d, bf))
    fwd = {}
    if src_mask:
        inputs["src_mask"] = attn_mask(g, src_mask, l, l, n * h if src_mask.endswith("3d") else None)
        fwd["srcMask"] = "input.src_mask"
    if kpm:
        inputs["src_key_padding_mask"] = key_padding(g, kpm, n, l)
        fwd["srcKeyPaddingMask"] = "input.src_key_padding_mask"
    fwd["isCausal"] = bool(src_mask and src_mask.startswith("causal"))
    spec = {"module": "TransformerEncoderLayer", "args": [d, h], "options": opts,
            "inputs": ["src"], "forward": fwd, "atol": TOL_LAYER[0], "rtol": TOL_LAYER[1]}
    if note:
        spec["note"] = note
    return spec, inputs


def dec_fwd(g, inputs, n, h, t, s, tgt_mask, memory_mask, tgt_kpm, mem_kpm):
    fwd = {}
    if tgt_mask:
        inputs["tgt_mask"] = attn_mask(g, tgt_mask, t, t, n * h if tgt_mask.endswith("3d") else None)
        fwd["tgtMask"] = "input.tgt_mask"
    if memory_mask:
        inputs["memory_mask"] = attn_mask(g, memory_mask, t, s, n * h if memory_mask.endswith("3d") else None)
        fwd["memoryMask"] = "input.memory_mask"
    if tgt_kpm:
        inputs["tgt_key_padding_mask"] = key_padding(g, tgt_kpm, n, t)
        fwd["tgtKeyPaddingMask"] = "input.tgt_key_padding_mask"
    if mem_kpm:
        inputs["memory_key_padding_mask"] = key_padding(g, mem_kpm, n, s)
        fwd["memoryKeyPaddingMask"] = "input.memory_key_padding_mask"
    fwd["tgtIsCausal"] = bool(tgt_mask and tgt_mask.startswith("causal"))
    fwd["memoryIsCausal"] = False
    return fwd


def dec_layer_case(g, d, h, opts, n, t, s, tgt_mask=None, memory_mask=None, tgt_kpm=None,
                   mem_kpm=None, note=None):
    bf = opts["batchFirst"]
    inputs = collections.OrderedDict(tgt=seq(g, n, t, d, bf), memory=seq(g, n, s, d, bf))
    fwd = dec_fwd(g, inputs, n, h, t, s, tgt_mask, memory_mask, tgt_kpm, mem_kpm)
    spec = {"module": "TransformerDecoderLayer", "args": [d, h], "options": opts,
            "inputs": ["tgt", "memory"], "forward": fwd, "atol": TOL_LAYER[0], "rtol": TOL_LAYER[1]}
    if note:
        spec["note"] = note
    return spec, inputs


def enc_stack_case(g, d, h, opts, num_layers, norm, n, l, mask=None, kpm=None, note=None):
    spec, inputs = enc_layer_case(g, d, h, opts, n, l, mask, kpm)
    fwd = {("mask" if k == "srcMask" else k): v for k, v in spec["forward"].items()}
    spec = {"module": "TransformerEncoder", "layer": {"args": [d, h], "options": opts},
            "numLayers": num_layers, "norm": norm, "inputs": ["src"], "forward": fwd,
            "atol": TOL_LAYER[0], "rtol": TOL_LAYER[1]}
    if note:
        spec["note"] = note
    return spec, inputs


def dec_stack_case(g, d, h, opts, num_layers, norm, n, t, s, note=None, **masks):
    spec, inputs = dec_layer_case(g, d, h, opts, n, t, s, **masks)
    spec = {"module": "TransformerDecoder", "layer": {"args": [d, h], "options": opts},
            "numLayers": num_layers, "norm": norm, "inputs": ["tgt", "memory"],
            "forward": spec["forward"], "atol": TOL_LAYER[0], "rtol": TOL_LAYER[1]}
    if note:
        spec["note"] = note
    return spec, inputs


def transformer_case(g, d, h, n_enc, n_dec, opts, n, s, t, src_mask=None, memory_mask=None,
                     param_dtype=None, note=None):
    bf = opts["batchFirst"]
    options = {"dModel": d, "nhead": h, "numEncoderLayers": n_enc, "numDecoderLayers": n_dec}
    options.update(opts)
    inputs = collections.OrderedDict(src=seq(g, n, s, d, bf), tgt=seq(g, n, t, d, bf))
    fwd = {}
    if src_mask:
        inputs["src_mask"] = attn_mask(g, src_mask, s, s)
        fwd["srcMask"] = "input.src_mask"
    inputs["tgt_mask"] = attn_mask(g, "causal_float", t, t)
    fwd["tgtMask"] = "input.tgt_mask"
    if memory_mask:
        inputs["memory_mask"] = attn_mask(g, memory_mask, t, s)
        fwd["memoryMask"] = "input.memory_mask"
    src_kpm = key_padding(g, "right", n, s)
    inputs["src_key_padding_mask"] = src_kpm
    inputs["tgt_key_padding_mask"] = key_padding(g, "right", n, t)
    inputs["memory_key_padding_mask"] = src_kpm.clone()   # the usual choice: memory = encoded src
    fwd["srcKeyPaddingMask"] = "input.src_key_padding_mask"
    fwd["tgtKeyPaddingMask"] = "input.tgt_key_padding_mask"
    fwd["memoryKeyPaddingMask"] = "input.memory_key_padding_mask"
    spec = {"module": "Transformer", "args": [], "options": options, "inputs": ["src", "tgt"],
            "forward": fwd, "atol": TOL_LAYER[0], "rtol": TOL_LAYER[1]}
    if param_dtype:
        spec["paramDtype"] = param_dtype
    spec["note"] = ("tgtMask is the causal mask (torch 2.x would also take tgtIsCausal=true); "
                    "nn.Transformer has final norms encoder.norm / decoder.norm"
                    + ("; " + note if note else ""))
    return spec, inputs


def vit_tiny_case(g):
    d = 32
    spec = {
        "module": "VitTiny",
        "patch": {"module": "PatchEmbedding", "args": [1, d, 7], "options": {"bias": True, "classToken": True}},
        "pos": {"module": "LearnedPositionalEmbedding", "args": [17, d], "options": {"batchFirst": True}},
        "encoder": {"module": "TransformerEncoder",
                    "layer": {"args": [d, 4], "options": layer_opts(64, "gelu", 1e-6, True, True)},
                    "numLayers": 2, "norm": ln_spec(d, 1e-6)},
        "head": {"module": "Linear", "args": [d, 10], "options": {"bias": True}},
        "inputs": ["images"], "forward": {}, "atol": TOL_LAYER[0], "rtol": TOL_LAYER[1],
        "note": "features = encoder(pos(patch(images))) (2, 17, 32); output = head(features[:, 0]) (2, 10)",
    }
    images = torch.rand(2, 1, 28, 28, generator=g) * 2 - 1
    return spec, collections.OrderedDict(images=images)


def ids(g, n_embeddings, *shape, force=None):
    t = torch.randint(0, n_embeddings, shape, generator=g, dtype=torch.int64)
    if force is not None:
        t.view(-1)[::3] = force
    return t


def cases():
    """(name, builder(g) -> (spec, inputs)[, seed name]) in output order."""
    L = collections.OrderedDict
    c = []
    # -- leaf modules ---------------------------------------------------------------------------
    c.append(("linear_bias", lambda g: leaf("Linear", [8, 12], {"bias": True}, L(x=randn(g, 2, 3, 8)))))
    c.append(("linear_nobias_2d", lambda g: leaf("Linear", [16, 5], {"bias": False}, L(x=randn(g, 4, 16)))))
    c.append(("linear_1d", lambda g: leaf("Linear", [9, 3], {"bias": True}, L(x=randn(g, 9)))))
    c.append(("layernorm_affine", lambda g: leaf(
        "LayerNorm", [16], {"eps": 1e-5, "elementwiseAffine": True}, L(x=randn(g, 2, 3, 16, std=2.0) + 0.7))))
    c.append(("layernorm_noaffine_eps", lambda g: leaf(
        "LayerNorm", [12], {"eps": 1e-2, "elementwiseAffine": False}, L(x=randn(g, 3, 12, std=0.3) - 1.5),
        note="eps 1e-2 large enough to matter for inputs of std 0.3")))
    c.append(("embedding", lambda g: leaf("Embedding", [20, 8], {}, L(ids=ids(g, 20, 2, 5)))))
    c.append(("embedding_padding_idx", lambda g: leaf(
        "Embedding", [11, 16], {"paddingIdx": 0}, L(ids=ids(g, 11, 3, 4, force=0)),
        note="weight row paddingIdx is random here: at load it is just a weight (torch zeroes it only at init)")))
    c.append(("relu", lambda g: leaf("ReLU", [], {}, L(x=torch.cat([randn(g, 2, 3, 7).view(-1), torch.zeros(3)]).view(3, 15)))))
    c.append(("gelu", lambda g: leaf("GELU", [], {"approximate": "none"}, L(x=torch.linspace(-6, 6, 27).view(3, 9) + randn(g, 3, 9, std=0.1)))))
    c.append(("gelu_tanh", lambda g: leaf("GELU", [], {"approximate": "tanh"}, L(x=torch.linspace(-6, 6, 27).view(3, 9) + randn(g, 3, 9, std=0.1)))))
    c.append(("sinusoidal_pe_seqfirst", lambda g: leaf(
        "SinusoidalPositionalEncoding", [16], {"maxLen": 32, "batchFirst": False}, L(x=randn(g, 7, 2, 16)))))
    c.append(("sinusoidal_pe_batchfirst_long", lambda g: leaf(
        "SinusoidalPositionalEncoding", [8], {"maxLen": 64, "batchFirst": True}, L(x=randn(g, 3, 50, 8)),
        note="table computed in float32 as the tutorial does; positions up to 49 "
             "(a float64 table differs from it by < 1e-6)")))
    c.append(("learned_pe_batchfirst", lambda g: leaf(
        "LearnedPositionalEmbedding", [10, 16], {"batchFirst": True}, L(x=randn(g, 2, 6, 16)))))
    c.append(("learned_pe_seqfirst", lambda g: leaf(
        "LearnedPositionalEmbedding", [12, 8], {"batchFirst": False}, L(x=randn(g, 5, 3, 8)))))
    c.append(("patch_embed_p4", lambda g: leaf(
        "PatchEmbedding", [3, 16, 4], {"bias": True, "classToken": False}, L(images=randn(g, 2, 3, 8, 12)))))
    c.append(("patch_embed_cls_nondivisible", lambda g: leaf(
        "PatchEmbedding", [2, 8, 3], {"bias": True, "classToken": True}, L(images=randn(g, 1, 2, 10, 11)),
        note="H=10, W=11, patch 3: conv floors to 3x3 patches; output (1, 10, 8)")))
    c.append(("patch_embed_1x1_nobias", lambda g: leaf(
        "PatchEmbedding", [4, 8, 1], {"bias": False, "classToken": False}, L(images=randn(g, 2, 4, 3, 5)),
        note="DETR-style 1x1 projection; output (2, 15, 8)")))
    # -- encoder layers -------------------------------------------------------------------------
    c.append(("enc_layer_post_relu_bf", lambda g: enc_layer_case(g, 16, 4, layer_opts(24, "relu", 1e-5, True, False), 2, 5)))
    c.append(("enc_layer_post_gelu_sf_causal_float", lambda g: enc_layer_case(
        g, 16, 2, layer_opts(32, "gelu", 1e-5, False, False), 2, 6, "causal_float")))
    c.append(("enc_layer_pre_relu_bf_boolmask_kpm", lambda g: enc_layer_case(
        g, 12, 3, layer_opts(40, "relu", 1e-6, True, True), 3, 7, "bool", "right")))
    c.append(("enc_layer_pre_gelu_sf_float3d_mask", lambda g: enc_layer_case(
        g, 8, 2, layer_opts(16, "gelu", 1e-5, False, True), 2, 5, "float3d",
        note="srcMask (N*nhead, L, S) with some -inf")))
    c.append(("enc_layer_post_gelu_bf_floatmask_kpm_eps", lambda g: enc_layer_case(
        g, 32, 8, layer_opts(48, "gelu", 1e-3, True, False), 3, 9, "float", "random",
        note="float mask plus a non-contiguous bool key padding mask; layerNormEps 1e-3")))
    c.append(("enc_layer_causal_bool_kpm_sf", lambda g: enc_layer_case(
        g, 16, 4, layer_opts(20, "relu", 1e-5, False, False), 2, 6, "causal_bool", "right")))
    c.append(("enc_layer_len1_batch1", lambda g: enc_layer_case(
        g, 8, 2, layer_opts(12, "gelu", 1e-5, True, True), 1, 1)))
    # -- decoder layers -------------------------------------------------------------------------
    c.append(("dec_layer_post_relu_bf", lambda g: dec_layer_case(g, 16, 4, layer_opts(24, "relu", 1e-5, True, False), 2, 5, 7)))
    c.append(("dec_layer_post_gelu_sf_causal_memkpm", lambda g: dec_layer_case(
        g, 16, 2, layer_opts(32, "gelu", 1e-5, False, False), 2, 6, 4, tgt_mask="causal_float", mem_kpm="right")))
    c.append(("dec_layer_pre_relu_bf_allmasks", lambda g: dec_layer_case(
        g, 12, 3, layer_opts(20, "relu", 1e-6, True, True), 3, 5, 8, tgt_mask="causal_bool",
        memory_mask="bool", tgt_kpm="right", mem_kpm="random")))
    c.append(("dec_layer_pre_gelu_sf_floatmasks", lambda g: dec_layer_case(
        g, 8, 2, layer_opts(16, "gelu", 1e-4, False, True), 2, 4, 6, tgt_mask="float", memory_mask="float",
        note="non-causal float tgtMask and float memoryMask (T, S), with some -inf")))
    c.append(("dec_layer_post_bool3d_tgtmask_bf", lambda g: dec_layer_case(
        g, 16, 4, layer_opts(24, "gelu", 1e-5, True, False), 2, 3, 5, tgt_mask="bool3d", mem_kpm="right",
        note="tgtMask (N*nhead, T, T) bool")))
    c.append(("dec_layer_decode_step_t1", lambda g: dec_layer_case(
        g, 16, 4, layer_opts(32, "relu", 1e-5, True, True), 3, 1, 6, mem_kpm="random",
        note="T = 1 (one decoding step)")))
    # -- stacks ---------------------------------------------------------------------------------
    c.append(("enc_stack2_post_norm_kpm_bf", lambda g: enc_stack_case(
        g, 16, 4, layer_opts(32, "relu", 1e-5, True, False), 2, ln_spec(16), 3, 6, kpm="right",
        note="the case torch 1.13 would run on nested tensors under no_grad (zeros at padded rows)")))
    c.append(("enc_stack3_pre_nonorm_sf_causal", lambda g: enc_stack_case(
        g, 16, 2, layer_opts(24, "gelu", 1e-5, False, True), 3, None, 2, 7, mask="causal_float")))
    c.append(("enc_stack2_post_nonorm_boolmask_kpm_bf", lambda g: enc_stack_case(
        g, 12, 3, layer_opts(16, "gelu", 1e-6, True, False), 2, None, 2, 8, mask="bool", kpm="random")))
    c.append(("enc_stack2_pre_norm_eps_sf_kpm", lambda g: enc_stack_case(
        g, 8, 2, layer_opts(16, "relu", 1e-3, False, True), 2, ln_spec(8, 1e-3), 3, 5, kpm="right")))
    c.append(("dec_stack2_post_norm_bf", lambda g: dec_stack_case(
        g, 16, 4, layer_opts(32, "relu", 1e-5, True, False), 2, ln_spec(16), 2, 5, 7,
        tgt_mask="causal_float", tgt_kpm="right", mem_kpm="right")))
    c.append(("dec_stack3_pre_nonorm_sf", lambda g: dec_stack_case(
        g, 12, 2, layer_opts(24, "gelu", 1e-5, False, True), 3, None, 2, 4, 6,
        tgt_mask="causal_bool", memory_mask="bool")))
    # -- full nn.Transformer -------------------------------------------------------------------
    tf_opts = lambda bf: layer_opts(64, "relu", 1e-5, bf, False)  # noqa: E731
    c.append(("transformer_sf", lambda g: transformer_case(g, 32, 4, 2, 2, tf_opts(False), 2, 7, 5)))
    c.append(("transformer_bf", lambda g: transformer_case(g, 32, 4, 2, 2, tf_opts(True), 3, 6, 4)))
    c.append(("transformer_pre_gelu_bf_masks", lambda g: transformer_case(
        g, 16, 2, 2, 2, layer_opts(32, "gelu", 1e-6, True, True), 2, 5, 6, src_mask="bool", memory_mask="float",
        note="pre-norm, gelu, layerNormEps 1e-6, with srcMask (bool) and memoryMask (float)")))
    # Same seed as transformer_bf: same inputs and same f32 weights before rounding.
    c.append(("transformer_bf_f16", lambda g: transformer_case(
        g, 32, 4, 2, 2, tf_opts(True), 3, 6, 4, param_dtype="F16"), "transformer_bf"))
    c.append(("transformer_bf_bf16", lambda g: transformer_case(
        g, 32, 4, 2, 2, tf_opts(True), 3, 6, 4, param_dtype="BF16"), "transformer_bf"))
    # -- composite ------------------------------------------------------------------------------
    c.append(("vit_tiny", vit_tiny_case))
    return c


# ----------------------------------------------------------------------------------------------
# Generate, write, verify
# ----------------------------------------------------------------------------------------------

PARAM_DTYPES = {"F16": torch.float16, "BF16": torch.bfloat16}


def make_case(name, builder, seed_name=None):
    """-> (spec, OrderedDict of tensors to store)."""
    g = gen_for(seed_name or name)
    spec, inputs = builder(g)
    spec = dict(name=name, **spec)
    module = build(spec)
    randomize(module, g)
    module.eval()
    params = collections.OrderedDict(module.named_parameters())
    assert list(module.state_dict()) == list(params), (name, "state_dict has buffers")
    pdt = PARAM_DTYPES.get(spec.get("paramDtype"))
    if pdt is not None:   # torch computes with the stored (rounded) weights
        with torch.no_grad():
            for p in params.values():
                p.copy_(p.to(pdt).float())
    assert torch.is_grad_enabled() and all(p.requires_grad for p in params.values())
    outputs = call(module, spec, inputs)
    tensors = collections.OrderedDict()
    for k, p in params.items():
        tensors["param." + k] = p.detach().to(pdt) if pdt is not None else p.detach()
    for k, t in inputs.items():
        assert t.dtype in (torch.float32, torch.bool, torch.int64), (name, k, t.dtype)
        tensors["input." + k] = t
    for k, t in outputs.items():
        t = t.detach()
        assert t.dtype == torch.float32 and torch.isfinite(t).all(), (name, k)
        tensors["expected." + k] = t
    return spec, tensors


def verify(path):
    """Replay a file from its metadata alone (what the JS harness does) with torch: build the
    module from "case", load the params strictly, run, compare with expected.* at the case's
    tolerance (here it must be bit-exact up to f32 summation-order noise)."""
    tensors, meta = load_safetensors(path)
    spec = json.loads(meta["case"])
    module = build(spec)
    state = {k[len("param."):]: v.float() for k, v in tensors.items() if k.startswith("param.")}
    module.load_state_dict(state, strict=True)
    module.eval()
    inputs = {k[len("input."):]: v for k, v in tensors.items() if k.startswith("input.")}
    got = call(module, spec, inputs)
    expected = {k[len("expected."):]: v for k, v in tensors.items() if k.startswith("expected.")}
    assert set(got) == set(expected), (path, sorted(got), sorted(expected))
    for k, e in expected.items():
        diff = (got[k].detach() - e).abs()
        assert (diff <= spec["atol"] + spec["rtol"] * e.abs()).all(), (path, k, diff.max().item())
        assert diff.max().item() <= 1e-6 * max(1.0, e.abs().max().item()), (path, k, diff.max().item())
    return spec


def check_sinusoidal_f64():
    """How far the tutorial's float32 table is from a float64 one (bounds the PE tolerance)."""
    worst = 0.0
    for d, max_len in ((16, 32), (8, 64)):
        pe32 = SinusoidalPositionalEncoding(d, max_len).pe[:, 0].double()
        pos = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
        div = torch.exp(torch.arange(0, d, 2, dtype=torch.float64) * (-math.log(10000.0) / d))
        pe64 = torch.zeros(max_len, d, dtype=torch.float64)
        pe64[:, 0::2] = torch.sin(pos * div)
        pe64[:, 1::2] = torch.cos(pos * div)
        worst = max(worst, (pe32 - pe64).abs().max().item())
    assert worst < 1e-6, worst   # well inside TOL_ELEMENTWISE
    return worst


def main():
    torch.set_num_threads(1)
    torch.set_grad_enabled(True)
    os.makedirs(OUT_DIR, exist_ok=True)
    pe_err = check_sinusoidal_f64()
    known = set()
    total = 0
    rows = []
    for name, builder, *seed_name in cases():
        assert name not in known, name
        known.add(name)
        spec, tensors = make_case(name, builder, *seed_name)
        metadata = {"case": json.dumps(spec, separators=(",", ":"), allow_nan=False),
                    "generator": GENERATOR, "torch": torch.__version__}
        path = os.path.join(OUT_DIR, name + ".safetensors")
        size = save_safetensors(tensors, path, metadata, float_dtype=None)
        verify(path)
        total += size
        rows.append((name, spec["module"] + ("/" + spec["paramDtype"] if "paramDtype" in spec else ""), size))
    stale = [f for f in os.listdir(OUT_DIR) if f.endswith(".safetensors") and f[:-len(".safetensors")] not in known]
    for f in stale:
        print(f"warning: stale file not made by this script: {f}", file=sys.stderr)
    w = max(len(r[0]) for r in rows)
    for name, module, size in rows:
        print(f"{name:<{w}}  {module:<30} {size:>8} B")
    print(f"{len(rows)} cases, total {total} B ({total / 1024:.1f} KiB) in {os.path.relpath(OUT_DIR)}; "
          f"all replayed from metadata OK; sinusoidal f32 table vs f64: {pe_err:.2e}")


if __name__ == "__main__":
    main()
