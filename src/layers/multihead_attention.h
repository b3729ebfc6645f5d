// MultiheadAttention: torch.nn.MultiheadAttention (PyTorch 2.x semantics) for
// inference. Same constructor arguments, state_dict keys and forward arguments.
//
//   query (L, N, E) | (N, L, E) if batch_first | (L, E) unbatched
//   key   (S, N, kdim) …, value (S, N, vdim) …
//   key_padding_mask (N, S) | (S);  attn_mask (L, S) | (N·H, L, S) | (H, L, S) unbatched
//   → output like query; weights (N, L, S') averaged or (N, H, L, S') per head,
//     S' = S + add_bias_kv + add_zero_attn.
// Masks: bool true = NOT allowed to attend (the opposite of SDPA), float = added.
// A query row with every key masked gives zero weights and a zero attention
// output for that head (torch gives NaN; see README "Fully masked rows").
// Weights (parameters) are owned by the layer; scratch activations are kept
// between calls and reused, so a steady-state forward only allocates outputs.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/buffer.h"
#include "core/module.h"
#include "core/status.h"
#include "core/tensor.h"
#include "layers/linear.h"
#include "ops/attention.h"

namespace aw {

struct MhaConfig {
  int64_t embed_dim = 0;
  int64_t num_heads = 0;
  double dropout = 0.0;  // accepted and ignored: inference = eval mode
  bool bias = true;
  bool add_bias_kv = false;
  bool add_zero_attn = false;
  std::optional<int64_t> kdim;  // unset = embed_dim (torch's None)
  std::optional<int64_t> vdim;  // unset = embed_dim
  bool batch_first = false;
};

struct MhaForwardOptions {
  MaskView key_padding_mask;
  bool need_weights = true;
  MaskView attn_mask;
  bool average_attn_weights = true;
  bool is_causal = false;  // a hint, as in torch 2.x: requires attn_mask
  // The names error messages use for the arguments: a layer that calls this
  // one (e.g. TransformerEncoderLayer) passes its own ("src", "srcMask", …).
  struct Names {
    const char* query = "query";
    const char* key = "key";
    const char* value = "value";
    const char* key_padding_mask = "keyPaddingMask";
    const char* attn_mask = "attnMask";
    const char* is_causal = "isCausal";
  } names;
};

struct MhaResult {
  Buffer output;   Shape output_shape;
  Buffer weights;  Shape weights_shape;  // empty unless need_weights
};

class MultiheadAttention : public Module {
 public:
  MultiheadAttention() = default;
  // Validates the config (messages name the argument), allocates and
  // initialises the parameters as torch does (xavier_uniform_ in-projection,
  // zero biases, kaiming_uniform_(a=√5) out_proj.weight, xavier_normal_
  // bias_k/bias_v) from `rng`.
  Status Init(const MhaConfig& config, Rng& rng);

  const MhaConfig& config() const { return cfg_; }

  // Public, validated forward (torch's argument checks and messages).
  Status Forward(const TensorView& query, const TensorView& key, const TensorView& value,
                 const MhaForwardOptions& opts, MhaResult* result);

  // ---- Incremental decoding (internal, unvalidated; no bias_k/v, no zero attention) ----
  // y (rows, E) = x (rows, in) · W^T + b for the query (0), key (1) or value (2) projection.
  void Project(int which, size_t rows, const float* x, size_t ldx, float* y, size_t ldy) const;
  // One query row per sequence: q (B, E) attends over T keys/values of its own
  // sequence, rows (T, E) at k + b·kv_stride (kv_stride 0: all share one),
  // through the attention core. out (B, E) is the attention output before
  // out_proj; weights (B, H, T) if non-null. Fails only to allocate scratch.
  Status AttendSteps(size_t B, const float* q, const float* k, const float* v, size_t kv_stride, size_t T,
                     float* out, float* weights);
  void OutProject(size_t rows, const float* x, float* y) const { out_proj_.Apply(rows, x, size_t(cfg_.embed_dim), y, size_t(cfg_.embed_dim)); }

 private:
  void OnParamsLoaded() override;  // repacks the in-projection weights
  // The packed in-projection for `which` (0 q, 1 k, 2 v): the packed B, the
  // columns it was packed with, and the first column of this projection.
  struct PackedProj { const float* bp; size_t cols, j0; };
  PackedProj Packed(int which) const;

  MhaConfig cfg_;
  int64_t kdim_ = 0, vdim_ = 0;  // cfg_'s, resolved
  float* w_in_ = nullptr;  // in_proj_weight (3E, E), or null when kdim/vdim differ
  float* wq_ = nullptr;    // (E, E)    views into w_in_ or q_proj_weight
  float* wk_ = nullptr;    // (E, kdim)
  float* wv_ = nullptr;    // (E, vdim)
  float* b_in_ = nullptr;  // in_proj_bias (3E) or null
  float* bias_k_ = nullptr;
  float* bias_v_ = nullptr;
  Linear out_proj_;
  // The in-projection packed for the GEMM (kernels/gemm.h), rebuilt when the
  // weights change: in_proj_weight as one (3E)-column B when E is a multiple
  // of the panel width (the q, k and v projections are windows of it, and a
  // self-attention projects all three in one GEMM); otherwise Wq, Wk, Wv
  // packed one by one.
  Buffer packed_in_, packed_q_, packed_k_, packed_v_;
  // Scratch reused across calls (grown on demand, never shrunk).
  Buffer q_, k_, v_, attn_, am_, kpm_;
  AttnScratch attn_scratch_;
};

}  // namespace aw
