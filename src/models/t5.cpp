// T5Lm (t5.h): the encoder, the decoder's appends against the state's caches, the relative position bias.
#include "models/t5.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "core/limits.h"
#include "core/rules.h"
#include "core/size_math.h"
#include "core/workspace.h"
#include "kernels/elementwise.h"
#include "layers/residual.h"
#include "ops/attention.h"

namespace aw {

int32_t T5Bucket(int64_t rel, bool bidirectional, int64_t buckets, int64_t max_distance) {
  int64_t ret = 0;
  if (bidirectional) {
    buckets /= 2;
    if (rel > 0) ret += buckets;
    rel = rel < 0 ? -rel : rel;
  } else {
    rel = rel < 0 ? -rel : 0;  // -min(rel, 0)
  }
  const int64_t max_exact = buckets / 2;
  if (rel < max_exact) return int32_t(ret + rel);
  // float32, as torch: log(rel / max_exact) / log(max_distance / max_exact) · (buckets − max_exact), truncated.
  const float a = float(rel) / float(max_exact);
  const float l = float(std::log(double(a)));
  const float d = l / float(std::log(double(max_distance) / double(max_exact)));
  const float m = d * float(buckets - max_exact);
  int64_t large = max_exact + int64_t(m);
  if (large > buckets - 1) large = buckets - 1;
  return int32_t(ret + large);
}

Status T5Block::Init(const T5Config& c, bool decoder, bool relative_bias, Rng& rng) {
  const int64_t E = c.d_model, I = c.inner();
  for (Linear* l : {&q, &k, &v}) AW_RETURN_IF_ERROR(l->Init(E, I, false, rng));
  AW_RETURN_IF_ERROR(o.Init(I, E, false, rng));
  self_attn_.Add("q", &q);
  self_attn_.Add("k", &k);
  self_attn_.Add("v", &v);
  self_attn_.Add("o", &o);
  if (relative_bias) {
    AW_RETURN_IF_ERROR(relative_attention_bias.Init(c.buckets, c.heads));
    self_attn_.Add("relative_attention_bias", &relative_attention_bias);
  }
  AW_RETURN_IF_ERROR(self_norm.Init({E}, c.eps, true));
  l0_.Add("SelfAttention", &self_attn_);
  l0_.Add("layer_norm", &self_norm);
  layer_.Add("0", &l0_);
  ModuleList* ff_layer = &l1_;
  if (decoder) {
    for (Linear* l : {&cq, &ck, &cv}) AW_RETURN_IF_ERROR(l->Init(E, I, false, rng));
    AW_RETURN_IF_ERROR(co.Init(I, E, false, rng));
    cross_attn_.Add("q", &cq);
    cross_attn_.Add("k", &ck);
    cross_attn_.Add("v", &cv);
    cross_attn_.Add("o", &co);
    AW_RETURN_IF_ERROR(cross_norm.Init({E}, c.eps, true));
    l1_.Add("EncDecAttention", &cross_attn_);
    l1_.Add("layer_norm", &cross_norm);
    layer_.Add("1", &l1_);
    ff_layer = &l2_;
  }
  if (c.gated) {
    AW_RETURN_IF_ERROR(wi_0.Init(E, c.d_ff, false, rng));
    AW_RETURN_IF_ERROR(wi_1.Init(E, c.d_ff, false, rng));
    ff_.Add("wi_0", &wi_0);
    ff_.Add("wi_1", &wi_1);
  } else {
    AW_RETURN_IF_ERROR(wi.Init(E, c.d_ff, false, rng));
    ff_.Add("wi", &wi);
  }
  AW_RETURN_IF_ERROR(wo.Init(c.d_ff, E, false, rng));
  ff_.Add("wo", &wo);
  AW_RETURN_IF_ERROR(ff_norm.Init({E}, c.eps, true));
  ff_layer->Add("DenseReluDense", &ff_);
  ff_layer->Add("layer_norm", &ff_norm);
  layer_.Add(decoder ? "2" : "1", ff_layer);
  AddChild("layer", &layer_);
  return Status::OK();
}

Status T5Lm::Init(const T5Config& c, Rng& rng, const io::ConfigSource* src) {
  AW_RETURN_IF_ERROR(CheckT5Config(c, src));
  if (rng.fills()) return ArgError("Seq2SeqLM: built only from a checkpoint (aw.loadModel)");
  cfg_ = c;
  AW_RETURN_IF_ERROR(shared_.Init(c.vocab, c.d_model, 0, false, rng));
  AddChild("shared", &shared_);
  for (int64_t i = 0; i < c.encoder_layers; ++i) {
    enc_.push_back(std::make_unique<T5Block>());
    AW_RETURN_IF_ERROR(enc_.back()->Init(c, false, i == 0, rng));
    enc_blocks_.Append(enc_.back().get());
  }
  for (int64_t i = 0; i < c.decoder_layers; ++i) {
    dec_.push_back(std::make_unique<T5Block>());
    AW_RETURN_IF_ERROR(dec_.back()->Init(c, true, i == 0, rng));
    dec_blocks_.Append(dec_.back().get());
  }
  AW_RETURN_IF_ERROR(enc_final_.Init({c.d_model}, c.eps, true));
  AW_RETURN_IF_ERROR(dec_final_.Init({c.d_model}, c.eps, true));
  encoder_.Add("block", &enc_blocks_);
  encoder_.Add("final_layer_norm", &enc_final_);
  decoder_.Add("block", &dec_blocks_);
  decoder_.Add("final_layer_norm", &dec_final_);
  AddChild("encoder", &encoder_);
  AddChild("decoder", &decoder_);
  if (!c.tied) {
    AW_RETURN_IF_ERROR(lm_head_.Init(c.d_model, c.vocab, false, rng));
    AddChild("lm_head", &lm_head_);
  }
  return Status::OK();
}

void T5Lm::PositionBias(bool decoder, size_t q0, size_t L, size_t S, float* out) const {
  const size_t H = size_t(cfg_.heads);
  const float* table = (decoder ? dec_ : enc_)[0]->relative_attention_bias.w;
  for (size_t i = 0; i < L; ++i)
    for (size_t j = 0; j < S; ++j) {
      const float* row = table + size_t(T5Bucket(int64_t(j) - int64_t(q0 + i), !decoder, cfg_.buckets, cfg_.max_distance)) * H;
      for (size_t h = 0; h < H; ++h) out[(h * L + i) * S + j] = row[h];
    }
}

Status T5Lm::FeedForward(const T5Block& b, size_t n, const float* h, float* ff, float* y) const {
  const size_t E = size_t(cfg_.d_model), F = size_t(cfg_.d_ff);
  if (cfg_.gated) {
    ScratchScope scope;
    float* lin = nullptr;
    AW_RETURN_IF_ERROR(scope.Take(n * F, "feed-forward rows", &lin));
    b.wi_0.Apply(n, h, E, ff, F);
    ApplyActivation(cfg_.act, n * F, ff);
    b.wi_1.Apply(n, h, E, lin, F);
    kernels::f32_mul(n * F, ff, lin);
  } else {
    b.wi.Apply(n, h, E, ff, F);
    ApplyActivation(cfg_.act, n * F, ff);
  }
  b.wo.Apply(n, ff, F, y, E);
  return Status::OK();
}

namespace {

// groups × heads heads: queries (L rows per group, ld I) over keys / values (S rows per group at kstride, ld I),
// not scaled; add (heads, L, S) shared by the groups, or null (with bias_n, (heads, bias_n, bias_n), of which the
// top-left L × S block is read); key_add (groups, S), or null; masked_unread: AttnShape's (a packed Begin's zeros).
Status T5Attend(size_t groups, size_t H, size_t D, size_t I, size_t L, size_t S, const float* q, const float* k,
                const float* v, size_t kstride, const float* add, const float* key_add, bool causal, int64_t offset,
                float* ctx, size_t bias_n = 0, bool masked_unread = false) {
  AttnShape sh;
  sh.L = L;
  sh.S = S;
  sh.hd = sh.hdv = D;
  sh.ldq = sh.ldk = sh.ldv = sh.ldo = I;
  sh.scale = 1.0f;
  sh.masked_keys = S;
  sh.causal = causal;
  sh.causal_offset = offset;
  sh.add_ld = bias_n ? bias_n : S;
  sh.add_cs = 1;
  sh.masked_unread = masked_unread;
  sh.direct = true;  // a step's few rows (L <= kAttnDirectRows): K and V read in place, not packed
  auto head = [&](size_t g, size_t h) {
    AttnHead a;
    a.q = q + g * L * I + h * D;
    a.k = k + g * kstride + h * D;
    a.v = v + g * kstride + h * D;
    a.out = ctx + g * L * I + h * D;
    if (add) a.add = add + h * (bias_n ? bias_n * bias_n : L * S);
    if (key_add) a.key_add = key_add + g * S;
    return a;
  };
  return Attend(sh, groups, H, head);
}

}  // namespace

Status T5Lm::Begin(const int32_t* ids, const int32_t* mask, int64_t B, int64_t S, int64_t beams, int64_t capacity,
                   Seq2SeqState* st) {
  AW_RETURN_IF_ERROR(CheckBegin(B, beams, capacity, kMaxSequence));
  AW_RETURN_IF_ERROR(IntInRange("inputIds.shape[1] (tokens)", S, 1, kMaxSequence));
  AW_RETURN_IF_ERROR(shared_.CheckIds(ids, B * S, "inputIds"));
  AW_RETURN_IF_ERROR(CheckSourceMask(mask, B, S));
  const size_t E = size_t(cfg_.d_model), H = size_t(cfg_.heads), D = size_t(cfg_.d_kv), I = size_t(cfg_.inner());
  const size_t F = size_t(cfg_.d_ff), n = size_t(B * S), Sn = size_t(S);
  if (NumelChecked({B, S, cfg_.d_model}) < 0 || NumelChecked({int64_t(H), S, S}) < 0)
    return ShapeError("inputIds: the encoder's states (B, S, dModel) or its position bias (heads, S, S) exceed 2^29 elements");
  AW_RETURN_IF_ERROR(st->memory.Resize(n * E, "encoderLastHiddenState"));
  std::vector<float> key_add(n, 0.0f);
  if (mask)
    for (size_t i = 0; i < n; ++i) key_add[i] = mask[i] ? 0.0f : -std::numeric_limits<float>::infinity();
  float* x = st->memory.data();
  shared_.Lookup(n, ids, x, E);
  // Generation, sources padded at either end: their tokens only, packed (a run's relative positions are its own).
  std::vector<size_t> lens;
  const size_t packed = st->keep_memory ? 0 : PackRows(mask, size_t(B), Sn, E, true, x, &lens);
  const size_t m = packed ? packed : n;
  {
    ScratchScope scope;
    float *q, *k, *v, *ctx, *ff, *bias;
    AW_RETURN_IF_ERROR(scope.Take(n * I, "queries", &q));
    AW_RETURN_IF_ERROR(scope.Take(n * I, "keys", &k));
    AW_RETURN_IF_ERROR(scope.Take(n * I, "values", &v));
    AW_RETURN_IF_ERROR(scope.Take(n * I, "attention output", &ctx));
    AW_RETURN_IF_ERROR(scope.Take(n * F, "feed-forward rows", &ff));
    AW_RETURN_IF_ERROR(scope.Take(H * Sn * Sn, "position bias", &bias));
    PositionBias(false, 0, Sn, Sn, bias);
    ResidualBlocks res;
    AW_RETURN_IF_ERROR(res.Begin(&scope, NormPlace::kPre, m, E));
    for (auto& bp : enc_) {
      T5Block& b = *bp;
      AW_RETURN_IF_ERROR(res.Block(b.self_norm, x, [&](const float* h, float* y) -> Status {
        b.q.Apply(m, h, E, q, I);
        b.k.Apply(m, h, E, k, I);
        b.v.Apply(m, h, E, v, I);
        if (lens.empty())
          AW_RETURN_IF_ERROR(T5Attend(size_t(B), H, D, I, Sn, Sn, q, k, v, Sn * I, bias, mask ? key_add.data() : nullptr,
                                      false, 0, ctx));
        for (size_t j = 0, o = 0; j < lens.size(); o += lens[j++] * I)  // packed: each source's run over itself
          AW_RETURN_IF_ERROR(T5Attend(1, H, D, I, lens[j], lens[j], q + o, k + o, v + o, 0, bias, nullptr, false, 0,
                                      ctx + o, Sn));
        b.o.Apply(m, ctx, I, y, E);
        return Status::OK();
      }));
      AW_RETURN_IF_ERROR(res.Block(b.ff_norm, x, [&](const float* h, float* y) { return FeedForward(b, m, h, ff, y); }));
    }
    enc_final_.Apply(m, x, E, x, E);
  }
  AW_RETURN_IF_ERROR(BeginState(st, mask, B, S, beams, dec_.size(), I, [&](size_t l, float* k, float* v) {
    dec_[l]->ck.Apply(m, x, E, k, I);
    dec_[l]->cv.Apply(m, x, E, v, I);
    if (m != n) SpreadRows(mask, n, m, I, k), SpreadRows(mask, n, m, I, v);
  }));
  st->packed = m != n;
  if (!st->keep_memory) st->memory.Release();  // generation: the cross keys and values are all it reads
  return BeginTarget(st, dec_.size(), I, size_t(capacity));
}

Status T5Lm::Append(Seq2SeqState* st, const int32_t* tokens, int64_t T, bool all, Buffer* logits) {
  AW_RETURN_IF_ERROR(AppendTarget(st, T));
  KvCache& cache = st->self;
  const size_t R = st->rows, Tn = size_t(T), n = R * Tn, len = cache.len, Sk = len + Tn;
  AW_RETURN_IF_ERROR(shared_.CheckIds(tokens, int64_t(n), "decoderInputIds"));
  const size_t E = size_t(cfg_.d_model), H = size_t(cfg_.heads), D = size_t(cfg_.d_kv), I = size_t(cfg_.inner());
  const size_t F = size_t(cfg_.d_ff), V = size_t(cfg_.vocab), out_rows = all ? n : R;
  if (NumelChecked({int64_t(out_rows), int64_t(V)}) < 0 || NumelChecked({int64_t(H), int64_t(Tn), int64_t(Sk)}) < 0)
    return ShapeError("logits (rows, tokens, vocab) or the position bias (heads, tokens, positions) exceed 2^29 elements");
  AW_RETURN_IF_ERROR(logits->Resize(out_rows * V, "logits"));
  ScratchScope scope;
  float *x, *q, *k, *v, *ctx, *ff, *bias;
  AW_RETURN_IF_ERROR(scope.Take(n * E, "decoder rows", &x));
  AW_RETURN_IF_ERROR(scope.Take(n * I, "queries", &q));
  AW_RETURN_IF_ERROR(scope.Take(n * I, "keys", &k));
  AW_RETURN_IF_ERROR(scope.Take(n * I, "values", &v));
  AW_RETURN_IF_ERROR(scope.Take(n * I, "attention output", &ctx));
  AW_RETURN_IF_ERROR(scope.Take(n * F, "feed-forward rows", &ff));
  AW_RETURN_IF_ERROR(scope.Take(H * Tn * Sk, "position bias", &bias));
  shared_.Lookup(n, tokens, x, E);
  PositionBias(true, len, Tn, Sk, bias);
  ResidualBlocks res;
  AW_RETURN_IF_ERROR(res.Begin(&scope, NormPlace::kPre, n, E));
  for (size_t l = 0; l < dec_.size(); ++l) {
    T5Block& b = *dec_[l];
    AW_RETURN_IF_ERROR(res.Block(b.self_norm, x, [&](const float* h, float* y) -> Status {
      b.q.Apply(n, h, E, q, I);
      b.k.Apply(n, h, E, k, I);
      b.v.Apply(n, h, E, v, I);
      StoreTarget(&cache, l, R, Tn, k, v);
      AW_RETURN_IF_ERROR(T5Attend(R, H, D, I, Tn, Sk, q, cache.keys(l, 0, 0), cache.values(l, 0, 0), cache.seq_stride(),
                                  bias, nullptr, Tn > 1, int64_t(len), ctx));
      b.o.Apply(n, ctx, I, y, E);
      return Status::OK();
    }));
    AW_RETURN_IF_ERROR(res.Block(b.cross_norm, x, [&](const float* h, float* y) -> Status {
      b.cq.Apply(n, h, E, q, I);
      AW_RETURN_IF_ERROR(T5Attend(st->B, H, D, I, st->beams * Tn, st->S, q, st->cross_k[l].data(), st->cross_v[l].data(),
                                  st->S * I, nullptr, st->key_add.empty() ? nullptr : st->key_add.data(), false, 0, ctx,
                                  0, st->packed));
      b.co.Apply(n, ctx, I, y, E);
      return Status::OK();
    }));
    AW_RETURN_IF_ERROR(res.Block(b.ff_norm, x, [&](const float* h, float* y) { return FeedForward(b, n, h, ff, y); }));
  }
  cache.len += Tn;
  if (!all && Tn > 1)
    for (size_t r = 0; r < R; ++r) std::memmove(x + r * E, x + (r * Tn + Tn - 1) * E, E * sizeof(float));
  dec_final_.Apply(out_rows, x, E, x, E);
  if (cfg_.tied) {  // sequence_output * model_dim ** -0.5
    const float s = float(std::pow(double(cfg_.d_model), -0.5));
    for (size_t i = 0; i < out_rows * E; ++i) x[i] *= s;
  }
  return HeadLogits(st, out_rows, x, logits);
}

}  // namespace aw
