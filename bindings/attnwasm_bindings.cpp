// embind boundary: registration and marshalling only. Tensors arrive as
// { ptr, shape } objects (masks { ptr, dtype, shape }, null = absent) that the
// JS layer (runtime.js) allocated and filled, options as fields of the same
// object; results leave as a CallResult the JS layer copies out of and
// deletes. Every rule and every loop over data lives in src/: nothing here
// validates, and nothing throws: failures travel as (code, message) and the
// JS layer throws.
#include <emscripten/bind.h>
#include <emscripten/heap.h>
#include <emscripten/val.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/parallel.h"
#include "core/rules.h"
#include "core/workspace.h"
#include "kernels/gemm.h"
#include "io/safetensors.h"
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
#include "models/causal_lm.h"
#include "models/encoder.h"
#include "models/families.h"
#include "models/load_model.h"
#include "models/translator.h"
#include "models/vit_classifier.h"
#include "ops/scaled_dot_product_attention.h"

// bindings/heap_stats.cpp
size_t AwHeapInUse();
size_t AwHeapPeak();
void AwResetHeapPeak();

using emscripten::val;

namespace {

// Integers cross as JS numbers: safe integers (the JS layer checks), exact in int64.
aw::Shape ShapeFrom(const val& a) {
  std::vector<double> d = emscripten::vecFromJSArray<double>(a);
  return aw::Shape(d.begin(), d.end());
}

aw::TensorView View(uintptr_t p, const val& shape) {
  return aw::TensorView{reinterpret_cast<const float*>(p), ShapeFrom(shape)};
}

aw::MaskView Mask(uintptr_t p, int dtype, const val& shape) {
  aw::MaskView m;
  if (!p) return m;
  m.data = reinterpret_cast<const void*>(p);
  m.dtype = static_cast<aw::DType>(dtype);
  m.shape = ShapeFrom(shape);
  return m;
}

// Object-style arguments: { ptr, shape } tensors and { ptr, dtype, shape } masks
// (null/undefined = absent), flags and numbers, built by runtime.js.
aw::TensorView TensorArg(const val& a) { return View(uintptr_t(a["ptr"].as<double>()), a["shape"]); }
aw::MaskView MaskArg(const val& a) {
  if (a.isNull() || a.isUndefined()) return aw::MaskView();
  return Mask(uintptr_t(a["ptr"].as<double>()), a["dtype"].as<int>(), a["shape"]);
}
bool Flag(const val& o, const char* k) { return o[k].as<bool>(); }
double Num(const val& o, const char* k) { return o[k].as<double>(); }
// Integers cross as JS numbers that checks.js checkInteger made safe integers
// (|v| <= 2^53 - 1): the cast is exact; ranges are the native rules'.
int64_t Int(const val& o, const char* k) { return int64_t(o[k].as<double>()); }
std::optional<int64_t> OptInt(const val& o, const char* k) {
  if (o[k].isNull()) return std::nullopt;
  return Int(o, k);
}
val ShapeVal(const aw::Shape& s) {
  val a = val::array();
  for (int64_t d : s) a.call<void>("push", double(d));
  return a;
}

// Owned outputs of one call: float32 or int32 arrays with their shapes.
// Owner: the JS handle (deleted by runtime.js).
class CallResult {
 public:
  explicit CallResult(const aw::Status& s) : code_(int(s.code())), message_(s.message()) {}
  void Add(aw::Buffer&& b, const aw::Shape& s) {
    outs_.push_back(Out{std::move(b), {}, {}, s});
  }
  void Add(std::vector<float>&& v, const aw::Shape& s) { outs_.push_back(Out{aw::Buffer(), std::move(v), {}, s}); }
  // Floats this result does not own (an SDPA output written over the call's
  // copy of its query): valid while the call's inputs are, which runtime.js
  // frees only after copying every output out.
  void AddView(const float* p, const aw::Shape& s) {
    outs_.push_back(Out{aw::Buffer(), {}, {}, s, false, p, size_t(aw::NumelChecked(s))});
  }
  void Add(std::vector<int32_t>&& v, const aw::Shape& s) {
    outs_.push_back(Out{aw::Buffer(), {}, std::move(v), s, true});
  }
  int code() const { return code_; }
  std::string message() const { return message_; }
  int count() const { return int(outs_.size()); }
  val shape(int i) const { return ShapeVal(outs_[size_t(i)].shape); }
  // A Float32Array or Int32Array view into wasm memory: valid until this
  // result is deleted or memory grows.
  val data(int i) const {
    const Out& o = outs_[size_t(i)];
    if (o.is_int) return val(emscripten::typed_memory_view(o.ints.size(), o.ints.data()));
    if (o.view) return val(emscripten::typed_memory_view(o.view_size, o.view));
    if (!o.floats.empty()) return val(emscripten::typed_memory_view(o.floats.size(), o.floats.data()));
    return val(emscripten::typed_memory_view(o.buf.size(), o.buf.data()));
  }

