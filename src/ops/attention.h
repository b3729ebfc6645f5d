// attention: the one attention core behind scaledDotProductAttention, every
// path of MultiheadAttention and the decoder's KV-cache step. Validation
// (shapes, masks, messages) belongs to the callers; this runs a batch of heads
// of one shape, each
//
//   O (L, hdv) = softmax(scale · Q (L, hd) · K (S, hd)ᵀ + masks) · V (S, hdv)
//
// with PyTorch's semantics: masked keys get -inf; a row whose every key is
// masked gives zero weights and a zero output (torch's SDPA math path since
// 2.5, see README "Fully masked rows"); NaN and +inf propagate as in torch.
//
// Flash attention, one way through for every caller: keys in chunks of
// kAttnChunk, K and V of a piece packed once; per block of query rows and
// chunk: S = (scale·Q)·Kᵀ on the GEMM micro-kernel (no horizontal sums), the
// masks, f32_softmax_online (exp fused with the running max and sum, P
// written pre-packed), and O = O·diag(alpha) + P·V, also on the micro-kernel;
// O is divided by the row sums at the end. When weights are wanted, the
// scores are written straight into the weights rows and, after the last
// chunk, turned into torch's softmax weights with the final maxima and sums
// (f32_softmax_finish) — so asking for the weights does not change the
// output by a single bit.
// Chunks that every row of a block has masked (causal with any diagonal
// offset, a sliding window's start, or -inf / false over a whole chunk, e.g. key padding) are skipped, in both
// ways, when the head's
// Q, K and V are finite (a NaN or inf would otherwise have reached the output
// through 0 · NaN, as it does in torch). A causal attention does about half
// the work.
//
// Work split (core/parallel.h): pieces = (group, head, block of kAttnRowBlock
// query rows); when the weights are averaged over a group's heads, a piece
// runs all the group's heads in order instead, so that one thread owns those
// weights rows. Piece and chunk boundaries do not depend on the thread count:
// bit-identical results.
// Scalar twin: AttendRef (attention_ref.cpp), the plain math.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/status.h"

namespace aw {

constexpr size_t kAttnRowBlock = 64;  // query rows per piece of work
constexpr size_t kAttnChunk = 64;     // keys per chunk (a multiple of kernels::kGemmNR)

// Sizes, strides and options shared by every head of one call.
struct AttnShape {
  size_t L = 0, S = 0, hd = 0, hdv = 0;
  size_t ldq = 0, ldk = 0, ldv = 0, ldo = 0;  // row strides (elements)
  size_t ldw = 0;                             // weights row stride
  float scale = 1.0f;
  bool causal = false;      // key j masked for query row i when j > i + causal_offset
  int64_t causal_offset = 0;  // the diagonal: 0 upper-left aligned (torch's is_causal), S - L lower-right
                              // (causal_lower_right); negative: rows i < -offset have no key (zeros)
  size_t window = 0;        // with causal: query row i sees only its last `window` keys, [end − window, end),
                            // end = i + causal_offset + 1 (a sliding window; 0: no limit). Chunks wholly before
                            // every row's window are skipped, as causal skips those past the diagonal.
  size_t masked_keys = 0;   // masks and causal cover keys [0, masked_keys); later keys (MHA's bias_k, zero
                            // attention) are never masked. Set it to S otherwise.
  // Additive mask: key j of query row i at add[i·add_ld + j·add_cs] (add_ld 0: one row for every query;
  // add_cs 0: one value per row, broadcast over the keys, as torch broadcasts a (…, L, 1) mask).
  size_t add_ld = 0, add_cs = 1;
  // Bool mask, the same addressing (keep_ld, keep_cs). keep_drops false: a 0 byte masks the key (SDPA's
  // "true = take part"); true: a nonzero byte masks it (MultiheadAttention's "true = masked").
  size_t keep_ld = 0, keep_cs = 1;
  bool keep_drops = false;
  bool masked_unread = false;  // skip masked chunks without first checking Q, K and V for NaN / inf (an O(S)
                               // scan per piece): a NaN in a skipped chunk then does not reach the output, where
                               // torch's matmul would carry it. The causal LM's cache sets it: its hidden keys are
                               // before a window, and a decoding step should not read the whole context.
  bool weights = false;     // write the softmax weights (head.weights)
  bool average = false;     // with weights: every head of a group gives the same weights pointer, and the
                            // group's weights are the mean over its heads (MultiheadAttention's default)
  bool serial = false;      // run on one thread (groups share output or weights rows)
  bool direct = false;      // a decoding step's few query rows (L <= kAttnDirectRows, no weights, masked_keys = S):
                            // each row's scores as dot products with the keys where they lie, then its weighted sum
                            // of the values, nothing packed (kernels f32_dot_rows, f32_axpy_rows). The same masks
                            // and NaN rules; another order of summation in the scores (a few ulps). Per head it reads
                            // K and V once instead of packing them first: the encoder–decoders' cross-attention
                            // over a 30-second Whisper window, every step.
};

constexpr size_t kAttnDirectRows = 4;  // the most query rows the direct path takes

// One head. Pointers may be null where the shape has no such data.
struct AttnHead {
  const float* q = nullptr;   // (L, hd)
  const float* k = nullptr;   // (S, hd)
  const float* v = nullptr;   // (S, hdv)
  float* out = nullptr;       // (L, hdv), or null: weights only
  float* weights = nullptr;   // (L, S) when shape.weights
  const float* add = nullptr;       // additive mask rows, or null
  const uint8_t* keep = nullptr;    // bool mask rows, or null
  const float* key_add = nullptr;   // additive per key, the same for every row (key_padding_mask), or null
};

// The head of (group, head) for a call: ctx is the caller's.
using AttnHeadFn = AttnHead (*)(const void* ctx, size_t group, size_t head);

// Floats of scratch one thread needs for a call of this shape, or -1 when
// that does not fit in int64 (checked arithmetic: sizes come from users).
int64_t AttnScratchFloats(const AttnShape& shape);

// Runs groups × heads heads. Its per-thread scratch (NumThreads() slabs of
// AttnScratchFloats) comes from the calling thread's workspace
// (core/workspace.h) and is given back before it returns. Fails only to
// allocate that scratch (ERR_OUT_OF_MEMORY).
Status Attend(const AttnShape& shape, size_t groups, size_t heads, AttnHeadFn head_of, const void* ctx);

// The scalar twin: the plain math, one thread, one head at a time:
// scores = scale · (Q Kᵀ) in float, masks, f32_softmax_inplace_ref, O = P · V.
void AttendRef(const AttnShape& shape, size_t groups, size_t heads, AttnHeadFn head_of, const void* ctx);

// Typed front ends: head_of(group, head) → AttnHead, any callable.
template <class F>
Status Attend(const AttnShape& shape, size_t groups, size_t heads, const F& head_of) {
  return Attend(shape, groups, heads,
                [](const void* c, size_t g, size_t h) { return (*static_cast<const F*>(c))(g, h); }, &head_of);
}
template <class F>
void AttendRef(const AttnShape& shape, size_t groups, size_t heads, const F& head_of) {
  AttendRef(shape, groups, heads, [](const void* c, size_t g, size_t h) { return (*static_cast<const F*>(c))(g, h); },
            &head_of);
}

}  // namespace aw
