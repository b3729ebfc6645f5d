// TransformerDecoderLayer: torch.nn.TransformerDecoderLayer for inference.
//   tgt (T, N, E) | (N, T, E) if batch_first | (T, E); memory (S, N, E) … → like tgt
//   post-norm:  x = norm1(x + SA(x));  x = norm2(x + MHA(x, mem));  x = norm3(x + FF(x))
//   pre-norm:   x = x + SA(norm1(x));  x = x + MHA(norm2(x), mem);  x = x + FF(norm3(x))
// state_dict keys: self_attn.*, multihead_attn.*, linear1.*, linear2.*, norm1-3.*.
#pragma once
#include "layers/transformer_encoder_layer.h"

namespace aw {

struct DecoderLayerForward {
  MaskView tgt_mask;
  MaskView memory_mask;
  MaskView tgt_key_padding_mask;
  MaskView memory_key_padding_mask;
  bool tgt_is_causal = false;     // torch 2.x hints: require the matching mask
  bool memory_is_causal = false;
};

class TransformerDecoderLayer : public Module {
 public:
  TransformerDecoderLayer() = default;
  Status Init(const TransformerLayerConfig& c, Rng& rng);
  const TransformerLayerConfig& config() const { return cfg_; }

  // Public, validated: out = layer(tgt, memory).
  Status Forward(const TensorView& tgt, const TensorView& memory, const DecoderLayerForward& o, Buffer* out,
                 Shape* out_shape);
  // Internal: runs in place on x, a validated sequence of `shape`.
  Status Run(float* x, const Shape& shape, const TensorView& memory, const DecoderLayerForward& o);

 private:
  TransformerLayerConfig cfg_;
  MultiheadAttention self_attn_, multihead_attn_;
  Linear linear1_, linear2_;
  LayerNorm norm1_, norm2_, norm3_;
  MhaResult sa_;
  Buffer t_, h_, f_;
};

}  // namespace aw
