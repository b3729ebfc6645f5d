// WhisperLm: OpenAI's Whisper as transformers v4.40 runs it (modeling_whisper.py, WhisperForConditionalGeneration).
// docs/speech.md is the reference; tests/data/make_whisper_goldens.py the goldens.
//
//   encoder  x = gelu(conv1(features)); x = gelu(conv2(x))   features (n_mels, 2·max_source_positions) → (S, E),
//            conv1 kernel 3 padding 1, conv2 kernel 3 stride 2 padding 1; exact (erf) GELU whatever the layers' act
//            x = x + embed_positions.weight   (max_source_positions rows, as stored: sinusoids in OpenAI's saves)
//            pre-norm layers (Seq2SeqLayer: self-attention, feed-forward), layer_norm at the end; no mask
//   decoder  x = embed_tokens(ids) + embed_positions[len + t] (learned, no offset, no scale: transformers' decoder
//            computes embed_scale and never applies it), pre-norm layers with the cross-attention, layer_norm;
//            logits = proj_out(x), proj_out tied to embed_tokens unless tie_word_embeddings is false
//   every attention's k_proj has no bias; q is scaled by head_dim^-0.5.
//
// The input is exactly 2·max_source_positions frames (3000 for 30 s), as transformers v4.40 insists; longer audio is
// windowed by the caller (the chunked pipeline or long-form generation in JS).
//
// state_dict keys: model.encoder.{conv1,conv2}.{weight,bias}, model.encoder.embed_positions.weight,
// model.{encoder,decoder}.layers.{i}.{self_attn.{q,k,v,out}_proj, self_attn_layer_norm, fc1, fc2, final_layer_norm}.*
// (k_proj.weight only), decoder layers' encoder_attn.* and encoder_attn_layer_norm.*, model.{encoder,decoder}.layer_norm.*,
// model.decoder.embed_tokens.weight, model.decoder.embed_positions.weight, proj_out.weight (tied: absent or a copy).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "layers/conv1d.h"
#include "models/seq2seq.h"

namespace aw {

struct WhisperConfig {
  Seq2SeqConfig s;             // the stacks (model_type "whisper"; max_positions = max_target_positions)
  int64_t mel_bins = 80;       // num_mel_bins
  int64_t max_source = 1500;   // max_source_positions: the encoder's states; the input is twice as many frames
  int64_t frames() const { return 2 * max_source; }
};

Status ReadWhisperConfig(const io::JsonValue& hf, const std::string& root, WhisperConfig* out);
Status CheckWhisperConfig(const WhisperConfig& c, const io::ConfigSource* src);
std::string WhisperConfigJson(const WhisperConfig& c);

class WhisperLm : public Seq2SeqModel {
 public:
  Status Init(const WhisperConfig& c, Rng& rng, const io::ConfigSource* src = nullptr);
  const WhisperConfig& config() const { return cfg_; }

  // features (B, n_mels, frames) → encoder_last_hidden_state (B, max_source, E).
  Status Encode(const float* features, int64_t B, int64_t M, int64_t T, Buffer* hidden);
  // Seq2SeqModel::Begin from input features: encodes them into st for `beams` rows per input (the encoder's states
  // are not kept: the cross-attention keys and values are).
  Status BeginFeatures(const float* features, int64_t B, int64_t M, int64_t T, int64_t beams, int64_t capacity,
                       Seq2SeqState* st);
  // Teacher forcing: features (B, n_mels, frames) and decoder inputs (B, T) → logits (B, T, V), encoder states.
  Status ForwardFeatures(const float* features, int64_t B, int64_t M, int64_t T, const int32_t* dec, int64_t Tdec,
                         Buffer* logits, Buffer* hidden);
  Status Begin(const int32_t* ids, const int32_t* mask, int64_t B, int64_t S, int64_t beams, int64_t capacity,
               Seq2SeqState* st) override;
  Status Append(Seq2SeqState* st, const int32_t* tokens, int64_t T, bool all, Buffer* logits) override;
  // The cross-attention probabilities of the alignment heads under teacher forcing (word-level timestamps:
  // transformers' _extract_token_timestamps reads them from generate's cross_attentions). tokens (rows, T) at
  // positions 0 … T−1, rows = st->B · k (k rows per source: source b's are b·k … b·k + k − 1), against st's cross-
  // attention keys → out (rows, heads.size(), T, S): softmax(q · head_dim^-0.5 · kᵀ) over the S encoder states of
  // each (layer, head) in heads, rows in order. The cross attention of position t depends on tokens 0 … t only, so
  // for a generated row (prompt and tokens, the last one left out) these are the rows transformers concatenates
  // over its steps. st is borrowed for the call and left as it was (its own KV cache untouched). Owner: the caller.
  Status AlignmentWeights(Seq2SeqState* st, const int32_t* tokens, int64_t rows, int64_t T,
                          const std::vector<std::pair<int64_t, int64_t>>& heads, Buffer* out);
  int64_t out_vocab() const override { return cfg_.s.vocab; }
  int64_t hidden_size() const override { return cfg_.s.d_model; }
  int64_t target_limit() const override { return cfg_.s.max_positions; }

 private:
  Status CheckFeatures(int64_t B, int64_t M, int64_t T) const;
  Status BeginFrom(const float* hidden, int64_t B, int64_t beams, int64_t capacity, Seq2SeqState* st);
  // x (R·T, E) = embed_tokens(tokens (R, T)) + embed_positions[len … len+T−1].
  Status EmbedTargets(const int32_t* tokens, size_t R, size_t T, size_t len, float* x) const;

  WhisperConfig cfg_;
  ModuleList model_, encoder_, decoder_, enc_list_, dec_list_;
  Conv1d conv1_, conv2_;
  Embedding enc_pos_, dec_embed_, dec_pos_;
  LayerNorm enc_norm_, dec_norm_;
  std::vector<std::unique_ptr<Seq2SeqLayer>> enc_layers_, dec_layers_;
  Linear proj_out_;
};

}  // namespace aw
