#include "layers/transformer_encoder_layer.h"

#include "core/rules.h"
#include "kernels/activation.h"

namespace aw {

Status CheckSequence(const TensorView& t, int64_t d_model, bool batch_first, const char* name) {
  AW_RETURN_IF_ERROR(CheckShape(name, t.shape));
  const char* layout = batch_first ? "(N, S, dModel)" : "(S, N, dModel)";
  if (t.shape.size() != 2 && t.shape.size() != 3)
    return ShapeError(std::string(name) + ": expected a 3-D " + layout + " or 2-D (S, dModel) tensor, got " +
                      ShapeStr(t.shape));
  if (t.shape.back() != d_model)
    return ShapeError(std::string(name) + ": expected last dim dModel = " + std::to_string(d_model) + ", got " +
                      ShapeStr(t.shape));
  return Status::OK();
}

Status BeginSequence(const TensorView& in, int64_t d_model, bool batch_first, const char* name, Buffer* out,
                     Shape* out_shape) {
  AW_RETURN_IF_ERROR(CheckSequence(in, d_model, batch_first, name));
  const size_t n = size_t(NumelChecked(in.shape));
  AW_RETURN_IF_ERROR(out->Resize(n, "layer activations"));
  std::copy(in.data, in.data + n, out->data());
  *out_shape = in.shape;
  return Status::OK();
}

Status FeedForward(const Linear& l1, const Linear& l2, Activation act, size_t rows, const float* in, float* out,
                   Buffer* h) {
  const size_t E = size_t(l1.in_features()), F = size_t(l1.out_features());
  AW_RETURN_IF_ERROR(h->Resize(rows * F, "feed-forward activations"));
  l1.Apply(rows, in, E, h->data(), F);
  ApplyActivation(act, rows * F, h->data());
  l2.Apply(rows, h->data(), F, out, E);
  return Status::OK();
}

Status CheckLayerConfig(const TransformerLayerConfig& c) {
  AW_RETURN_IF_ERROR(PositiveInt("dModel", c.d_model));
  AW_RETURN_IF_ERROR(PositiveInt("nhead", c.nhead));
  AW_RETURN_IF_ERROR(DivisibleBy("dModel", c.d_model, "nhead", c.nhead));
  AW_RETURN_IF_ERROR(PositiveInt("dimFeedforward", c.dim_feedforward));
  // dropout is MultiheadAttention's (its Init names it); the norms' eps is named here as the layer's option.
  return NonNegativeFinite("layerNormEps", c.layer_norm_eps);
}

Status TransformerEncoderLayer::Init(const TransformerLayerConfig& c, Rng& rng) {
  AW_RETURN_IF_ERROR(CheckLayerConfig(c));
  cfg_ = c;
  MhaConfig mc;
  mc.embed_dim = c.d_model; mc.num_heads = c.nhead; mc.dropout = c.dropout; mc.bias = c.bias;
  mc.batch_first = c.batch_first;
  AW_RETURN_IF_ERROR(self_attn_.Init(mc, rng));
  AW_RETURN_IF_ERROR(linear1_.Init(c.d_model, c.dim_feedforward, c.bias, rng));
  AW_RETURN_IF_ERROR(linear2_.Init(c.dim_feedforward, c.d_model, c.bias, rng));
  AW_RETURN_IF_ERROR(norm1_.Init(c.d_model, c.layer_norm_eps, true, c.bias));
  AW_RETURN_IF_ERROR(norm2_.Init(c.d_model, c.layer_norm_eps, true, c.bias));
  AddChild("self_attn", &self_attn_);
  AddChild("linear1", &linear1_);
  AddChild("linear2", &linear2_);
  AddChild("norm1", &norm1_);
  AddChild("norm2", &norm2_);
  return Status::OK();
}

Status TransformerEncoderLayer::Forward(const TensorView& src, const EncoderLayerForward& o, Buffer* out,
                                        Shape* out_shape) {
  AW_RETURN_IF_ERROR(BeginSequence(src, cfg_.d_model, cfg_.batch_first, "src", out, out_shape));
  return Run(out->data(), src.shape, o);
}

Status TransformerEncoderLayer::Run(float* x, const Shape& shape, const EncoderLayerForward& o, MhaResult* weights) {
  const size_t E = size_t(cfg_.d_model);
  const size_t rows = size_t(NumelChecked(shape)) / E;
  MhaForwardOptions mo;
  mo.attn_mask = o.src_mask;
  mo.key_padding_mask = o.src_key_padding_mask;
  mo.is_causal = o.is_causal;
  mo.need_weights = weights != nullptr;
  mo.average_attn_weights = false;
  MhaResult& sa = weights ? *weights : sa_;
  mo.names.query = mo.names.key = mo.names.value = "src";
  mo.names.attn_mask = o.src_mask_name;
  mo.names.key_padding_mask = "srcKeyPaddingMask";
  mo.names.is_causal = "isCausal";
  if (cfg_.norm_first) {
    AW_RETURN_IF_ERROR(t_.Resize(rows * E, "normalised input"));
    norm1_.Apply(rows, x, E, t_.data(), E);
    const TensorView t{t_.data(), shape};
    AW_RETURN_IF_ERROR(self_attn_.Forward(t, t, t, mo, &sa));
    kernels::f32_add(rows * E, x, sa.output.data());
    norm2_.Apply(rows, x, E, t_.data(), E);
    AW_RETURN_IF_ERROR(f_.Resize(rows * E, "feed-forward output"));
    AW_RETURN_IF_ERROR(FeedForward(linear1_, linear2_, cfg_.activation, rows, t_.data(), f_.data(), &h_));
    kernels::f32_add(rows * E, x, f_.data());
  } else {
    const TensorView xv{x, shape};
    AW_RETURN_IF_ERROR(self_attn_.Forward(xv, xv, xv, mo, &sa));
    kernels::f32_add(rows * E, x, sa.output.data());
    norm1_.Apply(rows, x, E, x, E);
    AW_RETURN_IF_ERROR(f_.Resize(rows * E, "feed-forward output"));
    AW_RETURN_IF_ERROR(FeedForward(linear1_, linear2_, cfg_.activation, rows, x, f_.data(), &h_));
    kernels::f32_add(rows * E, x, f_.data());
    norm2_.Apply(rows, x, E, x, E);
  }
  return Status::OK();
}

}  // namespace aw
