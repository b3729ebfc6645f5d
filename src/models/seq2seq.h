// Seq2SeqLm: the hub's encoder–decoder translators of the BART lineage, as transformers v4.40 runs them
// (modeling_marian.py, modeling_bart.py, modeling_mbart.py, modeling_m2m_100.py): MarianMTModel,
// BartForConditionalGeneration, MBartForConditionalGeneration, M2M100ForConditionalGeneration (NLLB-200 too).
// docs/seq2seq.md is the reference; tests/data/make_seq2seq_goldens.py the goldens.
//
//   encoder  x = embed_tokens(ids) · embed_scale + positions   [layernorm_embedding(x): BART, mBART]
//            per layer  x = x + attn(…) and x = x + fc2(act(fc1(…)))  post-norm (Marian, BART) or pre-norm
//                       (mBART, M2M100) with self_attn_layer_norm / final_layer_norm; key padding from the mask
//            [layer_norm(x) at the end: mBART, M2M100]                           → encoder_last_hidden_state
//   decoder  the same with a causal self-attention, then a cross-attention over the encoder's states (its own
//            encoder_attn_layer_norm) between the two; logits = lm_head(x) [+ final_logits_bias]
//   positions  Marian: sinusoidal, sin in the first half of the columns and cos in the second, computed in
//              float64 as MarianSinusoidalPositionalEmbedding; BART / mBART: learned, row position + 2;
//              M2M100: sinusoidal of fairseq (float32 arithmetic, as torch forms it), the row from the ids:
//              padding_idx + 1 + the count of non-pad ids so far, pad ids at row padding_idx (zeros)
//   q is scaled by head_dim^-0.5; the attention is softmax(q kᵀ + mask) v (ops/attention.h).
//
// state_dict keys: transformers' — model.shared.weight (or, with separate vocabularies, model.encoder.embed_tokens /
// model.decoder.embed_tokens), model.{encoder,decoder}.embed_positions.weight (learned only),
// model.{encoder,decoder}.layernorm_embedding.*, model.{encoder,decoder}.layers.{i}.{self_attn.{q,k,v,out}_proj,
// self_attn_layer_norm, fc1, fc2, final_layer_norm}.*, decoder layers' encoder_attn.{q,k,v,out}_proj.* and
// encoder_attn_layer_norm.*, model.{encoder,decoder}.layer_norm.*, lm_head.weight (tied: a copy of the decoder's
// table, or absent), final_logits_bias (1, V). The family row (seq2seq_family.cpp) maps older saves' names.
//
// Decoding keeps, per batch of sources, one state (Seq2SeqState): the encoder's states, the cross-attention keys
// and values of every decoder layer computed once per source (beams index their source's: no copies), and the
// self-attention KV cache of every row (rows = sources × beams), reordered in place when beams are chosen.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/buffer.h"
#include "core/module.h"
#include "core/rng.h"
#include "io/json.h"
#include "io/json_fields.h"
#include "layers/activation.h"
#include "layers/embedding.h"
#include "layers/kv_cache.h"
#include "layers/layer_norm.h"
#include "layers/linear.h"

