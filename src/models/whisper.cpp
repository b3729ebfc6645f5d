// WhisperLm (whisper.h): the convolutional stem, the encoder, the decoder's appends against the state's caches.
#include "models/whisper.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/limits.h"
#include "core/rules.h"
#include "core/size_math.h"
#include "core/workspace.h"
#include "kernels/elementwise.h"

namespace aw {

Status WhisperLm::Init(const WhisperConfig& c, Rng& rng, const io::ConfigSource* src) {
  AW_RETURN_IF_ERROR(CheckWhisperConfig(c, src));
  if (rng.fills()) return ArgError("SpeechRecognizer: built only from a checkpoint (aw.loadModel)");
  cfg_ = c;
  const Seq2SeqConfig& s = c.s;
  const int64_t E = s.d_model;
  AW_RETURN_IF_ERROR(conv1_.Init(c.mel_bins, E, 3, 1, 1, true, rng));
  AW_RETURN_IF_ERROR(conv2_.Init(E, E, 3, 2, 1, true, rng));
  AW_RETURN_IF_ERROR(enc_pos_.Init(c.max_source, E, 0, false, rng));
  encoder_.Add("conv1", &conv1_);
  encoder_.Add("conv2", &conv2_);
  encoder_.Add("embed_positions", &enc_pos_);
  AW_RETURN_IF_ERROR(dec_embed_.Init(s.vocab, E, 0, false, rng));
  AW_RETURN_IF_ERROR(dec_pos_.Init(s.max_positions, E, 0, false, rng));
  decoder_.Add("embed_tokens", &dec_embed_);
  decoder_.Add("embed_positions", &dec_pos_);
  for (int64_t i = 0; i < s.encoder_layers; ++i) {
    enc_layers_.push_back(std::make_unique<Seq2SeqLayer>());
    AW_RETURN_IF_ERROR(enc_layers_.back()->Init(s, false, rng));
    enc_list_.Append(enc_layers_.back().get());
  }
  for (int64_t i = 0; i < s.decoder_layers; ++i) {
    dec_layers_.push_back(std::make_unique<Seq2SeqLayer>());
    AW_RETURN_IF_ERROR(dec_layers_.back()->Init(s, true, rng));
    dec_list_.Append(dec_layers_.back().get());
  }
  encoder_.Add("layers", &enc_list_);
  decoder_.Add("layers", &dec_list_);
  AW_RETURN_IF_ERROR(enc_norm_.Init(E, s.eps, true, true));
  AW_RETURN_IF_ERROR(dec_norm_.Init(E, s.eps, true, true));
  encoder_.Add("layer_norm", &enc_norm_);
  decoder_.Add("layer_norm", &dec_norm_);
  model_.Add("encoder", &encoder_);
  model_.Add("decoder", &decoder_);
  AddChild("model", &model_);
  if (!s.tied) {
    AW_RETURN_IF_ERROR(proj_out_.Init(E, s.vocab, false, rng));
    AddChild("proj_out", &proj_out_);
  }
  return Status::OK();
}

Status WhisperLm::CheckFeatures(int64_t B, int64_t M, int64_t T) const {
  AW_RETURN_IF_ERROR(IntInRange("inputFeatures.shape[0] (batch)", B, 1, kMaxSeq2SeqRows));
  if (M != cfg_.mel_bins || T != cfg_.frames())
    return ShapeError("inputFeatures: expected (batch, " + std::to_string(cfg_.mel_bins) + ", " + std::to_string(cfg_.frames()) +
                      ") (num_mel_bins, 2 · max_source_positions frames: 30 s, padded as the feature extractor pads), got (" +
                      std::to_string(B) + ", " + std::to_string(M) + ", " + std::to_string(T) + ")");
  if (NumelChecked({B, cfg_.max_source, cfg_.s.d_model}) < 0 || NumelChecked({B, M, T}) < 0)
    return ShapeError("inputFeatures: the batch's encoder states (batch, max_source_positions, d_model) exceed 2^29 elements");
  return Status::OK();
}

Status WhisperLm::Encode(const float* features, int64_t B, int64_t M, int64_t T, Buffer* hidden) {
  AW_RETURN_IF_ERROR(CheckFeatures(B, M, T));
  const size_t E = size_t(cfg_.s.d_model), S = size_t(cfg_.max_source), Mz = size_t(M), Tz = size_t(T);
  AW_RETURN_IF_ERROR(hidden->Resize(size_t(B) * S * E, "encoderLastHiddenState"));
  ScratchScope scope;
  float *xt, *h1, *pos;
  AW_RETURN_IF_ERROR(scope.Take(Tz * Mz, "features by frame", &xt));
  AW_RETURN_IF_ERROR(scope.Take(Tz * E, "conv1 output", &h1));
  AW_RETURN_IF_ERROR(scope.Take(S * E, "positions", &pos));
  std::vector<int32_t> rows(S);
  for (size_t i = 0; i < S; ++i) rows[i] = int32_t(i);
  enc_pos_.Lookup(S, rows.data(), pos, E);
  for (int64_t b = 0; b < B; ++b) {
    const float* f = features + size_t(b) * Mz * Tz;
    for (size_t m = 0; m < Mz; ++m)
      for (size_t t = 0; t < Tz; ++t) xt[t * Mz + m] = f[m * Tz + t];
    AW_RETURN_IF_ERROR(conv1_.Apply(Tz, xt, Mz, h1));
    ApplyActivation(Activation::kGelu, Tz * E, h1);
    float* x = hidden->data() + size_t(b) * S * E;
    AW_RETURN_IF_ERROR(conv2_.Apply(Tz, h1, E, x));
    ApplyActivation(Activation::kGelu, S * E, x);
    kernels::f32_add(S * E, x, pos);
  }
  AW_RETURN_IF_ERROR(RunEncoderLayers(enc_layers_, cfg_.s, size_t(B), S, nullptr, hidden->data()));
  enc_norm_.Apply(size_t(B) * S, hidden->data(), E, hidden->data(), E);
  return Status::OK();
}

Status WhisperLm::BeginFrom(const float* hidden, int64_t B, int64_t beams, int64_t capacity, Seq2SeqState* st) {
  const size_t E = size_t(cfg_.s.d_model), n = size_t(B * cfg_.max_source);
  AW_RETURN_IF_ERROR(BeginState(st, nullptr, B, cfg_.max_source, beams, dec_layers_.size(), E, [&](size_t l, float* k, float* v) {
    dec_layers_[l]->ck_proj.Apply(n, hidden, E, k, E);
    dec_layers_[l]->cv_proj.Apply(n, hidden, E, v, E);
  }));
  return BeginTarget(st, dec_layers_.size(), E, size_t(capacity));
}

Status WhisperLm::BeginFeatures(const float* features, int64_t B, int64_t M, int64_t T, int64_t beams, int64_t capacity,
                                Seq2SeqState* st) {
  AW_RETURN_IF_ERROR(CheckBegin(B, beams, capacity, target_limit()));
  Buffer hidden;
  AW_RETURN_IF_ERROR(Encode(features, B, M, T, &hidden));
  return BeginFrom(hidden.data(), B, beams, capacity, st);
}

Status WhisperLm::Begin(const int32_t*, const int32_t*, int64_t, int64_t, int64_t, int64_t, Seq2SeqState*) {
  return ArgError("inputIds: Whisper's encoder takes input features (batch, num_mel_bins, frames), not token ids");
}

Status WhisperLm::ForwardFeatures(const float* features, int64_t B, int64_t M, int64_t T, const int32_t* dec, int64_t Tdec,
                                  Buffer* logits, Buffer* hidden) {
  AW_RETURN_IF_ERROR(IntInRange("decoderInputIds.shape[1] (tokens)", Tdec, 1, target_limit()));
  AW_RETURN_IF_ERROR(CheckBegin(B, 1, Tdec, target_limit()));
  AW_RETURN_IF_ERROR(Encode(features, B, M, T, hidden));
  Seq2SeqState st;
  AW_RETURN_IF_ERROR(BeginFrom(hidden->data(), B, 1, Tdec, &st));
  return Append(&st, dec, Tdec, true, logits);
}

Status WhisperLm::EmbedTargets(const int32_t* tokens, size_t R, size_t T, size_t len, float* x) const {
  const size_t E = size_t(cfg_.s.d_model);
  ScratchScope scope;
  float* pos;
  AW_RETURN_IF_ERROR(scope.Take(T * E, "positions", &pos));
  dec_embed_.Lookup(R * T, tokens, x, E);
  std::vector<int32_t> at(T);
  for (size_t t = 0; t < T; ++t) at[t] = int32_t(len + t);
  dec_pos_.Lookup(T, at.data(), pos, E);
  for (size_t r = 0; r < R; ++r) kernels::f32_add(T * E, x + r * T * E, pos);
  return Status::OK();
}

Status WhisperLm::Append(Seq2SeqState* st, const int32_t* tokens, int64_t T, bool all, Buffer* logits) {
  AW_RETURN_IF_ERROR(AppendTarget(st, T));
  const size_t R = st->rows, Tn = size_t(T), n = R * Tn, len = st->self.len;
  AW_RETURN_IF_ERROR(dec_embed_.CheckIds(tokens, int64_t(n), "decoderInputIds"));
  const size_t E = size_t(cfg_.s.d_model), V = size_t(cfg_.s.vocab), out_rows = all ? n : R;
  if (NumelChecked({int64_t(out_rows), int64_t(V)}) < 0) return ShapeError("logits (rows, tokens, vocab) exceed 2^29 elements");
  AW_RETURN_IF_ERROR(logits->Resize(out_rows * V, "logits"));
  ScratchScope scope;
  float* x;
  AW_RETURN_IF_ERROR(scope.Take(n * E, "decoder rows", &x));
  AW_RETURN_IF_ERROR(EmbedTargets(tokens, R, Tn, len, x));
  AW_RETURN_IF_ERROR(RunDecoderLayers(dec_layers_, cfg_.s, st, Tn, x));
  LastRows(R, Tn, all, E, x);
  dec_norm_.Apply(out_rows, x, E, x, E);
  const PackedWeight& head = cfg_.s.tied ? dec_embed_.table() : proj_out_.packed();
  head.Product(out_rows, x, E, logits->data(), V, nullptr, 1.0f);
  return Status::OK();
}

namespace {

// The alignment heads' probabilities, taken from each layer's cross-attention queries as the decoder runs: per
// (layer, head) pair whose layer this is, per row (source row / k), per position, the softmax of q · head_dim^-0.5 · kᵀ
// over the S keys, as transformers' eager WhisperAttention forms it (q scaled in float32), the dot products and the
// softmax in double and rounded once: a plain reference, O(S·D) per row; only the few alignment heads run it.
struct AlignmentTap final : CrossQueryTap {
  const std::vector<std::pair<int64_t, int64_t>>* heads;
  const Seq2SeqState* st;
  size_t T, E, D, k;
  float scale;
  double* logit;  // S scratch
  float* out;     // (rows, heads, T, S)

