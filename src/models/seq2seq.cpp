// Seq2SeqLm (seq2seq.h): the encoder, the decoder's appends against the state's caches, teacher forcing.
#include "models/seq2seq.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "core/limits.h"
#include "core/rules.h"
#include "core/size_math.h"
#include "core/workspace.h"
#include "kernels/bounds.h"
#include "kernels/elementwise.h"
#include "layers/residual.h"
#include "ops/attention.h"

namespace aw {

Status Seq2SeqLayer::Init(const Seq2SeqConfig& c, bool decoder, Rng& rng) {
  const int64_t E = c.d_model, F = decoder ? c.decoder_ffn : c.encoder_ffn;
  for (Linear* l : {&q_proj, &v_proj, &out_proj}) AW_RETURN_IF_ERROR(l->Init(E, E, true, rng));
  AW_RETURN_IF_ERROR(k_proj.Init(E, E, c.k_bias, rng));
  self_attn_.Add("q_proj", &q_proj);
  self_attn_.Add("k_proj", &k_proj);
  self_attn_.Add("v_proj", &v_proj);
  self_attn_.Add("out_proj", &out_proj);
  AddChild("self_attn", &self_attn_);
  AW_RETURN_IF_ERROR(self_attn_layer_norm.Init(E, c.eps, true, true));
  AddChild("self_attn_layer_norm", &self_attn_layer_norm);
  if (decoder) {
    for (Linear* l : {&cq_proj, &cv_proj, &cout_proj}) AW_RETURN_IF_ERROR(l->Init(E, E, true, rng));
    AW_RETURN_IF_ERROR(ck_proj.Init(E, E, c.k_bias, rng));
    encoder_attn_.Add("q_proj", &cq_proj);
    encoder_attn_.Add("k_proj", &ck_proj);
    encoder_attn_.Add("v_proj", &cv_proj);
    encoder_attn_.Add("out_proj", &cout_proj);
    AddChild("encoder_attn", &encoder_attn_);
    AW_RETURN_IF_ERROR(encoder_attn_layer_norm.Init(E, c.eps, true, true));
    AddChild("encoder_attn_layer_norm", &encoder_attn_layer_norm);
  }
  AW_RETURN_IF_ERROR(fc1.Init(E, F, true, rng));
  AW_RETURN_IF_ERROR(fc2.Init(F, E, true, rng));
  AddChild("fc1", &fc1);
  AddChild("fc2", &fc2);
  AW_RETURN_IF_ERROR(final_layer_norm.Init(E, c.eps, true, true));
  AddChild("final_layer_norm", &final_layer_norm);
  return Status::OK();
}

Status Seq2SeqLm::Init(const Seq2SeqConfig& c, Rng& rng, const io::ConfigSource* src) {
  AW_RETURN_IF_ERROR(CheckSeq2SeqConfig(c, src));
  if (rng.fills()) return ArgError("Seq2SeqLM: built only from a checkpoint (aw.loadModel)");
  cfg_ = c;
  const int64_t E = c.d_model;
  if (c.shared) {
    AW_RETURN_IF_ERROR(shared_.Init(c.vocab, E, 0, false, rng));
    model_.Add("shared", &shared_);
  } else {
    AW_RETURN_IF_ERROR(enc_embed_.Init(c.vocab, E, 0, false, rng));
    AW_RETURN_IF_ERROR(dec_embed_.Init(c.vocab, E, 0, false, rng));  // transformers copies the encoder's table
    encoder_.Add("embed_tokens", &enc_embed_);
    decoder_.Add("embed_tokens", &dec_embed_);
  }
  if (c.positions == S2sPositions::kLearned) {
    AW_RETURN_IF_ERROR(enc_pos_.Init(c.max_positions + 2, E, 0, false, rng));
    AW_RETURN_IF_ERROR(dec_pos_.Init(c.max_positions + 2, E, 0, false, rng));
    encoder_.Add("embed_positions", &enc_pos_);
    decoder_.Add("embed_positions", &dec_pos_);
  }
  if (c.embed_norm) {
    AW_RETURN_IF_ERROR(enc_embed_norm_.Init(E, c.eps, true, true));
    AW_RETURN_IF_ERROR(dec_embed_norm_.Init(E, c.eps, true, true));
    encoder_.Add("layernorm_embedding", &enc_embed_norm_);
    decoder_.Add("layernorm_embedding", &dec_embed_norm_);
  }
  for (int64_t i = 0; i < c.encoder_layers; ++i) {
    enc_layers_.push_back(std::make_unique<Seq2SeqLayer>());
    AW_RETURN_IF_ERROR(enc_layers_.back()->Init(c, false, rng));
    enc_list_.Append(enc_layers_.back().get());
  }
  for (int64_t i = 0; i < c.decoder_layers; ++i) {
    dec_layers_.push_back(std::make_unique<Seq2SeqLayer>());
    AW_RETURN_IF_ERROR(dec_layers_.back()->Init(c, true, rng));
    dec_list_.Append(dec_layers_.back().get());
  }
  encoder_.Add("layers", &enc_list_);
  decoder_.Add("layers", &dec_list_);
  if (c.final_norm) {
    AW_RETURN_IF_ERROR(enc_norm_.Init(E, c.eps, true, true));
    AW_RETURN_IF_ERROR(dec_norm_.Init(E, c.eps, true, true));
    encoder_.Add("layer_norm", &enc_norm_);
    decoder_.Add("layer_norm", &dec_norm_);
  }
  model_.Add("encoder", &encoder_);
  model_.Add("decoder", &decoder_);
  AddChild("model", &model_);
  if (!c.tied) {
    AW_RETURN_IF_ERROR(lm_head_.Init(E, c.decoder_vocab, false, rng));
    AddChild("lm_head", &lm_head_);
  }
  if (c.logits_bias) AW_RETURN_IF_ERROR(AddParam("final_logits_bias", {1, c.out_vocab()}, &final_logits_bias_));
  return Status::OK();
}

const PackedWeight& Seq2SeqLm::Head() const {
  if (!cfg_.tied) return lm_head_.packed();
  return cfg_.shared ? shared_.table() : dec_embed_.table();
}

void Seq2SeqLm::Positions(const int32_t* ids, size_t len, size_t past, float* out) const {
  const size_t E = size_t(cfg_.d_model);
  switch (cfg_.positions) {
    case S2sPositions::kMarian: {  // MarianSinusoidalPositionalEmbedding._init_weight, in float64
      const size_t sentinel = (E + 1) / 2;
      for (size_t t = 0; t < len; ++t) {
        const double p = double(past + t);
        float* row = out + t * E;
        for (size_t c = 0; c < E; ++c) {
          const size_t i = c < sentinel ? c : c - sentinel;
          const double a = p / std::pow(10000.0, double(2 * i) / double(E));
          row[c] = float(c < sentinel ? std::sin(a) : std::cos(a));
        }
      }
      break;
    }
    case S2sPositions::kLearned:  // a table (Embed)
      break;
    case S2sPositions::kFairseq: {  // M2M100SinusoidalPositionalEmbedding, float32 as torch forms it
      const size_t half = E / 2;
      const float step = float(-(std::log(10000.0) / double(half - 1)));
      const int64_t pad = cfg_.pad;
      int64_t count = 0;
      for (size_t t = 0; t < len; ++t) {
        float* row = out + t * E;
        const bool is_pad = ids[t] == pad;
        if (!is_pad) ++count;
        const int64_t q = is_pad ? pad : pad + int64_t(past) + count;
        if (is_pad) {
          std::memset(row, 0, E * sizeof(float));
          continue;
        }
        for (size_t j = 0; j < half; ++j) {
          const float freq = float(std::exp(double(float(j) * step)));
          const float a = float(q) * freq;
          row[j] = float(std::sin(double(a)));
          row[half + j] = float(std::cos(double(a)));
        }
        if (E % 2) row[E - 1] = 0.0f;
      }
      break;
    }
  }
}

Status Seq2SeqLm::Embed(bool decoder, const int32_t* ids, size_t n, size_t len, size_t past, float* x) const {
  const size_t E = size_t(cfg_.d_model), rows = n * len;
  const Embedding& table = cfg_.shared ? shared_ : decoder ? dec_embed_ : enc_embed_;
  table.Lookup(rows, ids, x, E);
  if (cfg_.embed_scale != 1.0) {
    const float s = float(cfg_.embed_scale);
    for (size_t i = 0; i < rows * E; ++i) x[i] *= s;
  }
  ScratchScope scope;
  float* pos = nullptr;
  AW_RETURN_IF_ERROR(scope.Take(len * E, "positions", &pos));
  for (size_t s = 0; s < n; ++s) {
    if (cfg_.positions == S2sPositions::kLearned) {
      const Embedding& pe = decoder ? dec_pos_ : enc_pos_;
      for (size_t t = 0; t < len; ++t) {
        const int32_t r = int32_t(past + t + 2);
        pe.Lookup(1, &r, pos + t * E, E);
      }
    } else if (s == 0 || cfg_.positions == S2sPositions::kFairseq) {  // Marian's rows are the same for every row
      Positions(ids + s * len, len, past, pos);
    }
    kernels::f32_add(len * E, x + s * len * E, pos);
  }
  if (cfg_.embed_norm) (decoder ? dec_embed_norm_ : enc_embed_norm_).Apply(rows, x, E, x, E);
  return Status::OK();
}

Status CheckSourceMask(const int32_t* mask, int64_t B, int64_t S) {
  if (!mask) return Status::OK();
  for (int64_t b = 0; b < B; ++b) {
    bool any = false;
    for (int64_t t = 0; t < S; ++t) {
      const int32_t m = mask[b * S + t];
      if (m != 0 && m != 1)
        return ArgError("attentionMask: expected 0s and 1s, got " + std::to_string(m) + " at index (" + std::to_string(b) +
                        ", " + std::to_string(t) + ")");
      any = any || m == 1;
    }
    if (!any) return ArgError("attentionMask: row " + std::to_string(b) + " has no 1: a source needs at least one token");
  }
  return Status::OK();
}

namespace {

// One layer's attention sublayer: q from h (n, E) by qp; keys and values (S, E) per group at k/v + g·kstride;
// query rows L per group; out (n, E) = out_proj(attention).
struct AttnCall {
  size_t groups, L, S, H, D, E;
  const float* q;
  const float* k;
  const float* v;
  size_t kstride;        // floats between groups' keys
  const float* key_add;  // (groups, S) or null
  bool causal;
  int64_t causal_offset;
  float* ctx;
  bool masked_unread = false;  // AttnShape::masked_unread: the masked keys hold zeros (a packed Begin), no scan
};

Status RunAttention(const AttnCall& c) {
  AttnShape sh;
  sh.L = c.L;
  sh.S = c.S;
  sh.hd = sh.hdv = c.D;
  sh.ldq = sh.ldk = sh.ldv = sh.ldo = c.E;
  sh.scale = float(1.0 / std::sqrt(double(c.D)));
  sh.masked_keys = c.S;
  sh.causal = c.causal;
  sh.causal_offset = c.causal_offset;
  sh.masked_unread = c.masked_unread;
  sh.direct = true;  // a step's few rows (L <= kAttnDirectRows): K and V read in place, not packed
  auto head = [&](size_t g, size_t h) {
    AttnHead a;
    a.q = c.q + g * c.L * c.E + h * c.D;
    a.k = c.k + g * c.kstride + h * c.D;
    a.v = c.v + g * c.kstride + h * c.D;
    a.out = c.ctx + g * c.L * c.E + h * c.D;
    if (c.key_add) a.key_add = c.key_add + g * c.S;
    return a;
  };
  return Attend(sh, c.groups, c.H, head);
}

}  // namespace

Status RunEncoderLayers(const std::vector<std::unique_ptr<Seq2SeqLayer>>& layers, const Seq2SeqConfig& c, size_t B,
                        size_t S, const float* key_add, float* x, const size_t* lens) {
  const size_t E = size_t(c.d_model), H = size_t(c.encoder_heads), D = E / H, F = size_t(c.encoder_ffn);
  const size_t rows = lens ? std::accumulate(lens, lens + B, size_t(0)) : B * S;
  ScratchScope scope;
  float *q, *k, *v, *ctx, *ff;
  AW_RETURN_IF_ERROR(scope.Take(rows * E, "queries", &q));
  AW_RETURN_IF_ERROR(scope.Take(rows * E, "keys", &k));
  AW_RETURN_IF_ERROR(scope.Take(rows * E, "values", &v));
  AW_RETURN_IF_ERROR(scope.Take(rows * E, "attention output", &ctx));
  AW_RETURN_IF_ERROR(scope.Take(rows * F, "feed-forward rows", &ff));
  ResidualBlocks res;
  AW_RETURN_IF_ERROR(res.Begin(&scope, c.pre_norm, rows, E));
  for (auto& lp : layers) {
    Seq2SeqLayer& ly = *lp;
    AW_RETURN_IF_ERROR(res.Block(ly.self_attn_layer_norm, x, [&](const float* h, float* y) -> Status {
      ly.q_proj.Apply(rows, h, E, q, E);
      ly.k_proj.Apply(rows, h, E, k, E);
      ly.v_proj.Apply(rows, h, E, v, E);
      if (!lens) AW_RETURN_IF_ERROR(RunAttention({B, S, S, H, D, E, q, k, v, S * E, key_add, false, 0, ctx}));
      for (size_t b = 0, o = 0; lens && b < B; o += lens[b++] * E)  // packed: each source over its own rows
        AW_RETURN_IF_ERROR(RunAttention({1, lens[b], lens[b], H, D, E, q + o, k + o, v + o, 0, nullptr, false, 0, ctx + o}));
      ly.out_proj.Apply(rows, ctx, E, y, E);
      return Status::OK();
    }));
    AW_RETURN_IF_ERROR(res.Block(ly.final_layer_norm, x, [&](const float* h, float* y) -> Status {
      ly.fc1.Apply(rows, h, E, ff, F);
      ApplyActivation(c.act, rows * F, ff);
      ly.fc2.Apply(rows, ff, F, y, E);
      return Status::OK();
    }));
  }
  return Status::OK();
}

Status RunDecoderLayers(const std::vector<std::unique_ptr<Seq2SeqLayer>>& layers, const Seq2SeqConfig& c,
                        Seq2SeqState* st, size_t T, float* x, CrossQueryTap* cross_queries) {
  KvCache& cache = st->self;
  const size_t R = st->rows, n = R * T, len = cache.len;
  const size_t E = size_t(c.d_model), H = size_t(c.decoder_heads), D = E / H, F = size_t(c.decoder_ffn);
  ScratchScope scope;
  float *q, *k, *v, *ctx, *ff;
  AW_RETURN_IF_ERROR(scope.Take(n * E, "queries", &q));
  AW_RETURN_IF_ERROR(scope.Take(n * E, "keys", &k));
  AW_RETURN_IF_ERROR(scope.Take(n * E, "values", &v));
  AW_RETURN_IF_ERROR(scope.Take(n * E, "attention output", &ctx));
  AW_RETURN_IF_ERROR(scope.Take(n * F, "feed-forward rows", &ff));
  ResidualBlocks res;
  AW_RETURN_IF_ERROR(res.Begin(&scope, c.pre_norm, n, E));
  for (size_t l = 0; l < layers.size(); ++l) {
    Seq2SeqLayer& ly = *layers[l];
    AW_RETURN_IF_ERROR(res.Block(ly.self_attn_layer_norm, x, [&](const float* h, float* y) -> Status {
      ly.q_proj.Apply(n, h, E, q, E);
      ly.k_proj.Apply(n, h, E, k, E);
      ly.v_proj.Apply(n, h, E, v, E);
      StoreTarget(&cache, l, R, T, k, v);
      AW_RETURN_IF_ERROR(RunAttention({R, T, len + T, H, D, E, q, cache.keys(l, 0, 0), cache.values(l, 0, 0),
                                       cache.seq_stride(), nullptr, T > 1, int64_t(len), ctx}));
      ly.out_proj.Apply(n, ctx, E, y, E);
      return Status::OK();
    }));
    AW_RETURN_IF_ERROR(res.Block(ly.encoder_attn_layer_norm, x, [&](const float* h, float* y) -> Status {
      ly.cq_proj.Apply(n, h, E, q, E);
      if (cross_queries) AW_RETURN_IF_ERROR(cross_queries->Queries(l, q));
      // A source's rows (its beams × T) are contiguous and read the same keys: one group per source.
      AW_RETURN_IF_ERROR(RunAttention({st->B, st->beams * T, st->S, H, D, E, q, st->cross_k[l].data(),
                                       st->cross_v[l].data(), st->S * E, st->key_add.empty() ? nullptr : st->key_add.data(), false, 0, ctx,
                                       st->packed}));
      ly.cout_proj.Apply(n, ctx, E, y, E);
      return Status::OK();
    }));
    AW_RETURN_IF_ERROR(res.Block(ly.final_layer_norm, x, [&](const float* h, float* y) -> Status {
      ly.fc1.Apply(n, h, E, ff, F);
      ApplyActivation(c.act, n * F, ff);
      ly.fc2.Apply(n, ff, F, y, E);
      return Status::OK();
    }));
  }
  cache.len += T;
  return Status::OK();
}

size_t LastRows(size_t R, size_t T, bool all, size_t E, float* x) {
  if (all) return R * T;
  if (T > 1)
    for (size_t r = 0; r < R; ++r) std::memmove(x + r * E, x + (r * T + T - 1) * E, E * sizeof(float));
  return R;
}

Status Seq2SeqLm::Encode(const int32_t* ids, const int32_t* mask, int64_t B, int64_t S, Buffer* hidden,
                         std::vector<size_t>* lens) {
  AW_RETURN_IF_ERROR(IntInRange("inputIds.shape[0] (batch)", B, 1, kMaxSeq2SeqRows));
  AW_RETURN_IF_ERROR(IntInRange("inputIds.shape[1] (tokens)", S, 1, cfg_.position_limit()));
  AW_RETURN_IF_ERROR((cfg_.shared ? shared_ : enc_embed_).CheckIds(ids, B * S, "inputIds"));
  AW_RETURN_IF_ERROR(CheckSourceMask(mask, B, S));
  const size_t E = size_t(cfg_.d_model);
  const size_t rows = size_t(B * S);
  if (NumelChecked({B, S, cfg_.d_model}) < 0) return ShapeError("encoderLastHiddenState (B, S, dModel) exceeds 2^29 elements");
  AW_RETURN_IF_ERROR(hidden->Resize(rows * E, "encoderLastHiddenState"));
  float* x = hidden->data();
  AW_RETURN_IF_ERROR(Embed(false, ids, size_t(B), size_t(S), 0, x));
  // Packed (generation): the unmasked rows only, their positions already in the embeddings.
  if (const size_t m = lens ? PackRows(mask, size_t(B), size_t(S), E, false, x, lens) : 0) {
    AW_RETURN_IF_ERROR(RunEncoderLayers(enc_layers_, cfg_, size_t(B), size_t(S), nullptr, x, lens->data()));
    if (cfg_.final_norm) enc_norm_.Apply(m, x, E, x, E);
    return Status::OK();
  }
  ScratchScope scope;
  float* add = nullptr;
  if (mask) {
    AW_RETURN_IF_ERROR(scope.Take(rows, "key masks", &add));
    for (size_t i = 0; i < rows; ++i) add[i] = mask[i] ? 0.0f : -std::numeric_limits<float>::infinity();
  }
  AW_RETURN_IF_ERROR(RunEncoderLayers(enc_layers_, cfg_, size_t(B), size_t(S), add, x));
  if (cfg_.final_norm) enc_norm_.Apply(rows, x, E, x, E);
  return Status::OK();
}

Status CheckBegin(int64_t B, int64_t beams, int64_t capacity, int64_t limit) {
  AW_RETURN_IF_ERROR(IntInRange("numBeams", beams, 1, kMaxSeq2SeqRows));
  AW_RETURN_IF_ERROR(IntInRange("inputIds.shape[0] (batch)", B, 1, kMaxSeq2SeqRows));
  if (B * beams > kMaxSeq2SeqRows)
    return OutOfRangeError("numBeams: batch × numBeams is at most " + std::to_string(kMaxSeq2SeqRows) + ", got " +
                           std::to_string(B) + " × " + std::to_string(beams));
  return IntInRange("maxLength (decoder positions)", capacity, 1, limit);
}

Status BeginState(Seq2SeqState* st, const int32_t* mask, int64_t B, int64_t S, int64_t beams, size_t layers, size_t width,
                  const std::function<void(size_t l, float* k, float* v)>& project) {
  const size_t n = size_t(B * S);
  st->B = size_t(B);
  st->S = size_t(S);
  st->beams = size_t(beams);
  st->rows = size_t(B * beams);
  // The source mask as additive −inf, kept only when it masks a key: an all-zero mask would cost every step's
  // attention a scan of the cross keys and values for NaN (ops/attention.h) and change no bit.
  st->key_add.clear();
  if (mask && std::find(mask, mask + n, 0) != mask + n) {
    st->key_add.assign(n, 0.0f);
    for (size_t i = 0; i < n; ++i) st->key_add[i] = mask[i] ? 0.0f : -std::numeric_limits<float>::infinity();
  }
  st->cross_k.clear();
  st->cross_v.clear();
  st->cross_k.resize(layers);
  st->cross_v.resize(layers);
  for (size_t l = 0; l < layers; ++l) {
    AW_RETURN_IF_ERROR(st->cross_k[l].Resize(n * width, "cross-attention keys"));
    AW_RETURN_IF_ERROR(st->cross_v[l].Resize(n * width, "cross-attention values"));
    project(l, st->cross_k[l].data(), st->cross_v[l].data());
  }
  return Status::OK();
}

Status Seq2SeqLm::Begin(const int32_t* ids, const int32_t* mask, int64_t B, int64_t S, int64_t beams, int64_t capacity,
                        Seq2SeqState* st) {
  AW_RETURN_IF_ERROR(CheckBegin(B, beams, capacity, cfg_.position_limit()));
  // Generation reads no state of a masked source position (its cross keys are masked out): padded sources are
  // encoded packed, and each layer's cross keys and values spread back to (B, S) rows, zero where masked.
  std::vector<size_t> lens;
  AW_RETURN_IF_ERROR(Encode(ids, mask, B, S, &st->memory, st->keep_memory ? nullptr : &lens));
  const size_t E = size_t(cfg_.d_model), n = size_t(B * S);
  const size_t m = lens.empty() ? n : std::accumulate(lens.begin(), lens.end(), size_t(0));
  AW_RETURN_IF_ERROR(BeginState(st, mask, B, S, beams, dec_layers_.size(), E, [&](size_t l, float* k, float* v) {
    dec_layers_[l]->ck_proj.Apply(m, st->memory.data(), E, k, E);
    dec_layers_[l]->cv_proj.Apply(m, st->memory.data(), E, v, E);
    if (m != n) SpreadRows(mask, n, m, E, k), SpreadRows(mask, n, m, E, v);
  }));
  st->packed = m != n;
  if (!st->keep_memory) st->memory.Release();
  return BeginTarget(st, dec_layers_.size(), E, size_t(capacity));
}

Status BeginTarget(Seq2SeqState* st, size_t layers, size_t width, size_t limit) {
  st->limit = limit;
  return st->self.Init(layers, st->rows, std::min(limit, kSeq2SeqFirstPositions), width, "the decoder's KV cache");
}

size_t PackRows(const int32_t* mask, size_t B, size_t S, size_t width, bool contiguous, float* x, std::vector<size_t>* lens) {
  lens->clear();
  const size_t n = B * S;
  if (!mask || std::find(mask, mask + n, 0) == mask + n) return 0;
  for (size_t b = 0; contiguous && b < B; ++b) {  // one run of 1s: no 1 after a 0 that follows a 1
    const int32_t* row = mask + b * S;
    const int32_t* end = std::find(std::find(row, row + S, 1), row + S, 0);
    if (std::find(end, row + S, 1) != row + S) return 0;
  }
  lens->assign(B, 0);
  size_t r = 0;
  for (size_t i = 0; i < n; ++i)
    if (mask[i]) {
      if (r != i) std::memcpy(x + r * width, x + i * width, width * sizeof(float));
      ++r;
      ++(*lens)[i / S];
    }
  return r;
}

void SpreadRows(const int32_t* mask, size_t n, size_t m, size_t width, float* p) {
  for (size_t i = n, r = m; i-- > 0;) {
    if (!mask[i]) std::memset(p + i * width, 0, width * sizeof(float));
    else if (--r != i) std::memcpy(p + i * width, p + r * width, width * sizeof(float));  // r < i: not yet overwritten
  }
}

Status EnsureTarget(Seq2SeqState* st, size_t need) {
  KvCache& c = st->self;
  if (need <= c.capacity) return Status::OK();
  if (need > st->limit)
    return OutOfRangeError("decoderInputIds: the target would reach " + std::to_string(need) + " positions, more than the state holds (" +
                           std::to_string(st->limit) + ")");
  KvCache grown;
  AW_RETURN_IF_ERROR(grown.Init(c.k.size(), c.batch, std::min(st->limit, std::max(need, 2 * c.capacity)), c.width, "the decoder's KV cache"));
  for (size_t l = 0; l < c.k.size(); ++l)
    for (size_t r = 0; r < c.batch; ++r) {
      std::memcpy(grown.keys(l, r, 0), c.keys(l, r, 0), c.len * c.width * sizeof(float));
      std::memcpy(grown.values(l, r, 0), c.values(l, r, 0), c.len * c.width * sizeof(float));
    }
  grown.len = c.len;
  c = std::move(grown);
  return Status::OK();
}

Status AppendTarget(Seq2SeqState* st, int64_t T) {
  if (st->rows == 0) return ArgError("the decoding state is not begun");
  AW_RETURN_IF_ERROR(IntInRange("tokens per row", T, 1, int64_t(st->limit)));
  return EnsureTarget(st, st->self.len + size_t(T));
}

void StoreTarget(KvCache* c, size_t l, size_t rows, size_t T, const float* k, const float* v) {
  const size_t w = c->width, len = c->len;
  for (size_t r = 0; r < rows; ++r) {
    std::memcpy(c->keys(l, r, len), k + r * T * w, T * w * sizeof(float));
    std::memcpy(c->values(l, r, len), v + r * T * w, T * w * sizeof(float));
  }
}

Status Seq2SeqLm::Append(Seq2SeqState* st, const int32_t* tokens, int64_t T, bool all, Buffer* logits) {
  AW_RETURN_IF_ERROR(AppendTarget(st, T));
  const size_t R = st->rows, n = R * size_t(T), len = st->self.len, Tn = size_t(T);
  AW_RETURN_IF_ERROR((cfg_.shared ? shared_ : dec_embed_).CheckIds(tokens, int64_t(n), "decoderInputIds"));
  const size_t E = size_t(cfg_.d_model), V = size_t(cfg_.out_vocab());
  const size_t out_rows = all ? n : R;
  if (NumelChecked({int64_t(out_rows), int64_t(V)}) < 0) return ShapeError("logits (rows, tokens, vocab) exceed 2^29 elements");
  AW_RETURN_IF_ERROR(logits->Resize(out_rows * V, "logits"));
  ScratchScope scope;
  float* x;
  AW_RETURN_IF_ERROR(scope.Take(n * E, "decoder rows", &x));
  AW_RETURN_IF_ERROR(Embed(true, tokens, R, Tn, len, x));
  AW_RETURN_IF_ERROR(RunDecoderLayers(dec_layers_, cfg_, st, Tn, x));
  LastRows(R, Tn, all, E, x);
  float* last = x;
  if (cfg_.final_norm) dec_norm_.Apply(out_rows, last, E, last, E);
  return HeadLogits(st, out_rows, last, logits);
}

Status Seq2SeqModel::HeadLogits(Seq2SeqState* st, size_t rows, const float* x, Buffer* logits) const {
  const PackedWeight& head = *HeadWeight();
  const float* bias = HeadBias();
  const size_t V = head.n(), E = head.k();
  if (!st->bounded_step) {
    st->head_rows = 0;  // nothing for HeadExact to complete
    head.Product(rows, x, E, logits->data(), V, nullptr, 1.0f);
    if (bias)
      for (size_t r = 0; r < rows; ++r) kernels::f32_add(V, logits->data() + r * V, bias);
    return Status::OK();
  }
  AW_RETURN_IF_ERROR(st->upper.Resize(rows * V, "the logits' upper bounds"));
  AW_RETURN_IF_ERROR(st->head_x.Resize(rows * E, "the head's rows"));
  std::memcpy(st->head_x.data(), x, rows * E * sizeof(float));
  st->head_rows = rows;
  head.BoundedProduct(rows, x, E, 1.0f, bias, logits->data(), st->upper.data(), V);
  return Status::OK();
}

Status Seq2SeqModel::HeadExact(const Seq2SeqState& st, int64_t row, const int32_t* ids, int64_t n, float* out) const {
  if (!HeadBounded() || st.head_rows == 0) return ArgError("exact: no bounded step to complete (step with bounded: true first)");
  AW_RETURN_IF_ERROR(IntInRange("row (of the last step)", row, 0, int64_t(st.head_rows) - 1));
  const PackedWeight& head = *HeadWeight();
  for (int64_t j = 0; j < n; ++j) AW_RETURN_IF_ERROR(IntInRange("exact (token ids)", ids[j], 0, int64_t(head.n()) - 1));
  head.ExactOutputs(st.head_x.data() + size_t(row) * head.k(), 1.0f, ids, size_t(n), out);
  if (const float* bias = HeadBias())
    for (int64_t j = 0; j < n; ++j) out[j] += bias[ids[j]];
  return Status::OK();
}

Status Seq2SeqModel::SelectBounded(Seq2SeqState* st, const int32_t* req, int64_t n, Buffer* out) const {
  static_assert(kMaxVocab < (1 << 24), "select gives ids as floats, exact below 2^24");
  const size_t V = HeadBounded() ? HeadWeight()->n() : 0, R = st->head_rows;
  if (V == 0 || R == 0 || st->lower.size() != R * V)
    return ArgError("select: no bounded step");
  // The request whole: its length, the cap, each count within what is left, each excluded id in [0, V).
  int64_t at = 1 + int64_t(R), need = 0;
  bool ok = n >= at && req[0] >= 0 && req[0] <= 4096;
  for (size_t r = 0; ok && r < R; ++r) {
    const int64_t c = req[1 + r];
    ok = c >= -1 && c <= n - at;
    for (int64_t j = 0; ok && j < c; ++j) ok = req[at + j] >= 0 && size_t(req[at + j]) < V;
    need += 2 + 2 * c + req[0];
    at += std::max<int64_t>(c, 0);
  }
  if (!ok || at != n)
    return ArgError("select: expected [cap 0-4096, a count per row, the ids]");
  AW_RETURN_IF_ERROR(out->Resize(size_t(need), "select"));
  float* o = out->data();
  const int32_t* ex = req + 1 + R;
  for (size_t r = 0; r < R; ++r) {
    const int32_t c = req[1 + r];
    if (c < 0) continue;
    float *lo = st->lower.data() + r * V, *up = st->upper.data() + r * V, *pairs = o + 2;
    for (int32_t j = 0; j < c; ++j) {  // every pair saved before any is masked: an id listed twice keeps its own
      pairs[2 * j] = lo[ex[j]];
      pairs[2 * j + 1] = up[ex[j]];
    }
    for (int32_t j = 0; j < c; ++j) lo[ex[j]] = up[ex[j]] = -std::numeric_limits<float>::infinity();
    o[0] = kernels::f32_bounds_best(V, lo, up);
    const size_t found = kernels::f32_bounds_above(V, up, o[0], pairs + 2 * c, size_t(req[0]));
    for (int32_t j = 0; j < c; ++j) {
      lo[ex[j]] = pairs[2 * j];
      up[ex[j]] = pairs[2 * j + 1];
    }
    o[1] = float(found);
    o += 2 + 2 * c + std::min(found, size_t(req[0]));
    ex += c;
  }
  (void)out->Resize(size_t(o - out->data()), "");  // smaller: never fails
  return Status::OK();
}

Status Seq2SeqModel::Reorder(Seq2SeqState* st, const int32_t* parents, int64_t n) {
  if (size_t(n) != st->rows)
    return ShapeError("parents: expected " + std::to_string(st->rows) + " entries (one per row), got " + std::to_string(n));
  for (size_t r = 0; r < st->rows; ++r) {
    const int64_t p = parents[r];
    if (p < 0 || size_t(p) >= st->rows || size_t(p) / st->beams != r / st->beams)
      return ArgError("parents[" + std::to_string(r) + "]: expected a row of the same source (" +
                      std::to_string(r / st->beams * st->beams) + " … " + std::to_string(r / st->beams * st->beams + st->beams - 1) +
                      "), got " + std::to_string(p));
  }
  return st->self.Reorder(parents, st->rows);
}

namespace {
// Blocks keep[0 … n) of `block` floats moved down to 0 … n − 1 (keep ascending, so keep[i] >= i: in order, each
// block is read before anything lands on it).
void MoveDown(float* base, size_t block, const int32_t* keep, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (size_t(keep[i]) != i) std::memmove(base + i * block, base + size_t(keep[i]) * block, block * sizeof(float));
}
// The same for a buffer of `from` blocks, then sized to its n blocks (the allocation kept).
void KeepBlocks(Buffer* b, size_t from, const int32_t* keep, size_t n) {
  const size_t block = b->size() / from;
  MoveDown(b->data(), block, keep, n);
  (void)b->Resize(n * block, "");  // smaller: never fails
}
}  // namespace

Status Seq2SeqModel::Keep(Seq2SeqState* st, const int32_t* keep, int64_t n) {
  const size_t B = st->B, S = st->S, m = size_t(n);
  if (st->rows == 0) return ArgError("the decoding state is not begun");
  AW_RETURN_IF_ERROR(IntInRange("sources.length", n, 1, int64_t(B)));
  for (int64_t i = 0; i < n; ++i)
    AW_RETURN_IF_ERROR(IntInRange("sources[" + std::to_string(i) + "] (ascending)", keep[i], i ? keep[i - 1] + 1 : 0, int64_t(B) - 1));
  if (!st->key_add.empty()) {
    MoveDown(st->key_add.data(), S, keep, m);
    st->key_add.resize(m * S);
  }
  if (st->memory.size()) KeepBlocks(&st->memory, B, keep, m);
  for (std::vector<Buffer>* kv : {&st->cross_k, &st->cross_v, &st->self.k, &st->self.v})
    for (Buffer& b : *kv) KeepBlocks(&b, B, keep, m);
  st->B = m;
  st->rows = st->self.batch = m * st->beams;
  return Status::OK();
}

Status Seq2SeqModel::Forward(const int32_t* ids, const int32_t* mask, int64_t B, int64_t S, const int32_t* dec, int64_t T,
                          Buffer* logits, Buffer* hidden) {
  Seq2SeqState st;
  st.keep_memory = true;
  AW_RETURN_IF_ERROR(IntInRange("decoderInputIds.shape[1] (tokens)", T, 1, target_limit()));
  AW_RETURN_IF_ERROR(Begin(ids, mask, B, S, 1, T, &st));
  AW_RETURN_IF_ERROR(Append(&st, dec, T, true, logits));
  *hidden = std::move(st.memory);
  return Status::OK();
}

}  // namespace aw