namespace aw {

enum class S2sPositions { kMarian = 0, kLearned = 1, kFairseq = 2 };

struct Seq2SeqConfig {
  std::string model_type;  // marian, bart, mbart, m2m_100
  int64_t vocab = 0;           // the encoder's table (and the decoder's when shared)
  int64_t decoder_vocab = 0;   // the head's rows (Marian's decoder_vocab_size; else vocab)
  int64_t d_model = 0;
  int64_t encoder_layers = 0, decoder_layers = 0;
  int64_t encoder_heads = 0, decoder_heads = 0;
  int64_t encoder_ffn = 0, decoder_ffn = 0;
  int64_t max_positions = 0;   // max_position_embeddings
  Activation act = Activation::kGelu;
  bool pre_norm = false;       // mBART, M2M100
  bool final_norm = false;     // layer_norm at the end of both stacks (mBART, M2M100)
  bool embed_norm = false;     // layernorm_embedding (BART, mBART)
  bool logits_bias = false;    // final_logits_bias (Marian, BART, mBART)
  bool shared = true;          // one table for encoder and decoder (model.shared)
  bool tied = true;            // lm_head is the decoder's table (tie_word_embeddings)
  S2sPositions positions = S2sPositions::kLearned;
  double embed_scale = 1.0;    // sqrt(d_model) when scale_embedding
  int64_t pad = 1, eos = 2, bos = -1, decoder_start = 2;  // -1: none
  double eps = 1e-5;
  bool k_bias = true;          // the attentions' k_proj has a bias (Whisper's has none)
  // The longest source or target (positions): the learned and Marian tables' rows; M2M100's sinusoid has no end
  // (transformers widens it) and is bounded here by kMaxSeq2SeqPositions.
  int64_t position_limit() const;
  // The logits' width: the decoder's table when tied, else lm_head's rows (decoder_vocab).
  int64_t out_vocab() const { return tied ? vocab : decoder_vocab; }
};

Status ReadSeq2SeqConfig(const io::JsonValue& hf, const std::string& root, Seq2SeqConfig* out);
// The range rules (sizes, ids in the vocabulary), worded from the config.json when src is given.
Status CheckSeq2SeqConfig(const Seq2SeqConfig& c, const io::ConfigSource* src);
// The resolved config as a JSON object (modelType, vocabSize, dModel, …): the JS face's info.
std::string Seq2SeqConfigJson(const Seq2SeqConfig& c);

// One batch of sources being decoded, owned by the caller (the JS generation's handle); freed with it.
struct Seq2SeqState {
  size_t B = 0, S = 0, beams = 0, rows = 0;  // sources, padded source length, rows per source, B · beams
  Buffer memory;                // (B, S, E): encoder_last_hidden_state (generation drops it after Begin)
  std::vector<float> key_add;   // (B, S): 0 or -inf per source key (the attention mask); empty when none is masked
  std::vector<Buffer> cross_k, cross_v;  // per decoder layer, (B, S, E)
  KvCache self;                 // (rows, capacity, width) per decoder layer: allocated for a few positions, grown
                                // (doubled, copied) as the target grows, up to `limit`
  size_t limit = 0;             // the most target positions (Begin's capacity: the generation's maxLength)
  // Forward sets it: memory is returned, so Begin computes every position and keeps it. Otherwise (generation)
  // Begin may run the encoder on unmasked positions only, and drops memory once the cross keys and values are made.
  bool keep_memory = false;
  // Begin encoded the unmasked positions only: the masked rows of cross_k / cross_v are zeros, which the steps'
  // cross-attention skips without first scanning the keys and values for NaN (their values are not the model's:
  // transformers' masked_fill gives them weight 0, and only NaN or inf there would reach its output).
  bool packed = false;
  // The bounded head pass (Seq2SeqModel::HeadBounded): set by the caller for one Append, which then gives in its
  // logits the lower bounds and in `upper` the upper bounds of each row's logits, and keeps the rows the head read
  // (head_x, (rows, E)) for HeadExact until the next Append. The caller keeps the lower bounds in `lower` (the
  // binding passes it as Append's logits) for SelectBounded.
  bool bounded_step = false;
  Buffer lower, upper, head_x;
  size_t head_rows = 0;
};

// The pieces every family's Begin and Append share:
//   CheckBegin     the batch, numBeams and capacity (<= limit) rules
//   BeginState     st's sizes, the source mask as additive −inf, every decoder layer's cross keys and values
//                  (B·S rows of `width`) projected from the encoder's states by project(l, k, v)
//   BeginTarget    the self-attention cache for `layers` layers of st->rows rows of `width` floats and up to `limit`
//                  positions, allocated for the first few (kSeq2SeqFirstPositions)
//   EnsureTarget   grows it to hold `need` positions (<= limit)
//   AppendTarget   Append's checks (the state begun, T tokens that fit) and the growth
//   StoreTarget    layer l's new keys and values, (rows, T, width) each, at positions len …
constexpr size_t kSeq2SeqFirstPositions = 64;
Status CheckBegin(int64_t B, int64_t beams, int64_t capacity, int64_t limit);
Status BeginState(Seq2SeqState* st, const int32_t* mask, int64_t B, int64_t S, int64_t beams, size_t layers, size_t width,
                  const std::function<void(size_t l, float* k, float* v)>& project);
Status BeginTarget(Seq2SeqState* st, size_t layers, size_t width, size_t limit);
Status EnsureTarget(Seq2SeqState* st, size_t need);
Status AppendTarget(Seq2SeqState* st, int64_t T);
void StoreTarget(KvCache* c, size_t l, size_t rows, size_t T, const float* k, const float* v);
// A generation's padded sources, packed (Seq2SeqState::packed):
//   PackRows    the unmasked rows of x (B·S rows of `width`) moved to the front in order, lens (B) set to each
//               source's count, and their total returned; with contiguous, only when every source's unmasked
//               positions are one run (T5's relative positions); 0 (x untouched, lens empty) when nothing is
//               masked or a run is broken
//   SpreadRows  p's m packed rows moved back to their B·S places (n = B·S), zeros at the masked ones
size_t PackRows(const int32_t* mask, size_t B, size_t S, size_t width, bool contiguous, float* x, std::vector<size_t>* lens);
void SpreadRows(const int32_t* mask, size_t n, size_t m, size_t width, float* p);

// What the decoding calls see of an encoder–decoder (this family's Seq2SeqLm, and T5's: models/t5.h).
class Seq2SeqModel : public Module {
 public:
  // Encodes the sources (ids (B, S), mask (B, S) of 0s and 1s, null: all ones) into a new state for `beams` rows
  // per source and targets of up to `capacity` tokens.
  virtual Status Begin(const int32_t* ids, const int32_t* mask, int64_t B, int64_t S, int64_t beams, int64_t capacity,
                       Seq2SeqState* st) = 0;
  // Appends T tokens to every row (tokens (rows, T)) at positions len … len+T−1: logits (rows, T, V) when all,
  // else (rows, V) of each row's last new token.
  virtual Status Append(Seq2SeqState* st, const int32_t* tokens, int64_t T, bool all, Buffer* logits) = 0;
  virtual int64_t out_vocab() const = 0;  // V
  virtual int64_t hidden_size() const = 0;  // the encoder's states' width
  virtual int64_t target_limit() const = 0;  // the most decoder positions (a target's tokens)
  // Whether the head keeps a q8 copy for its bounds (a float32 head: PackedWeight::KeepBound), so that an Append
  // may run the bounded pass (Seq2SeqState::bounded_step): the logits' bounds from the q8 copy, 28 % of the bytes.
  bool HeadBounded() const { return HeadWeight() != nullptr && HeadWeight()->bounded(); }
  // A float32 head keeps a q8 copy and its rows' norms (PackedWeight::KeepBound; loadModel's boundedHead): before
  // the weights are reserved. Greedy steps then read the copy, not the head; every exact product of the head
  // (beam search, forward, a forced token's step) is the float32 one, untouched (docs/seq2seq.md, "A bounded head").
  void BoundedHead() {
    if (const PackedWeight* w = HeadWeight()) const_cast<PackedWeight*>(w)->KeepBound();
  }
  // After a bounded Append: out[j] = the logit Append would have given row `row` at ids[j] (each in [0, V)),
  // bit for bit.
  Status HeadExact(const Seq2SeqState& st, int64_t row, const int32_t* ids, int64_t n, float* out) const;
  // After a bounded Append whose lower bounds the state keeps (st->lower): each row's candidates, so that greedy
  // search reads a few ids and not two rows of V (seq2seq_generate.js BoundedChoice). req (n int32s): cap, then one
  // count per row of the last step, then the excluded ids: a row's count c >= 0 says that its next c of them are
  // ids the search's processors may change (it maps their bounds itself); −1: nothing for this row. out, per row:
  //   c >= 0   best = the largest lower bound over the other ids (kernels f32_bounds_best: NaN when a bound is
  //            NaN), found = how many other ids have an upper bound >= best (f32_bounds_above: stops at cap + 1),
  //            the excluded ids' lower and upper bounds (a pair each), then the first min(found, cap) of those
  //            other ids, ascending, as floats (exact: V < 2^24): 2 + 2c + min(found, cap) floats
  //   −1       nothing
  // The excluded ids' bounds are set to −inf during the scans and put back.
  Status SelectBounded(Seq2SeqState* st, const int32_t* req, int64_t n, Buffer* out) const;
  // Row r continues the history of row parents[r]; a parent must be a row of the same source.
  Status Reorder(Seq2SeqState* st, const int32_t* parents, int64_t n);
  // Generation is done with every source but keep[0 … n): ascending indices of st's sources (1 <= n <= B). They
  // become sources 0 … n − 1, with their rows, cross keys and values, mask and cache moved down in place; the
  // others' are dropped (the buffers keep their size until the cache grows or the state is freed), so the steps
  // after it run n · beams rows.
  Status Keep(Seq2SeqState* st, const int32_t* keep, int64_t n);
  // Teacher forcing: the sources and decoder inputs (B, T) → logits (B, T, V) and the encoder's states (B, S, E).
  Status Forward(const int32_t* ids, const int32_t* mask, int64_t B, int64_t S, const int32_t* dec, int64_t T,
                 Buffer* logits, Buffer* hidden);

