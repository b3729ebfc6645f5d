// Encoder: the BERT family of Hugging Face's transformers — BertModel, RobertaModel, XLMRobertaModel — as the
// sentence embedders of sentence-transformers run it (all-MiniLM, bge, e5, gte, multilingual-e5, …);
// tools/bert.py is its PyTorch twin and docs/embeddings.md its reference.
//
//   x = LayerNorm(word[ids] + token_type[types] + position[pos])     pos: 0 … T−1 (BERT), or
//                                                                     pad + 1 + the count of non-pad ids so
//                                                                     far for a non-pad id, pad for a pad (RoBERTa)
//   per layer (post-norm):
//     x = LayerNorm(x + dense(softmax(q kᵀ / √d + mask) v))           q, k, v = query(x), key(x), value(x)
//     x = LayerNorm(x + output(gelu(intermediate(x))))                 GELU with erf
//   last_hidden_state = x; pooler_output = tanh(pooler.dense(x[:, 0])) when the checkpoint has a pooler
//   a task head (EncoderHead): classifier(tanh(dense(x[:, 0]))) per sequence, or classifier(x) per token
//
// state_dict keys: Hugging Face's — embeddings.{word,position,token_type}_embeddings.weight,
// embeddings.LayerNorm.{weight,bias}, encoder.layer.{i}.attention.self.{query,key,value}.{weight,bias},
// encoder.layer.{i}.attention.output.{dense,LayerNorm}.*, encoder.layer.{i}.intermediate.dense.*,
// encoder.layer.{i}.output.{dense,LayerNorm}.*, pooler.dense.* (the loader strips a "bert." / "roberta."
// prefix and skips masked-LM heads and position_ids buffers).
//
// Two ways through, the same arithmetic row by row:
//   Forward  a padded batch (B, T) with its attention mask, every position computed as HF computes it
//            (masked keys get float32's lowest as HF adds it): last_hidden_state and pooler_output;
//   Embed    sequences of their own lengths, no padding at all (a padded row's keys do not reach the
//            others: their rows are the same bits), their projections one GEMM over every row of a piece,
//            attention per sequence; pooled as sentence-transformers' Pooling (+ Normalize).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "core/buffer.h"
#include "core/module.h"
#include "core/rng.h"
#include "models/encoder_config.h"
#include "io/json_fields.h"
#include "layers/embedding.h"
#include "layers/layer_norm.h"
#include "layers/linear.h"
#include "layers/multihead_attention.h"
#include "layers/patch_embedding.h"

namespace aw {


// sentence-transformers' pooling modes (Pooling.py), numbered in the order Pooling.forward concatenates them
// when several are on (cls, max, mean, mean_sqrt_len, weightedmean, lasttoken); the JS names are these
// enumerators' (bindings/native_constants.js POOLING, generated).
enum class Pooling { kCls = 0, kMax = 1, kMean = 2, kMeanSqrtLen = 3, kWeightedmean = 4, kLasttoken = 5 };
constexpr int kPoolingModes = 6;

struct EmbedOptions {
  uint32_t modes = 1u << int(Pooling::kMean);  // bit i: Pooling(i) on; the vectors of several, concatenated in
                                               // Pooling's order (E each)
  bool normalize = false;        // L2 of the whole vector: x / max(‖x‖, 1e-12), as F.normalize
  const int32_t* skip = nullptr; // per sequence: its first skip[i] tokens left out of the pooling (a prompt with
                                 // include_prompt false), or null
  bool head = false;  // the task head's logits instead of pooling: (n, labels) for a sequence head, (total
                      // tokens, labels) for a token head; modes, normalize and skip unused
};

// The feed-forward's activation over n floats in place (EncoderConfig::act).
void Activate(EncoderAct act, size_t n, float* x);

class EncoderLayer : public Module {
 public:
  Status Init(const EncoderConfig& c, Rng& rng);
  Linear query, key, value, attn_dense, intermediate, output_dense;
  LayerNorm attn_norm, output_norm;  // a vision layer's layernorm_before, layernorm_after (pre-norm)
  float* scale1 = nullptr;           // DINOv2's layer_scale1.lambda1 (E), or null
  float* scale2 = nullptr;           // layer_scale2.lambda1

 private:
  ModuleList attention_, self_, attn_output_, intermediate_, output_;
};

class Encoder : public Module {
 public:
  Status Init(const EncoderConfig& c, Rng& rng, const io::ConfigSource* src = nullptr);
  const EncoderConfig& config() const { return cfg_; }
  // Tokens one sequence may hold: max_position_embeddings (RoBERTa: less pad_token_id + 1).
  int64_t max_tokens() const;

