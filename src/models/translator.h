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
// Decode runs a whole greedy or beam search natively (one call from JS); the
// decoding state is the caller's (TranslatorState), scratch the workspace's.
// One source at a time (unbatched), as the demo and the CLI use it.
// Built from a model file's "attnwasm.config" by models/load_model.h.
#pragma once
#include <cstdint>
#include <vector>

#include "io/json_fields.h"
#include "layers/embedding.h"
#include "layers/kv_cache.h"
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
  int64_t eos = -1;              // end-of-sequence target id (Decode stops at it); -1: none
};

// A model file's own config (its attnwasm.config with "model": "translator", c's root "attnwasm.config"): every key
// checked (models/translator_config.cpp), then read into *out.
Status ReadTranslatorFile(const io::FieldReader& c, TranslatorConfig* out);

struct DecodeOptions {
  int32_t first_token = 0;       // the decoder's first input (the language token, or BOS)
  int64_t max_length = 1;        // at most this many generated tokens (<= max_len - 1)
  int64_t beam_size = 1;         // 1: greedy, unless beam_search
  double length_penalty = 1.0;   // beam: a finished score is divided by length^length_penalty
  bool beam_search = false;      // run the beam search even at beam_size 1 (equals greedy; tests)
};

struct DecodeResult {
  std::vector<int32_t> ids;      // generated tokens, the final eos included if reached
  Buffer cross;                  // (layers, heads, T, S): each step's cross-attention, T = ids.size()
  Shape cross_shape;
  std::vector<float> step_ms;    // wall time of each decoder step (ms), T entries
  double score = 0.0;            // summed log probability of ids (beam: before the length penalty)
};

// The decoding state of one source: its memory, the decoder's KV cache and the projected memory of every
// decoder layer. Owned by the caller of Encode (Decode keeps one per call); freed with it.
struct TranslatorState {
  Buffer memory;                                          // (S, E)
  KvCache self;                                           // the decoder's self-attention, (beams, maxLen, E)
  std::vector<TransformerDecoderLayer::CrossKv> cross;    // per decoder layer
  size_t S = 0, beams = 0, B = 0;                         // source length, sequences allowed, in use
};

class Translator : public Module {
 public:
  Status Init(const TranslatorConfig& c, Rng& rng);
  const TranslatorConfig& config() const { return cfg_; }

  // Encodes a source into *st, ready for up to max_beams sequences.
  Status Encode(const int32_t* src, size_t S, size_t max_beams, TranslatorState* st);
  // Feeds one token per sequence (B <= max_beams) at the next position: logits (B, V); cross
  // (num_decoder_layers, B, H, S) the cross-attention weights.
  Status Step(TranslatorState* st, const int32_t* tokens, size_t B, float* logits, float* cross);
  // Sequence b continues the history of parents[b] (beam search).
  Status Reorder(TranslatorState* st, const int32_t* parents, size_t B);

  // Greedy (argmax) or beam search from source ids, against the KV cache.
  // Beam: each step ranks every continuation of the live beams by summed log
  // probability and keeps the top `width`, where width starts at beam_size
  // and shrinks by one per finished hypothesis; a continuation ending in eos
  // inside that set finishes with score / length^length_penalty. Stops when
  // no beam is left or at max_length; the best finished (or, failing that,
  // live) hypothesis wins. Ties go to the lower parent, then the lower token.
  Status Decode(const int32_t* src, size_t S, const DecodeOptions& o, DecodeResult* out);

  // The whole target at once with a causal mask (no cache): logits (T, V).
  // The reference the cached path is tested against.
  Status ForwardFull(const int32_t* src, size_t S, const int32_t* tgt, size_t T, Buffer* logits,
                     Shape* logits_shape = nullptr);

 private:
  Status Greedy(TranslatorState* st, const DecodeOptions& o, DecodeResult* out);
  Status Beam(TranslatorState* st, const DecodeOptions& o, DecodeResult* out);
  // out (n, E) = embedding(ids) · embed_scale + PE: row i at position
  // i (a sequence) or, with step_pos >= 0, every row at position step_pos.
  Status Embed(const Embedding& e, const int32_t* ids, size_t n, int64_t step_pos, const char* what, float* out);

  TranslatorConfig cfg_;
  Embedding src_embed_, tgt_embed_;
  Transformer transformer_;
  Linear generator_;
  SinusoidalPositionalEncoding pe_;
};

}  // namespace aw
