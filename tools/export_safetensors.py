#!/usr/bin/python3
"""Write (and read back) PyTorch tensors in the safetensors format, with no pip package.

Importable module and CLI. It writes the files attnwasm loads (src/io/safetensors.h is the
reader); it is not a general converter (no sharding, no memory mapping, no tied-weight dedup).
Run with Debian's torch: `/usr/bin/python3 tools/export_safetensors.py --help`.

The format (all integers little-endian), as the reference implementation (safetensors, Rust)
writes it:
  bytes [0, 8)        N: uint64, the header length in bytes (padding included)
  bytes [8, 8 + N)    header: UTF-8 JSON object
                        {"__metadata__": {"<key>": "<string>", ...},          (optional)
                         "<tensor name>": {"dtype": "F32", "shape": [2, 3],
                                           "data_offsets": [begin, end]}, ...}
                      right-padded with spaces (0x20) so that 8 + N is a multiple of 8
  bytes [8 + N, end)  data: each tensor row-major, little-endian, at [8 + N + begin, 8 + N + end)
This writer lays the tensors out contiguously, with no holes, in the order of the dict it is
given; the header lists "__metadata__" first, then the tensors in that same order.
dtypes: F64 F32 F16 BF16 I64 I32 I16 I8 U8 BOOL (BOOL is one byte, 0 or 1).

API (who owns what: every function returns fresh CPU tensors / dicts owned by the caller):
  save_safetensors(tensors, path, metadata=None, float_dtype="F32") -> bytes written
  export_module(module, path, config=None, float_dtype="F32")       -> bytes written
  export_seq2seq(path, transformer, src_embed, tgt_embed, generator, src_vocab, tgt_vocab, eos,
                 start_tokens, max_len, ...)  -> bytes written (aw.loadModel: a Translator)
  export_vit(path, patch_proj, cls_token, pos_embedding, encoder, head, image_size, ...)
                                                                    -> bytes written (a Classifier)
  export_causal_lm(path, model_or_state_dict, config, dtype="F32", tokenizer=None)
                                    -> bytes written (a Llama/Qwen2 causal LM, HF names; config.json beside)
  load_safetensors(path) -> (dict name -> torch.Tensor, metadata dict)
  self_test()  (CLI: --self-test)
"""

import argparse
import collections
import json
import math
import os
import struct
import sys

import numpy as np
import torch

# safetensors dtype name -> (torch dtype, little-endian numpy dtype used for the raw bytes).
# BF16 has no numpy type: its bytes go through int16 and a torch bit-view.
_DTYPES = collections.OrderedDict([
    ("F64", (torch.float64, "<f8")),
    ("F32", (torch.float32, "<f4")),
    ("F16", (torch.float16, "<f2")),
    ("BF16", (torch.bfloat16, "<i2")),
    ("I64", (torch.int64, "<i8")),
    ("I32", (torch.int32, "<i4")),
    ("I16", (torch.int16, "<i2")),
    ("I8", (torch.int8, "i1")),
    ("U8", (torch.uint8, "u1")),
    ("BOOL", (torch.bool, "?")),
])
_TORCH_TO_ST = {td: name for name, (td, _) in _DTYPES.items()}
_FLOAT_DTYPES = ("F32", "F16", "BF16")

# The reference implementation refuses headers larger than this.
MAX_HEADER_BYTES = 100_000_000


def _st_dtype_for(t, float_dtype):
    """The safetensors dtype a tensor is stored as (see save_safetensors)."""
    if t.is_floating_point():
        if float_dtype is None:
            if t.dtype not in _TORCH_TO_ST:
                raise TypeError(f"unsupported float dtype {t.dtype}")
            return _TORCH_TO_ST[t.dtype]
        return float_dtype
    if t.is_complex():
        raise TypeError(f"complex tensors are not supported (got {t.dtype})")
    if t.dtype not in _TORCH_TO_ST:
        raise TypeError(f"unsupported dtype {t.dtype}")
    return _TORCH_TO_ST[t.dtype]