 protected:
  // The head (null: none that HeadLogits runs) and its bias added after the product (null: none).
  virtual const PackedWeight* HeadWeight() const { return nullptr; }
  virtual const float* HeadBias() const { return nullptr; }
  // Append's last step: the logits (rows, V) of the final rows x (rows, E) = x · headᵀ [+ bias], or with
  // st->bounded_step (the caller checked HeadBounded) their bounds (logits: lower, st->upper: upper), x kept in
  // st->head_x.
  Status HeadLogits(Seq2SeqState* st, size_t rows, const float* x, Buffer* logits) const;
};

// Family::bounded_head of the encoder–decoder rows (the seq2seq and t5 families): the model's BoundedHead().
inline void KeepBoundedHead(Module& m) { static_cast<Seq2SeqModel&>(m).BoundedHead(); }

// The checks every family's sources pass: a mask of 0s and 1s with a 1 in every row.
Status CheckSourceMask(const int32_t* mask, int64_t B, int64_t S);
constexpr int64_t kMaxSeq2SeqRows = 4096;  // sources × beams decoded together

class Seq2SeqLayer : public Module {
 public:
  Status Init(const Seq2SeqConfig& c, bool decoder, Rng& rng);
  Linear q_proj, k_proj, v_proj, out_proj, cq_proj, ck_proj, cv_proj, cout_proj, fc1, fc2;
  LayerNorm self_attn_layer_norm, encoder_attn_layer_norm, final_layer_norm;

