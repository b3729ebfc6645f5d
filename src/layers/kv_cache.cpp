#include "layers/kv_cache.h"

#include <algorithm>

#include <cstring>

#include "core/workspace.h"

namespace aw {

Status KvCache::Init(size_t layers, size_t b, size_t cap, size_t w, const char* what) {
  batch = b; capacity = cap; width = w; len = 0;
  ids.clear();
  k.clear();
  v.clear();
  k.resize(layers);
  v.resize(layers);
  for (size_t l = 0; l < layers; ++l) {
    AW_RETURN_IF_ERROR(k[l].Resize(b * cap * w, what));
    AW_RETURN_IF_ERROR(v[l].Resize(b * cap * w, what));
  }
  return Status::OK();
}

Status KvCache::Reorder(const int32_t* parents, size_t n) {
  const size_t rows = len * width;  // the filled part of one sequence
  ScratchScope scope;
  float* tmp = nullptr;
  AW_RETURN_IF_ERROR(scope.Take(n * rows, "KV cache reorder", &tmp));
  // A row that continues itself keeps its keys and values in place (every source is read before any row is written).
  for (size_t l = 0; l < k.size(); ++l)
    for (Buffer* buf : {&k[l], &v[l]}) {
      for (size_t b = 0; b < n; ++b)
        if (size_t(parents[b]) != b)
          std::memcpy(tmp + b * rows, buf->data() + size_t(parents[b]) * seq_stride(), rows * sizeof(float));
      for (size_t b = 0; b < n; ++b)
        if (size_t(parents[b]) != b) std::memcpy(buf->data() + b * seq_stride(), tmp + b * rows, rows * sizeof(float));
    }
  if (!ids.empty()) {
    std::vector<int32_t> kept(ids);
    for (size_t b = 0; b < n; ++b)
      std::copy(kept.begin() + ptrdiff_t(size_t(parents[b]) * capacity), kept.begin() + ptrdiff_t(size_t(parents[b]) * capacity + len),
                ids.begin() + ptrdiff_t(b * capacity));
  }
  return Status::OK();
}

}  // namespace aw
