// The embind boundary's marshalling helpers (marshal.h), defined once.
#include "marshal.h"

namespace awb {

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

aw::TensorView TensorArg(const val& a) { return View(uintptr_t(a["ptr"].as<double>()), a["shape"]); }
aw::MaskView MaskArg(const val& a) {
  if (a.isNull() || a.isUndefined()) return aw::MaskView();
  return Mask(uintptr_t(a["ptr"].as<double>()), a["dtype"].as<int>(), a["shape"]);
}
bool Flag(const val& o, const char* k) { return o[k].as<bool>(); }
double Num(const val& o, const char* k) { return o[k].as<double>(); }
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
const int32_t* Ids(const val& a) { return reinterpret_cast<const int32_t*>(uintptr_t(a["ptr"].as<double>())); }
size_t Len(const val& a) { return size_t(a["shape"][0].as<double>()); }

val AtVal(const aw::Status& s) {
  const aw::StatusAt* a = s.at();
  if (!a) return val::undefined();
  val o = val::object();
  o.set("arg", std::string(a->arg));
  o.set("index", double(a->index));
  o.set("value", double(a->value));
  o.set("limit", double(a->limit));
  return o;
}

CallResult::CallResult(const aw::Status& s) : code_(int(s.code())), message_(s.message()), at_(AtVal(s)) {}
CallResult::~CallResult() = default;
void CallResult::Add(aw::Buffer&& b, const aw::Shape& s) { outs_.push_back(Out{std::move(b), {}, {}, s}); }
void CallResult::Add(std::vector<float>&& v, const aw::Shape& s) {
  outs_.push_back(Out{aw::Buffer(), std::move(v), {}, s});
}
void CallResult::Add(std::vector<int32_t>&& v, const aw::Shape& s) {
  outs_.push_back(Out{aw::Buffer(), {}, std::move(v), s, true});
}
void CallResult::AddView(const float* p, const aw::Shape& s) {
  outs_.push_back(Out{aw::Buffer(), {}, {}, s, false, p, size_t(aw::NumelChecked(s))});
}
val CallResult::shape(int i) const { return ShapeVal(outs_[size_t(i)].shape); }
val CallResult::data(int i) const {
  const Out& o = outs_[size_t(i)];
  if (o.is_int) return val(emscripten::typed_memory_view(o.ints.size(), o.ints.data()));
  if (o.view) return val(emscripten::typed_memory_view(o.view_size, o.view));
  if (!o.floats.empty()) return val(emscripten::typed_memory_view(o.floats.size(), o.floats.data()));
  return val(emscripten::typed_memory_view(o.buf.size(), o.buf.data()));
}

std::unique_ptr<CallResult> One(const aw::Status& s, aw::Buffer&& out, const aw::Shape& shape) {
  auto res = std::make_unique<CallResult>(s);
  if (s.ok()) res->Add(std::move(out), shape);
  return res;
}

ModuleHandle::ModuleHandle(aw::Status s, std::unique_ptr<aw::Module> m, const char* kind, const aw::Family* family)
    : status_(std::move(s)), module_(std::move(m)), kind_(kind), family_(family) {}
ModuleHandle::~ModuleHandle() = default;

val ModuleHandle::paramNames() const {
  val a = val::array();
  for (const auto& p : module_->Params()) a.call<void>("push", p.name);
  return a;
}
val ModuleHandle::paramShape(std::string name) const {
  for (const auto& p : module_->Params())
    if (p.name == name) return ShapeVal(p.shape);
  return val::array();
}
val ModuleHandle::paramData(std::string name) const {
  for (const auto& p : module_->Params())
    if (p.name == name)
      return val(emscripten::typed_memory_view(size_t(aw::NumelChecked(p.shape)), module_->Param(name)));
  return val::undefined();
}
std::string ModuleHandle::info() const { return family_ ? aw::FamilyInfoJson(*module_, *family_) : "{}"; }
std::unique_ptr<CallResult> ModuleHandle::loadStateDict(val names, val ptrs, val shapes) {
  std::vector<aw::NamedTensor> entries;
  const int n = names["length"].as<int>();
  for (int i = 0; i < n; ++i)
    entries.push_back({names[i].as<std::string>(), View(uintptr_t(ptrs[i].as<double>()), shapes[i])});
  return std::make_unique<CallResult>(module_->LoadStateDict(entries, kind_));
}

std::unique_ptr<ModuleHandle> Wrap(aw::Status s, std::unique_ptr<aw::Module> m, const char* kind,
                                   const aw::Family* family) {
  return std::make_unique<ModuleHandle>(s, s.ok() ? std::move(m) : nullptr, kind, family);
}

}  // namespace awb