 private:
  struct Out {
    aw::Buffer buf;
    std::vector<float> floats;
    std::vector<int32_t> ints;
    aw::Shape shape;
    bool is_int = false;
    const float* view = nullptr;  // AddView
    size_t view_size = 0;
  };
  int code_;
  std::string message_;
  std::vector<Out> outs_;
};

std::unique_ptr<CallResult> One(const aw::Status& s, aw::Buffer&& out, const aw::Shape& shape) {
  auto res = std::make_unique<CallResult>(s);
  if (s.ok()) res->Add(std::move(out), shape);
  return res;
}

// The forward of a module M of the handle: M::Forward(args…, &y, &y_shape), one output.

// An attention result (SdpaResult, MhaResult): output, then weights (empty
// unless they were asked for).
template <class R>
std::unique_ptr<CallResult> Attention(const aw::Status& s, R& r) {
  auto res = One(s, std::move(r.output), r.output_shape);
  if (s.ok()) res->Add(std::move(r.weights), r.weights_shape);
  return res;
}

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

// Handle of one module (any layer). Owner: the JS object wrapping it, which
// deletes it in dispose(). A handle whose creation failed holds no module;
// layers.js reads code()/message() and deletes it at once.
class ModuleHandle {
 public:
  // kind: the class in messages ("Linear", "CausalLM"); family: a loaded model's registry row (null: a layer).
  ModuleHandle(aw::Status s, std::unique_ptr<aw::Module> m, const char* kind, const aw::Family* family = nullptr)
      : status_(std::move(s)), module_(std::move(m)), kind_(kind), family_(family) {}
  int code() const { return int(status_.code()); }
  std::string message() const { return status_.message(); }

  val paramNames() const {
    val a = val::array();
    for (const auto& p : module_->Params()) a.call<void>("push", p.name);
    return a;
  }
  val paramShape(std::string name) const {
    for (const auto& p : module_->Params())
      if (p.name == name) return ShapeVal(p.shape);
    return val::array();
  }
  // A view of a parameter's data (valid until memory grows); undefined if unknown.
  val paramData(std::string name) const {
    for (const auto& p : module_->Params())
      if (p.name == name)
        return val(emscripten::typed_memory_view(size_t(aw::NumelChecked(p.shape)), module_->Param(name)));
    return val::undefined();
  }
  // A loaded model's resolved config as JSON, its family's kind first (models/families.h FamilyInfoJson); "{}"
  // for a layer.
  std::string info() const { return family_ ? aw::FamilyInfoJson(*module_, *family_) : "{}"; }
  std::unique_ptr<CallResult> loadStateDict(val names, val ptrs, val shapes) {
    std::vector<aw::NamedTensor> entries;
    const int n = names["length"].as<int>();
    for (int i = 0; i < n; ++i)
      entries.push_back({names[i].as<std::string>(), View(uintptr_t(ptrs[i].as<double>()), shapes[i])});
    return std::make_unique<CallResult>(module_->LoadStateDict(entries, kind_));
  }
  template <class T>
  T& as() { return static_cast<T&>(*module_); }
  aw::Module* module() { return module_.get(); }
  const char* kind() const { return kind_; }

