#!/usr/bin/python3
"""PyTorch twin of Hugging Face's BertModel, RobertaModel and XLMRobertaModel (eval mode: no dropout), and of
sentence-transformers' Pooling and Normalize modules, in torch 1.13, written from transformers' modeling_bert.py /
modeling_roberta.py (4.4x and 5.x) and sentence-transformers' models/Pooling.py, Normalize.py, Transformer.py.

The oracle for attnwasm's encoder family (issue 32; tests/data/make_encoder_goldens.py writes the goldens,
bench/export_encoder_onnx.py exports it to ONNX). Not a runtime dependency, not a tokenizer (the goldens take their
ids from bindings/tokenizer.js, checked against Hugging Face's Rust `tokenizers`) and not a general hub loader: it
reads the config.json of model_type bert / roberta / xlm-roberta as transformers 4.x and 5.x write it, refuses what it
cannot run exactly (ValueError naming "config.<key>" or the tensor), and runs at float32 or float64 (`.double()`).

Shapes: B batch, T tokens (padded), E hidden_size, H heads, D = E / H head dim, F intermediate_size, V vocab_size.

  positions  bert: p_t = t; roberta / xlm-roberta: p_t = cumsum_{s<=t}(ids_s != pad) * (ids_t != pad) + pad
             (create_position_ids_from_input_ids: real tokens 0..n-1 get pad+1 .. pad+n, pads get pad)
  x = LayerNorm_emb((word[ids] + type[token_type_ids]) + pos[p])          (B, T, E)  two float adds, in that order
  mask_add = (1 - attention_mask) * finfo(dtype).min                       (B, 1, 1, T)  keys only: pad queries
                                                                            still attend to the real keys
  per layer:
    q, k, v = x W_q^T + b_q, ...  -> (B, H, T, D)
    s = (q k^T) * D^-0.5 + mask_add                                        (B, H, T, T)  5.x eager multiplies;
                                                                            4.x eager divides by sqrt(D); SDPA (the
                                                                            default since 4.41) is a third rounding
    a = LayerNorm_1(dense_o(softmax(s) v) + x)                             post-norm, residual added inside the norm
    x = LayerNorm_2(dense_2(act(dense_1(a))) + a)                          act = hidden_act ("gelu": exact erf)
  last_hidden_state = x (every position, pads included); pooler_output = tanh(dense_p(x[:, 0])) when the file has
  pooler.dense.* (BertModel(add_pooling_layer=True)); files without one (BertForMaskedLM, RobertaForMaskedLM) have none
  (transformers would initialise a random pooler: this twin gives None).

sentence-transformers on top (Transformer -> Pooling -> Normalize), float32 as torch computes it:
  Transformer.tokenize: text.strip() (Python str.strip: Unicode whitespace), .lower() when sentence_bert_config.json
    do_lower_case, then the tokenizer with truncation to max_seq_length and padding to the batch's longest
  Pooling: see pool(); Normalize: F.normalize(p=2, dim=1), x / max(||x||_2, 1e-12)

API (every tensor returned is fresh and owned by the caller):
  config_from_hf(dict) -> EncoderConfig        validate a config.json (ValueError names "config.<key>")
  Encoder(cfg, pooler=True)                      nn.Module; state_dict keys = HF BertModel's names, no prefix
  model(input_ids, attention_mask=None, token_type_ids=None) -> (last_hidden_state, pooler_output | None)
  make_position_ids(cfg, input_ids)              the positions the embeddings use
  expected_param_shapes(cfg, pooler) / normalize_state_dict(sd, cfg) / load_state_dict_hf(sd, cfg) -> Encoder
  pooling_from_config(dict) -> PoolingConfig     1_Pooling/config.json (ValueError names "pooling.<key>")
  pool(token_embeddings, attention_mask, pooling, prompt_length=None) / normalize(x)
  read_sentence_transformers(folder) -> dict      modules.json, sentence_bert_config.json, 1_Pooling, 2_Normalize
  self-test: /usr/bin/python3 tools/bert.py
"""

import collections
import dataclasses
import json
import math
import os
import re
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

# ------------------------------------------------------------------------------------------------
# config.json
# ------------------------------------------------------------------------------------------------

MODEL_TYPES = ("bert", "roberta", "xlm-roberta")

# The class defaults of the keys the math reads (BertConfig / RobertaConfig / XLMRobertaConfig, 4.x and 5.x agree on
# these). vocab_size is left out for roberta / xlm-roberta: RobertaConfig inherited BertConfig's 30522 in 4.2x-4.3x and
# has 50265 as a standalone class later, so a file without it is refused rather than guessed.
_COMMON_DEFAULTS = dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072,
                        hidden_act="gelu", max_position_embeddings=512, type_vocab_size=2, layer_norm_eps=1e-12)
CLASS_DEFAULTS = {
    "bert": dict(_COMMON_DEFAULTS, vocab_size=30522, pad_token_id=0),
    "roberta": dict(_COMMON_DEFAULTS, pad_token_id=1),
    "xlm-roberta": dict(_COMMON_DEFAULTS, pad_token_id=1),
}
# The prefix of the base model inside a task model's file (PreTrainedModel.base_model_prefix).
BASE_PREFIX = {"bert": "bert.", "roberta": "roberta.", "xlm-roberta": "roberta."}

