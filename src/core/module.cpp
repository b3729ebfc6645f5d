#include "core/module.h"

#include <cstring>
#include <map>

#include "core/rules.h"

namespace aw {

namespace {
// A parameter the module's own arguments made too large: where = "parameters" (the callers name the
// arguments the module was made from; bindings/native_object.js).
Status TooBig(const std::string& name, const Shape& shape) {
  return ArgError("parameter " + name + " of shape " + ShapeStr(shape) + " exceeds 2^29 elements")
      .At({"parameters", -1, 0, int64_t(1) << 29});
}
}  // namespace

Status Module::AddParam(const std::string& name, const Shape& shape, float** data) {
  const int64_t n = NumelChecked(shape);
  if (n < 0) return TooBig(name, shape);
  params_.push_back({name, shape, Buffer()});
  AW_RETURN_IF_ERROR(params_.back().value.Resize(size_t(n), name.c_str()));
  *data = params_.back().value.data();  // heap address: stable when params_ grows
  return Status::OK();
}

const char* WeightTypeName(WeightType t) {
  switch (t) {
    case WeightType::kF32: return "f32";
    case WeightType::kBF16: return "bf16";
    case WeightType::kF16: return "f16";
    case WeightType::kQ8: return "q8";
    case WeightType::kQ4: return "q4";
    case WeightType::kQ4A16: return "q4a16";
  }
  return "?";
}

Status Module::AddStoredParam(const std::string& name, const Shape& shape, ParamStore* store) {
  if (NumelChecked(shape) < 0) return TooBig(name, shape);
  params_.push_back({name, shape, Buffer(), store});
  return Status::OK();
}

void Module::AddChild(const std::string& name, Module* child) { children_.push_back({name, child}); }

void Module::Collect(const std::string& prefix, std::vector<Ref>* out) const {
  for (const OwnParam& p : params_)
    out->push_back({prefix + p.name, &p.shape, const_cast<Buffer*>(&p.value), p.store});
  for (const auto& c : children_) c.second->Collect(prefix + c.first + ".", out);
}

std::vector<ParamSlot> Module::Slots() {
  std::vector<Ref> refs;
  Collect("", &refs);
  std::vector<ParamSlot> out;
  for (const Ref& r : refs) out.push_back({r.name, *r.shape, r.store ? nullptr : r.value->data(), r.store});
  return out;
}

ParamStore* Module::Store(const std::string& name) {
  std::vector<Ref> refs;
  Collect("", &refs);
  for (const Ref& r : refs)
    if (r.name == name) return r.store;
  return nullptr;
}

std::vector<ParamSpec> Module::Params() const {
  std::vector<Ref> refs;
  Collect("", &refs);
  std::vector<ParamSpec> out;
  for (const Ref& r : refs) out.push_back({r.name, *r.shape});
  return out;
}

const float* Module::Param(const std::string& name) const {
  std::vector<Ref> refs;
  Collect("", &refs);
  for (const Ref& r : refs)
    if (r.name == name) return r.store ? nullptr : r.value->data();
  return nullptr;
}

Status Module::LoadStateDict(const std::vector<NamedTensor>& entries, const char* what) {
  std::vector<ParamSource> sources;
  sources.reserve(entries.size());
  for (const NamedTensor& e : entries) {
    AW_RETURN_IF_ERROR(CheckShape("stateDict['" + e.name + "']", e.tensor.shape));
    sources.push_back({e.name, e.tensor.shape, [&e](float* dst) {  // called only for a parameter of e's shape
      std::memcpy(dst, e.tensor.data, size_t(NumelChecked(e.tensor.shape)) * sizeof(float));
      return Status::OK();
    }});
  }
  return LoadParams(sources, what);
}

Status Module::CheckParams(const std::vector<ParamSpec>& entries, const char* what) const {
  std::vector<Ref> refs;
  Collect("", &refs);
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < refs.size(); ++i) index[refs[i].name] = i;

