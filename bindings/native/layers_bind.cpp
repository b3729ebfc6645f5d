// The embind registrations of the functional ops and the layers (aw.scaledDotProductAttention, aw.Linear, …,
// aw.Transformer): create a module from a config object that layers.js / transformer.js / blocks.js fill, run
// its forward. Marshalling: marshal.h.
#include <emscripten/bind.h>

#include "marshal.h"
#include "core/rules.h"
#include "layers/activation.h"
#include "layers/embedding.h"
#include "layers/layer_norm.h"
#include "layers/linear.h"
#include "layers/multihead_attention.h"
#include "layers/patch_embedding.h"
#include "layers/positional_encoding.h"
#include "layers/rms_norm.h"
#include "layers/rotary.h"
#include "layers/transformer.h"
#include "ops/scaled_dot_product_attention.h"

namespace awb {
namespace {

// { query, key, value, attnMask, isCausal, hasScale, scale, enableGqa, dropoutP, needWeights,
//   causalBias (0 none, 1 upper-left, 2 lower-right: aw.causalUpperLeft / causalLowerRight), causalL, causalS }
std::unique_ptr<CallResult> Sdpa(val a) {
  aw::SdpaOptions o;
  o.attn_mask = MaskArg(a["attnMask"]);
  o.causal_bias = static_cast<aw::CausalBias>(a["causalBias"].as<int>());
  o.causal_bias_l = Int(a, "causalL");
  o.causal_bias_s = Int(a, "causalS");
  o.is_causal = Flag(a, "isCausal");
  o.has_scale = Flag(a, "hasScale");
  o.scale = Num(a, "scale");
  o.enable_gqa = Flag(a, "enableGqa");
  o.dropout_p = Num(a, "dropoutP");
  o.need_weights = Flag(a, "needWeights");
  o.output_over_query = true;  // the query is runtime.js's own copy, freed after the outputs are copied out
  aw::SdpaResult r;
  aw::Status s = aw::ScaledDotProductAttention(TensorArg(a["query"]), TensorArg(a["key"]), TensorArg(a["value"]), o, &r);
  if (!s.ok() || r.output.size() > 0 || r.output_data == nullptr) return Attention(s, r);
  auto res = std::make_unique<CallResult>(s);
  res->AddView(r.output_data, r.output_shape);
  res->Add(std::move(r.weights), r.weights_shape);
  return res;
}

// The range rule of aw.causalLowerRight(L, S) / causalUpperLeft(L, S).
std::unique_ptr<CallResult> CheckCausalBias(double L, double S) {
  return std::make_unique<CallResult>(aw::CheckCausalBias(int64_t(L), int64_t(S)));
}

// An input shape against the shape rule (core/rules.h CheckShape), for the JS
// layer's own checks of tensors that do not reach a native call.
std::unique_ptr<CallResult> CheckShape(std::string name, val shape) {
  return std::make_unique<CallResult>(aw::CheckShape(name, ShapeFrom(shape)));
}

// { embedDim, numHeads, dropout, bias, addBiasKv, addZeroAttn, kdim, vdim (null = embedDim), batchFirst }
std::unique_ptr<ModuleHandle> CreateMha(val cfg) {
  aw::MhaConfig c;
  c.embed_dim = Int(cfg, "embedDim");
  c.num_heads = Int(cfg, "numHeads");
  c.dropout = Num(cfg, "dropout");
  c.bias = Flag(cfg, "bias");
  c.add_bias_kv = Flag(cfg, "addBiasKv");
  c.add_zero_attn = Flag(cfg, "addZeroAttn");
  c.kdim = OptInt(cfg, "kdim");
  c.vdim = OptInt(cfg, "vdim");
  c.batch_first = Flag(cfg, "batchFirst");
  aw::Rng rng;
  return Create<aw::MultiheadAttention>("MultiheadAttention", c, rng);
}

// { query, key, value, keyPaddingMask, attnMask, needWeights, averageAttnWeights, isCausal }
std::unique_ptr<CallResult> MhaForward(ModuleHandle& h, val a) {
  aw::MhaForwardOptions o;
  o.key_padding_mask = MaskArg(a["keyPaddingMask"]);
  o.attn_mask = MaskArg(a["attnMask"]);
  o.need_weights = Flag(a, "needWeights");
  o.average_attn_weights = Flag(a, "averageAttnWeights");
  o.is_causal = Flag(a, "isCausal");
  aw::MhaResult r;
  aw::Status s = h.as<aw::MultiheadAttention>().Forward(TensorArg(a["query"]), TensorArg(a["key"]),
                                                        TensorArg(a["value"]), o, &r);
  return Attention(s, r);
}

// ---- layers: create from a config object (layers.js / transformer.js fill every field), forward ----

// A Transformer layer's config object; the status names an unknown activation.
aw::Status LayerConfig(const val& c, aw::TransformerLayerConfig* t) {
  t->d_model = Int(c, "dModel");
  t->nhead = Int(c, "nhead");
  t->dim_feedforward = Int(c, "dimFeedforward");
  t->dropout = Num(c, "dropout");
  t->layer_norm_eps = Num(c, "layerNormEps");
  t->batch_first = Flag(c, "batchFirst");
  t->norm_first = Flag(c, "normFirst");
  t->bias = Flag(c, "bias");
  return aw::ParseActivation(c["activation"].as<std::string>(), &t->activation);
}

// A Transformer block M from a layer config object: M::Init(config, args…, rng).
template <class M, class... A>
std::unique_ptr<ModuleHandle> CreateBlock(const char* kind, const val& cfg, A... args) {
  aw::TransformerLayerConfig c;
  aw::Status s = LayerConfig(cfg, &c);
  aw::Rng rng;
  auto m = std::make_unique<M>();
  if (s.ok()) s = m->Init(c, args..., rng);
  return Wrap(s, std::move(m), kind);
}

// { inFeatures, outFeatures, bias }
std::unique_ptr<ModuleHandle> CreateLinear(val a) {
  aw::Rng rng;
  return Create<aw::Linear>("Linear", Int(a, "inFeatures"), Int(a, "outFeatures"), Flag(a, "bias"), rng);
}
std::unique_ptr<CallResult> LinearForward(ModuleHandle& h, val x) { return Forward<aw::Linear>(h, TensorArg(x)); }

// { normalizedShape, eps, elementwiseAffine, bias }
std::unique_ptr<ModuleHandle> CreateLayerNorm(val a) {
  return Create<aw::LayerNorm>("LayerNorm", Int(a, "normalizedShape"), Num(a, "eps"), Flag(a, "elementwiseAffine"),
                               Flag(a, "bias"));
}
std::unique_ptr<CallResult> LayerNormForward(ModuleHandle& h, val x) { return Forward<aw::LayerNorm>(h, TensorArg(x)); }

// { normalizedShape (array), eps (null = torch's None), elementwiseAffine }
std::unique_ptr<ModuleHandle> CreateRMSNorm(val cfg) {
  const std::optional<double> eps = cfg["eps"].isNull() ? std::nullopt : std::optional<double>(Num(cfg, "eps"));
  return Create<aw::RMSNorm>("RMSNorm", ShapeFrom(cfg["normalizedShape"]), eps, Flag(cfg, "elementwiseAffine"));
}
std::unique_ptr<CallResult> RMSNormForward(ModuleHandle& h, val x) { return Forward<aw::RMSNorm>(h, TensorArg(x)); }

// { dim, maxSeqLen, base, interleaved }
std::unique_ptr<ModuleHandle> CreateRotary(val a) {
  return Create<aw::RotaryPositionalEmbeddings>("RotaryPositionalEmbeddings", Int(a, "dim"), Int(a, "maxSeqLen"),
                                                Num(a, "base"), Flag(a, "interleaved"));
}
// { x, inputPos (Int32 (B, S) or (S), or null) }
std::unique_ptr<CallResult> RotaryForward(ModuleHandle& h, val a) {
  const val pos = a["inputPos"];
  const bool has_pos = !pos.isNull();
  return Forward<aw::RotaryPositionalEmbeddings>(
      h, TensorArg(a["x"]), has_pos ? reinterpret_cast<const int32_t*>(uintptr_t(pos["ptr"].as<double>())) : nullptr,
      has_pos ? ShapeFrom(pos["shape"]) : aw::Shape());
}

// { numEmbeddings, embeddingDim, paddingIdx (null: none) }
std::unique_ptr<ModuleHandle> CreateEmbedding(val a) {
  aw::Rng rng;
  const bool has_padding_idx = !a["paddingIdx"].isNull();
  return Create<aw::Embedding>("Embedding", Int(a, "numEmbeddings"), Int(a, "embeddingDim"),
                               has_padding_idx ? Int(a, "paddingIdx") : 0, has_padding_idx, rng);
}
std::unique_ptr<CallResult> EmbeddingForward(ModuleHandle& h, val ids) {
  return Forward<aw::Embedding>(h, reinterpret_cast<const int32_t*>(uintptr_t(ids["ptr"].as<double>())),
                                ShapeFrom(ids["shape"]));
}

// activation: "relu" | "gelu" | "gelu_tanh" | "silu" (layers/activation.h). Elementwise, no module.
std::unique_ptr<CallResult> ActivationForward(std::string activation, val x) {
  aw::Buffer y; aw::Shape ys;
  aw::Status s = aw::ActivationForward(activation, TensorArg(x), &y, &ys);
  return One(s, std::move(y), ys);
}

std::unique_ptr<ModuleHandle> CreateEncoderLayer(val cfg) {
  return CreateBlock<aw::TransformerEncoderLayer>("TransformerEncoderLayer", cfg);
}
aw::EncoderLayerForward EncoderArgs(const val& a, const char* mask_key) {
  aw::EncoderLayerForward o;
  o.src_mask = MaskArg(a[mask_key]);
  o.src_mask_name = mask_key;
  o.src_key_padding_mask = MaskArg(a["srcKeyPaddingMask"]);
  o.is_causal = Flag(a, "isCausal");
  return o;
}
std::unique_ptr<CallResult> EncoderLayerForward(ModuleHandle& h, val a) {
  return Forward<aw::TransformerEncoderLayer>(h, TensorArg(a["src"]), EncoderArgs(a, "srcMask"));
}

std::unique_ptr<ModuleHandle> CreateDecoderLayer(val cfg) {
  return CreateBlock<aw::TransformerDecoderLayer>("TransformerDecoderLayer", cfg);
}
aw::DecoderLayerForward DecoderArgs(const val& a) {
  aw::DecoderLayerForward o;
  o.tgt_mask = MaskArg(a["tgtMask"]);
  o.memory_mask = MaskArg(a["memoryMask"]);
  o.tgt_key_padding_mask = MaskArg(a["tgtKeyPaddingMask"]);
  o.memory_key_padding_mask = MaskArg(a["memoryKeyPaddingMask"]);
  o.tgt_is_causal = Flag(a, "tgtIsCausal");
  o.memory_is_causal = Flag(a, "memoryIsCausal");
  return o;
}
std::unique_ptr<CallResult> DecoderLayerForward(ModuleHandle& h, val a) {
  return Forward<aw::TransformerDecoderLayer>(h, TensorArg(a["tgt"]), TensorArg(a["memory"]), DecoderArgs(a));
}

// { layer: a layer config, numLayers, norm: bool, normEps }
std::unique_ptr<ModuleHandle> CreateEncoder(val a) {
  return CreateBlock<aw::TransformerEncoder>("TransformerEncoder", a["layer"], Int(a, "numLayers"), Flag(a, "norm"),
                                             Num(a, "normEps"));
}
std::unique_ptr<CallResult> EncoderForward(ModuleHandle& h, val a) {
  return Forward<aw::TransformerEncoder>(h, TensorArg(a["src"]), EncoderArgs(a, "mask"));
}

// Output, then one (N, H, L, L) per-head attention tensor per layer.
std::unique_ptr<CallResult> EncoderForwardWithAttention(ModuleHandle& h, val a) {
  aw::Buffer y; aw::Shape ys;
  std::vector<aw::Buffer> w;
  aw::Shape ws;
  aw::Status s = h.as<aw::TransformerEncoder>().Forward(TensorArg(a["src"]), EncoderArgs(a, "mask"), &y, &ys, &w, &ws);
  auto res = One(s, std::move(y), ys);
  if (s.ok())
    for (auto& b : w) res->Add(std::move(b), ws);
  return res;
}

// { layer, numLayers, norm, normEps }
std::unique_ptr<ModuleHandle> CreateDecoder(val a) {
  return CreateBlock<aw::TransformerDecoder>("TransformerDecoder", a["layer"], Int(a, "numLayers"), Flag(a, "norm"),
                                             Num(a, "normEps"));
}
std::unique_ptr<CallResult> DecoderForward(ModuleHandle& h, val a) {
  return Forward<aw::TransformerDecoder>(h, TensorArg(a["tgt"]), TensorArg(a["memory"]), DecoderArgs(a));
}

// { layer, numEncoderLayers, numDecoderLayers }
std::unique_ptr<ModuleHandle> CreateTransformer(val a) {
  return CreateBlock<aw::Transformer>("Transformer", a["layer"], Int(a, "numEncoderLayers"), Int(a, "numDecoderLayers"));
}
std::unique_ptr<CallResult> TransformerForward(ModuleHandle& h, val a) {
  aw::TransformerForward o;
  o.encoder.src_mask = MaskArg(a["srcMask"]);
  o.encoder.src_key_padding_mask = MaskArg(a["srcKeyPaddingMask"]);
  o.encoder.is_causal = Flag(a, "srcIsCausal");
  o.decoder = DecoderArgs(a);
  return Forward<aw::Transformer>(h, TensorArg(a["src"]), TensorArg(a["tgt"]), o);
}

// { dModel, maxLen, batchFirst }
std::unique_ptr<ModuleHandle> CreateSinusoidalPE(val a) {
  return Create<aw::SinusoidalPositionalEncoding>("SinusoidalPositionalEncoding", Int(a, "dModel"), Int(a, "maxLen"),
                                                  Flag(a, "batchFirst"));
}
// { maxLen, dModel, batchFirst }
std::unique_ptr<ModuleHandle> CreateLearnedPE(val a) {
  aw::Rng rng;
  return Create<aw::LearnedPositionalEmbedding>("LearnedPositionalEmbedding", Int(a, "maxLen"), Int(a, "dModel"),
                                                Flag(a, "batchFirst"), rng);
}
std::unique_ptr<CallResult> PositionalForward(ModuleHandle& h, val x) { return Forward<aw::PositionalAdd>(h, TensorArg(x)); }

// { inChannels, embedDim, patchSize, bias, classToken }
std::unique_ptr<ModuleHandle> CreatePatchEmbedding(val a) {
  aw::Rng rng;
  return Create<aw::PatchEmbedding>("PatchEmbedding", Int(a, "inChannels"), Int(a, "embedDim"), Int(a, "patchSize"),
                                    Flag(a, "bias"), Flag(a, "classToken"), rng);
}
std::unique_ptr<CallResult> PatchEmbeddingForward(ModuleHandle& h, val x) { return Forward<aw::PatchEmbedding>(h, TensorArg(x)); }

// A TransformerEncoder / TransformerDecoder stack: every layer a copy of
// `layer`, the final norm a copy of `norm` (null: none), natively.
std::unique_ptr<CallResult> StackCopyFrom(ModuleHandle& stack, ModuleHandle& layer, ModuleHandle* norm, bool encoder) {
  const aw::Module* n = norm ? norm->module() : nullptr;
  aw::Status s = encoder ? stack.as<aw::TransformerEncoder>().CopyFrom(*layer.module(), n)
                         : stack.as<aw::TransformerDecoder>().CopyFrom(*layer.module(), n);
  return std::make_unique<CallResult>(s);
}

}  // namespace
}  // namespace awb

