// T5Lm: T5ForConditionalGeneration and MT5ForConditionalGeneration as transformers v4.40 runs them (modeling_t5.py,
// modeling_mt5.py): T5, T5 v1.1, Flan-T5, mT5. docs/seq2seq.md is the reference; tests/data/make_seq2seq_goldens.py
// the goldens.
//
//   encoder  x = shared(ids) (no scale, no positions)
//            per block  x = x + o(attn(layer_norm(x)))      scores q kᵀ, not scaled, + the position bias + mask
//                       x = x + wo(act(wi(h)))  or  wo(act(wi_0(h)) · wi_1(h)) (gated), h = layer_norm(x)
//            final_layer_norm                                                       → encoder_last_hidden_state
//   decoder  the same with a causal self-attention and, between the two, a cross-attention over the encoder's
//            states (no position bias: only the mask); final_layer_norm; logits = lm_head(x) [· d_model^-0.5 when
//            the head is the shared table]
//   layer_norm: T5LayerNorm, x · rsqrt(mean(x²) + eps) · weight (RMSNorm, no mean, no bias)
//   position bias: relative_attention_bias (buckets, heads) of the first block of each stack, read at the bucket of
//            key − query: bidirectional in the encoder (half the buckets for keys after the query), causal in the
//            decoder; positions below max_exact = buckets/2 (/2 again bidirectionally) exact, then logarithmic up
//            to max_distance, in float32 as torch computes them; shared by every block of the stack.
//   q, k, v, o have no bias; inner = heads · d_kv may differ from d_model.
//
// state_dict keys: transformers' — shared.weight, {encoder,decoder}.block.{i}.layer.0.SelfAttention.{q,k,v,o}.weight,
// block.0's SelfAttention.relative_attention_bias.weight, layer.{0,1,2}.layer_norm.weight, decoder layer.1's
// EncDecAttention.{q,k,v,o}.weight, the last layer's DenseReluDense.{wi,wo} or {wi_0,wi_1,wo}.weight,
// {encoder,decoder}.final_layer_norm.weight, lm_head.weight (untied; tied: a copy of shared.weight, or absent).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/limits.h"
#include "layers/embedding.h"
#include "layers/linear.h"
#include "layers/rms_norm.h"
#include "models/seq2seq.h"

namespace aw {

struct T5Config {
  std::string model_type;  // t5, mt5
  int64_t vocab = 0, d_model = 0, d_kv = 0, d_ff = 0, heads = 0;
  int64_t encoder_layers = 0, decoder_layers = 0;
  int64_t buckets = 32, max_distance = 128;
  Activation act = Activation::kRelu;
  bool gated = false;        // feed_forward_proj "gated-*"
  bool tied = true;          // tie_word_embeddings
  double eps = 1e-6;
  int64_t pad = 0, eos = 1, decoder_start = 0;  // -1: none
  int64_t inner() const { return heads * d_kv; }
};

Status ReadT5Config(const io::JsonValue& hf, const std::string& root, T5Config* out);
Status CheckT5Config(const T5Config& c, const io::ConfigSource* src);
std::string T5ConfigJson(const T5Config& c);

// The relative position's bucket (T5Attention._relative_position_bucket), rel = key − query.
int32_t T5Bucket(int64_t rel, bool bidirectional, int64_t buckets, int64_t max_distance);

// relative_attention_bias: (buckets, heads) kept as float32 whatever the dtype (a few hundred values read per
// position pair; quantizing them would move every score).
class T5BiasTable : public Module {
 public:
  Status Init(int64_t buckets, int64_t heads) { return AddParam("weight", {buckets, heads}, &w); }
  float* w = nullptr;
};

class T5Block : public Module {
 public:
  Status Init(const T5Config& c, bool decoder, bool relative_bias, Rng& rng);
  Linear q, k, v, o, cq, ck, cv, co, wi, wi_0, wi_1, wo;
  RMSNorm self_norm, cross_norm, ff_norm;
  T5BiasTable relative_attention_bias;

 private:
  ModuleList layer_, l0_, l1_, l2_, self_attn_, cross_attn_, ff_;
};

class T5Lm : public Seq2SeqModel {
 public:
  Status Init(const T5Config& c, Rng& rng, const io::ConfigSource* src = nullptr);
  const T5Config& config() const { return cfg_; }
  Status Begin(const int32_t* ids, const int32_t* mask, int64_t B, int64_t S, int64_t beams, int64_t capacity,
               Seq2SeqState* st) override;
  Status Append(Seq2SeqState* st, const int32_t* tokens, int64_t T, bool all, Buffer* logits) override;
  int64_t out_vocab() const override { return cfg_.vocab; }
  int64_t hidden_size() const override { return cfg_.d_model; }
  int64_t target_limit() const override { return kMaxSequence; }

 protected:
  const PackedWeight* HeadWeight() const override { return cfg_.tied ? &shared_.table() : &lm_head_.packed(); }

 private:
  // The bias (heads, L, S) of queries at positions q0 … q0+L−1 over keys 0 … S−1, from block 0 of a stack.
  void PositionBias(bool decoder, size_t q0, size_t L, size_t S, float* out) const;
  // One feed-forward sublayer's output y (n, E) from its normalised input h.
  Status FeedForward(const T5Block& b, size_t n, const float* h, float* ff, float* y) const;

  T5Config cfg_;
  Embedding shared_;
  ModuleList encoder_, decoder_, enc_blocks_, dec_blocks_;
  std::vector<std::unique_ptr<T5Block>> enc_, dec_;
  RMSNorm enc_final_, dec_final_;
  Linear lm_head_;
};

}  // namespace aw
