// The encoder family (encoder.h): the layers run piece by piece — a piece is
// whole sequences whose rows fit the working-memory budget — every projection
// one GEMM over the piece's rows, attention per run of sequences of one length.
#include "models/encoder.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <string>

#include "core/limits.h"
#include "core/parallel.h"
#include "core/rules.h"
#include "core/workspace.h"
#include "kernels/activation.h"
#include "kernels/elementwise.h"
#include "layers/residual.h"
#include "ops/attention.h"

namespace aw {

void Activate(EncoderAct act, size_t n, float* x) {
  switch (act) {
    case EncoderAct::kGelu: kernels::f32_gelu(n, x); return;
    case EncoderAct::kGeluTanh: kernels::f32_gelu_tanh(n, x); return;
    case EncoderAct::kQuickGelu: kernels::f32_quick_gelu(n, x); return;
  }
}

Status EncoderLayer::Init(const EncoderConfig& c, Rng& rng) {
  const int64_t E = c.hidden, I = c.intermediate;
  for (Linear* l : {&query, &key, &value, &attn_dense}) AW_RETURN_IF_ERROR(l->Init(E, E, true, rng));
  AW_RETURN_IF_ERROR(intermediate.Init(E, FfWidth(c), true, rng));
  AW_RETURN_IF_ERROR(output_dense.Init(I, E, true, rng));
  AW_RETURN_IF_ERROR(attn_norm.Init(E, c.eps, true, true));
  AW_RETURN_IF_ERROR(output_norm.Init(E, c.eps, true, true));
  self_.Add("query", &query);
  self_.Add("key", &key);
  self_.Add("value", &value);
  attn_output_.Add("dense", &attn_dense);
  attn_output_.Add("LayerNorm", &attn_norm);
  attention_.Add("self", &self_);
  attention_.Add("output", &attn_output_);
  intermediate_.Add("dense", &intermediate);
  output_.Add("dense", &output_dense);
  output_.Add("LayerNorm", &output_norm);
  AddChild("attention", &attention_);
  AddChild("intermediate", &intermediate_);
  AddChild("output", &output_);
  if (c.layer_scale) {  // DINOv2: layer_scale{1,2}.lambda1, read as layer_scale{1,2}
    AW_RETURN_IF_ERROR(AddParam("layer_scale1", {E}, &scale1));
    AW_RETURN_IF_ERROR(AddParam("layer_scale2", {E}, &scale2));
    for (int64_t j = 0; j < E; ++j) scale1[j] = scale2[j] = 1.0f;
  }
  return Status::OK();
}

Status Encoder::Init(const EncoderConfig& c, Rng& rng, const io::ConfigSource* src) {
  if (c.tower != Tower::kNone) {  // a two-tower model's tower (clip_tower.cpp)
    AW_RETURN_IF_ERROR(CheckTowerConfig(c, src));
    cfg_ = c;
    AW_RETURN_IF_ERROR(InitTowerFront(c, rng));
  } else if (c.vision) {  // pixels in (vision_encoder.cpp)
    AW_RETURN_IF_ERROR(CheckVisionConfig(c, src));
    cfg_ = c;
    AW_RETURN_IF_ERROR(vision_.Init(c, rng));
    AddChild("embeddings", &vision_);
  } else {
    AW_RETURN_IF_ERROR(CheckEncoderConfig(c, src));
    cfg_ = c;
    AW_RETURN_IF_ERROR(word_.Init(c.vocab, c.hidden, c.pad_id, false, rng));
    AW_RETURN_IF_ERROR(position_.Init(c.max_positions, c.hidden, 0, false, rng));
    AW_RETURN_IF_ERROR(embed_norm_.Init(c.hidden, c.eps, true, true));
    embeddings_.Add("word_embeddings", &word_);
    embeddings_.Add("position_embeddings", &position_);
    if (c.type_vocab) {  // DistilBERT has none
      AW_RETURN_IF_ERROR(token_type_.Init(c.type_vocab, c.hidden, 0, false, rng));
      embeddings_.Add("token_type_embeddings", &token_type_);
    }
    embeddings_.Add("LayerNorm", &embed_norm_);
    AddChild("embeddings", &embeddings_);
  }
  for (int64_t i = 0; i < c.layers; ++i) {
    layers_.push_back(std::make_unique<EncoderLayer>());
    AW_RETURN_IF_ERROR(layers_.back()->Init(c, rng));
    layer_list_.Append(layers_.back().get());
  }
  encoder_.Add("layer", &layer_list_);
  AddChild("encoder", &encoder_);
  if (c.pooler) {
    AW_RETURN_IF_ERROR(pooler_dense_.Init(c.hidden, c.hidden, true, rng));
    pooler_.Add("dense", &pooler_dense_);
    AddChild("pooler", &pooler_);
  }
  if (c.tower != Tower::kNone) return InitTowerHead(c, rng);
  if (c.vision) return InitVisionHead(c, rng);
  if (c.head != EncoderHead::kNone) {
    AW_RETURN_IF_ERROR(classifier_.Init(c.hidden, c.labels, true, rng));
    if (c.head == EncoderHead::kSequence && c.model_type != "bert")
      AW_RETURN_IF_ERROR(head_dense_.Init(c.hidden, c.hidden, true, rng));
    if (c.head == EncoderHead::kSequence && c.roberta_positions) {  // RobertaClassificationHead
      head_.Add("dense", &head_dense_);
      head_.Add("out_proj", &classifier_);
      AddChild("classifier", &head_);
    } else {
      if (c.head == EncoderHead::kSequence && c.distil) AddChild("pre_classifier", &head_dense_);
      AddChild("classifier", &classifier_);
    }
  }
  return Status::OK();
}

int64_t Encoder::max_tokens() const { return EncoderMaxTokens(cfg_); }

void Encoder::Positions(size_t T, const int32_t* ids, int32_t* pos) const {
  if (!cfg_.roberta_positions) {
    for (size_t t = 0; t < T; ++t) pos[t] = int32_t(t);
    return;
  }
  // create_position_ids_from_input_ids: cumsum(ids != pad) · (ids != pad) + pad.
  const int32_t pad = int32_t(cfg_.pad_id);
  int32_t seen = 0;
  for (size_t t = 0; t < T; ++t) {
    const bool real = ids[t] != pad;
    seen += real;
    pos[t] = real ? seen + pad : pad;
  }
}

Status Encoder::Embeddings(size_t n, const int32_t* ids, const int32_t* types, const int32_t* pos, float* x) const {
  const size_t E = size_t(cfg_.hidden);
  ScratchScope scope;
  float* row = nullptr;
  AW_RETURN_IF_ERROR(scope.Take(E, "an embedding row", &row));
  word_.Lookup(n, ids, x, E);
  // HF's order: inputs_embeds + token_type_embeddings, then + position_embeddings.
  static const int32_t kZero = 0;
  for (size_t i = 0; i < n; ++i) {
    float* xi = x + i * E;
    if (cfg_.type_vocab) {
      token_type_.Lookup(1, types ? types + i : &kZero, row, E);
      for (size_t j = 0; j < E; ++j) xi[j] = xi[j] + row[j];
    }
    position_.Lookup(1, pos + i, row, E);
    for (size_t j = 0; j < E; ++j) xi[j] = xi[j] + row[j];
  }
  embed_norm_.Apply(n, x, E, x, E);
  return Status::OK();
}

Status Encoder::Layers(float* x, const size_t* starts, const size_t* lens, size_t nseq, const float* key_add,
                       float* attention) {
  const size_t E = size_t(cfg_.hidden), H = size_t(cfg_.heads), D = E / H, I = size_t(cfg_.intermediate);
  const size_t rows = starts[nseq - 1] + lens[nseq - 1] - starts[0];
  float* const x0 = x;
  ScratchScope scope;
  float *q = nullptr, *k = nullptr, *v = nullptr, *ctx = nullptr, *ff = nullptr;
  AW_RETURN_IF_ERROR(scope.Take(rows * E, "queries", &q));
  AW_RETURN_IF_ERROR(scope.Take(rows * E, "keys", &k));
  AW_RETURN_IF_ERROR(scope.Take(rows * E, "values", &v));
  AW_RETURN_IF_ERROR(scope.Take(rows * E, "attention output", &ctx));
  const size_t F = size_t(FfWidth(cfg_));
  AW_RETURN_IF_ERROR(scope.Take(rows * F, "intermediate rows", &ff));
  ResidualBlocks res;
  AW_RETURN_IF_ERROR(res.Begin(&scope, cfg_.pre_norm ? NormPlace::kPre : NormPlace::kPost, rows, E));
  // DINOv2's layer scale: a sublayer's rows y times lambda1 (E) before the residual.
  auto scaled = [&](const float* lambda, float* y) {
    for (size_t r = 0; lambda && r < rows; ++r) kernels::f32_mul(E, y + r * E, lambda);
  };
  const float scale = float(1.0 / std::sqrt(double(D)));
  const size_t L = layers_.size();
  for (size_t l = 0; l < L; ++l) {
    EncoderLayer& ly = *layers_[l];
    AW_RETURN_IF_ERROR(res.Block(ly.attn_norm, x0, [&](const float* h, float* y) -> Status {
      ly.query.Apply(rows, h, E, q, E);
      ly.key.Apply(rows, h, E, k, E);
      ly.value.Apply(rows, h, E, v, E);
      // Runs of sequences of one length share a call (a padded batch is one run).
      for (size_t s0 = 0; s0 < nseq;) {
        size_t s1 = s0 + 1;
        while (s1 < nseq && lens[s1] == lens[s0] && starts[s1] == starts[s1 - 1] + lens[s0]) ++s1;
        const size_t T = lens[s0], base = starts[s0] - starts[0];
        AttnShape sh;
        sh.L = sh.S = T;
        sh.hd = sh.hdv = D;
        sh.ldq = sh.ldk = sh.ldv = sh.ldo = E;
        sh.scale = scale;
        sh.masked_keys = T;
        sh.causal = cfg_.causal;  // CLIP's text tower
        sh.weights = attention != nullptr;  // (nseq, layers, heads, T, T): a padded batch's, one T
        sh.ldw = T;
        auto head = [&](size_t g, size_t hh) {
          const size_t off = (base + g * T) * E + hh * D;
          AttnHead a;
          a.q = q + off;
          a.k = k + off;
          a.v = v + off;
          a.out = ctx + off;
          if (key_add) a.key_add = key_add + (s0 + g) * T;
          if (attention) a.weights = attention + (((s0 + g) * L + l) * H + hh) * T * T;
          return a;
        };
        AW_RETURN_IF_ERROR(Attend(sh, s1 - s0, H, head));
        s0 = s1;
      }
      ly.attn_dense.Apply(rows, ctx, E, y, E);
      scaled(ly.scale1, y);
      return Status::OK();
    }));
    AW_RETURN_IF_ERROR(res.Block(ly.output_norm, x0, [&](const float* h, float* y) -> Status {
      ly.intermediate.Apply(rows, h, E, ff, F);
      if (cfg_.swiglu) {  // silu(x1) · x2 per row, packed to rows of I in place (row r's result lands at or
                          // before its own first half: nothing unread is overwritten)
        for (size_t r = 0; r < rows; ++r) {
          float* x1 = ff + r * F;
          kernels::f32_silu(I, x1);
          kernels::f32_mul(I, x1, x1 + I);
          if (r) std::memmove(ff + r * I, x1, I * sizeof(float));
        }
      } else {
        Activate(cfg_.act, rows * I, ff);
      }
      ly.output_dense.Apply(rows, ff, I, y, E);
      scaled(ly.scale2, y);
      return Status::OK();
    }));
  }
  return Status::OK();
}

Status Encoder::Forward(const int32_t* ids, const int32_t* types, const int32_t* mask, int64_t B, int64_t T,
                        Buffer* hidden, Buffer* pooled, Buffer* attention) {
  AW_RETURN_IF_ERROR(IntInRange("inputIds.shape[0] (batch)", B, 1, kMaxElements));
  AW_RETURN_IF_ERROR(IntInRange("inputIds.shape[1] (tokens)", T, 1, max_tokens()));
  AW_RETURN_IF_ERROR(word_.CheckIds(ids, B * T, "inputIds"));
  if (types && !cfg_.type_vocab) return ArgError("tokenTypeIds: this model (DistilBERT) has no token types; pass none");
  if (types) AW_RETURN_IF_ERROR(token_type_.CheckIds(types, B * T, "tokenTypeIds"));
  if (mask)
    for (int64_t i = 0; i < B * T; ++i)
      if (mask[i] != 0 && mask[i] != 1)
        return ArgError("attentionMask: expected 0s and 1s, got " + std::to_string(mask[i]) + " at index (" +
                        std::to_string(i / T) + ", " + std::to_string(i % T) + ")");
  const size_t E = size_t(cfg_.hidden), n = size_t(B * T);
  if (NumelChecked({B, T, cfg_.hidden}) < 0) return ShapeError("lastHiddenState (B, T, hidden) exceeds 2^29 elements");
  AW_RETURN_IF_ERROR(hidden->Resize(n * E, "lastHiddenState"));
  if (cfg_.pooler) AW_RETURN_IF_ERROR(pooled->Resize(size_t(B) * E, "poolerOutput"));
  const size_t LH = size_t(cfg_.layers * cfg_.heads);
  if (attention) {
    if (NumelChecked({B, int64_t(LH), T, T}) < 0)
      return ShapeError("attentions (B, layers, heads, T, T) exceed 2^29 elements");
    AW_RETURN_IF_ERROR(attention->Resize(size_t(B) * LH * size_t(T * T), "attentions"));
  }
  // Pieces of whole sequences within the budget.
  const size_t per_seq = size_t(T) * (7 * E + size_t(FfWidth(cfg_)) + 2) * sizeof(float);
  const size_t piece = WorkPieceEntries(size_t(B), per_seq);
  for (size_t b0 = 0; b0 < size_t(B); b0 += piece) {
    const size_t nb = std::min(piece, size_t(B) - b0), rows = nb * size_t(T);
    ScratchScope scope;
    int32_t* pos = nullptr;
    float* add = nullptr;
    size_t* starts = nullptr;
    size_t* lens = nullptr;
    AW_RETURN_IF_ERROR(scope.Take(rows, "positions", &pos));
    AW_RETURN_IF_ERROR(scope.Take(nb, "sequence starts", &starts));
    AW_RETURN_IF_ERROR(scope.Take(nb, "sequence lengths", &lens));
    if (mask) AW_RETURN_IF_ERROR(scope.Take(rows, "key masks", &add));
    const size_t first = b0 * size_t(T);
    for (size_t s = 0; s < nb; ++s) {
      starts[s] = s * size_t(T);
      lens[s] = size_t(T);
      Positions(size_t(T), ids + first + s * size_t(T), pos + s * size_t(T));
    }
    // HF's extended mask: (1 − mask) · float32's lowest, added to the scores.
    if (mask)
      for (size_t i = 0; i < rows; ++i) add[i] = mask[first + i] ? 0.0f : -FLT_MAX;
    float* x = hidden->data() + first * E;
    AW_RETURN_IF_ERROR(Embeddings(rows, ids + first, types ? types + first : nullptr, pos, x));
    AW_RETURN_IF_ERROR(Layers(x, starts, lens, nb, add, attention ? attention->data() + b0 * LH * size_t(T * T) : nullptr));
    if (cfg_.pooler) {
      float* first_rows = nullptr;
      AW_RETURN_IF_ERROR(scope.Take(nb * E, "first tokens", &first_rows));
      for (size_t s = 0; s < nb; ++s) std::memcpy(first_rows + s * E, x + s * size_t(T) * E, E * sizeof(float));
      float* out = pooled->data() + b0 * E;
      pooler_dense_.Apply(nb, first_rows, E, out, E);
      for (size_t i = 0; i < nb * E; ++i) out[i] = std::tanh(out[i]);
    }
  }
  return Status::OK();
}

Status Encoder::Head(const float* x, const size_t* starts, size_t nseq, size_t rows, float* out) const {
  const size_t E = size_t(cfg_.hidden), C = size_t(cfg_.labels);
  if (cfg_.head == EncoderHead::kToken) {
    classifier_.Apply(rows, x, E, out, C);
    return Status::OK();
  }
  // classifier(tanh(dense(x[:, 0]))): BERT's dense is its pooler's, RoBERTa's the head's own; DistilBERT's
  // classifier(relu(pre_classifier(x[:, 0]))).
  ScratchScope scope;
  float *first = nullptr, *mid = nullptr;
  AW_RETURN_IF_ERROR(scope.Take(nseq * E, "first tokens", &first));
  AW_RETURN_IF_ERROR(scope.Take(nseq * E, "head rows", &mid));
  for (size_t s = 0; s < nseq; ++s) std::memcpy(first + s * E, x + (starts[s] - starts[0]) * E, E * sizeof(float));
  (cfg_.model_type == "bert" ? pooler_dense_ : head_dense_).Apply(nseq, first, E, mid, E);
  for (size_t i = 0; i < nseq * E; ++i) mid[i] = cfg_.distil ? std::max(mid[i], 0.0f) : std::tanh(mid[i]);
  classifier_.Apply(nseq, mid, E, out, C);
  return Status::OK();
}

namespace {

// One sequence's rows h (len, E) pooled into out (E), sentence-transformers' way (Pooling.forward): float32
// sums in token order, then the divisions it makes.
void Pool(Pooling mode, size_t len, size_t skip, size_t E, const float* h, float* out) {
  const size_t from = std::min(skip, len);
  const size_t count = len - from;
  switch (mode) {
    case Pooling::kCls: std::memcpy(out, h, E * sizeof(float)); return;
    case Pooling::kLasttoken: std::memcpy(out, h + (len - 1) * E, E * sizeof(float)); return;
    case Pooling::kMax:
      for (size_t j = 0; j < E; ++j) {
        float m = count ? h[from * E + j] : -1e9f;  // an empty selection: the fill value Pooling uses
        for (size_t t = from + 1; t < len; ++t) m = std::max(m, h[t * E + j]);
        out[j] = m;
      }
      return;
    case Pooling::kWeightedmean: {
      // Weights 1 … len by position (masked tokens weigh 0); sum(w · x) / sum(w).
      float wsum = 0.0f;
      for (size_t t = from; t < len; ++t) wsum += float(t + 1);
      for (size_t j = 0; j < E; ++j) {
        float s = 0.0f;
        for (size_t t = from; t < len; ++t) s += h[t * E + j] * float(t + 1);
        out[j] = s / std::max(wsum, 1e-9f);
      }
      return;
    }
    case Pooling::kMean:
    case Pooling::kMeanSqrtLen: {
      const float n = std::max(float(count), 1e-9f);  // torch.clamp(sum_mask, min=1e-9)
      const float div = mode == Pooling::kMean ? n : std::sqrt(n);
      for (size_t j = 0; j < E; ++j) {
        float s = 0.0f;
        for (size_t t = from; t < len; ++t) s += h[t * E + j];
        out[j] = s / div;
      }
      return;
    }
  }
}

// F.normalize(p=2): x / max(‖x‖₂, 1e-12).
void Normalize(size_t E, float* x) {
  float ss = 0.0f;
  for (size_t j = 0; j < E; ++j) ss += x[j] * x[j];
  const float norm = std::max(std::sqrt(ss), 1e-12f);
  for (size_t j = 0; j < E; ++j) x[j] = x[j] / norm;
}

}  // namespace

Status Encoder::Embed(const int32_t* ids, const int32_t* types, const int32_t* lengths, size_t n, const EmbedOptions& o,
                      Buffer* out) {
  AW_RETURN_IF_ERROR(IntInRange("sequences", int64_t(n), 1, kMaxElements));
  if (o.head && cfg_.head == EncoderHead::kNone) return ArgError("head: this checkpoint has no task head");
  if (!o.head && (o.modes == 0 || o.modes >= (1u << kPoolingModes))) return ArgError("pooling: expected one to six modes, got none");
  size_t k = 0;  // modes on
  for (int m = 0; m < kPoolingModes; ++m) k += (o.modes >> m) & 1;
  size_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    if (lengths[i] < 1 || lengths[i] > max_tokens())
      return OutOfRangeError("lengths[" + std::to_string(i) + "]: expected an integer in [1, " +
                             std::to_string(max_tokens()) + "] (the model's tokens), got " + std::to_string(lengths[i]))
          .At({"lengths", int64_t(i), lengths[i], max_tokens()});
    total += size_t(lengths[i]);
  }
  AW_RETURN_IF_ERROR(word_.CheckIds(ids, int64_t(total), "ids"));
  if (types && !cfg_.type_vocab) return ArgError("tokenTypeIds: this model (DistilBERT) has no token types; pass none");
  if (types) AW_RETURN_IF_ERROR(token_type_.CheckIds(types, int64_t(total), "tokenTypeIds"));
  const bool per_token = o.head && cfg_.head == EncoderHead::kToken;
  const size_t E = size_t(cfg_.hidden), D = o.head ? size_t(cfg_.labels) : k * E;
  AW_RETURN_IF_ERROR(out->Resize((per_token ? total : n) * D, o.head ? "logits" : "embeddings"));
  const size_t per_row = (7 * E + size_t(FfWidth(cfg_)) + 2) * sizeof(float);
  const size_t budget_rows = WorkPieceEntries(total, per_row);
  size_t at = 0;  // the first id of sequence s0
  for (size_t s0 = 0; s0 < n;) {
    // A piece: sequences from s0 while their rows fit (at least one).
    size_t s1 = s0, rows = 0;
    while (s1 < n && (s1 == s0 || rows + size_t(lengths[s1]) <= budget_rows)) rows += size_t(lengths[s1++]);
    ScratchScope scope;
    float* x = nullptr;
    int32_t* pos = nullptr;
    size_t* starts = nullptr;
    size_t* lens = nullptr;
    AW_RETURN_IF_ERROR(scope.Take(rows * E, "hidden rows", &x));
    AW_RETURN_IF_ERROR(scope.Take(rows, "positions", &pos));
    AW_RETURN_IF_ERROR(scope.Take(s1 - s0, "sequence starts", &starts));
    AW_RETURN_IF_ERROR(scope.Take(s1 - s0, "sequence lengths", &lens));
    for (size_t s = s0, r = 0; s < s1; r += size_t(lengths[s++])) {
      starts[s - s0] = r;
      lens[s - s0] = size_t(lengths[s]);
      Positions(size_t(lengths[s]), ids + at + r, pos + r);
    }
    AW_RETURN_IF_ERROR(Embeddings(rows, ids + at, types ? types + at : nullptr, pos, x));
    AW_RETURN_IF_ERROR(Layers(x, starts, lens, s1 - s0, nullptr, nullptr));
    if (o.head) AW_RETURN_IF_ERROR(Head(x, starts, s1 - s0, rows, out->data() + (per_token ? at : s0) * D));
    for (size_t s = s0; s < s1 && !o.head; ++s) {
      float* dst = out->data() + s * D;
      const size_t skip = o.skip ? size_t(std::max(o.skip[s], 0)) : 0;
      for (int m = 0, slot = 0; m < kPoolingModes; ++m)
        if ((o.modes >> m) & 1) Pool(Pooling(m), lens[s - s0], skip, E, x + starts[s - s0] * E, dst + E * size_t(slot++));
      if (o.normalize) Normalize(D, dst);
    }
    at += rows;
    s0 = s1;
  }
  return Status::OK();
}

}  // namespace aw