using namespace awb;  // NOLINT: the registrations name this file's functions

EMSCRIPTEN_BINDINGS(attnwasm_layers) {
  emscripten::function("stackCopyFrom", &StackCopyFrom, emscripten::allow_raw_pointers());
  emscripten::function("createLinear", &CreateLinear);
  emscripten::function("linearForward", &LinearForward);
  emscripten::function("createLayerNorm", &CreateLayerNorm);
  emscripten::function("layerNormForward", &LayerNormForward);
  emscripten::function("createRMSNorm", &CreateRMSNorm);
  emscripten::function("rmsNormForward", &RMSNormForward);
  emscripten::function("createRotary", &CreateRotary);
  emscripten::function("rotaryForward", &RotaryForward);
  emscripten::function("createEmbedding", &CreateEmbedding);
  emscripten::function("embeddingForward", &EmbeddingForward);
  emscripten::function("activationForward", &ActivationForward);
  emscripten::function("createEncoderLayer", &CreateEncoderLayer);
  emscripten::function("encoderLayerForward", &EncoderLayerForward);
  emscripten::function("createDecoderLayer", &CreateDecoderLayer);
  emscripten::function("decoderLayerForward", &DecoderLayerForward);
  emscripten::function("createEncoder", &CreateEncoder);
  emscripten::function("encoderForward", &EncoderForward);
  emscripten::function("encoderForwardWithAttention", &EncoderForwardWithAttention);
  emscripten::function("createDecoder", &CreateDecoder);
  emscripten::function("decoderForward", &DecoderForward);
  emscripten::function("createTransformer", &CreateTransformer);
  emscripten::function("transformerForward", &TransformerForward);
  emscripten::function("createSinusoidalPE", &CreateSinusoidalPE);
  emscripten::function("createLearnedPE", &CreateLearnedPE);
  emscripten::function("positionalForward", &PositionalForward);
  emscripten::function("createPatchEmbedding", &CreatePatchEmbedding);
  emscripten::function("patchEmbeddingForward", &PatchEmbeddingForward);
  emscripten::function("createMha", &CreateMha);
  emscripten::function("mhaForward", &MhaForward);
  emscripten::function("sdpa", &Sdpa);
  emscripten::function("checkShape", &CheckShape);
  emscripten::function("checkCausalBias", &CheckCausalBias);
}
