#include "io/load_params.h"

namespace aw::io {

Status LoadParamsFromSafetensors(Module* m, const uint8_t* bytes, size_t size, const StFile& file,
                                 const std::string& prefix, const char* what) {
  std::vector<ParamSource> sources;
  for (size_t i = 0; i < file.tensors.size(); ++i) {
    const StTensor& t = file.tensors[i];
    if (t.name.compare(0, prefix.size(), prefix) != 0) continue;
    if (t.dtype != StDType::kF32 && t.dtype != StDType::kF16 && t.dtype != StDType::kBF16 && t.dtype != StDType::kF64)
      return Status(Code::kDtype, "stateDict: " + t.name + ": expected a float tensor (F32, F16, BF16 or F64), got " +
                                      StDTypeName(t.dtype));
    sources.push_back({t.name.substr(prefix.size()), t.shape,
                       [bytes, size, &t](float* dst) { return ReadAsF32(bytes, size, t, dst); }});
  }
  return m->LoadParams(sources, what);
}

}  // namespace aw::io