  Status Queries(size_t l, const float* q) override {
    const size_t S = st->S, nh = heads->size();
    const float* add = st->key_add.empty() ? nullptr : st->key_add.data();
    for (size_t i = 0; i < nh; ++i) {
      if (size_t((*heads)[i].first) != l) continue;
      const size_t h = size_t((*heads)[i].second);
      for (size_t r = 0; r < st->rows; ++r) {
        const size_t b = r / k;
        const float* keys = st->cross_k[l].data() + b * S * E + h * D;
        for (size_t t = 0; t < T; ++t) {
          const float* qr = q + (r * T + t) * E + h * D;
          float* p = out + ((r * nh + i) * T + t) * S;
          double mx = -std::numeric_limits<double>::infinity(), sum = 0.0;
          for (size_t s = 0; s < S; ++s) {
            double acc = add ? double(add[b * S + s]) : 0.0;
            for (size_t d = 0; d < D; ++d) acc += double(qr[d] * scale) * double(keys[s * E + d]);
            logit[s] = acc;
            mx = std::max(mx, acc);
          }
          for (size_t s = 0; s < S; ++s) sum += (logit[s] = std::exp(logit[s] - mx));
          for (size_t s = 0; s < S; ++s) p[s] = float(logit[s] / sum);
        }
      }
    }
    return Status::OK();
  }
};

// Lends a state's cross-attention keys, values and key mask to another for one call; takes them back on every path.
struct Lend {
  Seq2SeqState* from;
  Seq2SeqState* to;
  Lend(Seq2SeqState* f, Seq2SeqState* t) : from(f), to(t) { Swap(); }
  ~Lend() { Swap(); }
  void Swap() {
    to->cross_k.swap(from->cross_k);
    to->cross_v.swap(from->cross_v);
    to->key_add.swap(from->key_add);
  }
};

}  // namespace

Status WhisperLm::AlignmentWeights(Seq2SeqState* st, const int32_t* tokens, int64_t rows, int64_t T,
                                   const std::vector<std::pair<int64_t, int64_t>>& heads, Buffer* out) {
  const size_t L = dec_layers_.size(), E = size_t(cfg_.s.d_model), H = size_t(cfg_.s.decoder_heads);
  const size_t S = size_t(cfg_.max_source);
  if (st->rows == 0) return ArgError("state: the decoding state is not begun");
  if (st->S != S || st->cross_k.size() != L || st->cross_k[0].size() != st->B * S * E)
    return ArgError("state: expected a decoding state of this Whisper model");
  AW_RETURN_IF_ERROR(IntInRange("tokens.shape[0] (rows)", rows, 1, kMaxSeq2SeqRows));
  if (rows % int64_t(st->B) != 0)
    return ShapeError("tokens: expected rows a multiple of the state's sources (" + std::to_string(st->B) + "), got " +
                      std::to_string(rows));
  AW_RETURN_IF_ERROR(IntInRange("tokens.shape[1] (positions)", T, 1, target_limit()));
  if (heads.empty()) return ArgError("alignmentHeads: expected at least one [layer, head] pair, got none");
  for (size_t i = 0; i < heads.size(); ++i) {
    const std::string at = "alignmentHeads[" + std::to_string(i) + "]";
    AW_RETURN_IF_ERROR(IntInRange(at + "[0] (decoder layer)", heads[i].first, 0, int64_t(L) - 1));
    AW_RETURN_IF_ERROR(IntInRange(at + "[1] (head)", heads[i].second, 0, int64_t(H) - 1));
  }
  AW_RETURN_IF_ERROR(dec_embed_.CheckIds(tokens, rows * T, "tokens"));
  if (NumelChecked({rows, int64_t(heads.size()), T, int64_t(S)}) < 0)
    return ShapeError("alignment weights (rows, heads, positions, encoder states) exceed 2^29 elements");
  const size_t R = size_t(rows), Tn = size_t(T);
  AW_RETURN_IF_ERROR(out->Resize(R * heads.size() * Tn * S, "alignment weights"));
  // A scratch state of R rows (k per source) with st's cross keys and values, and its own self-attention cache.
  Seq2SeqState scratch;
  scratch.B = st->B;
  scratch.S = S;
  scratch.beams = R / st->B;
  scratch.rows = R;
  Lend lend(st, &scratch);
  AW_RETURN_IF_ERROR(BeginTarget(&scratch, L, E, Tn));
  ScratchScope scope;
  float* x;
  AlignmentTap tap;
  AW_RETURN_IF_ERROR(scope.Take(R * Tn * E, "decoder rows", &x));
  AW_RETURN_IF_ERROR(scope.Take(S, "attention logits", &tap.logit));
  AW_RETURN_IF_ERROR(EmbedTargets(tokens, R, Tn, 0, x));
  tap.heads = &heads;
  tap.st = &scratch;
  tap.T = Tn;
  tap.E = E;
  tap.D = E / H;
  tap.k = scratch.beams;
  tap.scale = float(1.0 / std::sqrt(double(tap.D)));
  tap.out = out->data();
  return RunDecoderLayers(dec_layers_, cfg_.s, &scratch, Tn, x, &tap);
}

}  // namespace aw
