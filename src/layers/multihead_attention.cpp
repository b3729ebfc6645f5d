// MultiheadAttention forward, following F.multi_head_attention_forward of
// PyTorch 2.x step by step, without transposes: inputs are addressed through
// row strides, so (L, N, E) and (N, L, E) layouts feed the same GEMMs.
//
//   Q (N, L, E)   = query · Wq^T + bq            (per batch n, rows strided)
//   K (N, S', E)  = key · Wk^T + bk [; bias_k] [; 0]     S' = S + add_bias_kv + add_zero_attn
//   V (N, S', E)  = value · Wv^T + bv [; bias_v] [; 0]
//   per (n, h): P (L, S') = softmax(Q_nh K_nh^T / sqrt(hd) + attn_mask + key_padding_mask)
//               A_nh (L, hd) = P · V_nh
//   out = A · Wo^T + bo, written in the query's layout
#include "layers/multihead_attention.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "core/parallel.h"
#include "core/rules.h"
#include "core/size_math.h"
#include "core/workspace.h"
#include "kernels/gemm.h"
#include "kernels/fill.h"
#include "layers/entry_pieces.h"
#include "ops/parallel_gemm.h"

namespace aw {
namespace {

// A bool key_padding_mask (N, S) as its additive form (true → -inf), into
// `out`; a float one is used in place.
void AdditiveKpm(const uint8_t* b, size_t n, float* out) {
  const float neg_inf = -std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < n; ++i) out[i] = b[i] ? neg_inf : 0.0f;
}

std::string Dim(const char* name, int64_t v) { return std::string(name) + " = " + std::to_string(v); }

}  // namespace

Status MultiheadAttention::Init(const MhaConfig& config, Rng& rng) {
  MhaConfig c = config;
  // embedDim bounded before any size arithmetic (3 * embed_dim below overflows int64 near 2^62).
  AW_RETURN_IF_ERROR(IntInRange("embedDim", c.embed_dim, 1, kMaxElements));
  AW_RETURN_IF_ERROR(PositiveInt("numHeads", c.num_heads));
  AW_RETURN_IF_ERROR(DivisibleBy("embedDim", c.embed_dim, "numHeads", c.num_heads));
  if (c.kdim) AW_RETURN_IF_ERROR(PositiveInt("kdim", *c.kdim));
  if (c.vdim) AW_RETURN_IF_ERROR(PositiveInt("vdim", *c.vdim));
  AW_RETURN_IF_ERROR(Probability("dropout", c.dropout));
  c.kdim = kdim_ = c.kdim.value_or(c.embed_dim);
  c.vdim = vdim_ = c.vdim.value_or(c.embed_dim);
  cfg_ = c;
  const int64_t E = c.embed_dim;
  // Registration order = torch's: in-projection, in_proj_bias, bias_k/v, then out_proj.
  // torch's _reset_parameters: xavier_uniform_ on (out, in), zero biases,
  // xavier_normal_ on bias_k/bias_v; out_proj keeps Linear's init, bias zeroed.
  auto xavier = [&](float* p, int64_t fan_out, int64_t fan_in) {
    rng.FillUniform(p, fan_out * fan_in, std::sqrt(6.0 / double(fan_in + fan_out)));
  };
  if (kdim_ == E && vdim_ == E) {
    AW_RETURN_IF_ERROR(AddParam("in_proj_weight", {3 * E, E}, &w_in_));
    xavier(w_in_, 3 * E, E);
    wq_ = w_in_; wk_ = w_in_ + E * E; wv_ = w_in_ + 2 * E * E;
  } else {
    AW_RETURN_IF_ERROR(AddParam("q_proj_weight", {E, E}, &wq_));
    AW_RETURN_IF_ERROR(AddParam("k_proj_weight", {E, kdim_}, &wk_));
    AW_RETURN_IF_ERROR(AddParam("v_proj_weight", {E, vdim_}, &wv_));
    xavier(wq_, E, E); xavier(wk_, E, kdim_); xavier(wv_, E, vdim_);
  }
  if (c.bias) {
    AW_RETURN_IF_ERROR(AddParam("in_proj_bias", {3 * E}, &b_in_));
    kernels::f32_fill(size_t(3 * E), b_in_, 0.0f);
  }
  if (c.add_bias_kv) {
    AW_RETURN_IF_ERROR(AddParam("bias_k", {1, 1, E}, &bias_k_));
    AW_RETURN_IF_ERROR(AddParam("bias_v", {1, 1, E}, &bias_v_));
    rng.FillNormal(bias_k_, E, std::sqrt(2.0 / double(2 * E)));
    rng.FillNormal(bias_v_, E, std::sqrt(2.0 / double(2 * E)));
  }
  AW_RETURN_IF_ERROR(out_proj_.Init(E, E, c.bias, rng));
  out_proj_.ZeroBias();
  AddChild("out_proj", &out_proj_);
  if (w_in_ && size_t(E) % kernels::kGemmNR == 0) {
    AW_RETURN_IF_ERROR(packed_in_.Resize(kernels::f32_gemm_packed_floats(size_t(3 * E), size_t(E)), "packed in_proj_weight"));
  } else {
    AW_RETURN_IF_ERROR(packed_q_.Resize(kernels::f32_gemm_packed_floats(size_t(E), size_t(E)), "packed q weight"));
    AW_RETURN_IF_ERROR(packed_k_.Resize(kernels::f32_gemm_packed_floats(size_t(E), size_t(kdim_)), "packed k weight"));
    AW_RETURN_IF_ERROR(packed_v_.Resize(kernels::f32_gemm_packed_floats(size_t(E), size_t(vdim_)), "packed v weight"));
  }
  if (rng.fills()) OnParamsLoaded();  // else the load packs
  return Status::OK();
}

