// Position information added to a sequence x (L, N, E) | (N, L, E) if
// batch_first | (L, E):  y = x + P[:L], P (max_len, E) broadcast over N.
//   SinusoidalPositionalEncoding: P fixed, "Attention Is All You Need" as in
//     the PyTorch tutorial's PositionalEncoding: P[p, 2i] = sin(p·w_i),
//     P[p, 2i+1] = cos(p·w_i), w_i = exp(2i · (−ln 10000 / E)), in float32
//     like torch. No parameters.
//   LearnedPositionalEmbedding: P is the parameter "weight" (max_len, E),
//     nn.Embedding over positions 0..L−1; initialised N(0, 1).
#pragma once
#include "core/module.h"
#include "core/rng.h"

namespace aw {

class PositionalAdd : public Module {
 public:
  // Validated: y = x + P[:L].
  Status Forward(const TensorView& x, Buffer* y, Shape* y_shape) const;
  // Internal: x (validated sequence of `shape`) += P[:L] in place.
  void Run(float* x, const Shape& shape) const;
  Status CheckInput(const TensorView& x, const char* name) const;
  int64_t max_len() const { return max_len_; }
  // Row `pos` of the table (d floats); pos < max_len.
  const float* Row(int64_t pos) const { return table_ + pos * d_; }

 protected:
  int64_t max_len_ = 0, d_ = 0;
  bool batch_first_ = false;
  const float* table_ = nullptr;  // (max_len, d)
};

class SinusoidalPositionalEncoding : public PositionalAdd {
 public:
  Status Init(int64_t d_model, int64_t max_len, bool batch_first);

 private:
  Buffer pe_;  // a buffer in torch's sense: not a parameter, not in the state_dict
};

class LearnedPositionalEmbedding : public PositionalAdd {
 public:
  Status Init(int64_t max_len, int64_t d_model, bool batch_first, Rng& rng);
};

}  // namespace aw