# model_types seen next to these on the hub, refused by name with the reason (what differs in the math or the names).
REFUSED_MODEL_TYPES = {
    "nomic_bert": "rotary positions, SwiGLU, fused Wqkv, no biases (custom code)",
    "modernbert": "RoPE, GeGLU, pre-norm, alternating local/global attention, no biases",
    "distilbert": "other tensor names (transformer.layer.i.attention.q_lin, ...), no token types, optional sinusoids",
    "camembert": "RobertaModel's math under other class names: not wired here yet",
    "electra": "embedding_size projection between the embeddings and the encoder",
    "albert": "factorised embeddings and one set of layer weights shared by all layers",
    "mpnet": "relative position bias in every attention layer",
    "deberta": "disentangled attention with relative positions",
    "deberta-v2": "disentangled attention with relative positions",
    "xlm-roberta-xl": "pre-norm layers (LayerNorm before attention and MLP)",
    "new": "Alibaba gte-*-v1.5 custom code: RoPE, GLU",
    "jina_bert": "ALiBi attention bias, GLU MLP (custom code)",
    "mosaic_bert": "ALiBi attention bias, GLU MLP (custom code)",
    "nomic_bert_moe": "mixture of experts (custom code)",
    "eurobert": "RoPE, pre-norm, SwiGLU",
    "neobert": "RoPE, pre-norm, SwiGLU",
}
# Keys of cousins that change the math; refused when present with a value BERT does not have.
REFUSED_KEYS = ("rotary_emb_base", "rotary_emb_fraction", "rope_theta", "rope_scaling", "alibi_starting_size")

# hidden_act -> activation (transformers' ACT2FN). RUNTIME_ACTIVATIONS: what config_from_hf accepts by default.
# Every BERT-family embedder named in issue 32 (all-MiniLM-L6/L12-v2, bge-small/base-en-v1.5, e5-small-v2, gte-small,
# multilingual-e5-*, paraphrase-multilingual-MiniLM, XLM-R) has "gelu", the exact erf GELU. "gelu_new" (ALBERT, GPT-2)
# and "gelu_pytorch_tanh" (Gemma) are the tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))),
# gelu_new with torch.pow in Python-float constants, gelu_pytorch_tanh as F.gelu(approximate="tanh"); they differ from
# "gelu" by up to ~5e-4 (at |x| ~ 2), so reading one as the other misses the 1e-4 tolerance.
ACTIVATIONS = {
    "gelu": lambda x: F.gelu(x),
    "gelu_new": lambda x: 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0)))),
    "gelu_pytorch_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "relu": lambda x: F.relu(x),
}
RUNTIME_ACTIVATIONS = ("gelu",)


@dataclasses.dataclass(frozen=True)
class EncoderConfig:
    model_type: str
    vocab_size: int
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    intermediate_size: int
    hidden_act: str
    max_position_embeddings: int
    type_vocab_size: int
    layer_norm_eps: float
    pad_token_id: object          # int, or None (bert only: no padding_idx)

    @property
    def head_dim(self):
        return self.hidden_size // self.num_attention_heads

    @property
    def position_offset(self):
        """The position of a sequence's first token: 0 (bert) or pad_token_id + 1 (roberta / xlm-roberta)."""
        return 0 if self.model_type == "bert" else self.pad_token_id + 1

    @property
    def max_tokens(self):
        """The longest sequence the position table holds: 512 for bert-base, 514 - 2 = 512 for roberta-base."""
        return self.max_position_embeddings - self.position_offset


def _refuse(key, msg):
    raise ValueError(f"config.{key}: {msg}")


def _int(d, key, dft, lo=1):
    v = d.get(key, dft)
    if v is None and dft is None:
        _refuse(key, "missing (no class default is the same in every transformers version)")
    if not isinstance(v, int) or isinstance(v, bool) or v < lo:
        _refuse(key, f"expected an integer >= {lo}, got {v!r}")
    return v