void MultiheadAttention::OnParamsLoaded() {
  const size_t E = size_t(cfg_.embed_dim);
  if (packed_in_.size()) {
    kernels::f32_gemm_pack_nt(3 * E, E, w_in_, E, packed_in_.data());
  } else {
    kernels::f32_gemm_pack_nt(E, E, wq_, E, packed_q_.data());
    kernels::f32_gemm_pack_nt(E, size_t(kdim_), wk_, size_t(kdim_), packed_k_.data());
    kernels::f32_gemm_pack_nt(E, size_t(vdim_), wv_, size_t(vdim_), packed_v_.data());
  }
}

MultiheadAttention::PackedProj MultiheadAttention::Packed(Proj which) const {
  const size_t E = size_t(cfg_.embed_dim);
  if (packed_in_.size()) return {packed_in_.data(), 3 * E, size_t(which) * E};
  return {(which == Proj::kQ ? packed_q_ : which == Proj::kK ? packed_k_ : packed_v_).data(), E, 0};
}

Status MultiheadAttention::Check(const TensorView& query, const TensorView& key, const TensorView& value,
                                 const MhaForwardOptions& o, MhaPlan* plan) const {
  const MhaConfig& c = cfg_;
  const int64_t E = c.embed_dim, H = c.num_heads;
  // ---- validate (torch's _mha_shape_check and the checks that follow it) ----
  const MhaForwardOptions::Names& nm = o.names;
  AW_RETURN_IF_ERROR(CheckShape(nm.query, query.shape));
  AW_RETURN_IF_ERROR(CheckShape(nm.key, key.shape));
  AW_RETURN_IF_ERROR(CheckShape(nm.value, value.shape));
  if (o.key_padding_mask.present()) AW_RETURN_IF_ERROR(CheckShape(nm.key_padding_mask, o.key_padding_mask.shape));
  if (o.attn_mask.present()) AW_RETURN_IF_ERROR(CheckShape(nm.attn_mask, o.attn_mask.shape));
  const size_t qd = query.shape.size();
  if (qd != 2 && qd != 3)
    return ShapeError(std::string(nm.query) + ": expected a 3-D (batched) or 2-D (unbatched) tensor, got " +
                      ShapeStr(query.shape));
  const bool batched = qd == 3;
  const char* layout = !batched ? "(S, " : (c.batch_first ? "(N, S, " : "(S, N, ");
  if (key.shape.size() != qd)
    return ShapeError(std::string(nm.key) + ": expected " + std::to_string(qd) + "-D " + layout + "kdim) for a " +
                      std::to_string(qd) + "-D query, got " + ShapeStr(key.shape));
  if (value.shape.size() != qd)
    return ShapeError(std::string(nm.value) + ": expected " + std::to_string(qd) + "-D " + layout + "vdim) for a " +
                      std::to_string(qd) + "-D query, got " + ShapeStr(value.shape));
  const int ti = batched && c.batch_first ? 1 : 0;  // time axis
  const int64_t N = batched ? query.shape[size_t(1 - ti)] : 1;
  const int64_t L = query.shape[size_t(ti)];
  const int64_t S = key.shape[size_t(ti)];
  if (query.shape.back() != E)
    return ShapeError(std::string(nm.query) + ": expected last dim " + Dim("embedDim", E) + ", got " + ShapeStr(query.shape));
  if (batched && key.shape[size_t(1 - ti)] != N)
    return ShapeError(std::string(nm.key) + ": expected batch size N = " + std::to_string(N) + " (" + nm.query + "'s), got " + ShapeStr(key.shape));
  if (key.shape.back() != kdim_)
    return ShapeError(std::string(nm.key) + ": expected last dim " + Dim("kdim", kdim_) + ", got " + ShapeStr(key.shape));
  Shape want_v = key.shape; want_v.back() = vdim_;
  if (value.shape != want_v)
    return ShapeError(std::string(nm.value) + ": expected " + ShapeStr(want_v) + " (" + nm.key + "'s sequence and batch dims, vdim = " +
                      std::to_string(vdim_) + "), got " + ShapeStr(value.shape));
  const MaskView& kpm = o.key_padding_mask;
  const MaskView& am = o.attn_mask;
  if (kpm.present()) {
    if (kpm.dtype != DType::kF32 && kpm.dtype != DType::kBool) return DtypeError(std::string(nm.key_padding_mask) + ": expected bool or float32");
    const Shape want = batched ? Shape{N, S} : Shape{S};
    if (kpm.shape != want)
      return ShapeError(std::string(nm.key_padding_mask) + ": expected " + ShapeStr(want) + (batched ? " = (N, S)" : " = (S)") + ", got " +
                        ShapeStr(kpm.shape));
  }
  // Every size below, computed once with checked arithmetic (core/size_math.h)
  // before it bounds a loop or forms an offset. Each dim is <= 2^29 (CheckShape
  // bounds the product of a shape's nonzero dims), but products of several
  // tensors' dims can exceed any bound.
  SizeMath sm;
  const int64_t NH = sm.Mul(N, H);
  const int64_t S2 = sm.Add(S, (c.add_bias_kv ? 1 : 0) + (c.add_zero_attn ? 1 : 0));  // keys incl. appended
  if (sm.overflowed())
    return ShapeError(std::string(nm.query) + " " + ShapeStr(query.shape) + ", " + nm.key + " " + ShapeStr(key.shape) +
                      ": sizes overflow");
  if (am.present()) {
    if (am.dtype != DType::kF32 && am.dtype != DType::kBool) return DtypeError(std::string(nm.attn_mask) + ": expected bool or float32");
    const Shape want2{L, S}, want3{NH, L, S};
    if (am.shape != want2 && am.shape != want3)
      return ShapeError(std::string(nm.attn_mask) + ": expected (L, S) = " + ShapeStr(want2) + " or " +
                        (batched ? "(N*numHeads, L, S) = " : "(numHeads, L, S) = ") + ShapeStr(want3) + ", got " +
                        ShapeStr(am.shape));
  }
  if (o.is_causal && !am.present())
    return ArgError(std::string(nm.is_causal) + ": is a hint that " + nm.attn_mask + " is the causal mask and needs " +
                    nm.attn_mask + " (as in torch); pass " + nm.attn_mask + ": generateSquareSubsequentMask(L)");

  const bool appended = c.add_bias_kv || c.add_zero_attn;
  MhaPlan& p = *plan;
  p.N = N; p.L = L; p.S = S; p.S2 = S2;
  p.batched = batched;
  p.seq_first = batched && !c.batch_first;
  p.key_is_query = key.data == query.data && key.shape == query.shape;
  p.value_is_key = value.data == key.data && value.shape == key.shape;
  p.kv_one = packed_in_.size() && p.value_is_key && !appended;
  p.fused = p.kv_one && p.key_is_query;
  p.need_weights = o.need_weights;
  p.average = o.need_weights && o.average_attn_weights;
  p.bool_kpm = kpm.present() && kpm.dtype == DType::kBool;
  p.causal = o.causal;
  p.output_shape = query.shape;
  p.weights_shape.clear();
  if (o.need_weights) {
    p.weights_shape = o.average_attn_weights ? Shape{L, S2} : Shape{H, L, S2};
    if (batched) p.weights_shape.insert(p.weights_shape.begin(), N);
  }
  // Buffers hold at most 2^29 elements (the wasm heap): the outputs, and
  // the projections of one batch entry (a piece holds whole entries).
  if (NumelChecked(p.weights_shape) < 0)
    return ShapeError("attention weights " + ShapeStr(p.weights_shape) + " exceed 2^29 elements");
  if (sm.Prod({L, E, 3}) > kMaxElements || sm.Prod({S2, E, 2}) > kMaxElements || sm.overflowed())
    return ShapeError("projected keys and values of one batch entry (S', 2·embedDim) = " + ShapeStr({S2, 2 * E}) +
                      " or queries (L, 3·embedDim) = " + ShapeStr({L, 3 * E}) + " exceed 2^29 elements");
  return Status::OK();
}

