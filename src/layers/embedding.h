// Embedding: torch.nn.Embedding. ids (…) int32 → (…, embedding_dim).
// state_dict key: weight (num_embeddings, embedding_dim). Initialised like
// torch: N(0, 1), the padding_idx row zeroed. An id outside
// [0, num_embeddings) is an error naming its position (torch raises too).
// Loaded into a model (Rng::ForLoading), the table is a PackedWeight (num, dim) instead of a float parameter:
// rows widened (dequantized) at lookup, and the same storage serves as a tied output head (table().Product).
#pragma once
#include <cstdint>

#include "core/module.h"
#include "core/rng.h"
#include "layers/packed_weight.h"

namespace aw {

class Embedding : public Module {
 public:
  Embedding() = default;
  // padding_idx: -1 for none; negative values count from the end as in torch.
  Status Init(int64_t num_embeddings, int64_t embedding_dim, int64_t padding_idx, bool has_padding_idx, Rng& rng);

  int64_t num_embeddings() const { return num_; }
  int64_t embedding_dim() const { return dim_; }
  const float* weight() const { return w_; }     // null for a loaded model's table
  const PackedWeight& table() const { return table_; }  // a loaded model's table

  // Validated: every id checked before anything is written.
  Status Forward(const int32_t* ids, const Shape& ids_shape, Buffer* y, Shape* y_shape) const;
  // Checks ids (error names `what` and the position); used before Lookup.
  Status CheckIds(const int32_t* ids, int64_t n, const char* what) const;
  // Internal: rows of y (dim floats each, ldy apart) = weight[ids].
  void Lookup(size_t n, const int32_t* ids, float* y, size_t ldy) const;

 private:
  int64_t num_ = 0, dim_ = 0;
  float* w_ = nullptr;
  PackedWeight table_;
};

}  // namespace aw
