// Validate → run, as ATen's SDPA: shapes and masks are checked with
// user-facing messages first, then each output batch entry is one head of the
// attention core (ops/attention.h), which chooses its way (online or exact
// weights) and skips fully masked key chunks.
#include "ops/scaled_dot_product_attention.h"

#include <cmath>
#include <cstdint>

#include "core/broadcast.h"
#include "core/rules.h"
#include "ops/attention.h"

namespace aw {
namespace {

Shape BatchDims(const Shape& s) { return Shape(s.begin(), s.end() - 2); }

Status CheckInput(const TensorView& t, const char* name) {
  AW_RETURN_IF_ERROR(CheckShape(name, t.shape));
  if (t.shape.size() < 2)
    return ShapeError(std::string(name) + ": expected at least 2 dims (…, " +
                      (name[0] == 'q' ? "L" : "S") + ", E), got " + ShapeStr(t.shape));
  return Status::OK();
}

// Whether the query's bytes overlap the key's, the value's or the mask's.
bool SharesMemory(const TensorView& q, const TensorView& k, const TensorView& v, const MaskView& m) {
  const auto lo = [](const void* p) { return reinterpret_cast<uintptr_t>(p); };
  const auto overlaps = [&](const void* p, int64_t bytes) {
    return p != nullptr && bytes > 0 && lo(p) < lo(q.data) + uintptr_t(NumelChecked(q.shape)) * sizeof(float) &&
           lo(q.data) < lo(p) + uintptr_t(bytes);
  };
  const int64_t mask_bytes = m.present() ? NumelChecked(m.shape) * (m.dtype == DType::kBool ? 1 : 4) : 0;
  return overlaps(k.data, NumelChecked(k.shape) * 4) || overlaps(v.data, NumelChecked(v.shape) * 4) ||
         overlaps(m.data, mask_bytes);
}

const char* CausalBiasName(CausalBias c) {
  return c == CausalBias::kLowerRight ? "causalLowerRight" : "causalUpperLeft";
}

}  // namespace

Status CheckCausalBias(int64_t L, int64_t S) {
  AW_RETURN_IF_ERROR(IntInRange("L", L, 0, kMaxElements));
  return IntInRange("S", S, 0, kMaxElements);
}

Status ScaledDotProductAttention(const TensorView& q, const TensorView& k, const TensorView& v,
                                 const SdpaOptions& o, SdpaResult* r) {
  AW_RETURN_IF_ERROR(CheckInput(q, "query"));
  AW_RETURN_IF_ERROR(CheckInput(k, "key"));
  AW_RETURN_IF_ERROR(CheckInput(v, "value"));
  const int64_t L = q.shape.end()[-2], E = q.shape.back();
  const int64_t S = k.shape.end()[-2], Ev = v.shape.back();
  if (k.shape.back() != E)
    return ShapeError("key: expected last dim E = " + std::to_string(E) +
                      " (query's), got " + ShapeStr(k.shape));
  if (v.shape.end()[-2] != S)
    return ShapeError("value: expected dim -2 S = " + std::to_string(S) +
                      " (key's), got " + ShapeStr(v.shape));
  if (o.dropout_p != 0.0)
    return ArgError("dropoutP: expected 0 (attnwasm is an inference runtime), got " +
                    NumStr(o.dropout_p));
  const bool bias = o.causal_bias != CausalBias::kNone;
  if (o.is_causal && (o.attn_mask.present() || bias))
    return ArgError("attnMask: must not be set when isCausal is true (as in torch)");
  if (bias) {
    AW_RETURN_IF_ERROR(CheckCausalBias(o.causal_bias_l, o.causal_bias_s));
    if (o.attn_mask.present()) return ArgError("attnMask: a causal bias and a mask tensor at once");
    if (o.causal_bias_l != L || o.causal_bias_s != S)
      return ShapeError("attnMask: " + std::string(CausalBiasName(o.causal_bias)) + "(" +
                        std::to_string(o.causal_bias_l) + ", " + std::to_string(o.causal_bias_s) +
                        ") does not match the call's (L, S) = (" + std::to_string(L) + ", " + std::to_string(S) + ")");
  }

  // Batch dims, with grouped-query attention widening key/value heads (dim -3).
  Shape qb = BatchDims(q.shape), kb = BatchDims(k.shape), vb = BatchDims(v.shape);
  Shape kb_wide = kb, vb_wide = vb;
  int64_t k_group = 1, v_group = 1;
  if (o.enable_gqa) {
    if (qb.empty() || kb.empty() || vb.empty())
      return ShapeError("enableGqa: expected query, key and value with a heads dim (…, H, L, E), got " +
                        ShapeStr(q.shape) + ", " + ShapeStr(k.shape) + ", " + ShapeStr(v.shape));
    const int64_t hq = qb.back(), hk = kb.back(), hv = vb.back();
    if (hk == 0 || hq % hk != 0)
      return ShapeError("key: with enableGqa the query heads (" + std::to_string(hq) +
                        ") must be a multiple of the key heads, got key " + ShapeStr(k.shape));
    if (hv == 0 || hq % hv != 0)
      return ShapeError("value: with enableGqa the query heads (" + std::to_string(hq) +
                        ") must be a multiple of the value heads, got value " + ShapeStr(v.shape));
    k_group = hq / hk; v_group = hq / hv;
    kb_wide.back() = hq; vb_wide.back() = hq;
  }
  Shape wb, ob;  // weights batch dims, output batch dims
  if (!BroadcastShapes(qb, kb_wide, &wb))
    return ShapeError("key: batch dims " + ShapeStr(kb) + " do not broadcast with query's " +
                      ShapeStr(qb));
  if (!BroadcastShapes(wb, vb_wide, &ob))
    return ShapeError("value: batch dims " + ShapeStr(vb) + " do not broadcast with " +
                      ShapeStr(wb) + " (query and key)");

  Shape w_shape = wb; w_shape.push_back(L); w_shape.push_back(S);
  Shape o_shape = ob; o_shape.push_back(L); o_shape.push_back(Ev);
  if (NumelChecked(w_shape) < 0 || NumelChecked(o_shape) < 0)
    return ShapeError("attention of shape " + ShapeStr(w_shape) + " → " + ShapeStr(o_shape) +
                      " exceeds 2^29 elements");

  // Mask: must broadcast into the weights (…, L, S) without enlarging them.
  const MaskView& m = o.attn_mask;
  int64_t m_rows = 0;  // 1 or L
  bool m_per_row = false;  // one value per row, broadcast over the keys
  Shape mb;
  if (m.present()) {
    if (m.dtype != DType::kF32 && m.dtype != DType::kBool)
      return DtypeError("attnMask: expected bool or float32");
    AW_RETURN_IF_ERROR(CheckShape("attnMask", m.shape));
    if (!BroadcastsInto(m.shape, w_shape))
      return ShapeError("attnMask: expected a shape broadcastable to the attention weights " +
                        ShapeStr(w_shape) + " with no more dims, got " + ShapeStr(m.shape));
    Shape ms = m.shape;
    while (ms.size() < 2) ms.insert(ms.begin(), 1);
    m_rows = ms.end()[-2];
    mb = BatchDims(ms);
    m_per_row = ms.back() == 1 && S > 1;
  }

  const float scale = o.has_scale ? float(o.scale) : float(1.0 / std::sqrt(double(E)));
  // Over the query: equal shapes make every output entry its own query entry
  // (no broadcast), with the same row stride (Ev = E); never when the query's
  // memory is also the key's, the value's or the mask's (q = k = v passed as
  // one array is copied in once).
  float* out_base = nullptr;
  if (o.output_over_query && o_shape == q.shape && !SharesMemory(q, k, v, m)) {
    r->output.Release();
    out_base = const_cast<float*>(q.data);
  } else {
    AW_RETURN_IF_ERROR(r->output.Resize(size_t(NumelChecked(o_shape)), "attention output"));
    out_base = r->output.data();
  }
  r->output_data = out_base;
  r->output_shape = o_shape;
  if (o.need_weights) {
    AW_RETURN_IF_ERROR(r->weights.Resize(size_t(NumelChecked(w_shape)), "attention weights"));
    r->weights_shape = w_shape;
  } else {
    r->weights.Release();
    r->weights_shape.clear();
  }
  const int64_t n_out = NumelChecked(ob);
  // An empty output (value has a 0 batch dim, or Ev = 0 and value's batch has
  // more than 2^29 entries) can still have non-empty weights, as in torch's
  // math path: then the loop runs over the weights' batch and skips P·V.
  const bool weights_only = n_out <= 0 && o.need_weights && r->weights.size() > 0;
  const Shape& lb = weights_only ? wb : ob;  // the batch the loop runs over
  const int64_t n_loop = weights_only ? NumelChecked(wb) : n_out;
  if (n_loop <= 0 || L == 0) return Status::OK();

  // One head per batch entry of the loop, through the attention core
  // (ops/attention.h). Entries write disjoint output rows, and disjoint
  // weights rows unless value's batch dims widen the output beyond the
  // weights: then entries share weights rows and run on one thread.
  const BroadcastIndex qi(qb, lb), ki(kb, lb, k_group), vi(weights_only ? Shape() : vb, lb, v_group),
      wi(wb, lb), mi(mb, lb);
  AttnShape sh;
  sh.L = size_t(L); sh.S = size_t(S); sh.hd = size_t(E); sh.hdv = weights_only ? 0 : size_t(Ev);
  sh.ldq = size_t(E); sh.ldk = size_t(E); sh.ldv = size_t(Ev); sh.ldo = size_t(Ev); sh.ldw = size_t(S);
  sh.scale = scale;
  sh.causal = o.is_causal || bias;
  sh.causal_offset = o.causal_bias == CausalBias::kLowerRight ? S - L : 0;
  sh.masked_keys = size_t(S);
  const size_t mask_cols = m_per_row ? 1 : size_t(S);  // values per mask row
  const size_t mask_ld = m_rows == 1 ? 0 : mask_cols;
  const bool keep = m.present() && m.dtype == DType::kBool;
  sh.add_ld = keep ? 0 : mask_ld;
  sh.keep_ld = keep ? mask_ld : 0;
  sh.add_cs = sh.keep_cs = m_per_row ? 0 : 1;
  sh.weights = o.need_weights;
  sh.serial = o.need_weights && NumelChecked(wb) != n_loop;
  auto head = [&](size_t g, size_t) {
    const int64_t b = int64_t(g);
    AttnHead h;
    h.q = q.data + qi.Block(b) * L * E;
    h.k = k.data + ki.Block(b) * S * E;
    if (!weights_only) {
      h.v = v.data + vi.Block(b) * S * Ev;
      h.out = out_base + b * L * Ev;
    }
    if (o.need_weights) h.weights = r->weights.data() + wi.Block(b) * L * S;
    if (m.present()) {
      const int64_t off = mi.Block(b) * m_rows * int64_t(mask_cols);
      if (keep) h.keep = static_cast<const uint8_t*>(m.data) + off;
      else h.add = static_cast<const float*>(m.data) + off;
    }
    return h;
  };
  AW_RETURN_IF_ERROR(Attend(sh, size_t(n_loop), 1, head));
  return Status::OK();
}

}  // namespace aw