def config_from_hf(d, activations=RUNTIME_ACTIVATIONS):
    """Validate a config.json (dict) of model_type bert / roberta / xlm-roberta, as transformers 4.x or 5.x writes it
    (5.x: "dtype" for "torch_dtype", no position_embedding_type) -> EncoderConfig. Keys left out take the class
    default. Refuses (ValueError "config.<key>: ...") what would change the math in a way this twin does not run:
      model_type      anything but bert / roberta / xlm-roberta (REFUSED_MODEL_TYPES says why for the known cousins)
      auto_map        custom modeling code: transformers runs the repository's own file with trust_remote_code (e.g.
                      jina-embeddings-v2 writes model_type "bert" with ALiBi code), plain BertModel without it
      position_embedding_type  other than "absolute": 4.x adds relative_key / relative_key_query scores (and skips
                      absolute positions for any other value, e.g. jina's "alibi"); 5.x no longer reads the key
                      (always absolute): the versions disagree
      is_decoder, add_cross_attention  true: causal masks / cross-attention layers (not an embedder)
      hidden_act      not in `activations` (default "gelu" only; ACTIVATIONS lists the twin's others)
      embedding_size  (ELECTRA-style projection) other than hidden_size; REFUSED_KEYS when set
      sizes           hidden_size not a multiple of num_attention_heads; pad_token_id outside the vocabulary;
                      roberta positions: max_position_embeddings must exceed pad_token_id + 1
    Ignored (no effect in eval): dropouts, initializer_range, use_cache, classifier_dropout, gradient_checkpointing,
    chunk_size_feed_forward (chunking over tokens), architectures, torch_dtype / dtype, bos / eos ids, tokenizer_class.
    """
    if not isinstance(d, dict):
        raise TypeError(f"config: expected a dict (config.json), got {type(d).__name__}")
    mt = d.get("model_type")
    if mt is None:
        _refuse("model_type", f"missing; expected one of {', '.join(MODEL_TYPES)}")
    if mt in REFUSED_MODEL_TYPES:
        _refuse("model_type", f"'{mt}' is not run by this family ({REFUSED_MODEL_TYPES[mt]}); "
                              f"supported: {', '.join(MODEL_TYPES)}")
    if mt not in MODEL_TYPES:
        _refuse("model_type", f"expected one of {', '.join(MODEL_TYPES)}, got {mt!r}")
    if d.get("auto_map"):
        _refuse("auto_map", "custom modeling code (transformers runs the repository's own file with "
                            "trust_remote_code, plain BertModel without it); not run")
    pet = d.get("position_embedding_type", "absolute")
    if pet != "absolute":
        _refuse("position_embedding_type", f"expected 'absolute', got {pet!r} (transformers 4.x adds relative "
                                           "scores or drops absolute positions; 5.x ignores the key)")
    for key in ("is_decoder", "add_cross_attention"):
        if d.get(key, False) not in (False, None):
            _refuse(key, f"expected false (an encoder), got {d[key]!r}")
    for key in REFUSED_KEYS:
        if d.get(key) is not None:
            _refuse(key, f"not a BERT-family key (got {d[key]!r}): another architecture's config")
    dft = CLASS_DEFAULTS[mt]
    hidden = _int(d, "hidden_size", dft["hidden_size"])
    if d.get("embedding_size") not in (None, hidden):
        _refuse("embedding_size", f"expected absent or hidden_size ({hidden}), got {d['embedding_size']!r} "
                                  "(an ELECTRA-style projection)")
    heads = _int(d, "num_attention_heads", dft["num_attention_heads"])
    if hidden % heads:
        _refuse("num_attention_heads", f"hidden_size {hidden} is not a multiple of num_attention_heads {heads}")
    act = d.get("hidden_act", dft["hidden_act"])
    if act not in activations:
        _refuse("hidden_act", f"expected one of {', '.join(repr(a) for a in activations)}, got {act!r}")
    vocab = _int(d, "vocab_size", dft.get("vocab_size"))
    eps = d.get("layer_norm_eps", dft["layer_norm_eps"])
    if not isinstance(eps, (int, float)) or isinstance(eps, bool) or not (0 < eps < 1):
        _refuse("layer_norm_eps", f"expected a number in (0, 1), got {eps!r}")
    pad = d.get("pad_token_id", dft["pad_token_id"])
    if pad is not None and (not isinstance(pad, int) or isinstance(pad, bool) or not 0 <= pad < vocab):
        _refuse("pad_token_id", f"expected an id in [0, {vocab}), got {pad!r}")
    if pad is None and mt != "bert":
        _refuse("pad_token_id", f"{mt} needs it: positions are counted from pad_token_id + 1")
    max_pos = _int(d, "max_position_embeddings", dft["max_position_embeddings"])
    if mt != "bert" and max_pos <= pad + 1:
        _refuse("max_position_embeddings", f"expected more than pad_token_id + 1 = {pad + 1}, got {max_pos}")
    return EncoderConfig(
        model_type=mt, vocab_size=vocab, hidden_size=hidden,
        num_hidden_layers=_int(d, "num_hidden_layers", dft["num_hidden_layers"]),
        num_attention_heads=heads,
        intermediate_size=_int(d, "intermediate_size", dft["intermediate_size"]),
        hidden_act=act, max_position_embeddings=max_pos,
        type_vocab_size=_int(d, "type_vocab_size", dft["type_vocab_size"]),
        layer_norm_eps=float(eps), pad_token_id=pad)


# ------------------------------------------------------------------------------------------------
# The model (module names give HF's state-dict keys)
# ------------------------------------------------------------------------------------------------