 private:
  aw::Status status_;
  std::unique_ptr<aw::Module> module_;
  const char* kind_;
  const aw::Family* family_;
};

std::unique_ptr<ModuleHandle> Wrap(aw::Status s, std::unique_ptr<aw::Module> m, const char* kind,
                                   const aw::Family* family = nullptr) {
  return std::make_unique<ModuleHandle>(s, s.ok() ? std::move(m) : nullptr, kind, family);
}

template <class M, class... A>
std::unique_ptr<CallResult> Forward(ModuleHandle& h, A&&... args) {
  aw::Buffer y; aw::Shape ys;
  aw::Status s = h.as<M>().Forward(std::forward<A>(args)..., &y, &ys);
  return One(s, std::move(y), ys);
}

// A new module M, M::Init(args…) (which validates them).
template <class M, class... A>
std::unique_ptr<ModuleHandle> Create(const char* kind, A&&... args) {
  auto m = std::make_unique<M>();
  aw::Status s = m->Init(std::forward<A>(args)...);
  return Wrap(s, std::move(m), kind);
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

// ---- models (models/load_model.h, translator.h, vit_classifier.h) ----

const int32_t* Ids(const val& a) { return reinterpret_cast<const int32_t*>(uintptr_t(a["ptr"].as<double>())); }
size_t Len(const val& a) { return size_t(a["shape"][0].as<double>()); }

// Source ids → generated ids (T), cross-attention (layers, heads, T, S),
// step times (T, ms), summed log probability (1).
std::unique_ptr<CallResult> TranslatorDecode(ModuleHandle& h, val a) {
  aw::DecodeOptions o;
  o.first_token = a["firstToken"].as<int>();
  o.max_length = Int(a, "maxLength");
  o.beam_size = Int(a, "beamSize");
  o.length_penalty = a["lengthPenalty"].as<double>();
  o.beam_search = Flag(a, "beamSearch");
  aw::DecodeResult r;
  aw::Status s = h.as<aw::Translator>().Decode(Ids(a["src"]), Len(a["src"]), o, &r);
  auto res = std::make_unique<CallResult>(s);
  if (s.ok()) {
    const int64_t T = int64_t(r.ids.size());
    res->Add(std::move(r.ids), {T});
    res->Add(std::move(r.cross), r.cross_shape);
    res->Add(std::move(r.step_ms), {T});
    res->Add(std::vector<float>{float(r.score)}, {1});
  }
  return res;
}
std::unique_ptr<CallResult> TranslatorForwardFull(ModuleHandle& h, val a) {
  aw::Buffer logits;
  aw::Shape shape;
  aw::Status s = h.as<aw::Translator>().ForwardFull(Ids(a["src"]), Len(a["src"]), Ids(a["tgt"]), Len(a["tgt"]), &logits, &shape);
  return One(s, std::move(logits), shape);
}

// Image (C·H·W values) → logits (K), probabilities (K), index (1),
// attention (layers, heads, P), rollout (P).
std::unique_ptr<CallResult> ClassifierClassify(ModuleHandle& h, val a) {
  const aw::TensorView x = TensorArg(a["image"]);
  aw::ClassifyResult r;
  aw::Status s = h.as<aw::VitClassifier>().Classify(x.data, size_t(aw::NumelChecked(x.shape)), &r);
  auto res = std::make_unique<CallResult>(s);
  if (s.ok()) {
    const int64_t K = int64_t(r.logits.size()), P = int64_t(r.rollout.size());
    res->Add(std::move(r.logits), {K});
    res->Add(std::move(r.probabilities), {K});
    res->Add(std::vector<int32_t>{int32_t(r.index)}, {1});
    res->Add(std::move(r.attention), r.attention_shape);
    res->Add(std::move(r.rollout), {P});
  }
  return res;
}

// ---- safetensors ----

// A file's "__metadata__" as a JS object of strings.
val MetadataObject(const aw::io::StFile& file) {
  val o = val::object();
  for (const auto& kv : file.metadata) o.set(kv.first, kv.second);
  return o;
}

// A safetensors file read and converted (io/safetensors.h ReadSafetensors).
// Owner: runtime.js (deleted after copying out).
class StResult {
 public:
  StResult(const uint8_t* bytes, size_t size) { status_ = aw::io::ReadSafetensors(bytes, size, &st_); }
  int code() const { return int(status_.code()); }
  std::string message() const { return status_.message(); }
  int count() const { return int(st_.file.tensors.size()); }
  std::string name(int i) const { return st_.file.tensors[size_t(i)].name; }
  std::string dtype(int i) const { return aw::io::StDTypeName(st_.file.tensors[size_t(i)].dtype); }
  bool IsFloat(int i) const { return aw::io::IsFloat(st_.file.tensors[size_t(i)].dtype); }
  val shape(int i) const { return ShapeVal(st_.file.tensors[size_t(i)].shape); }
  // Float32Array view (float dtypes) or Int32Array view (integer/bool dtypes).
  val data(int i) const {
    if (IsFloat(i)) return val(emscripten::typed_memory_view(st_.f32[size_t(i)].size(), st_.f32[size_t(i)].data()));
    return val(emscripten::typed_memory_view(st_.i32[size_t(i)].size(), st_.i32[size_t(i)].data()));
  }
  val metadata() const { return MetadataObject(st_.file); }

 private:
  aw::Status status_;
  aw::io::StConverted st_;
};

std::unique_ptr<StResult> ReadSafetensors(uintptr_t p, double size) {
  return std::make_unique<StResult>(reinterpret_cast<const uint8_t*>(p), size_t(size));
}

// A model being loaded from files that arrive in chunks (models/load_model.h ModelLoader). Owner: the JS
// loader (bindings/model_loading.js), which deletes it when the load ends, well or not.
class LoaderHandle {
 public:
  // A file's header: its first n bytes at p (at least 8 + the header length), its size (-1: not known).
  std::unique_ptr<CallResult> addFile(std::string name, uintptr_t p, double n, double size) {
    aw::ModelLoader::File f;
    f.name = std::move(name);
    f.size = size < 0 ? aw::io::kStUnknownSize : uint64_t(size);
    aw::Status s = aw::io::ParseSafetensorsHeader(reinterpret_cast<const uint8_t*>(p), size_t(n), f.size, &f.header);
    if (!s.ok()) s = aw::Status(s.code(), "source: " + f.name + ": " + s.message());
    if (s.ok()) files_.push_back(std::move(f));
    return std::make_unique<CallResult>(s);
  }
  // The first file's metadata (a model file's attnwasm.config), once added.
  val metadata() const { return files_.empty() ? val::object() : MetadataObject(files_[0].header); }
  std::unique_ptr<CallResult> begin(std::string expected, std::string config, std::string index, std::string dtype) {
    return std::make_unique<CallResult>(loader_.Begin(expected, config, std::move(files_), index, dtype));
  }
  std::unique_ptr<CallResult> feed(int file, double offset, uintptr_t p, double n) {
    return std::make_unique<CallResult>(
        loader_.Feed(size_t(file), uint64_t(offset), reinterpret_cast<const uint8_t*>(p), size_t(n)));
  }
  std::unique_ptr<ModuleHandle> finish() {
    std::unique_ptr<aw::Module> m;
    const aw::Family* family = nullptr;
    aw::Status s = loader_.Finish(&m, &family);
    return Wrap(s, std::move(m), family ? family->class_name : "Model", family);
  }
  double weightBytes() const { return double(loader_.weight_bytes()); }

 private:
  std::vector<aw::ModelLoader::File> files_;
  aw::ModelLoader loader_;
};

std::unique_ptr<LoaderHandle> CreateLoader() { return std::make_unique<LoaderHandle>(); }

// The header length N of a safetensors file from its first bytes (io/safetensors.h SafetensorsHeaderLength):
// { code, message, n }.
val HeaderLength(uintptr_t p, double n, double size) {
  uint64_t len = 0;
  const aw::Status s = aw::io::SafetensorsHeaderLength(reinterpret_cast<const uint8_t*>(p), size_t(n),
                                                      size < 0 ? aw::io::kStUnknownSize : uint64_t(size), &len);
  val o = val::object();
  o.set("code", int(s.code()));
  o.set("message", s.message());
  o.set("n", double(len));
  return o;
}

// The heap's bytes in use and their peak (heap_stats.cpp), the workspace
// budget (core/workspace.h): aw.memory().
double HeapInUse() { return double(AwHeapInUse()); }
double HeapPeak() { return double(AwHeapPeak()); }
double HeapMax() { return double(emscripten_get_heap_max()); }
void ResetHeapPeak() { AwResetHeapPeak(); }
double WorkBudget() { return double(aw::WorkBudget()); }
std::unique_ptr<CallResult> SetWorkBudget(double bytes) {
  return std::make_unique<CallResult>(aw::SetWorkBudget(int64_t(bytes)));  // a safe integer (checks.js)
}

// The registry's rows (models/families.h FamiliesJson), for the JS registry's check.
std::string FamiliesJson() { return aw::FamiliesJson(); }
// A config checked as the loader would, building nothing (models/families.h CheckFamilyConfig): own (an
// attnwasm.config) or a Hugging Face config.json; the family's kind in the message's place when it is accepted.
std::unique_ptr<CallResult> CheckConfig(std::string text, bool own, std::string expected) {
  const aw::Family* family = nullptr;
  const aw::Status s = aw::CheckFamilyConfig(text, own, expected, &family);
  return std::make_unique<CallResult>(s.ok() ? aw::Status(aw::Code::kOk, family ? family->kind : "") : s);
}

// Thread pool (core/parallel.h): 1 and false in the single-thread build.
int SetNumThreads(int n) { return aw::SetNumThreads(n); }
int NumThreads() { return aw::NumThreads(); }
bool ThreadsSupported() { return aw::ThreadsSupported(); }
// The relaxed-SIMD build (kernels/gemm.h): true in attnwasm_core_rs / attnwasm_core_mt_rs.
bool RelaxedSimd() { return aw::kernels::f32_gemm_relaxed_madd(); }

}  // namespace

// ---- the causal LM family (models/causal_lm.h) ----

// { ids: { ptr, shape (B, T) } } → logits (B, T, vocab)
std::unique_ptr<CallResult> LmForward(ModuleHandle& h, val a) {
  return Forward<aw::CausalLm>(h, Ids(a["ids"]), ShapeFrom(a["ids"]["shape"]));
}

// An encoder's padded batch: {ids, types?, mask?} (B, T) → lastHiddenState (B, T, E) [, poolerOutput (B, E)].
std::unique_ptr<CallResult> EmbedderForward(ModuleHandle& h, val a) {
  const aw::Shape shape = ShapeFrom(a["ids"]["shape"]);
  if (shape.size() != 2) return std::make_unique<CallResult>(aw::ShapeError("inputIds: expected (batch, tokens), got " + aw::ShapeStr(shape)));
  auto opt = [&](const char* key) { return a[key].isUndefined() ? nullptr : Ids(a[key]); };
  aw::Buffer hidden, pooled, attention;
  auto& m = h.as<aw::Encoder>();
  const bool want = Flag(a, "attention");
  aw::Status s = m.Forward(Ids(a["ids"]), opt("types"), opt("mask"), shape[0], shape[1], &hidden, &pooled,
                           want ? &attention : nullptr);
  auto res = One(s, std::move(hidden), {shape[0], shape[1], m.config().hidden});
  if (s.ok()) {  // outputs: lastHiddenState, poolerOutput (empty without a pooler), attentions (when asked)
    res->Add(std::move(pooled), m.config().pooler ? aw::Shape{shape[0], m.config().hidden} : aw::Shape{0});
    if (want) res->Add(std::move(attention), {shape[0], m.config().layers, m.config().heads, shape[1], shape[1]});
  }
  return res;
}

// Sentences of their own lengths: {ids (total), lengths (n), types?, skip?, modes (a bitmask of Pooling),
// normalize} → (n, E · the modes on), one pass.
std::unique_ptr<CallResult> EmbedderEmbed(ModuleHandle& h, val a) {
  auto& m = h.as<aw::Encoder>();
  const size_t n = Len(a["lengths"]);
  aw::EmbedOptions o;
  o.modes = uint32_t(a["modes"].as<int>());
  o.normalize = Flag(a, "normalize");
  o.skip = a["skip"].isUndefined() ? nullptr : Ids(a["skip"]);
  aw::Buffer out;
  aw::Status s = m.Embed(Ids(a["ids"]), a["types"].isUndefined() ? nullptr : Ids(a["types"]), Ids(a["lengths"]), n, o, &out);
  int64_t k = 0;
  for (int i = 0; i < aw::kPoolingModes; ++i) k += (o.modes >> i) & 1;
  return One(s, std::move(out), {int64_t(n), k * m.config().hidden});
}

// A KV cache being generated into. Owner: the JS generator (deleted when it ends, or by close()).
class KvCacheHandle {
 public:
  KvCacheHandle(ModuleHandle& h, size_t batch, size_t capacity) {
    status_ = h.as<aw::CausalLm>().Begin(batch, capacity, &cache_);
  }
  int code() const { return int(status_.code()); }
  std::string message() const { return status_.message(); }
  double length() const { return double(cache_.len); }
  aw::KvCache& cache() { return cache_; }

