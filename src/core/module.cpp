#include "core/module.h"

#include <cstring>
#include <map>

#include "core/rules.h"

namespace aw {

Status Module::AddParam(const std::string& name, const Shape& shape, float** data) {
  const int64_t n = NumelChecked(shape);
  if (n < 0)
    return ArgError("parameter " + name + " of shape " + ShapeStr(shape) + " exceeds 2^29 elements");
  params_.push_back({name, shape, Buffer()});
  AW_RETURN_IF_ERROR(params_.back().value.Resize(size_t(n), name.c_str()));
  *data = params_.back().value.data();  // heap address: stable when params_ grows
  return Status::OK();
}

void Module::AddChild(const std::string& name, Module* child) { children_.push_back({name, child}); }

void Module::Collect(const std::string& prefix, std::vector<Ref>* out) const {
  for (const OwnParam& p : params_)
    out->push_back({prefix + p.name, &p.shape, const_cast<Buffer*>(&p.value)});
  for (const auto& c : children_) c.second->Collect(prefix + c.first + ".", out);
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
    if (r.name == name) return r.value->data();
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

Status Module::LoadParams(const std::vector<ParamSource>& entries, const char* what) {
  std::vector<Ref> refs;
  Collect("", &refs);
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < refs.size(); ++i) index[refs[i].name] = i;

  std::vector<int> seen(refs.size(), 0);
  std::string missing, unexpected, duplicate, mismatch;
  auto append = [](std::string* list, const std::string& name) {
    *list += (list->empty() ? "\"" : ", \"") + name + "\"";
  };
  for (const ParamSource& e : entries) {
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
  Status s;
  for (const ParamSource& e : entries) {
    Buffer* dst = refs[index[e.name]].value;
    if (dst->size()) s = e.fill(dst->data());
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
  std::vector<NamedTensor> entries;
  for (const Ref& r : theirs) entries.push_back({r.name, TensorView{r.value->data(), *r.shape}});
  return LoadStateDict(entries, "a copy");
}

}  // namespace aw