class _Embeddings(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.word_embeddings = nn.Embedding(cfg.vocab_size, cfg.hidden_size)
        self.position_embeddings = nn.Embedding(cfg.max_position_embeddings, cfg.hidden_size)
        self.token_type_embeddings = nn.Embedding(cfg.type_vocab_size, cfg.hidden_size)
        self.LayerNorm = nn.LayerNorm(cfg.hidden_size, eps=cfg.layer_norm_eps)

    def forward(self, ids, token_type_ids, pos):
        x = self.word_embeddings(ids) + self.token_type_embeddings(token_type_ids)
        x = x + self.position_embeddings(pos)
        return self.LayerNorm(x)


class _SelfAttention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.query = nn.Linear(cfg.hidden_size, cfg.hidden_size)
        self.key = nn.Linear(cfg.hidden_size, cfg.hidden_size)
        self.value = nn.Linear(cfg.hidden_size, cfg.hidden_size)
        self.heads, self.head_dim = cfg.num_attention_heads, cfg.head_dim

    def forward(self, x, mask_add):
        B, T, E = x.shape
        split = lambda t: t.view(B, T, self.heads, self.head_dim).transpose(1, 2)  # (B, H, T, D)
        q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))
        s = torch.matmul(q, k.transpose(2, 3)) * (self.head_dim ** -0.5)       # (B, H, T, T)
        p = F.softmax(s + mask_add, dim=-1)
        return torch.matmul(p, v).transpose(1, 2).reshape(B, T, E)


class _DenseNorm(nn.Module):
    """BertSelfOutput / BertOutput: LayerNorm(dense(h) + residual)."""

    def __init__(self, d_in, cfg):
        super().__init__()
        self.dense = nn.Linear(d_in, cfg.hidden_size)
        self.LayerNorm = nn.LayerNorm(cfg.hidden_size, eps=cfg.layer_norm_eps)

    def forward(self, h, residual):
        return self.LayerNorm(self.dense(h) + residual)


class _Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.self = _SelfAttention(cfg)
        self.output = _DenseNorm(cfg.hidden_size, cfg)

    def forward(self, x, mask_add):
        return self.output(self.self(x, mask_add), x)


