// The attention core (attention.h): pieces of query rows, K and V packed per
// piece into 64-key chunks, then per block of kQBlock rows the online (flash)
// pass over the chunks it needs, and the weights finished when wanted.
#include "ops/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/parallel.h"
#include "core/size_math.h"
#include "core/tiering.h"
#include "core/workspace.h"
#include "core/tensor.h"
#include "kernels/elementwise.h"
#include "kernels/fill.h"
#include "kernels/gemm.h"
#include "kernels/mask.h"
#include "kernels/softmax.h"

namespace aw {
namespace {

using kernels::kGemmMR;
constexpr size_t kC = kAttnChunk;
constexpr size_t kQBlock = 16;  // query rows that pass over the chunks together (4 micro-tile rows)
static_assert(kC % kernels::kGemmNR == 0 && kC <= kernels::kGemmKC, "a chunk is whole panels and one k block");
static_assert(kAttnRowBlock % kQBlock == 0 && kQBlock % kGemmMR == 0, "blocks nest");

const float kNegInf = -std::numeric_limits<float>::infinity();

// The per-thread scratch of one call, in floats: the parts' sizes and their
// total, computed once in checked arithmetic (AttnScratchFloats reports an
// overflow; Attend runs only shapes whose total fits).
struct Layout {
  int64_t chunks, kpack, vpack, qp, sblk, pp, state, slab, flags, total;  // floats of each part
  explicit Layout(const AttnShape& s) {
    SizeMath m;
    const auto S = int64_t(s.S), hd = int64_t(s.hd), C = int64_t(kC), QB = int64_t(kQBlock);
    chunks = m.Add(S, C - 1) / C;
    kpack = m.Prod({chunks, C, hd});                                                 // K chunks, packed (n = keys)
    vpack = m.Prod({chunks, int64_t(kernels::f32_gemm_packed_cols(s.hdv)), C});       // V chunks, packed (k = keys)
    qp = m.Mul(QB, hd);                                                              // scale · Q block, packed A
    sblk = QB * C;                                                                   // scores of a block and a chunk
    pp = QB * C;                                                                     // probabilities, packed A
    state = 3 * QB;                                                                  // m, l, alpha
    slab = s.weights && s.average ? m.Mul(QB, S) : 0;                                // one head's weights, averaged later
    flags = m.Mul(2, chunks);                                                        // chunk needed by the piece, the block
    total = m.Add(m.Add(m.Add(kpack, vpack), m.Add(qp, sblk)), m.Add(m.Add(pp, state), m.Add(slab, flags)));
    if (m.overflowed()) total = -1;
  }
};

// Keys [0, CausalEnd(sh, i)) are the ones causal lets query row i see:
// i + offset + 1, clamped to [0, S] (the offset may be negative or past S).
size_t CausalEnd(const AttnShape& sh, size_t i) {
  const int64_t end = int64_t(i) + sh.causal_offset + 1;
  return end <= 0 ? 0 : std::min(size_t(end), sh.S);
}

// With a window, the first key query row i sees: i + offset + 1 − window, before CausalEnd's clamp (a band
// |i − j| < w is the window 2w − 1 with the diagonal w − 1 to the right, its end past S on the last rows),
// clamped to [0, S].
size_t WindowStart(const AttnShape& sh, size_t i) {
  const int64_t start = int64_t(i) + sh.causal_offset + 1 - int64_t(sh.window);
  return sh.window && start > 0 ? std::min(size_t(start), sh.S) : 0;
}

// The masks of `head` on scores s (rows lds apart) of query rows
// [i0, i0 + rows) and keys [c0, c0 + n).
void ApplyMasks(const AttnShape& sh, const AttnHead& h, size_t i0, size_t rows, size_t c0, size_t n, float* s,
                size_t lds) {
  const size_t nm = c0 < sh.masked_keys ? std::min(n, sh.masked_keys - c0) : 0;  // masked keys of this block
  if (nm == 0) return;
  for (size_t r = 0; r < rows; ++r) {
    const size_t i = i0 + r;
    float* row = s + r * lds;
    if (sh.causal && c0 + nm > CausalEnd(sh, i)) {
      const size_t from = std::max(c0, CausalEnd(sh, i)) - c0;
      kernels::f32_fill(nm - from, row + from, kNegInf);
    }
    if (sh.causal && sh.window && WindowStart(sh, i) > c0)  // keys before the window
      kernels::f32_fill(std::min(nm, WindowStart(sh, i) - c0), row, kNegInf);
    if (h.add) {
      const float* a = h.add + i * sh.add_ld;
      if (sh.add_cs) {
        kernels::f32_add(nm, row, a + c0);
      } else {  // one value for the row: the same additions as the row broadcast out
        for (size_t j = 0; j < nm; ++j) row[j] += a[0];
      }
    }
    if (h.keep) {
      const uint8_t* k = h.keep + i * sh.keep_ld;
      if (!sh.keep_cs) {
        if ((k[0] != 0) == sh.keep_drops) kernels::f32_fill(nm, row, kNegInf);
      } else if (sh.keep_drops) {
        kernels::f32_mask_drop_u8(nm, row, k + c0);
      } else {
        kernels::f32_mask_keep_u8(nm, row, k + c0);
      }
    }
    if (h.key_add) kernels::f32_add(nm, row, h.key_add + c0);
  }
}

bool HasMasks(const AttnShape& sh, const AttnHead& h) { return sh.causal || h.add || h.keep || h.key_add; }

// No NaN or inf in the piece's query rows, nor in K and V.
bool InputsFinite(const AttnShape& sh, const AttnHead& h, size_t r0, size_t r1) {
  return kernels::f32_all_finite(r1 - r0, sh.hd, h.q + r0 * sh.ldq, sh.ldq) &&
         kernels::f32_all_finite(sh.S, sh.hd, h.k, sh.ldk) &&
         (!h.out || kernels::f32_all_finite(sh.S, sh.hdv, h.v, sh.ldv));
}

// Keys [lo, hi) outside which every key of query row i is masked (-inf,
// a masking byte, or causal), within the masked keys [0, masked_keys).
void LiveKeys(const AttnShape& sh, const AttnHead& h, size_t i, size_t* lo_out, size_t* hi_out) {
  size_t lo = 0, hi = sh.masked_keys;
  if (sh.causal) hi = std::min(hi, CausalEnd(sh, i));
  if (sh.causal && sh.window) lo = std::min(WindowStart(sh, i), hi);
  auto narrow_f = [&](const float* row, size_t cs) {
    if (!cs) {
      if (row[0] == kNegInf) hi = lo;
      return;
    }
    while (lo < hi && row[lo] == kNegInf) ++lo;
    while (hi > lo && row[hi - 1] == kNegInf) --hi;
  };
  if (h.add) narrow_f(h.add + i * sh.add_ld, sh.add_cs);
  if (h.key_add) narrow_f(h.key_add, 1);
  if (h.keep) {
    const uint8_t* row = h.keep + i * sh.keep_ld;
    auto masked = [&](size_t j) { return (row[sh.keep_cs ? j : 0] != 0) == sh.keep_drops; };
    while (lo < hi && masked(lo)) ++lo;
    while (hi > lo && masked(hi - 1)) --hi;
  }
  *lo_out = lo;
  *hi_out = hi;
}

// Marks in `need` (one flag per chunk) the chunks that some row of
// [i0, i0 + rows) may attend to, and returns the end of the keys they may
// attend to (later keys are masked for every row). Without skipping: every
// chunk, and S.
size_t NeededChunks(const AttnShape& sh, const AttnHead& h, bool skip, size_t i0, size_t rows, size_t chunks,
                    float* need) {
  if (!skip) {
    std::fill(need, need + chunks, 1.0f);
    return sh.S;
  }
  std::fill(need, need + chunks, 0.0f);
  size_t lo = SIZE_MAX, hi = 0;
  for (size_t r = 0; r < rows; ++r) {
    size_t a, b;
    LiveKeys(sh, h, i0 + r, &a, &b);
    if (a < b) { lo = std::min(lo, a); hi = std::max(hi, b); }
  }
  if (lo < hi)
    for (size_t c = lo / kC; c * kC < hi; ++c) need[c] = 1.0f;
  for (size_t c = sh.masked_keys / kC; c < chunks; ++c)  // keys past masked_keys: always live
    if ((c + 1) * kC > sh.masked_keys) need[c] = 1.0f;
  return sh.S > sh.masked_keys ? sh.S : lo < hi ? hi : 0;
}

// O rows (rows of hdv) /= l, with 0 for rows that saw no live key (l = 0).
void Normalize(size_t rows, size_t hdv, float* o, size_t ldo, const float* l) {
  for (size_t r = 0; r < rows; ++r) {
    const float inv = l[r] == 0.0f ? 0.0f : 1.0f / l[r];  // NaN l stays NaN
    float* row = o + r * ldo;
    for (size_t j = 0; j < hdv; ++j) row[j] *= inv;
  }
}

// One piece: query rows [r0, r1) of heads [h0, h1) of group g (all of them
// when their weights are averaged), on scratch w. The unit a first call
// tiers up on (core/tiering.h): entered once per piece.
AW_TIER_ENTRY void RunPiece(const AttnShape& sh, size_t g, size_t h0, size_t h1, AttnHeadFn head_of, const void* ctx, size_t r0,
              size_t r1, float* w) {
  const Layout lay(sh);  // (its total fits: Attend checked it)
  const size_t hdv_p = kernels::f32_gemm_packed_cols(sh.hdv);
  const size_t chunks = size_t(lay.chunks);
  float* kpack = w;
  float* vpack = kpack + lay.kpack;
  float* qp = vpack + lay.vpack;
  float* sblk = qp + lay.qp;
  float* pp = sblk + lay.sblk;
  float* m = pp + lay.pp;
  float* l = m + kQBlock;
  float* alpha = l + kQBlock;
  float* slab = alpha + kQBlock;
  float* need = slab + lay.slab;
  float* avg_dst = nullptr;  // averaged weights rows of the group (the heads' shared pointer)

  for (size_t hh = h0; hh < h1; ++hh) {
    const AttnHead h = head_of(ctx, g, hh);
    // Skipping masked chunks is exact only without NaN or inf in the head's inputs.
    const bool skip = HasMasks(sh, h) && (sh.masked_unread || InputsFinite(sh, h, r0, r1));
    // The chunks some row of the piece attends to, packed once for the piece.
    NeededChunks(sh, h, skip, r0, r1 - r0, chunks, need);
    for (size_t c = 0; c < chunks; ++c) {
      if (need[c] == 0.0f) continue;
      const size_t c0 = c * kC, n = std::min(kC, sh.S - c0);
      kernels::f32_gemm_pack_nt(n, sh.hd, h.k + c0 * sh.ldk, sh.ldk, kpack + c * kC * sh.hd);
      if (h.out) kernels::f32_gemm_pack_nn(sh.hdv, n, h.v + c0 * sh.ldv, sh.ldv, vpack + c * hdv_p * kC);
    }
    float* wdst = sh.weights ? (sh.average ? slab : h.weights) : nullptr;
    const size_t ldw = sh.weights && sh.average ? sh.S : sh.ldw;
    if (sh.average && hh == h0) avg_dst = h.weights;

    for (size_t i0 = r0; i0 < r1; i0 += kQBlock) {
      const size_t rows = std::min(kQBlock, r1 - i0);
      kernels::f32_gemm_pack_a(rows, sh.hd, h.q + i0 * sh.ldq, sh.ldq, sh.scale, qp);
      float* out = h.out ? h.out + i0 * sh.ldo : nullptr;
      // This block's scores: in its weights rows when weights are wanted (the
      // online pass reads them there, then they are finished in place).
      float* wb = sh.weights ? wdst + (sh.average ? 0 : i0 * ldw) : nullptr;
      float* sc = wb ? wb : sblk;
      const size_t lds = wb ? ldw : kC;
      // Chunks this block needs (a subset of the piece's).
      float* bneed = need + chunks;
      const size_t live_end = NeededChunks(sh, h, skip, i0, rows, chunks, bneed);
      std::fill(m, m + rows, kNegInf);
      std::fill(l, l + rows, 0.0f);
      bool first = true;
      for (size_t c = 0; c < chunks; ++c) {
        const size_t c0 = c * kC, n = std::min(kC, sh.S - c0);
        float* s = sc + (wb ? c0 : 0);
        if (bneed[c] == 0.0f) {  // every row of the block has every key of the chunk masked
          if (wb) for (size_t r = 0; r < rows; ++r) kernels::f32_fill(n, s + r * lds, kNegInf);
          continue;
        }
        // The chunk's keys up to the block's live end (the rest is masked
        // for every row: a causal diagonal chunk, trailing padding).
        const size_t nl = std::min(n, live_end - c0);
        if (wb && nl < n)
          for (size_t r = 0; r < rows; ++r) kernels::f32_fill(n - nl, s + r * lds + nl, kNegInf);
        kernels::f32_gemm_pp(rows, nl, sh.hd, s, lds, qp, kpack + c * kC * sh.hd, sh.hd, nullptr, false);
        ApplyMasks(sh, h, i0, rows, c0, nl, s, lds);
        kernels::f32_softmax_online(rows, nl, s, lds, m, l, alpha, pp);
        if (out) kernels::f32_gemm_pp(rows, sh.hdv, nl, out, sh.ldo, pp, vpack + c * hdv_p * kC, n, alpha, !first);
        first = false;
      }
      if (out) {
        if (first) {
          for (size_t r = 0; r < rows; ++r) kernels::f32_fill(sh.hdv, out + r * sh.ldo, 0.0f);
        } else {
          Normalize(rows, sh.hdv, out, sh.ldo, l);
        }
      }
      if (!wb) continue;
      for (size_t r = 0; r < rows; ++r) kernels::f32_softmax_finish(sh.S, wb + r * ldw, m[r], l[r]);
      if (sh.average) {  // the group's weights rows: head 0 copies, the others add
        float* dst = avg_dst + i0 * sh.ldw;
        for (size_t r = 0; r < rows; ++r) {
          if (hh == h0) std::copy(wb + r * ldw, wb + r * ldw + sh.S, dst + r * sh.ldw);
          else kernels::f32_add(sh.S, dst + r * sh.ldw, wb + r * ldw);
        }
      }
    }
  }
  if (sh.weights && sh.average && avg_dst) {  // mean over heads, as torch's mean(dim=1): sum / H
    const float hf = float(h1 - h0);
    for (size_t i = r0; i < r1; ++i)
      for (size_t j = 0; j < sh.S; ++j) avg_dst[i * sh.ldw + j] /= hf;
  }
}

// The direct path (AttnShape::direct): query rows [r0, r1) of heads [h0, h1) of group g, each on its own: the
// scores of its live keys as dot products with K's rows in place, the masks, the online softmax over them all at
// once, the probabilities times V's rows in place, divided by the sum. The same rules as RunPiece: keys outside the
// live range are skipped only when the head's inputs are finite; a row with no live key gives zeros.
AW_TIER_ENTRY void DirectPiece(const AttnShape& sh, size_t g, size_t h0, size_t h1, AttnHeadFn head_of, const void* ctx,
                               size_t r0, size_t r1, float* w) {
  float* qs = w;            // hd: the row times scale, as f32_gemm_pack_a scales it
  float* s = qs + sh.hd;    // S: its scores
  float* p = s + sh.S;      // S · MR: its probabilities (f32_softmax_online's packed-A layout: p[j · MR])
  for (size_t hh = h0; hh < h1; ++hh) {
    const AttnHead h = head_of(ctx, g, hh);
    const bool skip = HasMasks(sh, h) && (sh.masked_unread || InputsFinite(sh, h, r0, r1));
    for (size_t i = r0; i < r1; ++i) {
      float* out = h.out + i * sh.ldo;
      size_t lo = 0, hi = sh.S;
      if (skip) LiveKeys(sh, h, i, &lo, &hi);
      if (lo >= hi) {
        kernels::f32_fill(sh.hdv, out, 0.0f);
        continue;
      }
      const size_t n = hi - lo;
      for (size_t t = 0; t < sh.hd; ++t) qs[t] = sh.scale * h.q[i * sh.ldq + t];
      kernels::f32_dot_rows(n, sh.hd, h.k + lo * sh.ldk, sh.ldk, qs, s);
      ApplyMasks(sh, h, i, 1, lo, n, s, n);
      float m = kNegInf, l = 0.0f, alpha = 1.0f;
      kernels::f32_softmax_online(1, n, s, n, &m, &l, &alpha, p);
      kernels::f32_fill(sh.hdv, out, 0.0f);
      kernels::f32_axpy_rows(n, sh.hdv, h.v + lo * sh.ldv, sh.ldv, p, kGemmMR, out);
      Normalize(1, sh.hdv, out, sh.ldo, &l);
    }
  }
}

}  // namespace

int64_t AttnScratchFloats(const AttnShape& sh) { return Layout(sh).total; }

Status Attend(const AttnShape& sh, size_t groups, size_t heads, AttnHeadFn head_of, const void* ctx) {
  if (groups == 0 || heads == 0 || sh.L == 0) return Status::OK();
  const int64_t per_thread = AttnScratchFloats(sh);
  SizeMath sm;
  const int64_t floats = sm.Mul(int64_t(NumThreads()), per_thread);
  if (per_thread < 0 || sm.overflowed() || floats > kMaxElements)
    return OomError("out of memory: attention scratch too large");
  ScratchScope scope;
  float* base = nullptr;
  AW_RETURN_IF_ERROR(scope.Take(size_t(floats), "attention scratch", &base));
  // Units of work: (group, head) — or whole groups when their heads'
  // weights are averaged into shared rows — times blocks of query rows.
  const size_t per_unit = sh.average ? heads : 1;
  const size_t units = groups * (heads / per_unit);
  // A piece's work in multiply-adds, to hand each thread at least ~2^16.
  const size_t piece = per_unit * std::min(sh.L, kAttnRowBlock) * std::max<size_t>(sh.S, 1) * (sh.hd + sh.hdv + 1);
  const size_t grain = sh.serial ? SIZE_MAX : (size_t(1) << 16) / std::max<size_t>(piece, 1) + 1;
  // The direct path's scratch (hd + S + S·MR floats) fits in the packed path's (K and V packed, at least S · (hd +
  // NR), and a Q block).
  const bool direct = sh.direct && !sh.weights && sh.masked_keys == sh.S && sh.L <= kAttnDirectRows;
  const auto run_piece = direct ? TierEntry<&DirectPiece>() : TierEntry<&RunPiece>();
  ParallelForRowBlocks(units, sh.L, kAttnRowBlock, grain, [&](size_t u, size_t r0, size_t r1, int tid) {
    const size_t g = sh.average ? u : u / heads, h0 = sh.average ? 0 : u % heads;
    run_piece(sh, g, h0, h0 + per_unit, head_of, ctx, r0, r1, base + size_t(tid) * size_t(per_thread));
  });
  return Status::OK();
}

}  // namespace aw
