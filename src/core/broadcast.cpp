#include "core/broadcast.h"

#include <algorithm>

namespace aw {

bool BroadcastShapes(const Shape& a, const Shape& b, Shape* out) {
  const size_t r = std::max(a.size(), b.size());
  Shape s(r, 1);
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    const int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1) return false;
    s[i] = da == 1 ? db : da;
  }
  *out = s;
  return true;
}

bool BroadcastsInto(const Shape& in, const Shape& out) {
  if (in.size() > out.size()) return false;
  const size_t off = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i] != 1 && in[i] != out[off + i]) return false;
  return true;
}

BroadcastIndex::BroadcastIndex(const Shape& in_dims, const Shape& out_dims, int64_t group_last)
    : out_(out_dims), stride_(out_dims.size(), 0), div_(out_dims.size(), 1) {
  // Contiguous strides of the input, counted in blocks.
  const size_t off = out_dims.size() - in_dims.size();
  int64_t s = 1;
  for (size_t i = in_dims.size(); i-- > 0;) {
    if (in_dims[i] != 1) stride_[off + i] = s;
    s *= in_dims[i];
  }
  if (!out_dims.empty()) div_.back() = group_last;
  // A size-0 output dim never indexes; keep the modulo well-defined.
  for (auto& d : out_) if (d == 0) d = 1;
}

}  // namespace aw
