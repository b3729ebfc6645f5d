// RotaryPositionalEmbeddings (rotary.h): validate → tables of the positions
// (in pieces that fit the working-memory budget) → rotate every head of every
// token by its position's table row, on the thread pool. Each element is
// computed the same way whoever computes it: bit-identical for any thread
// count.
#include "layers/rotary.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>

#include "core/parallel.h"
#include "core/rules.h"
#include "core/workspace.h"
#include "kernels/rope.h"
#include "layers/rope_scaling.h"

namespace aw {

Status RotaryPositionalEmbeddings::Init(int64_t dim, int64_t max_seq_len, double base, bool interleaved) {
  AW_RETURN_IF_ERROR(PositiveInt("dim", dim));
  if (dim % 2)
    return ArgError("dim: expected an even number (RoPE rotates pairs of elements), got " + std::to_string(dim));
  AW_RETURN_IF_ERROR(PositiveInt("maxSeqLen", max_seq_len));
  AW_RETURN_IF_ERROR(PositiveFinite("base", base));
  const float base_f = float(base);  // torch holds the base as a float32 tensor
  if (!(base_f > 0.0f) || std::isinf(base_f))
    return OutOfRangeError("base: expected a number within float32's range (> 0, at most 3.4028234663852886e+38), "
                           "got " + NumStr(base));
  dim_ = dim;
  max_seq_len_ = max_seq_len;
  interleaved_ = interleaved;
  const size_t h = size_t(dim / 2);
  AW_RETURN_IF_ERROR(theta_.Resize(h, "RoPE theta"));
  for (size_t i = 0; i < h; ++i) {
    const float e = float(2 * i) / float(dim);  // float32(2i) / dim, a float division
    theta_.data()[i] = 1.0f / float(std::pow(double(base_f), double(e)));
  }
  return Status::OK();
}

Status RotaryPositionalEmbeddings::CheckPositions(const std::string& name, const int32_t* pos,
                                                  const Shape& shape) const {
  const int64_t n = NumelChecked(shape);
  for (int64_t t = 0; t < n; ++t) {
    if (pos[t] >= 0 && pos[t] < max_seq_len_) continue;
    std::string index = "(";  // the multi-index of t in `shape`
    int64_t rest = t;
    Shape idx(shape.size());
    for (size_t d = shape.size(); d-- > 0;) {
      idx[d] = shape[d] ? rest % shape[d] : 0;
      rest = shape[d] ? rest / shape[d] : 0;
    }
    for (size_t d = 0; d < idx.size(); ++d) index += (d ? ", " : "") + std::to_string(idx[d]);
    return OutOfRangeError(name + ": position " + std::to_string(pos[t]) + " at index " + index +
                           ") is out of range [0, maxSeqLen = " + std::to_string(max_seq_len_) + ")");
  }
  return Status::OK();
}

void RotaryPositionalEmbeddings::FillTable(size_t n, const int32_t* pos, float* table) const {
  RopeTable(n, pos, dim_, theta_.data(), 1.0f, table);
}

void RotaryPositionalEmbeddings::Rotate(size_t tokens, const float* table, float* x, size_t heads, size_t ld_head,
                                        size_t ld_token) const {
  const size_t h = size_t(dim_ / 2), D = size_t(dim_);
  const auto rope = interleaved_ ? kernels::f32_rope_interleaved : kernels::f32_rope_half;
  for (size_t t = 0; t < tokens; ++t) rope(heads, D, x + t * ld_token, ld_head, table + t * D, table + t * D + h);
}

Status RotaryPositionalEmbeddings::RotateQK(const std::string& name, size_t T, const int32_t* pos, float* q,
                                            size_t hq, size_t ldq, float* k, size_t hk, size_t ldk) const {
  AW_RETURN_IF_ERROR(CheckPositions(name, pos, {int64_t(T)}));
  ScratchScope scope;
  float* table = nullptr;
  AW_RETURN_IF_ERROR(scope.Take(TableFloats(T), "RoPE table", &table));
  FillTable(T, pos, table);
  Rotate(T, table, q, hq, size_t(dim_), ldq);
  if (k) Rotate(T, table, k, hk, size_t(dim_), ldk);
  return Status::OK();
}

Status RotaryPositionalEmbeddings::Forward(const TensorView& x, const int32_t* input_pos, const Shape& pos_shape,
                                           Buffer* y, Shape* y_shape) const {
  AW_RETURN_IF_ERROR(CheckShape("input", x.shape));
  if (x.shape.size() != 4 || x.shape[3] != dim_)
    return ShapeError("input: expected (B, S, H, dim) with dim = " + std::to_string(dim_) + ", got " +
                      ShapeStr(x.shape));
  const int64_t B = x.shape[0], S = x.shape[1], H = x.shape[2];
  const bool shared = !input_pos || pos_shape.size() == 1;  // one position per s, for every sequence
  if (input_pos) {
    AW_RETURN_IF_ERROR(CheckShape("inputPos", pos_shape));
    if (pos_shape != Shape{B, S} && pos_shape != Shape{S})
      return ShapeError("inputPos: expected (B, S) = " + ShapeStr({B, S}) + " or (S) = " + ShapeStr({S}) +
                        ", got " + ShapeStr(pos_shape));
    AW_RETURN_IF_ERROR(CheckPositions("inputPos", input_pos, pos_shape));
  } else if (S > max_seq_len_) {
    return OutOfRangeError("input: S = " + std::to_string(S) + " positions (0 … S-1 without inputPos) exceed " +
                           "maxSeqLen = " + std::to_string(max_seq_len_));
  }
  const int64_t n = NumelChecked(x.shape);
  AW_RETURN_IF_ERROR(y->Resize(size_t(n), "RotaryPositionalEmbeddings output"));
  *y_shape = x.shape;
  if (n == 0) return Status::OK();
  std::memcpy(y->data(), x.data, size_t(n) * sizeof(float));

  // Positions by index: (S) shared by the B sequences, or (B·S) one per token.
  const size_t n_pos = size_t(shared ? S : B * S), D = size_t(dim_), row = size_t(H) * D;
  const size_t per_pos = TableFloats(1) * sizeof(float) + (input_pos ? 0 : sizeof(int32_t));
  const size_t piece = WorkPieceEntries(n_pos, per_pos);
  for (size_t p0 = 0; p0 < n_pos; p0 += piece) {
    const size_t np = std::min(piece, n_pos - p0);
    ScratchScope scope;
    const int32_t* pos = input_pos ? input_pos + p0 : nullptr;
    if (!pos) {
      int32_t* iota = nullptr;
      AW_RETURN_IF_ERROR(scope.Take(np, "RoPE positions", &iota));
      for (size_t t = 0; t < np; ++t) iota[t] = int32_t(p0 + t);
      pos = iota;
    }
    float* table = nullptr;
    AW_RETURN_IF_ERROR(scope.Take(TableFloats(np), "RoPE table", &table));
    FillTable(np, pos, table);
    // Tokens of this piece: every sequence's s in [p0, p0 + np) (shared), or the tokens p0 … p0 + np - 1.
    const size_t tokens = shared ? size_t(B) * np : np;
    ParallelFor(tokens, (size_t(1) << 14) / (row + 1) + 1, [&](size_t u0, size_t u1, int) {
      for (size_t u = u0; u < u1; ++u) {
        const size_t b = shared ? u / np : 0, t = shared ? u % np : u;  // t: the table row
        const size_t token = shared ? b * size_t(S) + p0 + t : p0 + t;   // flat (b, s)
        Rotate(1, table + t * D, y->data() + token * row, size_t(H), D, row);
      }
    });
  }
  return Status::OK();
}

}  // namespace aw
