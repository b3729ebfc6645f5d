#include "core/tensor.h"

namespace aw {

std::string ShapeStr(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(s[i]);
  }
  if (s.size() == 1) out += ",";
  return out + ")";
}

int64_t NumelChecked(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) {
    if (d < 0) return -1;
    if (d == 0) n = 0;
    else if (n > kMaxElements / d) return -1;
    else n *= d;
  }
  return n;
}

const char* DTypeName(DType d) { return d == DType::kBool ? "bool" : d == DType::kI32 ? "int32" : "float32"; }

}  // namespace aw