  // ids, types (null: zeros), mask (null: all ones; 0/1) (B, T) → hidden (B, T, E), pooled (B, E) when the
  // model has a pooler (else left empty), and with `attention` every layer's softmax weights (B, layers, heads,
  // T, T) (HF's output_attentions).
  Status Forward(const int32_t* ids, const int32_t* types, const int32_t* mask, int64_t B, int64_t T, Buffer* hidden,
                 Buffer* pooled, Buffer* attention = nullptr);
  // n sequences, ids (and types, or null) one after the other, lengths[i] tokens each → out (n, E · the modes on):
  // one pass through the encoder whatever the number of pooling modes; with o.head, the head's logits.
  Status Embed(const int32_t* ids, const int32_t* types, const int32_t* lengths, size_t n, const EmbedOptions& o,
               Buffer* out);
  // A vision encoder (config().vision; models/vision_encoder.cpp): pixel_values (B, C, H, W) → hidden (B, T,
  // E), T = extra_tokens + (H / patch)·(W / patch); pooled (B, E): ViT's / DeiT's pooler (tanh(dense(x[:, 0])))
  // when the checkpoint has one, DINOv2's x[:, 0]; logits (B, labels) when `logits` is given and the
  // checkpoint has an image-classification head. ViT and DeiT take image_size × image_size only, unless
  // `interpolate` (interpolate_pos_encoding): then, as DINOv2 always, the patch positions are resized to the grid.
  // A two-tower model's vision tower (config().tower kClipVision, kSiglipVision) takes this way too: pooled is
  // CLIP's post_layernorm(x[:, 0]) (hidden before post_layernorm, as transformers returns it), SigLIP's attention
  // pooling head on post_layernorm(x).
  // attention: with it, every layer's softmax weights (B, layers, heads, T, T) (output_attentions).
  Status ForwardPixels(const float* pixels, const Shape& shape, bool interpolate, Buffer* hidden, Buffer* pooled,
                       Buffer* logits, Buffer* attention = nullptr);
  // A text tower (config().tower kClipText, kSiglipText; models/clip_tower.cpp): input_ids (B, T) with
  // attention_mask (null: all ones) → pooled (B, E'): CLIP's final_layer_norm(x)[end-of-text row] (E' = hidden),
  // SigLIP's head(final_layer_norm(x)[:, -1]) (E' = projection_size).
  Status ForwardText(const int32_t* ids, const int32_t* mask, int64_t B, int64_t T, Buffer* pooled);

 private:
  // One piece of sequences: rows x (rows, E) of sequences starts/lens, through every layer in place. key_add:
  // per sequence, the additive mask of its keys (T floats), or null; attention: the piece's weights (nseq,
  // layers, heads, T, T) for sequences of one length T, or null.
  Status Layers(float* x, const size_t* starts, const size_t* lens, size_t nseq, const float* key_add,
                float* attention);
  // The embeddings of n rows (positions pos) into x.
  Status Embeddings(size_t n, const int32_t* ids, const int32_t* types, const int32_t* pos, float* x) const;
  // The head's logits of a piece's rows x (sequences starts/lens) into out (see EmbedOptions::head).
  Status Head(const float* x, const size_t* starts, size_t nseq, size_t rows, float* out) const;
  // Positions of one sequence's ids (as HF numbers them).
  void Positions(size_t T, const int32_t* ids, int32_t* pos) const;

  Status InitVisionHead(const EncoderConfig& c, Rng& rng);
  // A two-tower model's tower (clip_tower.cpp): its embeddings before the layers, its norms and heads after.
  Status InitTowerFront(const EncoderConfig& c, Rng& rng);
  Status InitTowerHead(const EncoderConfig& c, Rng& rng);
  // SigLIP's attention-pooling head on one piece of nb images' rows x (nb, T, E) → out (nb, E).
  Status AttentionPool(const float* x, size_t nb, size_t T, float* out);
  // The vision embeddings of one image's P patch rows (P, E) into x (extra + P, E): the extra tokens with their
  // stored positions, the patches plus patch_pos (P, E: the stored ones, or resized to the input's grid).
  void VisionEmbeddings(const float* patches, size_t P, const float* patch_pos, float* x) const;

  // The vision front end: parameters cls_token, distillation_token (DeiT), position_embeddings, and the patch
  // convolution (patch_embeddings.projection, read as patch_embeddings.proj).
  struct VisionFront : Module {
    Status Init(const EncoderConfig& c, Rng& rng);
    float* cls = nullptr;
    float* dist = nullptr;
    float* pos = nullptr;
    PatchEmbedding patch;
  } vision_;

  // SigLIP's vision head (SiglipMultiheadAttentionPoolingHead): probe (1, 1, E) attends over the rows through
  // nn.MultiheadAttention (batch_first), then h + mlp(layernorm(h)).
  struct PoolHead : Module {
    Status Init(const EncoderConfig& c, Rng& rng);
    float* probe = nullptr;
    MultiheadAttention attention;
    LayerNorm norm;
    Linear fc1, fc2;
    ModuleList mlp;
  } pool_head_;

  EncoderConfig cfg_;
  ModuleList embeddings_, encoder_, layer_list_, pooler_, head_;
  Embedding word_, position_, token_type_;
  LayerNorm embed_norm_;
  std::vector<std::unique_ptr<EncoderLayer>> layers_;
  Linear pooler_dense_, head_dense_, classifier_;  // head_dense_: RoBERTa's classifier.dense
  LayerNorm final_norm_;                           // a vision encoder's layernorm; a tower's final_layer_norm /
                                                   // post_layernorm
  LayerNorm pre_norm_;                             // CLIP's vision pre_layrnorm
  Linear distill_classifier_;                      // DeiT's distillation_classifier
};

}  // namespace aw
