// Broadcasting of leading batch dims (NumPy / torch.matmul rules: dims are
// right-aligned, a dim of size 1 repeats). Used by the attention operators to
// find, for each output batch entry, which block of each input it reads.
#pragma once
#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace aw {

// out = broadcast(a, b); false if some aligned pair is neither equal nor 1.
bool BroadcastShapes(const Shape& a, const Shape& b, Shape* out);

// True if `in` broadcasts into `out` without enlarging it (in-place rule).
bool BroadcastsInto(const Shape& in, const Shape& out);

// Maps a flat index over `out_dims` to the block index of an input whose dims
// `in_dims` are right-aligned into out_dims (blocks = trailing matrices).
// `group_last` > 1 makes the last batch dim map index h to h / group_last
// (grouped-query attention: repeat_interleave of key/value heads).
class BroadcastIndex {
 public:
  BroadcastIndex(const Shape& in_dims, const Shape& out_dims, int64_t group_last = 1);
  int64_t Block(int64_t flat) const {
    int64_t off = 0;
    for (size_t i = out_.size(); i-- > 0;) {
      const int64_t idx = flat % out_[i];
      flat /= out_[i];
      off += (idx / div_[i]) * stride_[i];
    }
    return off;
  }

 private:
  Shape out_;
  std::vector<int64_t> stride_, div_;
};

}  // namespace aw
