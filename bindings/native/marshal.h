// The embind boundary's marshalling, shared by its registration files (bindings/native/*_bind.cpp): tensors
// arrive as { ptr, shape } objects (masks { ptr, dtype, shape }, null = absent) that bindings/boundary.js
// allocated and filled, options as fields of the same object; results leave as a CallResult that boundary.js
// copies out of and deletes; a native object (a layer's module, a loaded model) as a ModuleHandle. Every rule
// and every loop over data lives in src/: nothing here validates, and nothing throws: failures travel as
// (code, message, at) and the JS layer throws.
#pragma once
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/module.h"
#include "core/status.h"
#include "core/tensor.h"
#include "models/families.h"

namespace awb {

using emscripten::val;

// Every helper here is defined once, out of line (marshal.cpp): the bindings call them rather than each carrying
// its own inlined copy of embind's property reads (docs/architecture.md, ".wasm sizes").

// Integers cross as JS numbers: safe integers (the JS layer checks), exact in int64.
aw::Shape ShapeFrom(const val& a);
aw::TensorView View(uintptr_t p, const val& shape);
aw::MaskView Mask(uintptr_t p, int dtype, const val& shape);

// Object-style arguments: { ptr, shape } tensors and { ptr, dtype, shape } masks (null/undefined = absent), flags
// and numbers, built by boundary.js.
aw::TensorView TensorArg(const val& a);
aw::MaskView MaskArg(const val& a);
bool Flag(const val& o, const char* k);
double Num(const val& o, const char* k);
// Integers cross as JS numbers that checks.js checkInteger made safe integers (|v| <= 2^53 - 1): the cast is
// exact; ranges are the native rules'.
int64_t Int(const val& o, const char* k);
std::optional<int64_t> OptInt(const val& o, const char* k);
val ShapeVal(const aw::Shape& s);
// An Int32 tensor's data { ptr, shape }, and its first dim.
const int32_t* Ids(const val& a);
size_t Len(const val& a);

// Where a failure is ({ arg, index, value, limit }: core/status.h StatusAt), or undefined.
val AtVal(const aw::Status& s);

// Owned outputs of one call: float32 or int32 arrays with their shapes. Owner: the JS handle (deleted by
// boundary.js once copied out).
class CallResult {
 public:
  explicit CallResult(const aw::Status& s);
  ~CallResult();
  void Add(aw::Buffer&& b, const aw::Shape& s);
  void Add(std::vector<float>&& v, const aw::Shape& s);
  void Add(std::vector<int32_t>&& v, const aw::Shape& s);
  // Floats this result does not own (an SDPA output written over the call's copy of its query): valid while the
  // call's inputs are, which boundary.js frees only after copying every output out.
  void AddView(const float* p, const aw::Shape& s);
  int code() const { return code_; }
  std::string message() const { return message_; }
  // Where the failure is ({ arg, index, value, limit }: core/status.h StatusAt), or undefined.
  val at() const { return at_; }
  int count() const { return int(outs_.size()); }
  val shape(int i) const;
  // A Float32Array or Int32Array view into wasm memory: valid until this result is deleted or memory grows.
  val data(int i) const;

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
  val at_ = val::undefined();
  std::vector<Out> outs_;
};

// A result of status `s` with one output (when s is OK).
std::unique_ptr<CallResult> One(const aw::Status& s, aw::Buffer&& out, const aw::Shape& shape);

// An attention result (SdpaResult, MhaResult): output, then weights (empty unless they were asked for).
template <class R>
std::unique_ptr<CallResult> Attention(const aw::Status& s, R& r) {
  auto res = One(s, std::move(r.output), r.output_shape);
  if (s.ok()) res->Add(std::move(r.weights), r.weights_shape);
  return res;
}

// Handle of one native object: a layer's module or a loaded model. Owner: the JS object wrapping it, which
// deletes it in dispose(). A handle whose creation failed holds no module; boundary.js reads code()/message()/at()
// and deletes it at once.
class ModuleHandle {
 public:
  // kind: the class in messages ("Linear", "CausalLM"); family: a loaded model's registry row (null: a layer).
  ModuleHandle(aw::Status s, std::unique_ptr<aw::Module> m, const char* kind, const aw::Family* family = nullptr);
  ~ModuleHandle();
  int code() const { return int(status_.code()); }
  std::string message() const { return status_.message(); }
  val at() const { return AtVal(status_); }
  val paramNames() const;
  val paramShape(std::string name) const;
  // A view of a parameter's data (valid until memory grows); undefined if unknown.
  val paramData(std::string name) const;
  // A loaded model's resolved config as JSON, its family's kind first (models/families.h FamilyInfoJson); "{}"
  // for a layer.
  std::string info() const;
  std::unique_ptr<CallResult> loadStateDict(val names, val ptrs, val shapes);
  template <class T>
  T& as() { return static_cast<T&>(*module_); }
  aw::Module* module() { return module_.get(); }
  const char* kind() const { return kind_; }
  const aw::Family* family() const { return family_; }  // a loaded model's registry row, else null

 private:
  aw::Status status_;
  std::unique_ptr<aw::Module> module_;
  const char* kind_;
  const aw::Family* family_;
};

std::unique_ptr<ModuleHandle> Wrap(aw::Status s, std::unique_ptr<aw::Module> m, const char* kind,
                                   const aw::Family* family = nullptr);

// The forward of a module M of the handle: M::Forward(args…, &y, &y_shape), one output.
template <class M, class... A>
std::unique_ptr<CallResult> Forward(ModuleHandle& h, A&&... args) {
  aw::Buffer y;
  aw::Shape ys;
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

}  // namespace awb
