// embind boundary: bindings only. Tensors arrive as (byte address in wasm
// memory, shape array) pairs that the JS layer (index.js) allocated and filled;
// results leave as a CallResult the JS layer copies out of and deletes.
// Nothing here throws: failures travel as (code, message) and index.js throws.
#include <emscripten/bind.h>
#include <emscripten/val.h>
#include <malloc.h>

#include <memory>
#include <string>
#include <vector>

#include "layers/multihead_attention.h"
#include "ops/scaled_dot_product_attention.h"

using emscripten::val;

namespace {

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

// Owned outputs of one call. Owner: the JS handle (deleted by index.js).
class CallResult {
 public:
  explicit CallResult(const aw::Status& s) : code_(int(s.code())), message_(s.message()) {}
  void Add(aw::Buffer&& b, const aw::Shape& s) {
    bufs_.push_back(std::move(b));
    shapes_.push_back(s);
  }
  int code() const { return code_; }
  std::string message() const { return message_; }
  int count() const { return int(bufs_.size()); }
  val shape(int i) const {
    val a = val::array();
    for (int64_t d : shapes_[size_t(i)]) a.call<void>("push", double(d));
    return a;
  }
  // A view into wasm memory: valid until this result is deleted or memory grows.
  val data(int i) const {
    return val(emscripten::typed_memory_view(bufs_[size_t(i)].size(), bufs_[size_t(i)].data()));
  }

 private:
  int code_;
  std::string message_;
  std::vector<aw::Buffer> bufs_;
  std::vector<aw::Shape> shapes_;
};

std::unique_ptr<CallResult> Sdpa(uintptr_t q, val qs, uintptr_t k, val ks, uintptr_t v, val vs,
                                 uintptr_t m, int mdtype, val ms, bool is_causal, bool has_scale,
                                 double scale, bool enable_gqa, double dropout_p, bool need_weights) {
  static aw::SdpaScratch scratch;  // single-threaded module: reused across calls
  aw::SdpaOptions o;
  o.attn_mask = Mask(m, mdtype, ms);
  o.is_causal = is_causal;
  o.has_scale = has_scale;
  o.scale = scale;
  o.enable_gqa = enable_gqa;
  o.dropout_p = dropout_p;
  o.need_weights = need_weights;
  aw::SdpaResult r;
  aw::Status s = aw::ScaledDotProductAttention(View(q, qs), View(k, ks), View(v, vs), o, &scratch, &r);
  auto res = std::make_unique<CallResult>(s);
  if (s.ok()) {
    res->Add(std::move(r.output), r.output_shape);
    if (need_weights) res->Add(std::move(r.weights), r.weights_shape);
  }
  return res;
}

// Handle of one module (any layer). Owner: the JS object wrapping it, which
// deletes it in dispose(). A handle whose creation failed holds no module;
// index.js reads code()/message() and deletes it at once.
class ModuleHandle {
 public:
  ModuleHandle(aw::Status s, std::unique_ptr<aw::Module> m, const char* kind)
      : status_(std::move(s)), module_(std::move(m)), kind_(kind) {}
  int code() const { return int(status_.code()); }
  std::string message() const { return status_.message(); }

  val paramNames() const {
    val a = val::array();
    for (const auto& p : module_->Params()) a.call<void>("push", p.name);
    return a;
  }
  val paramShape(std::string name) const {
    val a = val::array();
    for (const auto& p : module_->Params())
      if (p.name == name) for (int64_t d : p.shape) a.call<void>("push", double(d));
    return a;
  }
  // A view of a parameter's data (valid until memory grows); undefined if unknown.
  val paramData(std::string name) const {
    for (const auto& p : module_->Params())
      if (p.name == name)
        return val(emscripten::typed_memory_view(size_t(aw::NumelChecked(p.shape)), module_->Param(name)));
    return val::undefined();
  }
  std::unique_ptr<CallResult> loadStateDict(val names, val ptrs, val shapes) {
    std::vector<aw::NamedTensor> entries;
    const int n = names["length"].as<int>();
    for (int i = 0; i < n; ++i)
      entries.push_back({names[i].as<std::string>(), View(uintptr_t(ptrs[i].as<double>()), shapes[i])});
    return std::make_unique<CallResult>(module_->LoadStateDict(entries, kind_));
  }
  template <class T>
  T& as() { return static_cast<T&>(*module_); }

 private:
  aw::Status status_;
  std::unique_ptr<aw::Module> module_;
  const char* kind_;
};

template <class T, class Config>
std::unique_ptr<ModuleHandle> Make(const Config& c, const char* kind) {
  aw::Rng rng;
  auto m = std::make_unique<T>();
  aw::Status s = m->Init(c, rng);
  return std::make_unique<ModuleHandle>(s, s.ok() ? std::move(m) : nullptr, kind);
}

std::unique_ptr<ModuleHandle> CreateMha(int embed_dim, int num_heads, double dropout, bool bias, bool add_bias_kv,
                                        bool add_zero_attn, int kdim, int vdim, bool batch_first) {
  aw::MhaConfig c;
  c.embed_dim = embed_dim; c.num_heads = num_heads; c.dropout = dropout; c.bias = bias;
  c.add_bias_kv = add_bias_kv; c.add_zero_attn = add_zero_attn; c.kdim = kdim; c.vdim = vdim;
  c.batch_first = batch_first;
  return Make<aw::MultiheadAttention>(c, "MultiheadAttention");
}

std::unique_ptr<CallResult> MhaForward(ModuleHandle& h, uintptr_t q, val qs, uintptr_t k, val ks, uintptr_t v,
                                       val vs, uintptr_t kpm, int kpm_dtype, val kpm_shape, uintptr_t am,
                                       int am_dtype, val am_shape, bool need_weights, bool average_attn_weights,
                                       bool is_causal) {
  aw::MhaForwardOptions o;
  o.key_padding_mask = Mask(kpm, kpm_dtype, kpm_shape);
  o.attn_mask = Mask(am, am_dtype, am_shape);
  o.need_weights = need_weights;
  o.average_attn_weights = average_attn_weights;
  o.is_causal = is_causal;
  aw::MhaResult r;
  aw::Status s = h.as<aw::MultiheadAttention>().Forward(View(q, qs), View(k, ks), View(v, vs), o, &r);
  auto res = std::make_unique<CallResult>(s);
  if (s.ok()) {
    res->Add(std::move(r.output), r.output_shape);
    if (need_weights) res->Add(std::move(r.weights), r.weights_shape);
  }
  return res;
}

// Bytes of the wasm heap currently allocated by malloc (for leak tests).
double HeapInUse() { return double(mallinfo().uordblks); }

}  // namespace

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
      .function("loadStateDict", &ModuleHandle::loadStateDict);
  emscripten::function("createMha", &CreateMha);
  emscripten::function("mhaForward", &MhaForward);
  emscripten::function("sdpa", &Sdpa);
  emscripten::function("heapInUse", &HeapInUse);
}
