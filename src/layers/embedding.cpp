#include "layers/embedding.h"

#include <cstring>

#include "core/rules.h"

namespace aw {

Status Embedding::Init(int64_t num_embeddings, int64_t embedding_dim, int64_t padding_idx, bool has_padding_idx,
                       Rng& rng) {
  AW_RETURN_IF_ERROR(PositiveInt("numEmbeddings", num_embeddings));
  AW_RETURN_IF_ERROR(PositiveInt("embeddingDim", embedding_dim));
  if (has_padding_idx) {  // negative counts from the end, as torch's padding_idx
    AW_RETURN_IF_ERROR(IntInRange("paddingIdx", padding_idx, -num_embeddings, num_embeddings - 1));
    if (padding_idx < 0) padding_idx += num_embeddings;
  }
  num_ = num_embeddings;
  dim_ = embedding_dim;
  if (!rng.fills()) {  // loading: the table only as a PackedWeight (the loader reserves its type)
    table_.SetShape(size_t(num_), size_t(dim_));
    return AddStoredParam("weight", {num_, dim_}, &table_);
  }
  AW_RETURN_IF_ERROR(AddParam("weight", {num_, dim_}, &w_));
  rng.FillNormal(w_, num_ * dim_, 1.0);
  if (has_padding_idx) std::memset(w_ + padding_idx * dim_, 0, size_t(dim_) * sizeof(float));
  return Status::OK();
}

Status Embedding::CheckIds(const int32_t* ids, int64_t n, const char* what) const {
  for (int64_t i = 0; i < n; ++i)
    if (ids[i] < 0 || ids[i] >= num_)
      return Status(Code::kInvalidArgument, std::string(what) + ": id " + std::to_string(ids[i]) + " at index " +
                                                std::to_string(i) + " is out of range [0, " + std::to_string(num_) + ")")
          .At({what, i, ids[i], num_});
  return Status::OK();
}

void Embedding::Lookup(size_t n, const int32_t* ids, float* y, size_t ldy) const {
  for (size_t i = 0; i < n; ++i) {
    if (w_) std::memcpy(y + i * ldy, w_ + int64_t(ids[i]) * dim_, size_t(dim_) * sizeof(float));
    else table_.GetRow(size_t(ids[i]), y + i * ldy);
  }
}

Status Embedding::Forward(const int32_t* ids, const Shape& ids_shape, Buffer* y, Shape* y_shape) const {
  AW_RETURN_IF_ERROR(CheckShape("input", ids_shape));
  const int64_t n = NumelChecked(ids_shape);
  Shape ys = ids_shape;
  ys.push_back(dim_);
  if (NumelChecked(ys) < 0) return ShapeError("output: shape " + ShapeStr(ys) + " exceeds 2^29 elements");
  AW_RETURN_IF_ERROR(CheckIds(ids, n, "input"));
  AW_RETURN_IF_ERROR(y->Resize(size_t(n * dim_), "Embedding output"));
  *y_shape = ys;
  Lookup(size_t(n), ids, y->data(), size_t(dim_));
  return Status::OK();
}

}  // namespace aw