Status MultiheadAttention::Forward(const TensorView& query, const TensorView& key, const TensorView& value,
                                   const MhaForwardOptions& o, MhaResult* r) {
  MhaPlan p;
  AW_RETURN_IF_ERROR(Check(query, key, value, o, &p));
  AW_RETURN_IF_ERROR(r->output.Resize(size_t(NumelChecked(p.output_shape)), "output"));
  r->output_shape = p.output_shape;
  if (o.need_weights) AW_RETURN_IF_ERROR(r->weights.Resize(size_t(NumelChecked(p.weights_shape)), "attention weights"));
  else r->weights.Release();
  r->weights_shape = p.weights_shape;
  return Run(p, query, key, value, o, r->output.data(), o.need_weights ? r->weights.data() : nullptr);
}

Status MultiheadAttention::ForwardInto(const TensorView& query, const TensorView& key, const TensorView& value,
                                       const MhaForwardOptions& o, float* out, float* weights) {
  MhaPlan p;
  AW_RETURN_IF_ERROR(Check(query, key, value, o, &p));
  return Run(p, query, key, value, o, out, weights);
}

// Scratch per batch entry, in floats: the projections (a self-attention's
// q, k, v rows of 3E; a cross-attention's q rows of E and k, v rows of 2E;
// otherwise q, k, v one by one with the appended keys) and the attention
// output before out_proj.
size_t MultiheadAttention::ScratchPerEntry(const MhaPlan& p) const {
  const size_t E = size_t(cfg_.embed_dim), L = size_t(p.L), S = size_t(p.S), S2 = size_t(p.S2);
  const size_t proj = p.fused ? L * 3 * E : p.kv_one ? L * E + S * 2 * E : (L + 2 * S2) * E;
  return (proj + L * E) * sizeof(float);
}

