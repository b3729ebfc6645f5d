#include "layers/transformer.h"

#include <algorithm>

#include "core/rules.h"

namespace aw {
namespace {

Status CheckNumLayers(int64_t n, const char* name) { return IntInRange(name, n, 0, 1000); }

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
    list_.Add(std::to_string(i), layers_.back().get());
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
                                   Shape* out_shape, std::vector<MhaResult>* weights) {
  AW_RETURN_IF_ERROR(Begin(src, "src", out, out_shape));
  return Run(out->data(), src.shape, o, weights);
}

Status TransformerEncoder::Run(float* x, const Shape& shape, const EncoderLayerForward& o,
                               std::vector<MhaResult>* weights) {
  if (weights) weights->resize(layers_.size());
  for (size_t i = 0; i < layers_.size(); ++i)
    AW_RETURN_IF_ERROR(layers_[i]->Run(x, shape, o, weights ? &(*weights)[i] : nullptr));
  FinalNorm(x, shape);
  return Status::OK();
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
  Shape mem_shape;
  AW_RETURN_IF_ERROR(encoder_.Forward(src, o.encoder, &memory_, &mem_shape));
  return decoder_.Forward(tgt, TensorView{memory_.data(), mem_shape}, o.decoder, out, out_shape);
}

}  // namespace aw
