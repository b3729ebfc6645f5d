// TransformerEncoderLayer: torch.nn.TransformerEncoderLayer for inference.
//   src (S, N, E) | (N, S, E) if batch_first | (S, E) unbatched → same shape
//   post-norm:  x = norm1(x + SA(x));        x = norm2(x + FF(x))
//   pre-norm:   x = x + SA(norm1(x));        x = x + FF(norm2(x))
//   SA = self_attn(x, x, x, src_mask, src_key_padding_mask), FF = linear2(act(linear1(x)))
// state_dict keys: self_attn.*, linear1.*, linear2.*, norm1.*, norm2.*.
// Masks follow MultiheadAttention (bool true = masked, float added).
// Scratch comes from the workspace (core/workspace.h): a batch whose scratch
// would exceed the budget runs in pieces of whole entries (entry_pieces.h).
#pragma once
#include "core/module.h"
#include "core/workspace.h"
#include "kernels/elementwise.h"
#include "layers/layer_norm.h"
#include "layers/linear.h"
#include "layers/multihead_attention.h"
#include "layers/residual.h"
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

  // Public, validated: out = layer(src).
  Status Forward(const TensorView& src, const EncoderLayerForward& o, Buffer* out, Shape* out_shape);
  // Internal: runs in place on x, a validated (…, d_model) sequence of `shape`
  // (the masks are checked here). With `weights`, the self-attention weights
  // per head ((N, H, L, L), or (H, L, L) unbatched) are written there too
  // (attention maps).
  Status Run(float* x, const Shape& shape, const EncoderLayerForward& o, float* weights = nullptr);
  // Scratch of a Run on `shape` in bytes, per batch entry (this layer's and
  // its attention's) and once, for callers that cut their batch in pieces.
  Status Scratch(const Shape& shape, const EncoderLayerForward& o, bool weights, size_t* per_entry,
                 size_t* fixed) const;

 private:
  MhaForwardOptions AttnOptions(const EncoderLayerForward& o, bool weights) const;
  // Run on a piece that fits the budget: x in place, masks of the piece.
  Status RunPiece(float* x, const Shape& shape, const MhaForwardOptions& mo, float* weights);

  TransformerLayerConfig cfg_;
  MultiheadAttention self_attn_;
  Linear linear1_, linear2_;
  LayerNorm norm1_, norm2_;
};

// The feed-forward block shared by encoder and decoder layers:
// out (rows, E) = linear2(act(linear1(in))), its hidden rows (rows, F) in scratch.
Status FeedForward(const Linear& l1, const Linear& l2, Activation act, size_t rows, const float* in, float* out);

}  // namespace aw
