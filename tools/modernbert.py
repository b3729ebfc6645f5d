"""A torch twin of transformers' ModernBertModel (modeling_modernbert.py, 4.48 to 5.x), written from its source for
the goldens of tests/data/make_modernbert_goldens.py (transformers 4.40.2, the one here, has no ModernBERT).

  x = LayerNorm(tok_embeddings[ids])                       no bias (norm_bias false), eps norm_eps
  per layer i (global when i % global_attn_every_n_layers == 0, else local):
    h = x if i == 0 else attn_norm(x)                      layer 0's attn_norm is Identity
    q, k, v = Wqkv(h).view(B, T, 3, H, D)                  D = hidden_size / num_attention_heads
    q, k = RoPE(q), RoPE(k)                                rotate_half; theta global_rope_theta, or local_rope_theta
                                                           on local layers (5.x: rope_parameters per layer type);
                                                           inv_freq and cos / sin in float32 as HF forms them
    scores = q k^T * D^-0.5, + mask                        key j visible to query i: every j (global) or
                                                           |i - j| <= local_attention // 2 (local); padded keys not
    x = x + Wo(softmax(scores) v)
    a, g = Wi(mlp_norm(x)).chunk(2)                        x = x + Wo(gelu(a) * g), GELU erf (hidden_activation gelu)
  last_hidden_state = final_norm(x)

State dict names as ModernBertModel saves them (a task model's under "model.").
"""

import torch
import torch.nn.functional as F
from torch import nn


class Config:
    """The fields the model reads, from a config.json dict of either generation (4.x keys or 5.x's)."""

    def __init__(self, d):
        self.vocab_size = d.get("vocab_size", 50368)
        self.hidden_size = d.get("hidden_size", 768)
        self.intermediate_size = d.get("intermediate_size", 1152)
        self.num_hidden_layers = d.get("num_hidden_layers", 22)
        self.num_attention_heads = d.get("num_attention_heads", 12)
        self.norm_eps = d.get("norm_eps", 1e-5)
        self.local_attention = d.get("local_attention", 128)
        assert d.get("hidden_activation", "gelu") == "gelu" and not d.get("norm_bias", False)
        self.bias = bool(d.get("attention_bias", False)), bool(d.get("mlp_bias", False))
        n = d.get("global_attn_every_n_layers", 3)
        self.layer_types = d.get("layer_types") or [
            "sliding_attention" if i % n else "full_attention" for i in range(self.num_hidden_layers)]
        rp = d.get("rope_parameters")
        if rp:
            self.theta = {t: rp[t]["rope_theta"] for t in ("full_attention", "sliding_attention")}
        else:
            glob = d.get("global_rope_theta", 160000.0)
            loc = d.get("local_rope_theta", 10000.0)
            self.theta = {"full_attention": glob, "sliding_attention": glob if loc is None else loc}


class Layer(nn.Module):
    def __init__(self, c, i):
        super().__init__()
        E, I = c.hidden_size, c.intermediate_size
        self.attn_norm = nn.Identity() if i == 0 else _NoBiasLayerNorm(E, c.norm_eps)
        self.attn = nn.Module()
        self.attn.Wqkv = nn.Linear(E, 3 * E, bias=c.bias[0])
        self.attn.Wo = nn.Linear(E, E, bias=c.bias[0])
        self.mlp_norm = _NoBiasLayerNorm(E, c.norm_eps)
        self.mlp = nn.Module()
        self.mlp.Wi = nn.Linear(E, 2 * I, bias=c.bias[1])
        self.mlp.Wo = nn.Linear(I, E, bias=c.bias[1])
        self.H, self.D = c.num_attention_heads, E // c.num_attention_heads
        self.kind = c.layer_types[i]
        self.half = c.local_attention // 2

    def forward(self, x, cos, sin, keep):
        B, T, E = x.shape
        qkv = self.attn.Wqkv(self.attn_norm(x)).view(B, T, 3, self.H, self.D)
        q, k, v = (t.transpose(1, 2) for t in qkv.unbind(dim=2))
        q, k = _rope(q, cos, sin), _rope(k, cos, sin)
        scores = torch.matmul(q, k.transpose(-2, -1)) * self.D ** -0.5
        allow = keep[:, None, None, :].expand(B, 1, T, T)
        if self.kind == "sliding_attention":
            i = torch.arange(T)
            allow = allow & ((i[:, None] - i[None, :]).abs() <= self.half)
        # HF's masks add finfo.min (not -inf): a padded query with every key hidden gets finite weights, not NaN
        w = torch.softmax(scores.masked_fill(~allow, torch.finfo(scores.dtype).min), dim=-1)
        x = x + self.attn.Wo(torch.matmul(w, v).transpose(1, 2).reshape(B, T, E))
        a, g = self.mlp.Wi(self.mlp_norm(x)).chunk(2, dim=-1)
        return x + self.mlp.Wo(F.gelu(a) * g)


class _NoBiasLayerNorm(nn.Module):
    """torch 1.13's nn.LayerNorm has no bias=False: F.layer_norm with the weight alone."""

    def __init__(self, n, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))
        self.eps = eps

    def forward(self, x):
        return F.layer_norm(x, self.weight.shape, self.weight, None, self.eps)


def _rope(x, cos, sin):
    """x * cos + rotate_half(x) * sin in x's dtype (HF 5.x computes it in float32: the same in a float32 model)."""
    h = x.shape[-1] // 2
    rot = torch.cat((-x[..., h:], x[..., :h]), dim=-1)
    return x * cos + rot * sin


class ModernBert(nn.Module):
    def __init__(self, d):
        super().__init__()
        c = self.cfg = Config(d)
        self.embeddings = nn.Module()
        self.embeddings.tok_embeddings = nn.Embedding(c.vocab_size, c.hidden_size)
        self.embeddings.norm = _NoBiasLayerNorm(c.hidden_size, c.norm_eps)
        self.layers = nn.ModuleList(Layer(c, i) for i in range(c.num_hidden_layers))
        self.final_norm = _NoBiasLayerNorm(c.hidden_size, c.norm_eps)

    def rope(self, kind, T, dtype):
        """cos, sin (1, 1, T, D) in float32, as ModernBertRotaryEmbedding forms them, cast to the model's dtype."""
        D = self.cfg.hidden_size // self.cfg.num_attention_heads
        inv = 1.0 / (self.cfg.theta[kind] ** (torch.arange(0, D, 2, dtype=torch.int64).float() / D))
        freqs = torch.arange(T).float()[:, None] @ inv[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(dtype)[None, None], emb.sin().to(dtype)[None, None]

    def forward(self, ids, attention_mask=None):
        """ids (B, T) → last_hidden_state (B, T, E); attention_mask (B, T) of 1 / 0, padded keys hidden."""
        B, T = ids.shape
        keep = torch.ones(B, T, dtype=torch.bool) if attention_mask is None else attention_mask.bool()
        x = self.embeddings.norm(self.embeddings.tok_embeddings(ids.long()))
        dtype = x.dtype
        tables = {k: self.rope(k, T, dtype) for k in set(self.cfg.layer_types)}
        for layer in self.layers:
            x = layer(x, *tables[layer.kind], keep)
        return self.final_norm(x)