// With seq-first inputs a piece's rows are gathered first: its query, key
// and value rows (each distinct tensor once) and its output rows.
size_t MultiheadAttention::GatherPerEntry(const MhaPlan& p) const {
  const size_t E = size_t(cfg_.embed_dim), L = size_t(p.L), S = size_t(p.S);
  size_t n = 2 * L * E;  // query rows, output rows
  if (!p.key_is_query) n += S * size_t(kdim_);
  if (!p.value_is_key && !(p.key_is_query && p.value_is_key)) n += S * size_t(vdim_);
  return n * sizeof(float);
}

size_t MultiheadAttention::ScratchFixed(const MhaPlan& p) const {
  const int64_t core = AttnScratchFloats(CoreShape(p, p.N));
  const size_t kpm = p.bool_kpm ? size_t(p.N * p.S) : 0;
  return (size_t(std::max<int64_t>(core, 0)) * size_t(NumThreads()) + kpm) * sizeof(float);
}

AttnShape MultiheadAttention::CoreShape(const MhaPlan& p, int64_t n) const {
  const int64_t E = cfg_.embed_dim, hd = E / cfg_.num_heads;
  const bool appended = cfg_.add_bias_kv || cfg_.add_zero_attn;
  // Row t of entry b is row first(b) + t·step of its tensor; the projections
  // keep the inputs' row order (q rows of 3E when fused), appended keys make
  // K and V entry-major.
  const size_t step = p.seq_first ? size_t(n) : 1;
  const size_t ldq = p.fused ? size_t(3 * E) : size_t(E);
  const size_t kv_ld = p.fused ? size_t(3 * E) : p.kv_one ? size_t(2 * E) : size_t(E);
  AttnShape sh;
  sh.L = size_t(p.L); sh.S = size_t(p.S2); sh.hd = sh.hdv = size_t(hd);
  sh.ldq = step * ldq;
  sh.ldk = sh.ldv = (appended ? 1 : step) * kv_ld;
  sh.ldo = step * size_t(E);
  sh.ldw = size_t(p.S2);
  sh.scale = float(1.0 / std::sqrt(double(hd)));
  sh.masked_keys = size_t(p.S);  // appended bias_k / zero keys are never masked
  sh.add_ld = sh.keep_ld = size_t(p.S);
  sh.keep_drops = true;          // MultiheadAttention's bool masks: true = masked
  sh.causal = p.causal;
  sh.weights = p.need_weights;
  sh.average = p.average;
  return sh;
}

