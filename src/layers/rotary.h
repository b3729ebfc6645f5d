// RotaryPositionalEmbeddings: torchtune's RotaryPositionalEmbeddings(dim,
// max_seq_len=4096, base=10000), with the pairing as an option: interleaved
// (torchtune's own layout, adjacent pairs (2i, 2i + 1): the default) or not
// (Hugging Face's rotate_half, pairs (i, i + dim/2): Llama and Qwen2
// checkpoints). Angles formed as torch forms them, in float32:
//   theta[i]    = 1 / base^(float32(2i) / dim)      i < dim/2   (base rounded to float32, the power correctly
//                                                               rounded, the reciprocal a float division)
//   angle(p, i) = float32(float32(p) · theta[i])    one rounded product (torch's outer product / K=1 matmul)
//   c, s        = cos, sin of that float angle, in double, rounded to float (torch: float32 cos / sin)
// The angle must be a float32 product: at p ~ 65 000 one float32 ulp of it is
// 0.004 rad, so an angle formed in double would be off by far more than the
// tolerances (golden rope_hf_d64_large_pos). cos / sin are taken in double
// because libm reduces large arguments exactly; they cost dim/2 of each per
// position, once per position and call, shared by every head (and by q and k,
// and every layer, in a model: FillTable once, Rotate per layer).
// No parameters: torchtune's theta and cache are non-persistent buffers, so
// the state_dict is empty. The rotation: kernels/rope.h.
#pragma once
#include <string>

#include "core/module.h"

namespace aw {

class RotaryPositionalEmbeddings : public Module {
 public:
  RotaryPositionalEmbeddings() = default;
  // dim: even, >= 2; max_seq_len >= 1; base: finite, > 0 and within float32.
  Status Init(int64_t dim, int64_t max_seq_len, double base, bool interleaved);

  int64_t dim() const { return dim_; }
  int64_t max_seq_len() const { return max_seq_len_; }
  bool interleaved() const { return interleaved_; }
  const float* theta() const { return theta_.data(); }  // (dim/2), torch's float32 inv_freq

  // ---- the entry points of a model (tables once per call, rotations per layer) ----
  // Floats of the table of n positions: dim per position, cos (dim/2) then sin (dim/2).
  size_t TableFloats(size_t n) const { return n * size_t(dim_); }
  // Every position in [0, max_seq_len): else ERR_OUT_OF_RANGE "name: position p at index (b, s) is out of
  // range [0, maxSeqLen = M)"; `shape` is the positions' shape, for the index in the message.
  Status CheckPositions(const std::string& name, const int32_t* pos, const Shape& shape) const;
  // Table rows t < n of positions pos[t] (unchecked; CheckPositions first), on the thread pool.
  void FillTable(size_t n, const int32_t* pos, float* table) const;
  // Rotates in place `tokens` tokens, token t by table row t: `heads` rows of dim floats, ld_head apart,
  // starting at x + t·ld_token (q or k of a projection (T, heads·dim): ld_head = dim, ld_token = heads·dim).
  // One thread (called per layer and sequence by a model, or from inside a parallel loop).
  void Rotate(size_t tokens, const float* table, float* x, size_t heads, size_t ld_head, size_t ld_token) const;
  // The rotation of one sequence's q and k rows in place, at positions pos[0, T) (checked against
  // max_seq_len, errors naming `name`): q (T, hq·dim) rows ldq apart, k (T, hk·dim) rows ldk apart
  // (k may be null). The table comes from the workspace. For a single call; a model running many
  // layers on the same positions uses FillTable once and Rotate per layer instead.
  Status RotateQK(const std::string& name, size_t T, const int32_t* pos, float* q, size_t hq, size_t ldq, float* k,
                  size_t hk, size_t ldk) const;

  // Public, validated: x (B, S, H, dim) → y of x's shape. input_pos: null (positions 0 … S-1), or
  // Int32 of shape (B, S) (each sequence its own positions) or (S) (the same for every sequence).
  Status Forward(const TensorView& x, const int32_t* input_pos, const Shape& pos_shape, Buffer* y,
                 Shape* y_shape) const;

 private:
  int64_t dim_ = 0, max_seq_len_ = 0;
  bool interleaved_ = true;
  Buffer theta_;  // (dim/2): a buffer in torch's sense, not a parameter
};

}  // namespace aw
