// scaled_dot_product_attention: torch.nn.functional.scaled_dot_product_attention
// (PyTorch 2.x semantics) for float32 inputs, inference only.
//
//   query (…q, L, E), key (…k, S, E), value (…v, S, Ev)  →  output (…, L, Ev)
//
// Leading batch dims broadcast as in torch.matmul; the attention weights have
// the batch shape broadcast(…q, …k) and the output broadcast(…q, …k, …v).
// attn_mask broadcasts into the weights (L, S) and must not have more dims than
// them. bool mask: true = take part; float mask: added to the scores.
// is_causal: keep j <= i (upper-left aligned when L != S); excludes attn_mask.
// causal_bias: torch.nn.attention.bias's causal_upper_left(L, S) (keep
// j <= i) or causal_lower_right(L, S) (keep j <= i + S - L; rows i < L - S
// keep nothing and give zeros) passed as attn_mask: never materialised, the
// attention core's causal diagonal (dead key chunks skipped); its (L, S) must
// be the call's. Excludes is_causal, as any attn_mask does.
// enable_gqa: key/value dim -3 is repeated (repeat_interleave) up to query's.
// Not: dropout (dropout_p must be 0), training, fully masked rows = NaN (they
// give zeros here, see kernels/softmax.h).
#pragma once
#include "core/buffer.h"
#include "core/status.h"
#include "core/tensor.h"

namespace aw {

enum class CausalBias { kNone, kUpperLeft, kLowerRight };

// The range rule of a causal bias's sizes: L and S integers in [0, 2^29]
// ("L: expected an integer in [0, 536870912], got -1").
Status CheckCausalBias(int64_t L, int64_t S);

struct SdpaOptions {
  MaskView attn_mask;        // optional
  CausalBias causal_bias = CausalBias::kNone;  // instead of attn_mask: a causal mask object of (L, S)
  int64_t causal_bias_l = 0, causal_bias_s = 0;
  double dropout_p = 0.0;    // must be 0
  bool is_causal = false;
  bool has_scale = false;    // false: scale = 1 / sqrt(E)
  double scale = 1.0;
  bool enable_gqa = false;
  bool need_weights = false; // also return the softmax weights
  // The output over the query's memory when their shapes are equal (the
  // caller owns that memory, a copy it no longer needs: the bindings' copy
  // of the JS query): no output buffer, so the call's peak is its inputs.
  // Exact: each query row block is packed before its output rows are
  // written, and no other block reads those rows (ops/attention.cpp).
  bool output_over_query = false;
};

struct SdpaResult {
  Buffer output;   Shape output_shape;    // (…, L, Ev)
  Buffer weights;  Shape weights_shape;   // (…, L, S), only if need_weights
  // Where the output is: output.data(), or the query's memory
  // (SdpaOptions::output_over_query with equal shapes).
  const float* output_data = nullptr;
};

// Scratch: the attention core's slabs, from the calling thread's workspace
// (core/workspace.h), given back before it returns. A mask that broadcasts
// along S ((…, L, 1)) is read as it is, never expanded.
Status ScaledDotProductAttention(const TensorView& query, const TensorView& key,
                                 const TensorView& value, const SdpaOptions& opts,
                                 SdpaResult* result);

}  // namespace aw