Status MultiheadAttention::Run(const MhaPlan& p, const TensorView& query, const TensorView& key,
                               const TensorView& value, const MhaForwardOptions& o, float* out, float* weights) {
  if (p.N == 0 || p.L == 0) return Status::OK();
  const int64_t E = cfg_.embed_dim, H = cfg_.num_heads, N = p.N, L = p.L, S = p.S;
  ScratchScope scope;
  // key_padding_mask: additive, converted once for every entry when bool.
  const float* kpmf = nullptr;
  if (o.key_padding_mask.present()) {
    if (p.bool_kpm) {
      float* conv = nullptr;
      AW_RETURN_IF_ERROR(scope.Take(size_t(N * S), "key padding mask", &conv));
      AdditiveKpm(static_cast<const uint8_t*>(o.key_padding_mask.data), size_t(N * S), conv);
      kpmf = conv;
    } else {
      kpmf = static_cast<const float*>(o.key_padding_mask.data);
    }
  }
  // Pieces of whole batch entries within the working-memory budget.
  const size_t fixed = ScratchFixed(p) - (p.bool_kpm ? size_t(N * S) * sizeof(float) : 0);
  size_t P = WorkPieceEntries(size_t(N), ScratchPerEntry(p), fixed);
  if (P < size_t(N) && p.seq_first) P = WorkPieceEntries(size_t(N), ScratchPerEntry(p) + GatherPerEntry(p), fixed);
  if (P == size_t(N))
    return RunEntries(p, N, query.data, key.data, value.data, o.attn_mask, kpmf, out, weights, o);
  // (L, N, E), (S, N, kdim), (S, N, vdim) or batch-first: the layouts pieces are cut from.
  const SeqLayout lq = LayoutOf(query.shape, !p.seq_first), lk = LayoutOf(key.shape, !p.seq_first),
                  lv = LayoutOf(value.shape, !p.seq_first), lo{N, L, E, p.seq_first};
  const int64_t w_per_entry = p.need_weights ? NumelChecked(p.weights_shape) / N : 0;
  for (int64_t n0 = 0; n0 < N; n0 += int64_t(P)) {
    const int64_t n = std::min(int64_t(P), N - n0);
    ScratchScope piece;
    float *q = nullptr, *k = nullptr, *v = nullptr, *o_rows = nullptr;
    AW_RETURN_IF_ERROR(TakePiece(query.data, lq, n0, n, &piece, "query piece", &q));
    if (p.key_is_query) k = q;
    else AW_RETURN_IF_ERROR(TakePiece(key.data, lk, n0, n, &piece, "key piece", &k));
    if (p.value_is_key) v = k;
    else AW_RETURN_IF_ERROR(TakePiece(value.data, lv, n0, n, &piece, "value piece", &v));
    if (p.seq_first) AW_RETURN_IF_ERROR(piece.Take(size_t(PieceFloats(lo, n)), "output piece", &o_rows));
    else o_rows = out + n0 * L * E;
    AW_RETURN_IF_ERROR(RunEntries(p, n, q, k, v, SliceAttnMask(o.attn_mask, H, n0, n), kpmf ? kpmf + n0 * S : nullptr,
                                  o_rows, weights ? weights + n0 * w_per_entry : nullptr, o));
    PutPiece(o_rows, lo, n0, n, out);
  }
  return Status::OK();
}

