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
// Weights (parameters) are owned by the layer. Scratch (the projections, the
// attention output before out_proj) comes from the calling thread's
// workspace (core/workspace.h): a batch whose scratch would exceed the
// working-memory budget is processed in pieces of whole batch entries, with
// the same results bit for bit; nothing is kept between calls.
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
  // Internal (the model families): a causal attention with no mask at all,
  // run by the attention core's causal option (query i sees keys j <= i).
  bool causal = false;
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

// The sizes and layout of one validated call (MultiheadAttention::Check).
struct MhaPlan {
  int64_t N = 0, L = 0, S = 0;  // batch entries (1 unbatched), query length, key length
  int64_t S2 = 0;               // keys with the appended bias_k / zero-attention ones
  bool batched = false;         // 3-D inputs
  bool seq_first = false;       // batched and not batch_first: (L, N, ·), entries interleaved
  bool fused = false;           // query, key and value are one tensor: one in-projection GEMM
  bool kv_one = false;          // key and value are one tensor: one GEMM for both (fused implies it)
  bool key_is_query = false, value_is_key = false;  // the same tensors (gathered once in pieces)
  bool need_weights = false, average = false;       // the options' need_weights, average_attn_weights
  bool bool_kpm = false;        // a bool key_padding_mask (converted to an additive one: N·S floats)
  bool causal = false;          // the options' internal causal flag
  Shape output_shape, weights_shape;
};

// The in-projections, by name (in_proj_weight's row blocks, in torch's order).
enum class Proj { kQ = 0, kK = 1, kV = 2 };

class MultiheadAttention : public Module {
 public:
  MultiheadAttention() = default;
  // Validates the config (messages name the argument), allocates and
  // initialises the parameters as torch does (xavier_uniform_ in-projection,
  // zero biases, kaiming_uniform_(a=√5) out_proj.weight, xavier_normal_
  // bias_k/bias_v) from `rng`.
  Status Init(const MhaConfig& config, Rng& rng);

  // Public, validated forward (torch's argument checks and messages): Check,
  // the outputs allocated in *result (owned by the caller), Run.
  Status Forward(const TensorView& query, const TensorView& key, const TensorView& value,
                 const MhaForwardOptions& opts, MhaResult* result);
  // The validation alone; the call's sizes in *plan.
  Status Check(const TensorView& query, const TensorView& key, const TensorView& value,
               const MhaForwardOptions& opts, MhaPlan* plan) const;
  // A checked call (plan from Check on the same arguments) into caller
  // memory: out (plan.output_shape's elements), weights (plan.weights_shape's,
  // or null without need_weights). Fails only to allocate scratch.
  Status Run(const MhaPlan& plan, const TensorView& query, const TensorView& key, const TensorView& value,
             const MhaForwardOptions& opts, float* out, float* weights);
  // Check, then Run into caller memory (what layers built on this one call).
  Status ForwardInto(const TensorView& query, const TensorView& key, const TensorView& value,
                     const MhaForwardOptions& opts, float* out, float* weights);
  // The scratch a call of `plan` takes, in bytes: per batch entry, and once
  // (masks converted, the attention core's slabs). Callers that run this
  // layer on pieces of their own batch size the pieces with it.
  size_t ScratchPerEntry(const MhaPlan& plan) const;
  size_t ScratchFixed(const MhaPlan& plan) const;

  // ---- Incremental decoding (internal, unvalidated; no bias_k/v, no zero attention) ----
  // y (rows, E) = x (rows, in) · W^T + b for the query, key or value projection.
  void Project(Proj which, size_t rows, const float* x, size_t ldx, float* y, size_t ldy) const;
  // One query row per sequence: q (B, E) attends over T keys/values of its own
  // sequence, rows (T, E) at k + b·kv_stride (kv_stride 0: all share one),
  // through the attention core. out (B, E) is the attention output before
  // out_proj; weights (B, H, T) if non-null. Fails only to allocate scratch.
  Status AttendSteps(size_t B, const float* q, const float* k, const float* v, size_t kv_stride, size_t T,
                     float* out, float* weights);
  void OutProject(size_t rows, const float* x, float* y) const { out_proj_.Apply(rows, x, size_t(cfg_.embed_dim), y, size_t(cfg_.embed_dim)); }

 private:
  void OnParamsLoaded() override;  // repacks the in-projection weights
  // The packed in-projection of `which`: the packed B, the columns it was
  // packed with, and the first column of this projection.
  struct PackedProj { const float* bp; size_t cols, j0; };
  PackedProj Packed(Proj which) const;
  // The attention core's shape for a call of `plan` (strides for n entries).
  AttnShape CoreShape(const MhaPlan& plan, int64_t n) const;
  // Scratch per entry when the pieces are gathered (seq-first inputs).
  size_t GatherPerEntry(const MhaPlan& plan) const;
  // Entries [0, n) of a call whose tensors are laid out as `plan` says with
  // n entries (a piece of a larger call, gathered or sliced, or all of it).
  Status RunEntries(const MhaPlan& plan, int64_t n, const float* q, const float* k, const float* v,
                    const MaskView& attn_mask, const float* kpm, float* out, float* weights,
                    const MhaForwardOptions& opts);

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
};

}  // namespace aw
