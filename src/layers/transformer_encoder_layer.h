// TransformerEncoderLayer: torch.nn.TransformerEncoderLayer for inference.
//   src (S, N, E) | (N, S, E) if batch_first | (S, E) unbatched → same shape
//   post-norm:  x = norm1(x + SA(x));        x = norm2(x + FF(x))
//   pre-norm:   x = x + SA(norm1(x));        x = x + FF(norm2(x))
//   SA = self_attn(x, x, x, src_mask, src_key_padding_mask), FF = linear2(act(linear1(x)))
// state_dict keys: self_attn.*, linear1.*, linear2.*, norm1.*, norm2.*.
// Masks follow MultiheadAttention (bool true = masked, float added).
#pragma once
#include "core/module.h"
#include "layers/layer_norm.h"
#include "layers/linear.h"
#include "layers/multihead_attention.h"
#include "layers/transformer_layer_config.h"

namespace aw {

struct EncoderLayerForward {
  MaskView src_mask;
  MaskView src_key_padding_mask;
  bool is_causal = false;  // torch 2.x hint: requires src_mask
  // The mask's name in error messages: torch's TransformerEncoderLayer and
  // nn.Transformer call it src_mask, TransformerEncoder.forward calls it mask.
  const char* src_mask_name = "srcMask";
};

// Validates the constructor arguments (d_model, nhead, dim_feedforward).
Status CheckLayerConfig(const TransformerLayerConfig& c);

// Checks a Transformer input: 3-D (batched) or 2-D, last dim d_model.
Status CheckSequence(const TensorView& t, int64_t d_model, bool batch_first, const char* name);
// Checks `in` like CheckSequence and copies it into out: the activations a
// layer or stack then updates in place.
Status BeginSequence(const TensorView& in, int64_t d_model, bool batch_first, const char* name, Buffer* out,
                     Shape* out_shape);

class TransformerEncoderLayer : public Module {
 public:
  TransformerEncoderLayer() = default;
  Status Init(const TransformerLayerConfig& c, Rng& rng);
  const TransformerLayerConfig& config() const { return cfg_; }

  // Public, validated: out = layer(src).
  Status Forward(const TensorView& src, const EncoderLayerForward& o, Buffer* out, Shape* out_shape);
  // Internal: runs in place on x, a validated (…, d_model) sequence of `shape`.
  // With `weights`, the self-attention weights per head ((N, H, L, L), or
  // (H, L, L) unbatched) are also kept there (for attention maps).
  Status Run(float* x, const Shape& shape, const EncoderLayerForward& o, MhaResult* weights = nullptr);

 private:
  TransformerLayerConfig cfg_;
  MultiheadAttention self_attn_;
  Linear linear1_, linear2_;
  LayerNorm norm1_, norm2_;
  // Scratch, reused across calls.
  MhaResult sa_;
  Buffer t_, h_, f_;
};

// The feed-forward block shared by encoder and decoder layers:
// out (rows, E) = linear2(act(linear1(in))) with h (rows, F) as scratch.
Status FeedForward(const Linear& l1, const Linear& l2, Activation act, size_t rows, const float* in, float* out,
                   Buffer* h);

}  // namespace aw
