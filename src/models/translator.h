// Translator: an encoder–decoder nn.Transformer with token embeddings, the
// model family of the translation demo (tools/models/train_translator.py).
//
//   src ids (S) → src_embed · embed_scale + PE → encoder → memory (S, E)
//   tgt ids (T) → tgt_embed · embed_scale + PE → decoder(memory) → generator → logits (T, V)
//
// state_dict keys: src_embed.weight, tgt_embed.weight, transformer.* (as
// nn.Transformer), generator.weight/bias. PE is the fixed sinusoidal table.
// Decoding runs one token per step against a KV cache: the decoder's
// self-attention keys/values grow by one row per step, the cross-attention
// keys/values are projected from memory once per source. Up to max_beams
// sequences (beam search) step together; Reorder gathers their histories.
// One source at a time (unbatched), as the demo and the CLI use it.
#pragma once
#include <vector>

#include "layers/embedding.h"
#include "layers/linear.h"
#include "layers/positional_encoding.h"
#include "layers/transformer.h"

namespace aw {

struct TranslatorConfig {
  TransformerLayerConfig layer;  // batch_first is irrelevant (unbatched)
  int64_t num_encoder_layers = 2;
  int64_t num_decoder_layers = 2;
  int64_t src_vocab = 0;
  int64_t tgt_vocab = 0;
  int64_t max_len = 64;          // longest source or target sequence
  double embed_scale = 1.0;      // sqrt(d_model) in the usual recipe
};

class Translator : public Module {
 public:
  Status Init(const TranslatorConfig& c, Rng& rng);
  const TranslatorConfig& config() const { return cfg_; }

  // Encodes a source and resets decoding for up to max_beams sequences.
  Status Encode(const int32_t* src, size_t S, size_t max_beams);
  // Feeds one token per sequence (B <= max_beams) at the next position;
  // logits (B, V); cross (num_decoder_layers, B, H, S) cross-attention weights.
  Status Step(const int32_t* tokens, size_t B, Buffer* logits, Buffer* cross);
  // Sequence b continues the history of parents[b] (beam search).
  Status Reorder(const int32_t* parents, size_t B);
  size_t position() const { return t_; }
  size_t source_length() const { return S_; }

  // The whole target at once with a causal mask (no cache): logits (T, V).
  // The reference the cached path is tested against.
  Status ForwardFull(const int32_t* src, size_t S, const int32_t* tgt, size_t T, Buffer* logits);

 private:
  // out (n, E) = embedding(ids) · embed_scale + PE: row i at position
  // i (a sequence) or, with step_pos >= 0, every row at position step_pos.
  Status Embed(const Embedding& e, const int32_t* ids, size_t n, int64_t step_pos, const char* what, float* out);

  TranslatorConfig cfg_;
  Embedding src_embed_, tgt_embed_;
  Transformer transformer_;
  Linear generator_;
  SinusoidalPositionalEncoding pe_;
  // Decoding state.
  Buffer memory_;                                   // (S, E)
  std::vector<TransformerDecoderLayer::StepCache> caches_;
  size_t S_ = 0, t_ = 0, beams_ = 0, B_ = 0;
  Buffer x_, tmp_, full_tgt_, mask_;
};

}  // namespace aw
