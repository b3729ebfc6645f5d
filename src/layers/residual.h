// ResidualBlocks: the block every Transformer layer is built of — a sublayer
// with its residual connection and its norm(s), on x (rows, E) in place:
//   pre-norm       x = x + f(norm(x))            (Llama, Qwen, Phi, norm_first layers)
//   post-norm      x = norm(x + f(x))            (BERT, torch's default layers)
//   sandwich       x = x + post(f(pre(x)))       (Gemma 2/3: a norm before and after the sublayer)
// where f(in, out) writes the sublayer's output rows (rows, E) from in. Generic
// over the norm: anything with Apply(rows, in, ld_in, out, ld_out) (LayerNorm,
// RMSNorm in both of its forms). Begin takes the blocks' scratch (y, and t for
// the normalised input) from `scope`, shared by every block of a layer.
#pragma once
#include <cstddef>

#include "core/status.h"
#include "core/tensor.h"
#include "core/workspace.h"
#include "kernels/elementwise.h"

namespace aw {

enum class NormPlace { kPre, kPost, kSandwich };

class ResidualBlocks {
 public:
  Status Begin(ScratchScope* scope, NormPlace place, size_t rows, size_t E) {
    place_ = place; rows_ = rows; E_ = E;
    if (place != NormPlace::kPost) AW_RETURN_IF_ERROR(scope->Take(rows * E, "normalised input", &t_));
    return scope->Take(rows * E, "sublayer output", &y_);
  }
  Status Begin(ScratchScope* scope, bool norm_first, size_t rows, size_t E) {
    return Begin(scope, norm_first ? NormPlace::kPre : NormPlace::kPost, rows, E);
  }
  // The rows of a (…, E) activation of `shape`.
  static size_t Rows(const Shape& shape, size_t E) { return size_t(NumelChecked(shape)) / E; }

  // Pre- or post-norm, as Begin was told.
  template <class Norm, class F>
  Status Block(const Norm& norm, float* x, F&& f) {
    if (place_ == NormPlace::kPre) {
      norm.Apply(rows_, x, E_, t_, E_);
      AW_RETURN_IF_ERROR(f(static_cast<const float*>(t_), y_));
      kernels::f32_add(rows_ * E_, x, y_);
    } else {
      AW_RETURN_IF_ERROR(f(static_cast<const float*>(x), y_));
      kernels::f32_add(rows_ * E_, x, y_);
      norm.Apply(rows_, x, E_, x, E_);
    }
    return Status::OK();
  }

  // No norm: x = x + f(x).
  template <class F>
  Status Unnormed(float* x, F&& f) {
    AW_RETURN_IF_ERROR(f(static_cast<const float*>(x), y_));
    kernels::f32_add(rows_ * E_, x, y_);
    return Status::OK();
  }

  // Sandwich: x = x + post(f(pre(x))) (Begin with NormPlace::kSandwich).
  template <class Norm, class F>
  Status Block(const Norm& pre, const Norm& post, float* x, F&& f) {
    pre.Apply(rows_, x, E_, t_, E_);
    AW_RETURN_IF_ERROR(f(static_cast<const float*>(t_), y_));
    post.Apply(rows_, y_, E_, y_, E_);
    kernels::f32_add(rows_ * E_, x, y_);
    return Status::OK();
  }

 private:
  NormPlace place_ = NormPlace::kPre;
  size_t rows_ = 0, E_ = 0;
  float* t_ = nullptr;
  float* y_ = nullptr;
};

}  // namespace aw
