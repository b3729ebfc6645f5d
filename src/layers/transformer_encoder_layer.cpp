#include "layers/transformer_encoder_layer.h"

#include <algorithm>

#include "core/rules.h"
#include "core/workspace.h"
#include "layers/entry_pieces.h"
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

Status FeedForward(const Linear& l1, const Linear& l2, Activation act, size_t rows, const float* in, float* out) {
  const size_t E = size_t(l1.in_features()), F = size_t(l1.out_features());
  ScratchScope scope;
  float* h = nullptr;
  AW_RETURN_IF_ERROR(scope.Take(rows * F, "feed-forward activations", &h));
  l1.Apply(rows, in, E, h, F);
  ApplyActivation(act, rows * F, h);
  l2.Apply(rows, h, F, out, E);
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

MhaForwardOptions TransformerEncoderLayer::AttnOptions(const EncoderLayerForward& o, bool weights) const {
  MhaForwardOptions mo;
  mo.attn_mask = o.src_mask;
  mo.key_padding_mask = o.src_key_padding_mask;
  mo.is_causal = o.is_causal;
  mo.need_weights = weights;
  mo.average_attn_weights = false;
  mo.names.query = mo.names.key = mo.names.value = "src";
  mo.names.attn_mask = o.src_mask_name;
  mo.names.key_padding_mask = "srcKeyPaddingMask";
  mo.names.is_causal = "isCausal";
  return mo;
}

Status TransformerEncoderLayer::Scratch(const Shape& shape, const EncoderLayerForward& o, bool weights,
                                        size_t* per_entry, size_t* fixed) const {
  static const float kAny = 0.0f;  // Check reads shapes and compares pointers only
  const TensorView v{&kAny, shape};
  MhaPlan p;
  AW_RETURN_IF_ERROR(self_attn_.Check(v, v, v, AttnOptions(o, weights), &p));
  const size_t L = size_t(p.L), E = size_t(cfg_.d_model), F = size_t(cfg_.dim_feedforward);
  // t (pre-norm) and y stay for the whole layer; the attention's scratch and
  // the feed-forward's hidden rows come one after the other.
  const size_t own = ((cfg_.norm_first ? 2 : 1) * L * E) * sizeof(float);
  *per_entry = own + std::max(self_attn_.ScratchPerEntry(p), L * F * sizeof(float));
  *fixed = self_attn_.ScratchFixed(p);
  return Status::OK();
}

Status TransformerEncoderLayer::Run(float* x, const Shape& shape, const EncoderLayerForward& o, float* weights) {
  const MhaForwardOptions mo = AttnOptions(o, weights != nullptr);
  size_t per_entry = 0, fixed = 0;
  AW_RETURN_IF_ERROR(Scratch(shape, o, weights != nullptr, &per_entry, &fixed));  // checks the masks too
  const SeqLayout l = LayoutOf(shape, cfg_.batch_first);
  const size_t gather = size_t(PieceFloats(l, 1)) * sizeof(float);
  size_t P = WorkPieceEntries(size_t(l.N), per_entry, fixed);
  if (P < size_t(l.N) && gather) P = WorkPieceEntries(size_t(l.N), per_entry + gather, fixed);
  if (P == size_t(l.N)) return RunPiece(x, shape, mo, weights);
  const int64_t H = cfg_.nhead;
  for (int64_t n0 = 0; n0 < l.N; n0 += int64_t(P)) {
    const int64_t n = std::min(int64_t(P), l.N - n0);
    ScratchScope piece;
    float* px = nullptr;
    AW_RETURN_IF_ERROR(TakePiece(x, l, n0, n, &piece, "layer piece", &px));
    MhaForwardOptions pmo = mo;
    pmo.attn_mask = SliceAttnMask(mo.attn_mask, H, n0, n);
    pmo.key_padding_mask = SliceKeyPaddingMask(mo.key_padding_mask, n0, n);
    AW_RETURN_IF_ERROR(RunPiece(px, PieceShape(shape, cfg_.batch_first, n), pmo,
                                weights ? weights + n0 * H * l.T * l.T : nullptr));
    PutPiece(px, l, n0, n, x);
  }
  return Status::OK();
}

Status TransformerEncoderLayer::RunPiece(float* x, const Shape& shape, const MhaForwardOptions& mo, float* weights) {
  const size_t E = size_t(cfg_.d_model), rows = ResidualBlocks::Rows(shape, E);
  ScratchScope scope;
  ResidualBlocks res;
  AW_RETURN_IF_ERROR(res.Begin(&scope, cfg_.norm_first, rows, E));
  AW_RETURN_IF_ERROR(res.Block(norm1_, x, [&](const float* in, float* out) {
    const TensorView v{in, shape};
    return self_attn_.ForwardInto(v, v, v, mo, out, weights);
  }));
  return res.Block(norm2_, x, [&](const float* in, float* out) {
    return FeedForward(linear1_, linear2_, cfg_.activation, rows, in, out);
  });
}

}  // namespace aw
