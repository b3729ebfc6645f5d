// Stacks: torch.nn.TransformerEncoder / TransformerDecoder (num_layers copies
// of a layer, optional final norm) and torch.nn.Transformer (encoder with
// final norm + decoder with final norm).
// state_dict keys: layers.0.…, norm.weight/bias; for Transformer
// encoder.layers.N.…, encoder.norm.…, decoder.layers.N.…, decoder.norm.….
// Deliberate: no nested-tensor fast path. In eval mode without grad torch
// 1.13+ runs a TransformerEncoder with src_key_padding_mask on nested tensors
// and returns zeros at padded positions; attnwasm always computes the
// standard path, so padded positions hold the values the layers compute for
// them (as torch does with grad enabled).
#pragma once
#include <memory>
#include <vector>

#include "layers/transformer_decoder_layer.h"
#include "layers/transformer_encoder_layer.h"

namespace aw {

// numLayers copies of Layer ("layers.N") and an optional final norm ("norm"):
// what TransformerEncoder and TransformerDecoder share.
template <class Layer>
class LayerStack : public Module {
 public:
  // has_norm: a final LayerNorm(d_model, norm_eps).
  Status Init(const TransformerLayerConfig& layer, int64_t num_layers, bool has_norm, double norm_eps, Rng& rng);
  Layer& layer(size_t i) { return *layers_[i]; }
  // Every layer a copy of `layer`'s parameters and the final norm of
  // `norm`'s (torch deep-copies the layer into the stack), natively. Both
  // are checked first (same keys and shapes; norm given iff the stack has
  // one, a LayerNorm(dModel) with elementwiseAffine and the layer's bias
  // option): on error nothing changes.
  Status CopyFrom(const Module& layer, const Module* norm);
  // The final norm (if any) over rows of d_model floats, in place.
  void FinalNorm(float* x, const Shape& shape) const;

 protected:
  // Copies a validated input sequence into out (the activations every layer updates in place).
  Status Begin(const TensorView& in, const char* name, Buffer* out, Shape* out_shape);

  TransformerLayerConfig layer_cfg_;
  std::vector<std::unique_ptr<Layer>> layers_;
  std::unique_ptr<LayerNorm> norm_;
  ModuleList list_;
};

class TransformerEncoder : public LayerStack<TransformerEncoderLayer> {
 public:
  // weights (optional): one entry per layer receives that layer's per-head
  // self-attention weights (attention maps), (N, H, L, L) or (H, L, L);
  // resized to num_layers. Owned by the caller.
  Status Forward(const TensorView& src, const EncoderLayerForward& o, Buffer* out, Shape* out_shape,
                 std::vector<Buffer>* weights = nullptr, Shape* weights_shape = nullptr);
  // In place on x; weights: num_layers pointers to (N, H, L, L) floats, or null.
  Status Run(float* x, const Shape& shape, const EncoderLayerForward& o, float* const* weights = nullptr);
  // Scratch of a Run, per batch entry and once (the largest layer's).
  Status Scratch(const Shape& shape, const EncoderLayerForward& o, size_t* per_entry, size_t* fixed) const;
};

class TransformerDecoder : public LayerStack<TransformerDecoderLayer> {
 public:
  Status Forward(const TensorView& tgt, const TensorView& memory, const DecoderLayerForward& o, Buffer* out,
                 Shape* out_shape);
  Status Run(float* x, const Shape& shape, const TensorView& memory, const DecoderLayerForward& o);
  Status Scratch(const Shape& shape, const TensorView& memory, const DecoderLayerForward& o, size_t* per_entry,
                 size_t* fixed) const;
};

struct TransformerForward {
  EncoderLayerForward encoder;   // src_mask, src_key_padding_mask, src_is_causal
  DecoderLayerForward decoder;   // tgt_mask, memory_mask, tgt/memory key padding, tgt/memory_is_causal
};

class Transformer : public Module {
 public:
  Transformer() = default;
  Status Init(const TransformerLayerConfig& layer, int64_t num_encoder_layers, int64_t num_decoder_layers, Rng& rng);

  // out like tgt. Checks as torch: src/tgt feature dims = d_model, equal batch sizes.
  // Runs in pieces of whole batch entries (encoder then decoder per piece),
  // so the encoder's output (memory) exists for one piece at a time.
  Status Forward(const TensorView& src, const TensorView& tgt, const TransformerForward& o, Buffer* out,
                 Shape* out_shape);

  TransformerEncoder& encoder() { return encoder_; }
  TransformerDecoder& decoder() { return decoder_; }

 private:
  TransformerLayerConfig cfg_;
  TransformerEncoder encoder_;
  TransformerDecoder decoder_;
};

}  // namespace aw