Status MultiheadAttention::RunEntries(const MhaPlan& p, int64_t N, const float* query, const float* key,
                                      const float* value, const MaskView& am, const float* kpmf, float* out,
                                      float* weights, const MhaForwardOptions& o) {
  const MhaConfig& c = cfg_;
  const int64_t E = c.embed_dim, H = c.num_heads, hd = E / H, L = p.L, S = p.S, S2 = p.S2;
  const bool appended = c.add_bias_kv || c.add_zero_attn;
  ScratchScope scope;
  // Scratch (ScratchPerEntry): with the packed in_proj_weight, inputs that
  // are one tensor are projected in one GEMM: a self-attention's query, key
  // and value into qkv rows of 3E (q), a cross-attention's key and value into
  // kv rows of 2E (k). bias_k / zero attention append keys per batch entry:
  // K and V are then (N, S', E); otherwise they keep the key input's row order.
  const int64_t kv_cols = p.fused ? 0 : p.kv_one ? 2 * E : E;  // floats per row of k (and of v if separate)
  float *qb = nullptr, *kb = nullptr, *vb = nullptr, *attn = nullptr;
  AW_RETURN_IF_ERROR(scope.Take(size_t(N * L * (p.fused ? 3 * E : E)), "projected query", &qb));
  AW_RETURN_IF_ERROR(scope.Take(size_t(N * S2 * kv_cols), "projected key", &kb));
  AW_RETURN_IF_ERROR(scope.Take(size_t(p.fused || p.kv_one ? 0 : N * S2 * E), "projected value", &vb));
  AW_RETURN_IF_ERROR(scope.Take(size_t(N * L * E), "attention output", &attn));

  // ---- in-projection, over every row at once (rows keep the inputs' order) ----
  // Row t of batch entry n of a (T, N, ·) / (N, T, ·) / (T, ·) tensor is row
  // first(n, T) + t·step of its rows.
  auto first = [&](int64_t n, int64_t T) { return size_t(p.seq_first ? n : n * T); };
  const size_t step = p.seq_first ? size_t(N) : 1;
  const size_t ldq = p.fused ? size_t(3 * E) : size_t(E);
  if (p.fused) {
    ParallelGemmPacked(size_t(N * L), size_t(3 * E), size_t(E), qb, ldq, query, size_t(E), packed_in_.data(),
                       3 * size_t(E), 0, b_in_, 1.0f);
  } else {
    Project(Proj::kQ, size_t(N * L), query, size_t(E), qb, size_t(E));
    if (p.kv_one) {  // columns [E, 3E) of the packed in_proj_weight: K then V
      ParallelGemmPacked(size_t(N * S), size_t(2 * E), size_t(E), kb, size_t(2 * E), key, size_t(E),
                         packed_in_.data(), 3 * size_t(E), size_t(E), b_in_ ? b_in_ + E : nullptr, 1.0f);
    } else if (!appended) {
      Project(Proj::kK, size_t(N * S), key, size_t(kdim_), kb, size_t(E));
      Project(Proj::kV, size_t(N * S), value, size_t(vdim_), vb, size_t(E));
    } else {
      for (int64_t n = 0; n < N; ++n) {
        float* kn = kb + n * S2 * E;
        float* vn = vb + n * S2 * E;
        const size_t ldk_in = step * size_t(kdim_), ldv_in = step * size_t(vdim_);
        Project(Proj::kK, size_t(S), key + first(n, S) * size_t(kdim_), ldk_in, kn, size_t(E));
        Project(Proj::kV, size_t(S), value + first(n, S) * size_t(vdim_), ldv_in, vn, size_t(E));
        int64_t row = S;
        if (c.add_bias_kv) {
          std::memcpy(kn + row * E, bias_k_, size_t(E) * sizeof(float));
          std::memcpy(vn + row * E, bias_v_, size_t(E) * sizeof(float));
          ++row;
        }
        if (c.add_zero_attn) {
          kernels::f32_fill(size_t(E), kn + row * E, 0.0f);
          kernels::f32_fill(size_t(E), vn + row * E, 0.0f);
        }
      }
    }
  }
  // Where the projected keys and values live: base pointers, floats per row,
  // and the first row of batch entry n.
  const float* kbase = p.fused ? qb + E : kb;
  const float* vbase = p.fused ? qb + 2 * E : p.kv_one ? kb + E : vb;
  const size_t kv_ld = p.fused ? size_t(3 * E) : size_t(kv_cols);
  auto kv_first = [&](int64_t n) { return appended ? size_t(n * S2) : first(n, S); };

  // ---- attention: the core (ops/attention.h), heads of batch entry n as one group ----
  const AttnShape sh = CoreShape(p, N);
  const bool am3 = am.present() && am.shape.size() == 3;
  const bool am_bool = am.present() && am.dtype == DType::kBool;
  auto head = [&](size_t g, size_t hh) {
    const int64_t n = int64_t(g), h = int64_t(hh);
    AttnHead a;
    a.q = qb + first(n, L) * ldq + size_t(h * hd);
    if (S2 > 0) {  // (K and V are empty, null, otherwise)
      a.k = kbase + kv_first(n) * kv_ld + size_t(h * hd);
      a.v = vbase + kv_first(n) * kv_ld + size_t(h * hd);
    }
    a.out = attn + first(n, L) * size_t(E) + size_t(h * hd);
    if (weights) a.weights = weights + (o.average_attn_weights ? n * L * S2 : (n * H + h) * L * S2);
    if (am.present()) {
      const int64_t off = am3 ? (n * H + h) * L * S : 0;
      if (am_bool) a.keep = static_cast<const uint8_t*>(am.data) + off;
      else a.add = static_cast<const float*>(am.data) + off;
    }
    if (kpmf) a.key_add = kpmf + n * S;
    return a;
  };
  AW_RETURN_IF_ERROR(Attend(sh, size_t(N), size_t(H), head));

  // ---- out-projection over every row: attn rows are in the query's order ----
  out_proj_.Apply(size_t(N * L), attn, size_t(E), out, size_t(E));
  return Status::OK();
}