  std::vector<int> seen(refs.size(), 0);
  std::string missing, unexpected, duplicate, mismatch;
  auto append = [](std::string* list, const std::string& name) {
    *list += (list->empty() ? "\"" : ", \"") + name + "\"";
  };
  for (const ParamSpec& e : entries) {
    auto it = index.find(e.name);
    if (it == index.end()) { append(&unexpected, e.name); continue; }
    if (seen[it->second]++) { append(&duplicate, e.name); continue; }
    const Shape& want = *refs[it->second].shape;
    if (e.shape != want)
      mismatch += " size mismatch for " + e.name + ": expected shape " + ShapeStr(want) +
                  " (the shape in the current model), got " + ShapeStr(e.shape) + ".";
  }
  for (size_t i = 0; i < refs.size(); ++i)
    if (!seen[i]) append(&missing, refs[i].name);
  if (!missing.empty() || !unexpected.empty() || !duplicate.empty() || !mismatch.empty()) {
    std::string msg = std::string("stateDict: error(s) loading state_dict for ") + what + ":";
    if (!missing.empty()) msg += " missing key(s): " + missing + ".";
    if (!unexpected.empty()) msg += " unexpected key(s): " + unexpected + ".";
    if (!duplicate.empty()) msg += " duplicate key(s): " + duplicate + ".";
    msg += mismatch;
    return Status(Code::kStateDict, msg);
  }
  return Status::OK();
}

size_t Module::ParamBytes() const {
  size_t bytes = 0;
  for (size_t b : ParamBytesByType()) bytes += b;
  return bytes;
}

std::array<size_t, kWeightTypes> Module::ParamBytesByType() const {
  std::vector<Ref> refs;
  Collect("", &refs);
  std::array<size_t, kWeightTypes> bytes{};
  for (const Ref& r : refs) {
    if (r.store) {
      if (r.store->reserved()) bytes[size_t(r.store->type())] += r.store->bytes();
    } else {
      bytes[size_t(WeightType::kF32)] += r.value->size() * sizeof(float);
    }
  }
  return bytes;
}

Status Module::LoadParams(const std::vector<ParamSource>& entries, const char* what) {
  std::vector<ParamSpec> specs;
  for (const ParamSource& e : entries) specs.push_back({e.name, e.shape});
  AW_RETURN_IF_ERROR(CheckParams(specs, what));
  std::vector<Ref> refs;
  Collect("", &refs);
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < refs.size(); ++i) index[refs[i].name] = i;
  Status s;
  for (const ParamSource& e : entries) {
    const Ref& ref = refs[index[e.name]];
    if (ref.store) {  // a stored parameter: its floats through a staging copy, then row by row (float32 by default)
      Buffer staged;
      s = staged.Resize(size_t(NumelChecked(e.shape)), e.name.c_str());
      if (s.ok() && !ref.store->reserved()) s = ref.store->Reserve(WeightType::kF32);
      if (s.ok()) s = e.fill(staged.data());
      if (s.ok()) ref.store->PutRows(0, ref.store->rows(), staged.data(), ref.store->cols());
    } else if (ref.value->size()) {
      s = e.fill(ref.value->data());
    }
    if (!s.ok()) break;
  }
  ParamsLoaded();  // also after a failed fill: derived forms follow what was written
  return s;
}

void Module::ParamsLoaded() {
  OnParamsLoaded();
  for (const auto& c : children_) c.second->ParamsLoaded();
}

Status Module::CopyParamsFrom(const Module& other) {
  std::vector<Ref> theirs;
  other.Collect("", &theirs);
  std::vector<Buffer> widened(theirs.size());  // stored parameters as floats
  std::vector<NamedTensor> entries;
  for (size_t i = 0; i < theirs.size(); ++i) {
    const Ref& r = theirs[i];
    const float* data = r.value->data();
    if (r.store) {
      AW_RETURN_IF_ERROR(widened[i].Resize(r.store->rows() * r.store->cols(), r.name.c_str()));
      for (size_t row = 0; row < r.store->rows(); ++row) r.store->GetRow(row, widened[i].data() + row * r.store->cols());
      data = widened[i].data();
    }
    entries.push_back({r.name, TensorView{data, *r.shape}});
  }
  return LoadStateDict(entries, "a copy");
}

}  // namespace aw
