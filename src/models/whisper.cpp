// WhisperLm (whisper.h): the convolutional stem, the encoder, the decoder's appends against the state's caches.
#include "models/whisper.h"

#include <cstring>

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

Status WhisperLm::Append(Seq2SeqState* st, const int32_t* tokens, int64_t T, bool all, Buffer* logits) {
  AW_RETURN_IF_ERROR(AppendTarget(st, T));
  const size_t R = st->rows, Tn = size_t(T), n = R * Tn, len = st->self.len;
  AW_RETURN_IF_ERROR(dec_embed_.CheckIds(tokens, int64_t(n), "decoderInputIds"));
  const size_t E = size_t(cfg_.s.d_model), V = size_t(cfg_.s.vocab), out_rows = all ? n : R;
  if (NumelChecked({int64_t(out_rows), int64_t(V)}) < 0) return ShapeError("logits (rows, tokens, vocab) exceed 2^29 elements");
  AW_RETURN_IF_ERROR(logits->Resize(out_rows * V, "logits"));
  ScratchScope scope;
  float *x, *pos;
  AW_RETURN_IF_ERROR(scope.Take(n * E, "decoder rows", &x));
  AW_RETURN_IF_ERROR(scope.Take(Tn * E, "positions", &pos));
  dec_embed_.Lookup(n, tokens, x, E);
  std::vector<int32_t> at(Tn);
  for (size_t t = 0; t < Tn; ++t) at[t] = int32_t(len + t);
  dec_pos_.Lookup(Tn, at.data(), pos, E);
  for (size_t r = 0; r < R; ++r) kernels::f32_add(Tn * E, x + r * Tn * E, pos);
  AW_RETURN_IF_ERROR(RunDecoderLayers(dec_layers_, cfg_.s, st, Tn, x));
  LastRows(R, Tn, all, E, x);
  dec_norm_.Apply(out_rows, x, E, x, E);
  const PackedWeight& head = cfg_.s.tied ? dec_embed_.table() : proj_out_.packed();
  head.Product(out_rows, x, E, logits->data(), V, nullptr, 1.0f);
  return Status::OK();
}

}  // namespace aw
