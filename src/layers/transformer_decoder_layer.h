// TransformerDecoderLayer: torch.nn.TransformerDecoderLayer for inference.
//   tgt (T, N, E) | (N, T, E) if batch_first | (T, E); memory (S, N, E) … → like tgt
//   post-norm:  x = norm1(x + SA(x));  x = norm2(x + MHA(x, mem));  x = norm3(x + FF(x))
//   pre-norm:   x = x + SA(norm1(x));  x = x + MHA(norm2(x), mem);  x = x + FF(norm3(x))
// state_dict keys: self_attn.*, multihead_attn.*, linear1.*, linear2.*, norm1-3.*.
#pragma once
#include "layers/kv_cache.h"
#include "layers/transformer_encoder_layer.h"

namespace aw {

struct DecoderLayerForward {
  MaskView tgt_mask;
  MaskView memory_mask;
  MaskView tgt_key_padding_mask;
  MaskView memory_key_padding_mask;
  bool tgt_is_causal = false;     // torch 2.x hints: require the matching mask
  bool memory_is_causal = false;
  bool tgt_causal = false;        // internal (model families): a causal self-attention with no tgt_mask
};

class TransformerDecoderLayer : public Module {
 public:
  TransformerDecoderLayer() = default;
  Status Init(const TransformerLayerConfig& c, Rng& rng);

  // Public, validated: out = layer(tgt, memory).
  Status Forward(const TensorView& tgt, const TensorView& memory, const DecoderLayerForward& o, Buffer* out,
                 Shape* out_shape);
  // Internal: runs in place on x, a validated sequence of `shape` (memory and
  // the masks are checked here).
  Status Run(float* x, const Shape& shape, const TensorView& memory, const DecoderLayerForward& o);
  // Scratch of a Run in bytes, per batch entry and once (see the encoder layer's).
  Status Scratch(const Shape& shape, const TensorView& memory, const DecoderLayerForward& o, size_t* per_entry,
                 size_t* fixed) const;

  // ---- Incremental decoding: one new token per sequence per call ----
  // The cross-attention's keys and values: memory (S, E) projected once per source, shared by every sequence.
  struct CrossKv {
    size_t S = 0;
    Buffer k, v;  // (S, E)
  };
  Status ProjectMemory(const float* memory, size_t S, CrossKv* c) const;
  // x (B, E) in place: the layer applied to position t = self->len of B sequences whose positions < t are
  // layer l of `self` (position t is written there; the caller advances len once every layer has run).
  // cross_weights (B, H, S) if non-null.
  Status Step(float* x, size_t B, KvCache* self, size_t l, const CrossKv& cross, float* cross_weights);

 private:
  MhaForwardOptions SelfOptions(const DecoderLayerForward& o) const;
  MhaForwardOptions CrossOptions(const DecoderLayerForward& o) const;
  // Run on a piece that fits the budget: x in place, memory and masks of the piece.
  Status RunPiece(float* x, const Shape& shape, const TensorView& memory, const MhaForwardOptions& so,
                  const MhaForwardOptions& co);

  TransformerLayerConfig cfg_;
  MultiheadAttention self_attn_, multihead_attn_;
  Linear linear1_, linear2_;
  LayerNorm norm1_, norm2_, norm3_;
};

}  // namespace aw
