// Pieces of whole batch entries: how a layer runs a batch whose scratch would
// exceed the working-memory budget (core/workspace.h). Batch entries never
// interact in these layers, so a piece of entries [n0, n0 + n) is run as a
// call of its own, in the same layout:
//   (N, T, d) batch-first and (T, d) unbatched: the entries' rows are
//            contiguous, a piece is a slice of the tensor (no copy);
//   (T, N, d) sequence-first: the rows interleave, a piece is gathered into
//            (T, n, d) scratch and its results scattered back.
// The masks follow: (N·H, L, S) attention masks and (N, S) key padding masks
// are sliced to the piece's entries; (L, S) masks are shared.
#pragma once
#include <cstdint>
#include <cstring>

#include "core/status.h"
#include "core/tensor.h"
#include "core/workspace.h"

namespace aw {

// A validated 2-D or 3-D sequence batch: N entries of T rows of d floats.
struct SeqLayout {
  int64_t N = 1, T = 0, d = 0;
  bool seq_first = false;  // (T, N, d): entries interleaved
};

inline SeqLayout LayoutOf(const Shape& shape, bool batch_first) {
  SeqLayout l;
  l.d = shape.back();
  if (shape.size() == 2) {
    l.T = shape[0];
  } else {
    l.N = batch_first ? shape[0] : shape[1];
    l.T = batch_first ? shape[1] : shape[0];
    l.seq_first = !batch_first;
  }
  return l;
}

// The shape of n entries in the layout of `shape` (2-D shapes have one entry).
inline Shape PieceShape(const Shape& shape, bool batch_first, int64_t n) {
  Shape s = shape;
  if (s.size() == 3) s[batch_first ? 0 : 1] = n;
  return s;
}

// Rows of entries [n0, n0 + n) of a (T, N, d) tensor into (T, n, d), and back.
inline void GatherEntries(const float* src, const SeqLayout& l, int64_t n0, int64_t n, float* dst) {
  for (int64_t t = 0; t < l.T; ++t)
    std::memcpy(dst + t * n * l.d, src + (t * l.N + n0) * l.d, size_t(n * l.d) * sizeof(float));
}
inline void ScatterEntries(const float* src, const SeqLayout& l, int64_t n0, int64_t n, float* dst) {
  for (int64_t t = 0; t < l.T; ++t)
    std::memcpy(dst + (t * l.N + n0) * l.d, src + t * n * l.d, size_t(n * l.d) * sizeof(float));
}

// Floats a piece of n entries takes in scratch (gathered) or 0 (a slice).
inline int64_t PieceFloats(const SeqLayout& l, int64_t n) { return l.seq_first ? l.T * n * l.d : 0; }

// The piece [n0, n0 + n) of x: a slice, or gathered into scope's scratch.
inline Status TakePiece(const float* x, const SeqLayout& l, int64_t n0, int64_t n, ScratchScope* scope,
                        const char* what, float** piece) {
  if (!l.seq_first) {
    *piece = const_cast<float*>(x) + n0 * l.T * l.d;
    return Status::OK();
  }
  AW_RETURN_IF_ERROR(scope->Take(size_t(PieceFloats(l, n)), what, piece));
  GatherEntries(x, l, n0, n, *piece);
  return Status::OK();
}
// Writes a piece taken with TakePiece back into x (nothing to do for a slice).
inline void PutPiece(const float* piece, const SeqLayout& l, int64_t n0, int64_t n, float* x) {
  if (l.seq_first) ScatterEntries(piece, l, n0, n, x);
}

// An attention mask of (N·heads, L, S) sliced to entries [n0, n0 + n);
// an (L, S) mask or an absent one unchanged.
inline MaskView SliceAttnMask(const MaskView& m, int64_t heads, int64_t n0, int64_t n) {
  if (!m.present() || m.shape.size() != 3) return m;
  MaskView s = m;
  const size_t elem = m.dtype == DType::kBool ? 1 : sizeof(float);
  s.data = static_cast<const char*>(m.data) + size_t(n0 * heads * m.shape[1] * m.shape[2]) * elem;
  s.shape[0] = n * heads;
  return s;
}
// A key padding mask of (N, S) sliced to entries [n0, n0 + n); (S) or absent unchanged.
inline MaskView SliceKeyPaddingMask(const MaskView& m, int64_t n0, int64_t n) {
  if (!m.present() || m.shape.size() != 2) return m;
  MaskView s = m;
  const size_t elem = m.dtype == DType::kBool ? 1 : sizeof(float);
  s.data = static_cast<const char*>(m.data) + size_t(n0 * m.shape[1]) * elem;
  s.shape[0] = n;
  return s;
}

}  // namespace aw