class _Intermediate(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.dense = nn.Linear(cfg.hidden_size, cfg.intermediate_size)
        self.act = ACTIVATIONS[cfg.hidden_act]

    def forward(self, x):
        return self.act(self.dense(x))


class _Layer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.attention = _Attention(cfg)
        self.intermediate = _Intermediate(cfg)
        self.output = _DenseNorm(cfg.intermediate_size, cfg)

    def forward(self, x, mask_add):
        a = self.attention(x, mask_add)
        return self.output(self.intermediate(a), a)


class _Encoder(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.layer = nn.ModuleList([_Layer(cfg) for _ in range(cfg.num_hidden_layers)])


class _Pooler(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.dense = nn.Linear(cfg.hidden_size, cfg.hidden_size)

    def forward(self, x):
        return torch.tanh(self.dense(x[:, 0]))


def make_position_ids(cfg, input_ids):
    """(B, T) int64 positions: arange(T) for bert; for roberta / xlm-roberta transformers'
    create_position_ids_from_input_ids: (cumsum(ids != pad) * (ids != pad)) + pad, so pads sit at pad_token_id
    wherever they are (left padding included) and real tokens count from pad_token_id + 1."""
    B, T = input_ids.shape
    if cfg.model_type == "bert":
        return torch.arange(T, dtype=torch.long).unsqueeze(0).expand(B, T).clone()
    mask = input_ids.ne(cfg.pad_token_id).int()
    return (torch.cumsum(mask, dim=1).type_as(mask) * mask).long() + cfg.pad_token_id


class Encoder(nn.Module):
    """BertModel / RobertaModel / XLMRobertaModel in eval mode. pooler=False: no pooler.* parameters (files saved
    from a *ForMaskedLM or BertModel(add_pooling_layer=False)). `.double()` gives the float64 reference."""

    def __init__(self, cfg, pooler=True):
        super().__init__()
        self.cfg = cfg
        self.embeddings = _Embeddings(cfg)
        self.encoder = _Encoder(cfg)
        self.pooler = _Pooler(cfg) if pooler else None
        self.eval()

    def forward(self, input_ids, attention_mask=None, token_type_ids=None, position_ids=None):
        """input_ids (B, T) int; attention_mask (B, T) 0/1 (default ones); token_type_ids (B, T) (default zeros);
        position_ids (B, T) (default: make_position_ids(cfg, input_ids), as HF when the caller gives none).
        Returns (last_hidden_state (B, T, E), pooler_output (B, E) or None) in the module's dtype."""
        cfg = self.cfg
        input_ids = torch.as_tensor(input_ids, dtype=torch.long)
        if input_ids.dim() != 2:
            raise ValueError(f"input_ids: expected (B, T), got {tuple(input_ids.shape)}")
        B, T = input_ids.shape
        attention_mask = torch.ones(B, T, dtype=torch.long) if attention_mask is None \
            else torch.as_tensor(attention_mask, dtype=torch.long)
        token_type_ids = torch.zeros(B, T, dtype=torch.long) if token_type_ids is None \
            else torch.as_tensor(token_type_ids, dtype=torch.long)
        for name, t in (("attention_mask", attention_mask), ("token_type_ids", token_type_ids)):
            if tuple(t.shape) != (B, T):
                raise ValueError(f"{name}: expected (B, T) = ({B}, {T}), got {tuple(t.shape)}")
        if ((input_ids < 0) | (input_ids >= cfg.vocab_size)).any():
            raise ValueError(f"input_ids: ids must be in [0, {cfg.vocab_size})")
        if ((token_type_ids < 0) | (token_type_ids >= cfg.type_vocab_size)).any():
            raise ValueError(f"token_type_ids: must be in [0, {cfg.type_vocab_size})")
        pos = make_position_ids(cfg, input_ids) if position_ids is None \
            else torch.as_tensor(position_ids, dtype=torch.long).expand(B, T)
        if int(pos.max()) >= cfg.max_position_embeddings:
            raise ValueError(f"input_ids: {T} tokens need position {int(pos.max())}, the table has "
                             f"{cfg.max_position_embeddings} (max {cfg.max_tokens} tokens)")
        dtype = self.embeddings.word_embeddings.weight.dtype
        with torch.no_grad():
            x = self.embeddings(input_ids, token_type_ids, pos)
            mask_add = (1.0 - attention_mask[:, None, None, :].to(dtype)) * torch.finfo(dtype).min
            for layer in self.encoder.layer:
                x = layer(x, mask_add)
            pooled = self.pooler(x) if self.pooler is not None else None
        return x, pooled


# ------------------------------------------------------------------------------------------------
# Hub files: tensor names
# ------------------------------------------------------------------------------------------------

def expected_param_shapes(cfg, pooler=True):
    """HF BertModel's parameter names (no prefix) -> shape, in HF's module order."""
    E, F_, L = cfg.hidden_size, cfg.intermediate_size, cfg.num_hidden_layers
    out = collections.OrderedDict()
    out["embeddings.word_embeddings.weight"] = (cfg.vocab_size, E)
    out["embeddings.position_embeddings.weight"] = (cfg.max_position_embeddings, E)
    out["embeddings.token_type_embeddings.weight"] = (cfg.type_vocab_size, E)
    out["embeddings.LayerNorm.weight"] = (E,)
    out["embeddings.LayerNorm.bias"] = (E,)
    for i in range(L):
        p = f"encoder.layer.{i}."
        for n in ("query", "key", "value"):
            out[p + f"attention.self.{n}.weight"] = (E, E)
            out[p + f"attention.self.{n}.bias"] = (E,)
        out[p + "attention.output.dense.weight"] = (E, E)
        out[p + "attention.output.dense.bias"] = (E,)
        out[p + "attention.output.LayerNorm.weight"] = (E,)
        out[p + "attention.output.LayerNorm.bias"] = (E,)
        out[p + "intermediate.dense.weight"] = (F_, E)
        out[p + "intermediate.dense.bias"] = (F_,)
        out[p + "output.dense.weight"] = (E, F_)
        out[p + "output.dense.bias"] = (E,)
        out[p + "output.LayerNorm.weight"] = (E,)
        out[p + "output.LayerNorm.bias"] = (E,)
    if pooler:
        out["pooler.dense.weight"] = (E, E)
        out["pooler.dense.bias"] = (E,)
    return out


# Heads of task models, ignored: cls.* (BertForMaskedLM / BertForPreTraining), lm_head.* (RobertaForMaskedLM),
# classifier.* (*ForSequenceClassification, e.g. cross-encoders: loading one as an embedder gives its encoder).
IGNORED_HEADS = ("cls.", "lm_head.", "classifier.")
# Buffers older files store (persistent before transformers 4.31): int64 (1, max_position_embeddings) arange.
IGNORED_BUFFERS = ("embeddings.position_ids", "embeddings.token_type_ids")


def normalize_state_dict(sd, cfg):
    """A hub file's tensors -> (OrderedDict of BertModel names -> tensor, pooler: bool, ignored: [names]).
    As transformers' from_pretrained loads a base model from a task model's file:
      LayerNorm.gamma / LayerNorm.beta -> LayerNorm.weight / LayerNorm.bias (TF-era files: bert-base-uncased);
      the base prefix ("bert." for bert, "roberta." for roberta and xlm-roberta) stripped when the file has it;
      heads (IGNORED_HEADS) and the old position_ids / token_type_ids buffers ignored.
    Refuses (ValueError naming the tensor): a missing tensor, a wrong shape, an unknown name, half a pooler."""
    prefix = BASE_PREFIX[cfg.model_type]
    renamed = collections.OrderedDict()
    for k, v in sd.items():
        k2 = re.sub(r"LayerNorm\.gamma$", "LayerNorm.weight", re.sub(r"LayerNorm\.beta$", "LayerNorm.bias", k))
        renamed[k2] = (k, v)
    has_prefix = any(k.startswith(prefix) for k in renamed)
    want = expected_param_shapes(cfg, pooler=True)
    out, ignored = collections.OrderedDict(), []
    for k, (orig, v) in renamed.items():
        base = k[len(prefix):] if has_prefix and k.startswith(prefix) else k
        if has_prefix and not k.startswith(prefix) and not k.startswith(IGNORED_HEADS):
            raise ValueError(f"{orig}: not a tensor of {cfg.model_type} (the file's encoder tensors start with "
                             f"'{prefix}')")
        if base.startswith(IGNORED_HEADS) or base in IGNORED_BUFFERS:
            ignored.append(orig)
            continue
        if base not in want:
            raise ValueError(f"{orig}: not a tensor of {cfg.model_type} with this config.json "
                             f"(layers {cfg.num_hidden_layers}, position_embedding_type absolute)")
        if tuple(v.shape) != tuple(want[base]):
            raise ValueError(f"{orig}: expected shape {tuple(want[base])}, got {tuple(v.shape)}")
        if not v.is_floating_point():
            raise ValueError(f"{orig}: expected a float tensor, got {v.dtype}")
        out[base] = v
    pooler = [k for k in ("pooler.dense.weight", "pooler.dense.bias") if k in out]
    if len(pooler) == 1:
        raise ValueError(f"{prefix if has_prefix else ''}{pooler[0]}: the pooler needs both pooler.dense.weight "
                         "and pooler.dense.bias")
    for k, shape in expected_param_shapes(cfg, pooler=bool(pooler)).items():
        if k not in out:
            raise ValueError(f"{prefix if has_prefix else ''}{k}: missing (expected shape {tuple(shape)})")
    return out, bool(pooler), ignored


def load_state_dict_hf(sd, cfg, dtype=torch.float32):
    """A hub file's tensors (any float dtype, widened exactly) -> Encoder at `dtype`."""
    weights, pooler, _ = normalize_state_dict(sd, cfg)
    model = Encoder(cfg, pooler=pooler).to(dtype)
    model.load_state_dict({k: v.to(dtype) for k, v in weights.items()}, strict=True)
    return model


# ------------------------------------------------------------------------------------------------
# sentence-transformers: Pooling, Normalize, the folder
# ------------------------------------------------------------------------------------------------

POOLING_MODES = ("cls", "max", "mean", "mean_sqrt_len_tokens", "weightedmean", "lasttoken")  # Pooling's output order
_MODE_KEYS = {"cls": "pooling_mode_cls_token", "max": "pooling_mode_max_tokens", "mean": "pooling_mode_mean_tokens",
              "mean_sqrt_len_tokens": "pooling_mode_mean_sqrt_len_tokens",
              "weightedmean": "pooling_mode_weightedmean_tokens", "lasttoken": "pooling_mode_lasttoken"}
# Pooling.__init__'s defaults: a 1_Pooling/config.json without a key gets these (mean is on by default).
_MODE_DEFAULTS = {"cls": False, "max": False, "mean": True, "mean_sqrt_len_tokens": False, "weightedmean": False,
                  "lasttoken": False}


@dataclasses.dataclass(frozen=True)
class PoolingConfig:
    modes: tuple                  # subset of POOLING_MODES, in Pooling.forward's order (the output concatenates them)
    include_prompt: bool = True
    word_embedding_dimension: object = None

    def dimension(self, hidden):
        return len(self.modes) * hidden


def pooling_from_config(d):
    """1_Pooling/config.json -> PoolingConfig, as Pooling(**config) reads it: the pooling_mode_* flags (absent ones at
    Pooling's defaults: mean on, the rest off), or a "pooling_mode" string that overrides them, include_prompt
    (default true). Unknown keys are refused (Pooling(**config) would raise TypeError)."""
    if not isinstance(d, dict):
        raise TypeError(f"pooling: expected a dict (1_Pooling/config.json), got {type(d).__name__}")
    known = set(_MODE_KEYS.values()) | {"word_embedding_dimension", "include_prompt", "pooling_mode"}
    for k in d:
        if k not in known:
            raise ValueError(f"pooling.{k}: not a key of sentence-transformers' Pooling")
    flags = {m: d.get(_MODE_KEYS[m], _MODE_DEFAULTS[m]) for m in POOLING_MODES}
    for m, v in flags.items():
        if not isinstance(v, bool):
            raise ValueError(f"pooling.{_MODE_KEYS[m]}: expected true or false, got {v!r}")
    if d.get("pooling_mode") is not None:
        pm = str(d["pooling_mode"]).lower()
        if pm not in POOLING_MODES:
            raise ValueError(f"pooling.pooling_mode: expected one of {', '.join(POOLING_MODES)}, got {d['pooling_mode']!r}")
        flags = {m: m == pm for m in POOLING_MODES}
    modes = tuple(m for m in POOLING_MODES if flags[m])
    if not modes:
        raise ValueError("pooling: no pooling_mode_* is true")
    ip = d.get("include_prompt", True)
    if not isinstance(ip, bool):
        raise ValueError(f"pooling.include_prompt: expected true or false, got {ip!r}")
    return PoolingConfig(modes=modes, include_prompt=ip, word_embedding_dimension=d.get("word_embedding_dimension"))


def pool(token_embeddings, attention_mask, pooling, prompt_length=None):
    """sentence-transformers' Pooling.forward, step for step, in token_embeddings' dtype (float32 as torch computes
    it, or float64). token_embeddings (B, T, E), attention_mask (B, T) 0/1 -> (B, len(modes) * E), the modes
    concatenated in POOLING_MODES order. Per mode, for one sentence (m_t = mask, h_t = token vector):
      include_prompt false: m_t = 0 for t < prompt_length (the prompt's tokens with [CLS], without a trailing special)
      cls            h_0 (a view: when max is also on and m_0 = 0, it sees max's -1e9 fill, as in sentence-transformers)
      max            h_t := -1e9 where m_t = 0 (in place), then max over t
      mean           s = sum_t h_t * m_t (torch.sum over dim 1), n = sum_t m_t, s / clamp(n, min=1e-9)
      mean_sqrt_len  s / sqrt(clamp(n, min=1e-9))
      weightedmean   w_t = m_t * (t + 1), sum_t h_t * w_t / clamp(sum_t w_t, min=1e-9)
      lasttoken      (h * m)[last t with m_t = 1]; with no such t: (h * m)[0] = zeros
    The caller's tensors are not modified (sentence-transformers writes -1e9 into its own token_embeddings)."""
    te = token_embeddings.clone()
    mask = attention_mask.clone().to(torch.long)
    if not pooling.include_prompt and prompt_length:
        mask[:, :prompt_length] = 0
    outs = []
    if "cls" in pooling.modes:
        outs.append(te[:, 0])
    if "max" in pooling.modes:
        ime = mask.unsqueeze(-1).expand(te.size()).to(te.dtype)
        te[ime == 0] = -1e9
        outs.append(torch.max(te, 1)[0])
    if "mean" in pooling.modes or "mean_sqrt_len_tokens" in pooling.modes:
        ime = mask.unsqueeze(-1).expand(te.size()).to(te.dtype)
        s = torch.sum(te * ime, 1)
        n = torch.clamp(ime.sum(1), min=1e-9)
        if "mean" in pooling.modes:
            outs.append(s / n)
        if "mean_sqrt_len_tokens" in pooling.modes:
            outs.append(s / torch.sqrt(n))
    if "weightedmean" in pooling.modes:
        ime = mask.unsqueeze(-1).expand(te.size()).to(te.dtype)
        w = torch.arange(start=1, end=te.shape[1] + 1).unsqueeze(0).unsqueeze(-1).expand(te.size()).to(te.dtype)
        ime = ime * w
        s = torch.sum(te * ime, 1)
        outs.append(s / torch.clamp(ime.sum(1), min=1e-9))
    if "lasttoken" in pooling.modes:
        B, T, E = te.shape
        values, indices = mask.flip(1).max(1)
        indices = torch.where(values == 0, T - 1, indices)
        gather = (T - indices - 1).unsqueeze(-1).repeat(1, E).unsqueeze(1)
        ime = mask.unsqueeze(-1).expand(te.size()).to(te.dtype)
        outs.append(torch.gather(te * ime, 1, gather).squeeze(dim=1))
    return torch.cat(outs, 1)


def normalize(x):
    """sentence-transformers' Normalize: F.normalize(x, p=2, dim=1) = x / max(||x||_2, 1e-12)."""
    return F.normalize(x, p=2, dim=1)


# Modules of a sentence-transformers folder this family runs; anything else (Dense as in LaBSE / gtr-t5, WordWeights,
# LayerNorm, CNN, LSTM, WeightedLayerPooling, StaticEmbedding, Router / Asym, ...) is refused by its type.
ST_MODULES = ("Transformer", "Pooling", "Normalize")


def read_sentence_transformers(folder):
    """A sentence-transformers folder -> {"modules": [type names], "max_seq_length": int | None,
    "do_lower_case": bool, "pooling": PoolingConfig, "normalize": bool}. Without modules.json (a plain transformers
    folder) SentenceTransformer builds Transformer + Pooling("mean"), no Normalize; without sentence_bert_config.json
    max_seq_length is None (then min(max_position_embeddings, tokenizer model_max_length), see max_seq_length())."""
    def load(*parts):
        p = os.path.join(folder, *parts)
        if not os.path.exists(p):
            return None
        with open(p, encoding="utf-8") as fh:
            return json.load(fh)
    modules = load("modules.json")
    sbert = load("sentence_bert_config.json") or {}
    out = {"modules": [], "max_seq_length": sbert.get("max_seq_length"),
           "do_lower_case": bool(sbert.get("do_lower_case", False)), "pooling": None, "normalize": False}
    if modules is None:
        out["modules"] = ["Transformer", "Pooling"]
        out["pooling"] = PoolingConfig(modes=("mean",))
        return out
    for i, m in enumerate(modules):
        t = m.get("type", "")
        name = t.rsplit(".", 1)[-1]
        if not t.startswith("sentence_transformers.") or name not in ST_MODULES:
            raise ValueError(f"modules.json[{i}].type: expected sentence_transformers' "
                             f"{', '.join(ST_MODULES)}, got {t!r}")
        out["modules"].append(name)
        if name == "Pooling":
            out["pooling"] = pooling_from_config(load(m.get("path", ""), "config.json") or {})
        elif name == "Normalize":
            out["normalize"] = True
    if out["modules"][:1] != ["Transformer"]:
        raise ValueError("modules.json[0].type: expected sentence_transformers.models.Transformer first")
    return out


def max_seq_length(st, cfg, tokenizer_model_max_length):
    """sentence-transformers' truncation length: sentence_bert_config.json's max_seq_length, else
    min(max_position_embeddings, the tokenizer's model_max_length) (Transformer.__init__; note: for roberta that is
    min(514, 512))."""
    if st.get("max_seq_length") is not None:
        return st["max_seq_length"]
    return min(cfg.max_position_embeddings, tokenizer_model_max_length)


def st_preprocess(text, do_lower_case):
    """Transformer.tokenize's text preparation: str(text).strip() (Python's Unicode whitespace: also \\x1c-\\x1f and
    \\x85, not \\ufeff - JS String.prototype.trim differs on exactly these), then .lower() when do_lower_case
    (Python's full lowercasing, with the final-sigma rule)."""
    s = str(text).strip()
    return s.lower() if do_lower_case else s


# ------------------------------------------------------------------------------------------------
# Self-test
# ------------------------------------------------------------------------------------------------

def _self_test():
    g = torch.Generator().manual_seed(7)
    cfg = config_from_hf({"model_type": "roberta", "vocab_size": 50, "hidden_size": 16, "num_hidden_layers": 2,
                          "num_attention_heads": 4, "intermediate_size": 32, "max_position_embeddings": 20,
                          "type_vocab_size": 1, "layer_norm_eps": 1e-5})
    assert cfg.pad_token_id == 1 and cfg.position_offset == 2 and cfg.max_tokens == 18
    ids = torch.tensor([[0, 5, 6, 2, 1, 1], [0, 7, 8, 9, 10, 2]])
    assert make_position_ids(cfg, ids).tolist() == [[2, 3, 4, 5, 1, 1], [2, 3, 4, 5, 6, 7]]
    m = Encoder(cfg)
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.3)
    mask = (ids != 1).long()
    h32, p32 = m(ids, mask)
    h64, p64 = m.double()(ids, mask)
    assert (h32.double() - h64).abs().max() < 1e-4 and (p32.double() - p64).abs().max() < 1e-4
    # padding does not change the real rows (keys masked exactly, pads at their own position)
    hs, _ = m(ids[:1, :4])
    assert (hs.double() - h64[:1, :4]).abs().max() < 1e-4
    # pooling: the simple formulas
    pc = pooling_from_config({"pooling_mode_mean_tokens": True, "pooling_mode_cls_token": True,
                              "pooling_mode_max_tokens": True, "pooling_mode_lasttoken": True,
                              "pooling_mode_weightedmean_tokens": True, "pooling_mode_mean_sqrt_len_tokens": True})
    assert pc.modes == POOLING_MODES
    out = pool(h64, mask, pc)
    E = cfg.hidden_size
    n = mask.sum(1, keepdim=True).double()
    mean = (h64 * mask[..., None]).sum(1) / n
    w = mask * torch.arange(1, 7)
    wmean = (h64 * w[..., None]).sum(1) / w.sum(1, keepdim=True)
    mx = h64.masked_fill(mask[..., None] == 0, -1e9).max(1)[0]
    last = torch.stack([h64[b, int(mask[b].sum()) - 1] for b in range(2)])
    for i, want in enumerate((h64[:, 0], mx, mean, mean * n / n.sqrt(), wmean, last)):
        assert (out[:, i * E:(i + 1) * E] - want).abs().max() < 1e-12, POOLING_MODES[i]
    assert (normalize(mean).norm(dim=1) - 1).abs().max() < 1e-12
    assert pool(h64, mask, PoolingConfig(("mean",), include_prompt=False), prompt_length=2).shape == (2, E)
    # state dicts: prefix, gamma/beta, heads and buffers ignored; refusals name the tensor or the key
    sd = collections.OrderedDict(("roberta." + k.replace("LayerNorm.weight", "LayerNorm.gamma"), v)
                                 for k, v in m.float().state_dict().items())
    sd["roberta.embeddings.position_ids"] = torch.arange(20)[None]
    sd["lm_head.dense.weight"] = torch.zeros(16, 16)
    m2 = load_state_dict_hf(sd, cfg)
    assert torch.equal(m2(ids, mask)[0], m(ids, mask)[0])
    for bad, key in (({"model_type": "nomic_bert"}, "config.model_type"),
                     ({"model_type": "bert", "position_embedding_type": "relative_key"}, "config.position_embedding_type"),
                     ({"model_type": "bert", "is_decoder": True}, "config.is_decoder"),
                     ({"model_type": "bert", "hidden_act": "gelu_new"}, "config.hidden_act"),
                     ({"model_type": "xlm-roberta"}, "config.vocab_size"),
                     ({"model_type": "bert", "auto_map": {"AutoModel": "x.y"}}, "config.auto_map")):
        try:
            config_from_hf(bad)
            raise AssertionError(f"accepted {bad}")
        except ValueError as e:
            assert str(e).startswith(key), e
    bad = dict(sd)
    bad["roberta.encoder.layer.0.attention.self.distance_embedding.weight"] = torch.zeros(3, 4)
    try:
        load_state_dict_hf(bad, cfg)
        raise AssertionError("accepted distance_embedding")
    except ValueError as e:
        assert "distance_embedding" in str(e), e
    print("tools/bert.py self-test passed")


if __name__ == "__main__":
    _self_test()
