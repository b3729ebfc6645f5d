#include "layers/transformer.h"

#include <algorithm>

#include "core/limits.h"
#include "core/rules.h"
#include "core/workspace.h"
#include "layers/entry_pieces.h"

namespace aw {
namespace {

Status CheckNumLayers(int64_t n, const char* name) { return IntInRange(name, n, 0, kMaxLayers); }

}  // namespace

// ---- LayerStack ----

template <class Layer>
Status LayerStack<Layer>::Init(const TransformerLayerConfig& layer, int64_t num_layers, bool has_norm,
                               double norm_eps, Rng& rng) {
  AW_RETURN_IF_ERROR(CheckNumLayers(num_layers, "numLayers"));
  AW_RETURN_IF_ERROR(CheckLayerConfig(layer));
  layer_cfg_ = layer;
  for (int64_t i = 0; i < num_layers; ++i) {
    layers_.push_back(std::make_unique<Layer>());
    AW_RETURN_IF_ERROR(layers_.back()->Init(layer, rng));
    list_.Append(layers_.back().get());
  }
  AddChild("layers", &list_);
  if (has_norm) {
    norm_ = std::make_unique<LayerNorm>();
    AW_RETURN_IF_ERROR(norm_->Init(layer.d_model, norm_eps, true, layer.bias));
    AddChild("norm", norm_.get());
  }
  return Status::OK();
}

namespace {
// A stack's final norm: LayerNorm(dModel) with elementwiseAffine, biased as the layer.
Status CheckFinalNorm(const Module& norm, const TransformerLayerConfig& layer) {
  const auto* ln = dynamic_cast<const LayerNorm*>(&norm);
  const std::string want = "LayerNorm(" + std::to_string(layer.d_model) + ")";
  if (!ln) return ArgError("norm: expected " + want + " with elementwiseAffine, got another module");
  if (ln->size() != layer.d_model || !ln->elementwise_affine())
    return ArgError("norm: expected " + want + " with elementwiseAffine, got LayerNorm(" + std::to_string(ln->size()) +
                    ")" + (ln->elementwise_affine() ? "" : " without elementwiseAffine"));
  if (ln->has_bias() != layer.bias)
    return ArgError(std::string("norm: bias must match the layer's bias option (") + (layer.bias ? "true" : "false") +
                    "), got " + (ln->has_bias() ? "true" : "false"));
  return Status::OK();
}

bool SameParams(const Module& a, const Module& b) {
  const std::vector<ParamSpec> pa = a.Params(), pb = b.Params();
  if (pa.size() != pb.size()) return false;
  for (size_t i = 0; i < pa.size(); ++i)
    if (pa[i].name != pb[i].name || pa[i].shape != pb[i].shape) return false;
  return true;
}
}  // namespace

template <class Layer>
Status LayerStack<Layer>::CopyFrom(const Module& layer, const Module* norm) {
  if (!layers_.empty() && !SameParams(*layers_[0], layer))
    return ArgError("layer: its parameters differ from the stack's layers (another configuration)");
  if (bool(norm) != bool(norm_))
    return ArgError(norm ? "norm: the stack was built without a final norm" : "norm: the stack needs its final norm");
  if (norm) AW_RETURN_IF_ERROR(CheckFinalNorm(*norm, layer_cfg_));
  for (auto& l : layers_) AW_RETURN_IF_ERROR(l->CopyParamsFrom(layer));
  if (norm) AW_RETURN_IF_ERROR(norm_->CopyParamsFrom(*norm));
  return Status::OK();
}

template <class Layer>
Status LayerStack<Layer>::Begin(const TensorView& in, const char* name, Buffer* out, Shape* out_shape) {
  return BeginSequence(in, layer_cfg_.d_model, layer_cfg_.batch_first, name, out, out_shape);
}

template <class Layer>
void LayerStack<Layer>::FinalNorm(float* x, const Shape& shape) const {
  if (!norm_) return;
  const size_t E = size_t(layer_cfg_.d_model);
  norm_->Apply(size_t(NumelChecked(shape)) / E, x, E, x, E);
}

template class LayerStack<TransformerEncoderLayer>;
template class LayerStack<TransformerDecoderLayer>;

// ---- TransformerEncoder / TransformerDecoder ----

Status TransformerEncoder::Forward(const TensorView& src, const EncoderLayerForward& o, Buffer* out,
                                   Shape* out_shape, std::vector<Buffer>* weights, Shape* weights_shape) {
  AW_RETURN_IF_ERROR(Begin(src, "src", out, out_shape));
  if (!weights) return Run(out->data(), src.shape, o);
  // (N, H, L, L) or (H, L, L) per layer: the outputs of forwardWithAttention.
  const SeqLayout l = LayoutOf(src.shape, layer_cfg_.batch_first);
  Shape ws{layer_cfg_.nhead, l.T, l.T};
  if (src.shape.size() == 3) ws.insert(ws.begin(), l.N);
  if (NumelChecked(ws) < 0) return ShapeError("attention weights " + ShapeStr(ws) + " exceed 2^29 elements");
  weights->resize(layers_.size());
  std::vector<float*> ptrs;
  for (Buffer& w : *weights) {
    AW_RETURN_IF_ERROR(w.Resize(size_t(NumelChecked(ws)), "attention weights"));
    ptrs.push_back(w.data());
  }
  if (weights_shape) *weights_shape = ws;
  return Run(out->data(), src.shape, o, ptrs.data());
}

Status TransformerEncoder::Run(float* x, const Shape& shape, const EncoderLayerForward& o, float* const* weights) {
  for (size_t i = 0; i < layers_.size(); ++i)
    AW_RETURN_IF_ERROR(layers_[i]->Run(x, shape, o, weights ? weights[i] : nullptr));
  FinalNorm(x, shape);
  return Status::OK();
}

Status TransformerEncoder::Scratch(const Shape& shape, const EncoderLayerForward& o, size_t* per_entry,
                                   size_t* fixed) const {
  *per_entry = *fixed = 0;
  if (layers_.empty()) return Status::OK();
  return layers_[0]->Scratch(shape, o, false, per_entry, fixed);  // every layer is alike
}

Status TransformerDecoder::Forward(const TensorView& tgt, const TensorView& memory, const DecoderLayerForward& o,
                                   Buffer* out, Shape* out_shape) {
  AW_RETURN_IF_ERROR(CheckSequence(memory, layer_cfg_.d_model, layer_cfg_.batch_first, "memory"));
  AW_RETURN_IF_ERROR(Begin(tgt, "tgt", out, out_shape));
  return Run(out->data(), tgt.shape, memory, o);
}

Status TransformerDecoder::Run(float* x, const Shape& shape, const TensorView& memory, const DecoderLayerForward& o) {
  for (auto& l : layers_) AW_RETURN_IF_ERROR(l->Run(x, shape, memory, o));
  FinalNorm(x, shape);
  return Status::OK();
}

Status TransformerDecoder::Scratch(const Shape& shape, const TensorView& memory, const DecoderLayerForward& o,
                                   size_t* per_entry, size_t* fixed) const {
  *per_entry = *fixed = 0;
  if (layers_.empty()) return Status::OK();
  return layers_[0]->Scratch(shape, memory, o, per_entry, fixed);
}

// ---- Transformer ----

Status Transformer::Init(const TransformerLayerConfig& layer, int64_t num_encoder_layers,
                         int64_t num_decoder_layers, Rng& rng) {
  AW_RETURN_IF_ERROR(CheckNumLayers(num_encoder_layers, "numEncoderLayers"));
  AW_RETURN_IF_ERROR(CheckNumLayers(num_decoder_layers, "numDecoderLayers"));
  cfg_ = layer;
  AW_RETURN_IF_ERROR(encoder_.Init(layer, num_encoder_layers, true, layer.layer_norm_eps, rng));
  AW_RETURN_IF_ERROR(decoder_.Init(layer, num_decoder_layers, true, layer.layer_norm_eps, rng));
  AddChild("encoder", &encoder_);
  AddChild("decoder", &decoder_);
  return Status::OK();
}

Status Transformer::Forward(const TensorView& src, const TensorView& tgt, const TransformerForward& o, Buffer* out,
                            Shape* out_shape) {
  AW_RETURN_IF_ERROR(CheckSequence(src, cfg_.d_model, cfg_.batch_first, "src"));
  AW_RETURN_IF_ERROR(CheckSequence(tgt, cfg_.d_model, cfg_.batch_first, "tgt"));
  if (src.shape.size() != tgt.shape.size())
    return ShapeError("tgt: expected the same number of dims as src " + ShapeStr(src.shape) + ", got " +
                      ShapeStr(tgt.shape));
  if (src.shape.size() == 3) {
    const size_t b = cfg_.batch_first ? 0 : 1;
    if (src.shape[b] != tgt.shape[b])
      return ShapeError("tgt: the batch number of src and tgt must be equal; src " + ShapeStr(src.shape) + ", tgt " +
                        ShapeStr(tgt.shape));
  }
  // Every mask is checked (by the first layers' plans) before any work.
  size_t enc_entry = 0, enc_fixed = 0, dec_entry = 0, dec_fixed = 0;
  AW_RETURN_IF_ERROR(encoder_.Scratch(src.shape, o.encoder, &enc_entry, &enc_fixed));
  AW_RETURN_IF_ERROR(decoder_.Scratch(tgt.shape, src, o.decoder, &dec_entry, &dec_fixed));
  AW_RETURN_IF_ERROR(BeginSequence(tgt, cfg_.d_model, cfg_.batch_first, "tgt", out, out_shape));
  // Per piece: the source rows (encoded in place into memory) and, for
  // sequence-first inputs, the gathered target rows.
  const SeqLayout ls = LayoutOf(src.shape, cfg_.batch_first), lt = LayoutOf(tgt.shape, cfg_.batch_first);
  const size_t per_entry = size_t(ls.T * ls.d + PieceFloats(lt, 1)) * sizeof(float) + std::max(enc_entry, dec_entry);
  const size_t P = WorkPieceEntries(size_t(ls.N), per_entry, std::max(enc_fixed, dec_fixed));
  const int64_t H = cfg_.nhead;
  for (int64_t n0 = 0; n0 < ls.N; n0 += int64_t(P)) {
    const int64_t n = std::min(int64_t(P), ls.N - n0);
    ScratchScope piece;
    float *mem = nullptr, *pt = nullptr;
    AW_RETURN_IF_ERROR(piece.Take(size_t(ls.T * n * ls.d), "memory", &mem));
    if (ls.seq_first) GatherEntries(src.data, ls, n0, n, mem);
    else std::copy(src.data + n0 * ls.T * ls.d, src.data + (n0 + n) * ls.T * ls.d, mem);
    AW_RETURN_IF_ERROR(TakePiece(out->data(), lt, n0, n, &piece, "target piece", &pt));
    const Shape ss = PieceShape(src.shape, cfg_.batch_first, n), ts = PieceShape(tgt.shape, cfg_.batch_first, n);
    EncoderLayerForward eo = o.encoder;
    eo.src_mask = SliceAttnMask(eo.src_mask, H, n0, n);
    eo.src_key_padding_mask = SliceKeyPaddingMask(eo.src_key_padding_mask, n0, n);
    DecoderLayerForward d = o.decoder;
    d.tgt_mask = SliceAttnMask(d.tgt_mask, H, n0, n);
    d.memory_mask = SliceAttnMask(d.memory_mask, H, n0, n);
    d.tgt_key_padding_mask = SliceKeyPaddingMask(d.tgt_key_padding_mask, n0, n);
    d.memory_key_padding_mask = SliceKeyPaddingMask(d.memory_key_padding_mask, n0, n);
    AW_RETURN_IF_ERROR(encoder_.Run(mem, ss, eo));
    AW_RETURN_IF_ERROR(decoder_.Run(pt, ts, TensorView{mem, ss}, d));
    PutPiece(pt, lt, n0, n, out->data());
  }
  return Status::OK();
}

}  // namespace aw