 private:
  aw::Status status_;
  aw::KvCache cache_;
};

std::unique_ptr<KvCacheHandle> LmBegin(ModuleHandle& h, double batch, double capacity) {
  return std::make_unique<KvCacheHandle>(h, size_t(batch), size_t(capacity));
}

// { ids: { ptr, shape (batch, T) }, window, attention: bool } → logits (batch, vocab) [, attention (batch,
// layers, heads, positions)]
std::unique_ptr<CallResult> LmAppend(ModuleHandle& h, KvCacheHandle& c, val a) {
  aw::Buffer logits, attention;
  aw::Shape ls, as;
  const bool want_attention = Flag(a, "attention");
  aw::Status s = h.as<aw::CausalLm>().Append(&c.cache(), Ids(a["ids"]), ShapeFrom(a["ids"]["shape"]), Int(a, "window"),
                                             want_attention, &logits, &ls, &attention, &as);
  auto res = One(s, std::move(logits), ls);
  if (s.ok() && want_attention) res->Add(std::move(attention), as);
  return res;
}

// The attention window rule (models/causal_lm.h CheckAttentionWindow), for generate()'s option before it runs.
std::unique_ptr<CallResult> CheckAttentionWindow(double window) {
  return std::make_unique<CallResult>(aw::CheckAttentionWindow(int64_t(window)));
}

// A TransformerEncoder / TransformerDecoder stack: every layer a copy of
// `layer`, the final norm a copy of `norm` (null: none), natively.
std::unique_ptr<CallResult> StackCopyFrom(ModuleHandle& stack, ModuleHandle& layer, ModuleHandle* norm, bool encoder) {
  const aw::Module* n = norm ? norm->module() : nullptr;
  aw::Status s = encoder ? stack.as<aw::TransformerEncoder>().CopyFrom(*layer.module(), n)
                         : stack.as<aw::TransformerDecoder>().CopyFrom(*layer.module(), n);
  return std::make_unique<CallResult>(s);
}

EMSCRIPTEN_BINDINGS(attnwasm) {
  emscripten::class_<CallResult>("CallResult")
      .function("code", &CallResult::code)
      .function("message", &CallResult::message)
      .function("count", &CallResult::count)
      .function("shape", &CallResult::shape)
      .function("data", &CallResult::data);
  emscripten::class_<ModuleHandle>("ModuleHandle")
      .function("code", &ModuleHandle::code)
      .function("message", &ModuleHandle::message)
      .function("paramNames", &ModuleHandle::paramNames)
      .function("paramShape", &ModuleHandle::paramShape)
      .function("paramData", &ModuleHandle::paramData)
      .function("info", &ModuleHandle::info)
      .function("loadStateDict", &ModuleHandle::loadStateDict);
  emscripten::class_<StResult>("StResult")
      .function("code", &StResult::code)
      .function("message", &StResult::message)
      .function("count", &StResult::count)
      .function("name", &StResult::name)
      .function("dtype", &StResult::dtype)
      .function("shape", &StResult::shape)
      .function("data", &StResult::data)
      .function("metadata", &StResult::metadata);
  emscripten::function("readSafetensors", &ReadSafetensors);
  emscripten::class_<LoaderHandle>("LoaderHandle")
      .function("addFile", &LoaderHandle::addFile)
      .function("metadata", &LoaderHandle::metadata)
      .function("begin", &LoaderHandle::begin)
      .function("feed", &LoaderHandle::feed)
      .function("finish", &LoaderHandle::finish)
      .function("weightBytes", &LoaderHandle::weightBytes);
  emscripten::function("createLoader", &CreateLoader);
  emscripten::function("safetensorsHeaderLength", &HeaderLength);
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
  emscripten::function("translatorDecode", &TranslatorDecode);
  emscripten::function("translatorForwardFull", &TranslatorForwardFull);
  emscripten::function("classifierClassify", &ClassifierClassify);
  emscripten::class_<KvCacheHandle>("KvCacheHandle")
      .function("code", &KvCacheHandle::code)
      .function("message", &KvCacheHandle::message)
      .function("length", &KvCacheHandle::length);
  emscripten::function("lmForward", &LmForward);
  emscripten::function("embedderForward", &EmbedderForward);
  emscripten::function("embedderEmbed", &EmbedderEmbed);
  emscripten::function("lmBegin", &LmBegin);
  emscripten::function("lmAppend", &LmAppend);
  emscripten::function("checkAttentionWindow", &CheckAttentionWindow);
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
  emscripten::function("heapInUse", &HeapInUse);
  emscripten::function("heapPeak", &HeapPeak);
  emscripten::function("heapMax", &HeapMax);
  emscripten::function("resetHeapPeak", &ResetHeapPeak);
  emscripten::function("workBudget", &WorkBudget);
  emscripten::function("setWorkBudget", &SetWorkBudget);
  emscripten::function("setNumThreads", &SetNumThreads);
  emscripten::function("numThreads", &NumThreads);
  emscripten::function("threadsSupported", &ThreadsSupported);
  emscripten::function("relaxedSimd", &RelaxedSimd);
  emscripten::function("families", &FamiliesJson);
  emscripten::function("checkConfig", &CheckConfig);
}