def _tensor_bytes(t, st_dtype):
    """Raw little-endian bytes of tensor t converted to st_dtype."""
    torch_dtype, np_dtype = _DTYPES[st_dtype]
    t = t.detach().to("cpu").to(torch_dtype).contiguous()
    if st_dtype == "BF16":
        # torch 1.13 cannot hand bfloat16 to numpy: reinterpret the 2-byte pattern as int16.
        arr = t.view(torch.int16).numpy()
    else:
        arr = t.numpy()
    return np.ascontiguousarray(arr).astype(np_dtype, copy=False).tobytes()


def _encode_header(header):
    """JSON header bytes, padded with spaces to make 8 + N a multiple of 8."""
    raw = json.dumps(header, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")
    raw += b" " * ((8 - len(raw) % 8) % 8)
    if len(raw) > MAX_HEADER_BYTES:
        raise ValueError(f"header too large: {len(raw)} bytes > {MAX_HEADER_BYTES}")
    return raw


def serialize_safetensors(tensors, metadata=None, float_dtype="F32"):
    """The file's bytes (see save_safetensors for the arguments)."""
    if float_dtype is not None and float_dtype not in _FLOAT_DTYPES:
        raise ValueError(f"float_dtype: expected one of {_FLOAT_DTYPES} or None, got {float_dtype!r}")
    header = collections.OrderedDict()
    if metadata is not None:
        for k, v in metadata.items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise TypeError(f"metadata: keys and values must be str, got {k!r}: {type(v).__name__}")
        header["__metadata__"] = dict(metadata)
    chunks = []
    offset = 0
    for name, t in tensors.items():
        if not isinstance(name, str) or name == "__metadata__":
            raise ValueError(f"invalid tensor name {name!r}")
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name}: expected a torch.Tensor, got {type(t).__name__}")
        st_dtype = _st_dtype_for(t, float_dtype)
        data = _tensor_bytes(t, st_dtype)
        header[name] = {"dtype": st_dtype, "shape": [int(s) for s in t.shape],
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    head = _encode_header(header)
    return struct.pack("<Q", len(head)) + head + b"".join(chunks)


def save_safetensors(tensors, path, metadata=None, float_dtype="F32"):
    """Write `tensors` (name -> torch.Tensor, data in dict order) to `path` as safetensors.

    Float tensors are stored as float_dtype ("F32" | "F16" | "BF16", rounded to nearest even);
    float_dtype=None keeps each float tensor's own dtype (float64/32/16, bfloat16).
    bool -> BOOL, int64 -> I64, int32 -> I32, int16 -> I16, int8 -> I8, uint8 -> U8.
    Tensors are detached, moved to CPU and made contiguous. metadata: str -> str, or None.
    Returns the number of bytes written.
    """
    blob = serialize_safetensors(tensors, metadata, float_dtype)
    with open(path, "wb") as fh:
        fh.write(blob)
    return len(blob)


def config_path_for(path):
    """The sibling config file of a .safetensors path: same name, .json extension."""
    root, ext = os.path.splitext(path)
    return (root if ext == ".safetensors" else path) + ".json"


def export_state_dict(state_dict, path, config=None, float_dtype="F32", sidecar=True):
    """Save a state dict with metadata {"format": "pt", "attnwasm.config": json(config)};
    with a config (and sidecar), also write it to config_path_for(path). Returns bytes written
    (tensors file).
    Non-tensor entries (e.g. "_extra_state" objects) are skipped with a warning on stderr."""
    tensors = collections.OrderedDict()
    for k, v in state_dict.items():
        if isinstance(v, torch.Tensor):
            tensors[k] = v
        else:
            print(f"export_safetensors: skipping non-tensor entry {k!r} ({type(v).__name__})", file=sys.stderr)
    metadata = {"format": "pt"}
    if config is not None:
        metadata["attnwasm.config"] = json.dumps(config)
        if sidecar:
            with open(config_path_for(path), "w", encoding="utf-8") as fh:
                json.dump(config, fh, indent=2, sort_keys=True)
                fh.write("\n")
    return save_safetensors(tensors, path, metadata, float_dtype)


def _layer_options(layer):
    """activation, normFirst, layerNormEps of an nn.Transformer{Encoder,Decoder}Layer (torch 1.13+)."""
    act = layer.activation
    if act is torch.nn.functional.relu or isinstance(act, torch.nn.ReLU) or act == "relu":
        activation = "relu"
    elif act is torch.nn.functional.gelu or isinstance(act, torch.nn.GELU) or act == "gelu":
        activation = "gelu"
    else:
        raise ValueError(f"activation: attnwasm runs relu or gelu layers, got {act!r}")
    if layer.linear1.bias is None or layer.norm1.bias is None:
        raise ValueError("bias: attnwasm's model families need the layers' biases (bias=True)")
    return {"activation": activation, "normFirst": bool(layer.norm_first), "layerNormEps": float(layer.norm1.eps)}


def _unique(vocab, name):
    vocab = [str(t) for t in vocab]
    if len(set(vocab)) != len(vocab) or any(not t for t in vocab):
        raise ValueError(f"{name}: expected unique non-empty tokens")
    return vocab


def export_seq2seq(path, transformer, src_embed, tgt_embed, generator, src_vocab, tgt_vocab, eos,
                   start_tokens, max_len, embed_scale=None, extra_config=None, float_dtype="F32",
                   sidecar=True):
    """Export an encoder-decoder model for aw.loadModel (the "translator" family).

    The family (src/models/translator.h) computes, for one source at a time:
      memory = transformer.encoder(src_embed(src) * embed_scale + PE[:S])
      logits = generator(transformer.decoder(tgt_embed(tgt) * embed_scale + PE[:T], memory,
                                             causal tgt mask))
    with PE the PyTorch tutorial's sinusoidal table (tools/models/train_translator.py
    sinusoidal_table) and decoding that starts from start_tokens[lang] and stops at eos.
    transformer: an nn.Transformer (batch_first or not; relu or gelu; norm_first or not; with
    biases). src_embed / tgt_embed: nn.Embedding; generator: nn.Linear(d_model, len(tgt_vocab)).
    src_vocab / tgt_vocab: token strings by id; start_tokens: {name: target id}, e.g.
    {"fr": 2} or {"out": bos_id}. embed_scale defaults to sqrt(d_model). Source text is split at
    whitespace ("sourceText": "words"); outputs are joined with spaces. Returns bytes written.
    """
    enc0 = transformer.encoder.layers[0]
    d = enc0.self_attn.embed_dim
    if generator.out_features != len(tgt_vocab) or tgt_embed.num_embeddings != len(tgt_vocab):
        raise ValueError("tgt_vocab: its length must equal tgt_embed's and generator's sizes")
    if src_embed.num_embeddings != len(src_vocab):
        raise ValueError("src_vocab: its length must equal src_embed's size")
    if transformer.encoder.norm is None or transformer.decoder.norm is None:
        raise ValueError("transformer: the family has final encoder and decoder norms (as nn.Transformer)")
    if generator.bias is None:
        raise ValueError("generator: needs a bias")
    state = collections.OrderedDict()
    state["src_embed.weight"] = src_embed.weight
    state["tgt_embed.weight"] = tgt_embed.weight
    for k, v in transformer.state_dict().items():
        state["transformer." + k] = v
    state["generator.weight"] = generator.weight
    state["generator.bias"] = generator.bias
    config = {
        "model": "translator", "dModel": d, "nhead": enc0.self_attn.num_heads,
        "numEncoderLayers": len(transformer.encoder.layers),
        "numDecoderLayers": len(transformer.decoder.layers),
        "dimFeedforward": enc0.linear1.out_features, **_layer_options(enc0),
        "maxLen": int(max_len), "embedScale": float(math.sqrt(d) if embed_scale is None else embed_scale),
        "srcVocab": _unique(src_vocab, "src_vocab"), "tgtVocab": _unique(tgt_vocab, "tgt_vocab"),
        "pad": 0, "eos": int(eos), "langTokens": {str(k): int(v) for k, v in start_tokens.items()},
        "maxSrcTokens": int(max_len), "maxTgtTokens": int(max_len) - 1,
        "sourceText": "words", "detokenize": {str(k): "space-join" for k in start_tokens},
    }
    config.update(extra_config or {})
    return export_state_dict(state, path, config, float_dtype, sidecar)


def export_vit(path, patch_proj, cls_token, pos_embedding, encoder, head, image_size, labels=None,
               mean=0.0, std=1.0, extra_config=None, float_dtype="F32", sidecar=True):
    """Export a ViT-style classifier for aw.loadModel (the "vit" family).

    The family (src/models/vit_classifier.h) computes, for one image (C, H, W) at a time:
      x = (image - mean) / std;  t = [cls_token; patch_proj(x) flattened row-major over the grid]
      logits = head(encoder(t + pos_embedding)[0])
    patch_proj: nn.Conv2d(C, d, p, stride=p) with a bias; cls_token: (1, 1, d) or (d,);
    pos_embedding: (1 + P, d) or (1, 1 + P, d), P = (image_size / p)^2; encoder: an
    nn.TransformerEncoder with a final norm; head: nn.Linear(d, classes). Returns bytes written.
    """
    p = patch_proj.kernel_size[0]
    if patch_proj.stride[0] != p or patch_proj.kernel_size[1] != p or patch_proj.bias is None:
        raise ValueError("patch_proj: expected nn.Conv2d(C, d, p, stride=p) with a bias")
    if image_size % p:
        raise ValueError(f"image_size: expected a multiple of the patch size {p}, got {image_size}")
    if encoder.norm is None:
        raise ValueError("encoder: the family has a final LayerNorm (nn.TransformerEncoder(norm=...))")
    layer = encoder.layers[0]
    d = layer.self_attn.embed_dim
    grid = image_size // p
    state = collections.OrderedDict()
    state["patch.cls_token"] = cls_token.detach().reshape(1, 1, d)
    state["patch.proj.weight"] = patch_proj.weight
    state["patch.proj.bias"] = patch_proj.bias
    state["pos.weight"] = pos_embedding.detach().reshape(grid * grid + 1, d)
    for k, v in encoder.state_dict().items():
        state["encoder." + k] = v
    state["head.weight"] = head.weight
    state["head.bias"] = head.bias
    config = {
        "model": "vit", "imageSize": int(image_size), "patchSize": int(p),
        "inChannels": patch_proj.in_channels, "dModel": d, "nhead": layer.self_attn.num_heads,
        "numLayers": len(encoder.layers), "dimFeedforward": layer.linear1.out_features,
        **_layer_options(layer), "numClasses": head.out_features,
        "labels": [str(x) for x in (labels or range(head.out_features))],
        "mean": float(mean), "std": float(std),
    }
    config.update(extra_config or {})
    return export_state_dict(state, path, config, float_dtype, sidecar)


CAUSAL_LM_CONFIG_KEY = "hf_config"


def _check_chars_tokenizer(tok, vocab_size):
    """A "chars" tokenizer (see export_causal_lm): one string per id, unique, non-empty."""
    vocab = tok.get("vocab")
    if not isinstance(vocab, list) or len(vocab) != vocab_size:
        raise ValueError(f"tokenizer.vocab: expected a list of {vocab_size} strings (vocab_size), "
                         f"got {type(vocab).__name__} of {len(vocab) if isinstance(vocab, list) else '?'}")
    if any(not isinstance(t, str) or not t for t in vocab) or len(set(vocab)) != len(vocab):
        raise ValueError("tokenizer.vocab: expected unique non-empty strings")
    special = tok.get("special", [])
    if not isinstance(special, list) or any(not isinstance(i, int) or not 0 <= i < vocab_size for i in special):
        raise ValueError(f"tokenizer.special: expected a list of ids in [0, {vocab_size})")
    for i, t in enumerate(vocab):
        if i not in special and len(t) != 1:
            raise ValueError(f"tokenizer.vocab[{i}]: expected one character (or an id listed in "
                             f"tokenizer.special), got {t!r}")
    for key in ("bos", "eos"):
        if tok.get(key) is not None and tok[key] not in special:
            raise ValueError(f"tokenizer.{key}: expected an id listed in tokenizer.special, got {tok[key]!r}")


def export_causal_lm(path, model_or_state_dict, config, dtype="F32", tokenizer=None, sidecar=True,
                     attention_window=None):
    """Export a Llama / Qwen2-style decoder-only causal LM for aw.loadModel (the "causal_lm" family).

    model_or_state_dict: an nn.Module whose state_dict (or a dict) has Hugging Face's names
      (model.embed_tokens.weight, model.layers.{i}.self_attn.{q,k,v,o}_proj.{weight,bias},
      model.layers.{i}.mlp.{gate,up,down}_proj.weight, model.layers.{i}.{input,post_attention}_layernorm.weight,
      model.norm.weight, lm_head.weight) -- tools/causal_lm.py's CausalLM, or a HF model's state_dict.
    config: the HF config.json dict (model_type "llama" | "qwen2", vocab_size, hidden_size, ...),
      validated by tools/causal_lm.py config_from_hf (rope_scaling, sliding windows, another
      hidden_act are refused). Keys it lacks are filled with HF's (hf_config_dict); torch_dtype is
      set to the stored dtype.
    dtype: "F32" | "F16" | "BF16" for every tensor.
    tokenizer: None, or {"type": "chars", "vocab": [one string per id], "special": [ids],
      "bos": id | None, "eos": id | None, "unknown": "refuse" | "skip"} (a character-level vocabulary:
      every id not in special is one Unicode character; text is encoded character by character).
    attention_window: None, or the number of keys (itself and those before it) each query attends to that the
      model was trained with, the default of generate() ("attentionWindow" in the metadata; tools/causal_lm.py
      CausalLM(config, attention_window=n) is its reference).
    File: the HF tensors in HF's order (tie_word_embeddings: no lm_head.weight, as HF writes it);
      metadata {"format": "pt", "attnwasm.config": JSON {"model": "causal_lm", "hf_config": {...},
      "tokenizer": {...}?}}. With sidecar, also writes config.json (exactly the hf_config, as HF's
      save_pretrained formats it: indent 2, sorted keys) in the same folder. Returns bytes written.
    """
    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path:
        sys.path.insert(0, here)
    import causal_lm  # noqa: E402  (tools/causal_lm.py)

    if dtype not in _FLOAT_DTYPES:
        raise ValueError(f"dtype: expected one of {_FLOAT_DTYPES}, got {dtype!r}")
    cfg = causal_lm.config_from_hf(config)
    torch_dtype = {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}[dtype]
    hf = causal_lm.hf_config_dict(cfg, torch_dtype=torch_dtype)
    hf.update(config)
    hf["torch_dtype"] = torch_dtype
    sd = model_or_state_dict.state_dict() if isinstance(model_or_state_dict, torch.nn.Module) \
        else collections.OrderedDict(model_or_state_dict)
    want = causal_lm.expected_param_shapes(cfg)
    if cfg.tie_word_embeddings and "lm_head.weight" in sd:
        if not torch.equal(sd["lm_head.weight"], sd.get("model.embed_tokens.weight", torch.empty(0))):
            raise ValueError("lm_head.weight: tie_word_embeddings is true but lm_head.weight differs "
                             "from model.embed_tokens.weight")
    tensors = collections.OrderedDict()
    for k, shape in want.items():
        if k not in sd:
            raise ValueError(f"{k}: missing (expected shape {tuple(shape)})")
        if tuple(sd[k].shape) != tuple(shape):
            raise ValueError(f"{k}: expected shape {tuple(shape)}, got {tuple(sd[k].shape)}")
        tensors[k] = sd[k]
    extra = [k for k in sd if k not in want and not (k == "lm_head.weight" and cfg.tie_word_embeddings)
             and not causal_lm.IGNORED_KEYS.fullmatch(k)]
    if extra:
        raise ValueError(f"{extra[0]}: not a parameter of this configuration "
                         f"(model_type {cfg.model_type}, attention_bias {cfg.attention_bias}, "
                         f"mlp_bias {cfg.mlp_bias}, tie_word_embeddings {cfg.tie_word_embeddings})")
    aw_config = collections.OrderedDict([("model", "causal_lm"), (CAUSAL_LM_CONFIG_KEY, hf)])
    if tokenizer is not None:
        if not isinstance(tokenizer, dict) or tokenizer.get("type") != "chars":
            raise ValueError(f"tokenizer: expected {{\"type\": \"chars\", ...}}, got {tokenizer!r:.80}")
        _check_chars_tokenizer(tokenizer, cfg.vocab_size)
        aw_config["tokenizer"] = tokenizer
    if attention_window is not None:
        if not isinstance(attention_window, int) or isinstance(attention_window, bool) or attention_window < 1:
            raise ValueError(f"attention_window: expected a positive integer, got {attention_window!r}")
        aw_config["attentionWindow"] = attention_window
    metadata = {"format": "pt", "attnwasm.config": json.dumps(aw_config, ensure_ascii=False)}
    if sidecar:
        with open(os.path.join(os.path.dirname(os.path.abspath(path)), "config.json"), "w",
                  encoding="utf-8") as fh:
            fh.write(hf_config_json(hf))
    return save_safetensors(tensors, path, metadata, dtype)


def hf_config_json(hf_config):
    """config.json text as HF's PretrainedConfig.to_json_string writes it (indent 2, sorted keys)."""
    return json.dumps(hf_config, indent=2, sort_keys=True) + "\n"


def export_module(module, path, config=None, float_dtype="F32"):
    """Save module.state_dict() (exact torch keys, buffers included) to `path`; see
    export_state_dict for the metadata and the sibling .json config. Returns bytes written."""
    return export_state_dict(module.state_dict(), path, config, float_dtype)


def load_safetensors(path):
    """Read a safetensors file -> (OrderedDict name -> CPU torch.Tensor in header order, metadata).

    Validates what the writer guarantees: known dtypes, exact byte sizes, tensors covering the
    data buffer with no holes or overlaps. F16/BF16 come back as torch.float16/bfloat16.
    """
    with open(path, "rb") as fh:
        blob = fh.read()
    if len(blob) < 8:
        raise ValueError(f"{path}: file too short ({len(blob)} bytes)")
    (n,) = struct.unpack("<Q", blob[:8])
    if n > MAX_HEADER_BYTES or 8 + n > len(blob):
        raise ValueError(f"{path}: header length {n} does not fit the file ({len(blob)} bytes)")
    header = json.loads(blob[8:8 + n].decode("utf-8"), object_pairs_hook=collections.OrderedDict)
    metadata = header.pop("__metadata__", None) or {}
    data = blob[8 + n:]
    spans = []
    out = collections.OrderedDict()
    for name, info in header.items():
        if set(info) != {"dtype", "shape", "data_offsets"}:
            raise ValueError(f"{path}: {name}: unexpected fields {sorted(info)}")
        st_dtype = info["dtype"]
        if st_dtype not in _DTYPES:
            raise ValueError(f"{path}: {name}: unknown dtype {st_dtype!r}")
        torch_dtype, np_dtype = _DTYPES[st_dtype]
        shape = [int(s) for s in info["shape"]]
        begin, end = (int(x) for x in info["data_offsets"])
        numel = int(np.prod(shape, dtype=np.int64)) if shape else 1
        if end - begin != numel * np.dtype(np_dtype).itemsize or not 0 <= begin <= end <= len(data):
            raise ValueError(f"{path}: {name}: data_offsets {[begin, end]} do not match {st_dtype} {shape}")
        arr = np.frombuffer(data, dtype=np_dtype, count=numel, offset=begin).copy()
        t = torch.from_numpy(arr)
        if st_dtype == "BF16":
            t = t.view(torch.bfloat16)
        out[name] = t.reshape(shape)
        spans.append((begin, end, name))
    pos = 0
    for begin, end, name in sorted(spans):
        if begin != pos:
            raise ValueError(f"{path}: {name}: hole or overlap at byte {pos} (tensor starts at {begin})")
        pos = end
    if pos != len(data):
        raise ValueError(f"{path}: {len(data) - pos} trailing bytes after the last tensor")
    return out, dict(metadata)


def load_checkpoint(path):
    """A state dict from a torch.save'd state dict, nn.Module, or {"state_dict"/"model": ...}."""
    obj = torch.load(path, map_location="cpu")
    if isinstance(obj, torch.nn.Module):
        return obj.state_dict()
    if isinstance(obj, dict):
        if obj and all(isinstance(v, torch.Tensor) for v in obj.values()):
            return obj
        for key in ("state_dict", "model_state_dict", "model"):
            inner = obj.get(key)
            if isinstance(inner, torch.nn.Module):
                return inner.state_dict()
            if isinstance(inner, dict):
                return inner
        return obj  # mixed dict: export_state_dict skips non-tensors with a warning
    raise TypeError(f"{path}: expected a state dict or an nn.Module, got {type(obj).__name__}")


def self_test():
    """Round-trip random tensors of every dtype through a temp file; raise AssertionError on
    any difference. Also checks the byte layout (alignment, order, contiguity) directly."""
    import tempfile
    g = torch.Generator().manual_seed(1234)
    tensors = collections.OrderedDict([
        ("f32", torch.randn(3, 5, generator=g)),
        ("f32_noncontig", torch.randn(4, 6, generator=g).t()),
        ("f32_scalar", torch.tensor(2.5)),
        ("f32_empty", torch.zeros(0, 3)),
        ("f32_special", torch.tensor([float("inf"), float("-inf"), -0.0, 1e-40, 3.0e38])),
        ("f64", torch.randn(2, 3, dtype=torch.float64, generator=g)),
        ("f16", torch.randn(7, generator=g).half()),
        ("bf16", torch.randn(2, 2, 3, generator=g).bfloat16()),
        ("bool", torch.rand(3, 4, generator=g) > 0.5),
        ("i64", torch.randint(-2 ** 62, 2 ** 62, (5,), generator=g, dtype=torch.int64)),
        ("i32", torch.randint(-2 ** 31, 2 ** 31 - 1, (2, 3), generator=g, dtype=torch.int32)),
        ("i16", torch.randint(-2 ** 15, 2 ** 15 - 1, (4,), generator=g, dtype=torch.int16)),
        ("i8", torch.randint(-128, 127, (3,), generator=g, dtype=torch.int8)),
        ("u8", torch.randint(0, 255, (1, 9), generator=g, dtype=torch.uint8)),
    ])
    meta = {"case": json.dumps({"a": [1, 2]}), "unicode": "d\u00e9j\u00e0 vu"}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "t.safetensors")
        # 1. keep dtypes: exact round trip of every dtype.
        size = save_safetensors(tensors, path, meta, float_dtype=None)
        assert size == os.path.getsize(path)
        back, meta2 = load_safetensors(path)
        assert meta2 == meta, (meta2, meta)
        assert list(back) == list(tensors), "header order must be the dict order"
        for k, t in tensors.items():
            b = back[k]
            assert b.dtype == t.dtype and b.shape == t.shape, (k, b.dtype, t.dtype, b.shape, t.shape)
            assert torch.equal(b, t), k
            if t.is_floating_point():  # torch.equal treats -0.0 == 0.0: check signs too
                assert torch.equal(torch.signbit(b), torch.signbit(t)), k
        # 2. byte layout: aligned data start, space padding, metadata first, contiguous data.
        with open(path, "rb") as fh:
            blob = fh.read()
        (n,) = struct.unpack("<Q", blob[:8])
        assert (8 + n) % 8 == 0, n
        text = blob[8:8 + n].decode("utf-8")
        assert text.rstrip(" ").endswith("}") and text.startswith('{"__metadata__"'), text[:40]
        hdr = json.loads(text, object_pairs_hook=collections.OrderedDict)
        pos = 0
        for k in tensors:
            begin, end = hdr[k]["data_offsets"]
            assert begin == pos, (k, begin, pos)
            pos = end
        assert 8 + n + pos == len(blob)
        # 3. float_dtype conversion: floats stored rounded, others untouched.
        for fd, td in (("F32", torch.float32), ("F16", torch.float16), ("BF16", torch.bfloat16)):
            save_safetensors(tensors, path, None, float_dtype=fd)
            back, meta3 = load_safetensors(path)
            assert meta3 == {}
            for k, t in tensors.items():
                if t.is_floating_point():
                    assert back[k].dtype == td, (fd, k, back[k].dtype)
                    assert torch.equal(back[k], t.to(td)), (fd, k)
                else:
                    assert torch.equal(back[k], t), (fd, k)
        # 4. a tiny file compared byte for byte with a hand-built one.
        save_safetensors({"x": torch.tensor([1.0, -2.0])}, path)
        head = b'{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}'
        head += b" " * ((8 - len(head) % 8) % 8)
        want = struct.pack("<Q", len(head)) + head + struct.pack("<2f", 1.0, -2.0)
        with open(path, "rb") as fh:
            assert fh.read() == want
        # 5. export_module: exact keys, metadata, sibling config.
        m = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.LayerNorm(4))
        cfg = {"dModel": 4}
        export_module(m, os.path.join(tmp, "m.safetensors"), cfg, float_dtype="BF16")
        back, meta4 = load_safetensors(os.path.join(tmp, "m.safetensors"))
        assert list(back) == list(m.state_dict()), list(back)
        assert meta4 == {"format": "pt", "attnwasm.config": json.dumps(cfg)}
        with open(os.path.join(tmp, "m.json"), encoding="utf-8") as fh:
            assert json.load(fh) == cfg
        for k, v in m.state_dict().items():
            assert torch.equal(back[k], v.bfloat16()), k
        # 6. export_causal_lm: HF names, tied head omitted, metadata and config.json.
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import causal_lm
        cfg = {"model_type": "qwen2", "vocab_size": 11, "hidden_size": 8, "intermediate_size": 12,
               "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1,
               "tie_word_embeddings": True}
        lm = causal_lm.CausalLM(cfg)
        tok = {"type": "chars", "vocab": ["<eos>"] + list("abcdefghij"), "special": [0], "bos": 0, "eos": 0}
        p = os.path.join(tmp, "lm.safetensors")
        export_causal_lm(p, lm, cfg, dtype="BF16", tokenizer=tok)
        back, meta5 = load_safetensors(p)
        assert list(back) == list(causal_lm.expected_param_shapes(lm.cfg)) and "lm_head.weight" not in back
        awc = json.loads(meta5["attnwasm.config"])
        assert awc["model"] == "causal_lm" and awc["tokenizer"] == tok and awc["hf_config"]["torch_dtype"] == "bfloat16"
        with open(os.path.join(tmp, "config.json"), encoding="utf-8") as fh:
            assert json.load(fh) == awc["hf_config"]
        for bad, msg in (({**cfg, "rope_scaling": {"type": "linear"}}, "rope_scaling"),
                         ({**cfg, "hidden_act": "gelu"}, "hidden_act")):
            try:
                export_causal_lm(p, lm, bad)
                raise AssertionError("accepted " + msg)
            except ValueError as e:
                assert msg in str(e), e
    print(f"self-test passed: {len(tensors)} tensors, dtypes "
          f"{' '.join(_DTYPES)}, float_dtype F32/F16/BF16/None, export_module, export_causal_lm")