 private:
  ModuleList self_attn_, encoder_attn_;
};

// What RunDecoderLayers may show of its cross-attentions (WhisperLm's alignment weights): Queries(l, q) gets layer
// l's queries q (rows·T, E) as encoder_attn.q_proj gives them (before the head_dim^-0.5 scale); an error it returns
// stops the stack. A virtual call rather than a std::function: the .wasm has little room.
class CrossQueryTap {
 public:
  virtual Status Queries(size_t l, const float* q) = 0;

 protected:
  ~CrossQueryTap() = default;
};

// The stacks every BART-lineage family runs (Seq2SeqLm, WhisperLm: models/whisper.h), on x in place:
//   RunEncoderLayers  B sources of S rows (x (B·S, E)), key_add (B, S) of 0 / −inf or null; or, with lens, source b's
//                     lens[b] unmasked rows packed after those of sources < b (x (Σ lens, E), no key_add)
//   RunDecoderLayers  T new tokens of every row of st (x (rows·T, E)) at positions len …: stores their keys and values
//                     and advances the cache's len (AppendTarget made room); cross_queries, when given, sees each
//                     layer's cross-attention queries
//   LastRows          with !all, each row's last token's x packed to the front; the rows that then hold logits
Status RunEncoderLayers(const std::vector<std::unique_ptr<Seq2SeqLayer>>& layers, const Seq2SeqConfig& c, size_t B,
                        size_t S, const float* key_add, float* x, const size_t* lens = nullptr);
Status RunDecoderLayers(const std::vector<std::unique_ptr<Seq2SeqLayer>>& layers, const Seq2SeqConfig& c,
                        Seq2SeqState* st, size_t T, float* x, CrossQueryTap* cross_queries = nullptr);
size_t LastRows(size_t R, size_t T, bool all, size_t E, float* x);

class Seq2SeqLm : public Seq2SeqModel {
 public:
  Status Init(const Seq2SeqConfig& c, Rng& rng, const io::ConfigSource* src = nullptr);
  const Seq2SeqConfig& config() const { return cfg_; }

  // ids (B, S) with mask (B, S) of 0s and 1s (null: all ones) → encoder_last_hidden_state (B, S, E). With lens and
  // a mask that masks a position, only the unmasked positions are computed: hidden holds their Σ lens rows, packed
  // in order, and lens (B) how many each source has (else lens is left empty).
  Status Encode(const int32_t* ids, const int32_t* mask, int64_t B, int64_t S, Buffer* hidden,
                std::vector<size_t>* lens = nullptr);
  Status Begin(const int32_t* ids, const int32_t* mask, int64_t B, int64_t S, int64_t beams, int64_t capacity,
               Seq2SeqState* st) override;
  Status Append(Seq2SeqState* st, const int32_t* tokens, int64_t T, bool all, Buffer* logits) override;
  int64_t out_vocab() const override { return cfg_.out_vocab(); }
  int64_t hidden_size() const override { return cfg_.d_model; }
  int64_t target_limit() const override { return cfg_.position_limit(); }

 private:
  // Embeddings of n rows of `len` ids each (positions start .. start+len−1 in row terms, `past` tokens before) into
  // x (n·len, E): table lookup · scale + positions [+ layernorm_embedding].
  Status Embed(bool decoder, const int32_t* ids, size_t n, size_t len, size_t past, float* x) const;
  void Positions(const int32_t* ids, size_t len, size_t past, float* out) const;
  const PackedWeight& Head() const;
  const PackedWeight* HeadWeight() const override { return &Head(); }
  const float* HeadBias() const override { return final_logits_bias_; }

  Seq2SeqConfig cfg_;
  ModuleList model_, encoder_, decoder_;
  ModuleList enc_list_, dec_list_;
  Embedding shared_, enc_embed_, dec_embed_;
  Embedding enc_pos_, dec_pos_;  // learned positions (BART, mBART): max_positions + 2 rows
  LayerNorm enc_embed_norm_, dec_embed_norm_, enc_norm_, dec_norm_;
  std::vector<std::unique_ptr<Seq2SeqLayer>> enc_layers_, dec_layers_;
  Linear lm_head_;
  float* final_logits_bias_ = nullptr;
};

}  // namespace aw