void MultiheadAttention::Project(Proj which, size_t rows, const float* x, size_t ldx, float* y, size_t ldy) const {
  const int64_t E = cfg_.embed_dim;
  const int64_t in = which == Proj::kQ ? E : which == Proj::kK ? kdim_ : vdim_;
  const float* b = b_in_ ? b_in_ + int64_t(which) * E : nullptr;
  const PackedProj pp = Packed(which);
  ParallelGemmPacked(rows, size_t(E), size_t(in), y, ldy, x, ldx, pp.bp, pp.cols, pp.j0, b, 1.0f);
}

Status MultiheadAttention::AttendSteps(size_t B, const float* q, const float* k, const float* v, size_t kv_stride,
                                       size_t T, float* out, float* weights) {
  const size_t E = size_t(cfg_.embed_dim), H = size_t(cfg_.num_heads), hd = E / H;
  AttnShape sh;
  sh.L = 1; sh.S = T; sh.hd = sh.hdv = hd;
  sh.ldq = sh.ldk = sh.ldv = sh.ldo = E;
  sh.ldw = T;
  sh.scale = float(1.0 / std::sqrt(double(hd)));
  sh.masked_keys = T;
  sh.weights = weights != nullptr;
  auto head = [&](size_t b, size_t h) {
    AttnHead a;
    a.q = q + b * E + h * hd;
    a.k = k + b * kv_stride + h * hd;
    a.v = v + b * kv_stride + h * hd;
    a.out = out + b * E + h * hd;
    if (weights) a.weights = weights + (b * H + h) * T;
    return a;
  };
  return Attend(sh, B, H, head);
}

}  // namespace aw