def main(argv=None):
    p = argparse.ArgumentParser(
        description="Convert a torch.save'd state dict or nn.Module to a .safetensors file "
                    "(metadata format=pt, optional attnwasm.config; config also written as OUT.json).")
    p.add_argument("checkpoint", nargs="?", help="CHECKPOINT.pt: a state dict or an nn.Module")
    p.add_argument("out", nargs="?", help="OUT.safetensors")
    p.add_argument("--dtype", choices=_FLOAT_DTYPES, default="F32",
                   help="storage dtype of floating-point tensors (default F32)")
    p.add_argument("--config", metavar="CONFIG.json",
                   help="model config (JSON) to embed as metadata attnwasm.config and copy to OUT.json")
    p.add_argument("--self-test", action="store_true", help="round-trip every dtype and exit")
    args = p.parse_args(argv)
    if args.self_test:
        self_test()
        return 0
    if not args.checkpoint or not args.out:
        p.error("CHECKPOINT.pt and OUT.safetensors are required (or --self-test)")
    config = None
    if args.config:
        with open(args.config, encoding="utf-8") as fh:
            config = json.load(fh)
    sd = load_checkpoint(args.checkpoint)
    size = export_state_dict(sd, args.out, config, args.dtype)
    n = sum(1 for v in sd.values() if isinstance(v, torch.Tensor))
    extra = f", config {config_path_for(args.out)}" if config is not None else ""
    print(f"{args.out}: {n} tensors, {size} bytes ({args.dtype}){extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
