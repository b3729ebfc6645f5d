#include "io/load_params.h"

namespace aw::io {

Status LoadParamsFromSafetensors(Module* m, const uint8_t* bytes, size_t size, const StFile& file,
                                 const std::string& prefix, const char* what, std::vector<uint8_t>* used) {
  std::vector<ParamSource> sources;
  std::vector<size_t> taken;
  for (size_t i = 0; i < file.tensors.size(); ++i) {
    const StTensor& t = file.tensors[i];
    if (t.name.compare(0, prefix.size(), prefix) != 0) continue;
    if (t.dtype != StDType::kF32 && t.dtype != StDType::kF16 && t.dtype != StDType::kBF16 && t.dtype != StDType::kF64)
      return Status(Code::kDtype, "stateDict: " + t.name + ": expected a float tensor (F32, F16, BF16 or F64), got " +
                                      StDTypeName(t.dtype));
    sources.push_back({t.name.substr(prefix.size()), t.shape,
                       [bytes, size, &t](float* dst) { return ReadAsF32(bytes, size, t, dst); }});
    taken.push_back(i);
  }
  AW_RETURN_IF_ERROR(m->LoadParams(sources, what));
  if (used) {
    used->resize(file.tensors.size(), 0);
    for (size_t i : taken) (*used)[i] = 1;
  }
  return Status::OK();
}

}  // namespace aw::io
