// The embind registrations of files and loading: a safetensors file read whole (aw.loadSafetensors), the
// streaming loader (models/load_model.h ModelLoader, driven by bindings/model_loading.js), and the family
// registry's rows and config check (models/families.h). Marshalling: marshal.h.
#include <emscripten/bind.h>

#include "marshal.h"
#include "io/safetensors.h"
#include "models/families.h"
#include "models/load_model.h"

namespace awb {
namespace {

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
  void boundedHead() { loader_.BoundedHead(); }
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
  // inspect's plan (ModelLoader::PlanOnly: Begin's checks, nothing reserved): { code, message, family (its kind,
  // or null), weightBytes, weightTypes: { type: bytes } (the types held), parameters }.
  val plan(std::string expected, std::string config, std::string index, std::string dtype) {
    aw::ModelLoader::Plan p;
    const aw::Status s = loader_.PlanOnly(expected, config, std::move(files_), index, dtype, &p);
    val o = val::object();
    o.set("code", int(s.code()));
    o.set("message", s.message());
    o.set("family", p.family ? val(std::string(p.family->kind)) : val::null());
    val types = val::object();
    double total = 0;
    for (size_t t = 0; t < p.bytes_by_type.size(); ++t)
      if (p.bytes_by_type[t]) {
        types.set(aw::WeightTypeName(aw::WeightType(t)), double(p.bytes_by_type[t]));
        total += double(p.bytes_by_type[t]);
      }
    o.set("weightBytes", total);
    o.set("weightTypes", types);
    o.set("parameters", double(p.parameters));
    return o;
  }

 private:
  std::vector<aw::ModelLoader::File> files_;
  aw::ModelLoader loader_;
};

std::unique_ptr<LoaderHandle> CreateLoader() { return std::make_unique<LoaderHandle>(); }

// inspect's header: a file's first n bytes at p read as the loader reads them (io/safetensors.h
// ParseSafetensorsHeader): { code, message, tensors: [{ name, dtype, shape }], metadata }.
val InspectHeader(uintptr_t p, double n, double size) {
  aw::io::StFile file;
  const aw::Status s = aw::io::ParseSafetensorsHeader(reinterpret_cast<const uint8_t*>(p), size_t(n),
                                                      size < 0 ? aw::io::kStUnknownSize : uint64_t(size), &file);
  val o = val::object();
  o.set("code", int(s.code()));
  o.set("message", s.message());
  val tensors = val::array();
  if (s.ok())
    for (const aw::io::StTensor& t : file.tensors) {
      val e = val::object();
      e.set("name", t.name);
      e.set("dtype", std::string(aw::io::StDTypeName(t.dtype)));
      e.set("shape", ShapeVal(t.shape));
      tensors.call<void>("push", e);
    }
  o.set("tensors", tensors);
  o.set("metadata", s.ok() ? MetadataObject(file) : val::object());
  return o;
}

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

// The registry's rows (models/families.h FamiliesJson), for the JS registry's check.
std::string FamiliesJson() { return aw::FamiliesJson(); }
// A config checked as the loader would, building nothing (models/families.h CheckFamilyConfig): own (an
// attnwasm.config) or a Hugging Face config.json; the family's kind in the message's place when it is accepted.
std::unique_ptr<CallResult> CheckConfig(std::string text, bool own, std::string expected) {
  const aw::Family* family = nullptr;
  const aw::Status s = aw::CheckFamilyConfig(text, own, expected, &family);
  return std::make_unique<CallResult>(s.ok() ? aw::Status(aw::Code::kOk, family ? family->kind : "") : s);
}

}  // namespace
}  // namespace awb

using namespace awb;  // NOLINT: the registrations name this file's functions

EMSCRIPTEN_BINDINGS(attnwasm_files) {
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
      .function("boundedHead", &LoaderHandle::boundedHead)
      .function("begin", &LoaderHandle::begin)
      .function("feed", &LoaderHandle::feed)
      .function("finish", &LoaderHandle::finish)
      .function("weightBytes", &LoaderHandle::weightBytes)
      .function("plan", &LoaderHandle::plan);
  emscripten::function("createLoader", &CreateLoader);
  emscripten::function("safetensorsHeaderLength", &HeaderLength);
  emscripten::function("inspectHeader", &InspectHeader);
  emscripten::function("families", &FamiliesJson);
  emscripten::function("checkConfig", &CheckConfig);
}
