#include "models/translator.h"

#include <cstring>
#include <limits>

#include "kernels/activation.h"

namespace aw {

Status Translator::Init(const TranslatorConfig& c, Rng& rng) {
  if (c.src_vocab <= 0) return ArgError("srcVocab: expected a non-empty vocabulary");
  if (c.tgt_vocab <= 0) return ArgError("tgtVocab: expected a non-empty vocabulary");
  if (c.max_len <= 0 || c.max_len > 4096) return ArgError("maxLen: expected an integer in [1, 4096], got " + std::to_string(c.max_len));
  cfg_ = c;
  const int64_t E = c.layer.d_model;
  AW_RETURN_IF_ERROR(src_embed_.Init(c.src_vocab, E, 0, false, rng));
  AW_RETURN_IF_ERROR(tgt_embed_.Init(c.tgt_vocab, E, 0, false, rng));
  AW_RETURN_IF_ERROR(transformer_.Init(c.layer, c.num_encoder_layers, c.num_decoder_layers, rng));
  AW_RETURN_IF_ERROR(generator_.Init(E, c.tgt_vocab, true, rng));
  AW_RETURN_IF_ERROR(pe_.Init(E, c.max_len + 1, false));
  AddChild("src_embed", &src_embed_);
  AddChild("tgt_embed", &tgt_embed_);
  AddChild("transformer", &transformer_);
  AddChild("generator", &generator_);
  caches_.resize(size_t(c.num_decoder_layers));
  return Status::OK();
}

Status Translator::Embed(const Embedding& e, const int32_t* ids, size_t n, int64_t step_pos, const char* what,
                         float* out) {
  AW_RETURN_IF_ERROR(e.CheckIds(ids, int64_t(n), what));
  const size_t E = size_t(cfg_.layer.d_model);
  e.Lookup(n, ids, out, E);
  const float scale = float(cfg_.embed_scale);
  for (size_t i = 0; i < n * E; ++i) out[i] *= scale;
  for (size_t i = 0; i < n; ++i) kernels::f32_add(E, out + i * E, pe_.Row(step_pos >= 0 ? step_pos : int64_t(i)));
  return Status::OK();
}

Status Translator::Encode(const int32_t* src, size_t S, size_t max_beams) {
  if (S == 0 || S > size_t(cfg_.max_len))
    return ShapeError("source: expected 1 to maxLen = " + std::to_string(cfg_.max_len) + " tokens, got " + std::to_string(S));
  if (max_beams == 0 || max_beams > 64) return ArgError("beamSize: expected an integer in [1, 64], got " + std::to_string(max_beams));
  const size_t E = size_t(cfg_.layer.d_model);
  AW_RETURN_IF_ERROR(memory_.Resize(S * E, "memory"));
  AW_RETURN_IF_ERROR(Embed(src_embed_, src, S, -1, "source", memory_.data()));
  AW_RETURN_IF_ERROR(transformer_.encoder().Run(memory_.data(), {int64_t(S), int64_t(E)}, EncoderLayerForward()));
  for (size_t l = 0; l < caches_.size(); ++l)
    AW_RETURN_IF_ERROR(transformer_.decoder().layer(l).BeginSteps(memory_.data(), S, max_beams, size_t(cfg_.max_len), &caches_[l]));
  S_ = S; t_ = 0; beams_ = max_beams; B_ = 0;
  return Status::OK();
}

Status Translator::Step(const int32_t* tokens, size_t B, Buffer* logits, Buffer* cross) {
  if (S_ == 0) return ArgError("step: call encode() first");
  if (B == 0 || B > beams_) return ArgError("tokens: expected 1 to " + std::to_string(beams_) + " sequences, got " + std::to_string(B));
  if (t_ >= size_t(cfg_.max_len)) return ArgError("step: the target reached maxLen = " + std::to_string(cfg_.max_len) + " tokens");
  const size_t E = size_t(cfg_.layer.d_model), V = size_t(cfg_.tgt_vocab), H = size_t(cfg_.layer.nhead);
  const size_t L = caches_.size();
  AW_RETURN_IF_ERROR(x_.Resize(B * E, "step activations"));
  AW_RETURN_IF_ERROR(Embed(tgt_embed_, tokens, B, int64_t(t_), "tokens", x_.data()));
  AW_RETURN_IF_ERROR(cross->Resize(L * B * H * S_, "cross-attention weights"));
  for (size_t l = 0; l < L; ++l)
    AW_RETURN_IF_ERROR(transformer_.decoder().layer(l).Step(x_.data(), B, t_, &caches_[l], cross->data() + l * B * H * S_));
  transformer_.decoder().FinalNorm(x_.data(), {int64_t(B), int64_t(E)});
  AW_RETURN_IF_ERROR(logits->Resize(B * V, "logits"));
  generator_.Apply(B, x_.data(), E, logits->data(), V);
  ++t_;
  B_ = B;
  return Status::OK();
}

Status Translator::Reorder(const int32_t* parents, size_t B) {
  if (B == 0 || B > beams_) return ArgError("parents: expected 1 to " + std::to_string(beams_) + " entries, got " + std::to_string(B));
  for (size_t b = 0; b < B; ++b)
    if (parents[b] < 0 || size_t(parents[b]) >= B_)
      return ArgError("parents: entry " + std::to_string(b) + " = " + std::to_string(parents[b]) +
                      " is not one of the " + std::to_string(B_) + " current sequences");
  const size_t E = size_t(cfg_.layer.d_model);
  const size_t rows = t_ * E;  // filled part of one sequence's cache
  AW_RETURN_IF_ERROR(tmp_.Resize(B * rows, "reorder scratch"));
  for (auto& c : caches_) {
    const size_t ld = c.max_len * E;
    for (Buffer* buf : {&c.k_self, &c.v_self}) {
      for (size_t b = 0; b < B; ++b) std::memcpy(tmp_.data() + b * rows, buf->data() + size_t(parents[b]) * ld, rows * sizeof(float));
      for (size_t b = 0; b < B; ++b) std::memcpy(buf->data() + b * ld, tmp_.data() + b * rows, rows * sizeof(float));
    }
  }
  B_ = B;
  return Status::OK();
}

Status Translator::ForwardFull(const int32_t* src, size_t S, const int32_t* tgt, size_t T, Buffer* logits) {
  if (T == 0 || T > size_t(cfg_.max_len))
    return ShapeError("target: expected 1 to maxLen = " + std::to_string(cfg_.max_len) + " tokens, got " + std::to_string(T));
  AW_RETURN_IF_ERROR(Encode(src, S, 1));
  const size_t E = size_t(cfg_.layer.d_model), V = size_t(cfg_.tgt_vocab);
  AW_RETURN_IF_ERROR(full_tgt_.Resize(T * E, "target activations"));
  AW_RETURN_IF_ERROR(Embed(tgt_embed_, tgt, T, -1, "target", full_tgt_.data()));
  AW_RETURN_IF_ERROR(mask_.Resize(T * T, "causal mask"));
  for (size_t i = 0; i < T; ++i)
    for (size_t j = 0; j < T; ++j) mask_.data()[i * T + j] = j > i ? -std::numeric_limits<float>::infinity() : 0.0f;
  DecoderLayerForward o;
  o.tgt_mask = MaskView{mask_.data(), DType::kF32, {int64_t(T), int64_t(T)}};
  o.tgt_is_causal = true;
  AW_RETURN_IF_ERROR(transformer_.decoder().Run(full_tgt_.data(), {int64_t(T), int64_t(E)},
                                                TensorView{memory_.data(), {int64_t(S), int64_t(E)}}, o));
  AW_RETURN_IF_ERROR(logits->Resize(T * V, "logits"));
  generator_.Apply(T, full_tgt_.data(), E, logits->data(), V);
  return Status::OK();
}

}  // namespace aw
