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
#include "core/size_math.h"
#include "kernels/gemm.h"
#include "kernels/mask.h"
#include "kernels/softmax.h"
#include "ops/parallel_gemm.h"

namespace aw {
namespace {

// A mask converted to its additive float form (MHA: bool true → -inf).
// Float masks are used in place; bool masks are converted into `buf`.
Status Additive(const MaskView& m, Buffer* buf, const float** out) {
  if (m.dtype == DType::kF32) { *out = static_cast<const float*>(m.data); return Status::OK(); }
  const int64_t n = NumelChecked(m.shape);
  AW_RETURN_IF_ERROR(buf->Resize(size_t(n), "mask"));
  const auto* b = static_cast<const uint8_t*>(m.data);
  const float neg_inf = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) buf->data()[i] = b[i] ? neg_inf : 0.0f;
  *out = buf->data();
  return Status::OK();
}

// Where row t of batch n of a (T, N, D) / (N, T, D) / (T, D) tensor starts.
struct Rows {
  const float* base; size_t stride;
};
Rows RowsOf(const float* p, int64_t n, int64_t N, int64_t T, int64_t D, bool batch_first) {
  if (batch_first) return {p + n * T * D, size_t(D)};
  return {p + n * D, size_t(N * D)};
}

std::string Dim(const char* name, int64_t v) { return std::string(name) + " = " + std::to_string(v); }

}  // namespace

Status MultiheadAttention::Init(const MhaConfig& config, Rng& rng) {
  MhaConfig c = config;
  if (c.embed_dim <= 0) return ArgError("embedDim: expected a positive integer, got " + std::to_string(c.embed_dim));
  // Bounded before any size arithmetic (3 * embed_dim below overflows int64 near 2^62).
  if (c.embed_dim > kMaxElements)
    return ArgError("embedDim: expected at most 2^29, got " + std::to_string(c.embed_dim));
  if (c.num_heads <= 0) return ArgError("numHeads: expected a positive integer, got " + std::to_string(c.num_heads));
  if (c.embed_dim % c.num_heads != 0)
    return ArgError("embedDim: must be divisible by numHeads (" + std::to_string(c.num_heads) + "), got " +
                    std::to_string(c.embed_dim));
  if (c.kdim == 0) c.kdim = c.embed_dim;
  if (c.vdim == 0) c.vdim = c.embed_dim;
  if (c.kdim < 0) return ArgError("kdim: expected a positive integer, got " + std::to_string(c.kdim));
  if (c.vdim < 0) return ArgError("vdim: expected a positive integer, got " + std::to_string(c.vdim));
  if (!(c.dropout >= 0.0 && c.dropout <= 1.0))
    return ArgError("dropout: expected a probability in [0, 1], got " + std::to_string(c.dropout));
  cfg_ = c;
  const int64_t E = c.embed_dim;
  // Registration order = torch's: in-projection, in_proj_bias, bias_k/v, then out_proj.
  // torch's _reset_parameters: xavier_uniform_ on (out, in), zero biases,
  // xavier_normal_ on bias_k/bias_v; out_proj keeps Linear's init, bias zeroed.
  auto xavier = [&](float* p, int64_t fan_out, int64_t fan_in) {
    rng.FillUniform(p, fan_out * fan_in, std::sqrt(6.0 / double(fan_in + fan_out)));
  };
  if (c.kdim == E && c.vdim == E) {
    AW_RETURN_IF_ERROR(AddParam("in_proj_weight", {3 * E, E}, &w_in_));
    xavier(w_in_, 3 * E, E);
    wq_ = w_in_; wk_ = w_in_ + E * E; wv_ = w_in_ + 2 * E * E;
  } else {
    AW_RETURN_IF_ERROR(AddParam("q_proj_weight", {E, E}, &wq_));
    AW_RETURN_IF_ERROR(AddParam("k_proj_weight", {E, c.kdim}, &wk_));
    AW_RETURN_IF_ERROR(AddParam("v_proj_weight", {E, c.vdim}, &wv_));
    xavier(wq_, E, E); xavier(wk_, E, c.kdim); xavier(wv_, E, c.vdim);
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
  return Status::OK();
}

Status MultiheadAttention::Forward(const TensorView& query, const TensorView& key, const TensorView& value,
                                   const MhaForwardOptions& o, MhaResult* r) {
  const MhaConfig& c = cfg_;
  const int64_t E = c.embed_dim, H = c.num_heads, hd = E / H;
  // ---- validate (torch's _mha_shape_check and the checks that follow it) ----
  const MhaForwardOptions::Names& nm = o.names;
  const size_t qd = query.shape.size();
  if (qd != 2 && qd != 3)
    return ShapeError(std::string(nm.query) + ": expected a 3-D (batched) or 2-D (unbatched) tensor, got " +
                      ShapeStr(query.shape));
  const bool batched = qd == 3;
  const char* layout = !batched ? "(S, " : (c.batch_first ? "(N, S, " : "(S, N, ");
  for (const auto* t : {&query, &key, &value})
    if (NumelChecked(t->shape) < 0)
      return ShapeError(std::string(t == &query ? nm.query : t == &key ? nm.key : nm.value) + ": shape " +
                        ShapeStr(t->shape) + " has a negative dim or more than 2^29 elements");
  // A 0 dim lets the others be any size; bound each before N·H, S + 1, ... below.
  for (const auto* t : {&query, &key, &value})
    for (int64_t d : t->shape)
      if (d > kMaxElements)
        return ShapeError(std::string(t == &query ? nm.query : t == &key ? nm.key : nm.value) + ": shape " +
                          ShapeStr(t->shape) + " has a dim above 2^29");
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
  if (key.shape.back() != c.kdim)
    return ShapeError(std::string(nm.key) + ": expected last dim " + Dim("kdim", c.kdim) + ", got " + ShapeStr(key.shape));
  Shape want_v = key.shape; want_v.back() = c.vdim;
  if (value.shape != want_v)
    return ShapeError(std::string(nm.value) + ": expected " + ShapeStr(want_v) + " (" + nm.key + "'s sequence and batch dims, vdim = " +
                      std::to_string(c.vdim) + "), got " + ShapeStr(value.shape));
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
  // before it bounds a loop or forms an offset. Each dim is <= 2^29 (above),
  // but a 0 dim lets products of the others exceed any bound.
  SizeMath sm;
  const int64_t NH = sm.Mul(N, H);
  const int64_t S2 = sm.Add(S, (c.add_bias_kv ? 1 : 0) + (c.add_zero_attn ? 1 : 0));  // keys incl. appended
  const int64_t n_q = sm.Prod({N, L, E}), n_kv = sm.Prod({N, S2, E}), slab = sm.Mul(L, S2);
  const int64_t slabs = N == 0 ? 0 : sm.Mul(NumThreads(), slab);
  const int64_t block_macs = sm.Prod({int64_t(kernels::kGemmRowTile), S2, E, 2});  // Q·K^T and P·V, every head
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

  // ---- allocate ----
  Shape out_shape = query.shape;
  Shape w_shape;
  if (o.need_weights) {
    w_shape = o.average_attn_weights ? Shape{L, S2} : Shape{H, L, S2};
    if (batched) w_shape.insert(w_shape.begin(), N);
  }
  // Buffers hold at most 2^29 elements (the wasm heap); an empty batch
  // computes nothing and needs no scores slab.
  if (NumelChecked(w_shape) < 0 || n_kv > kMaxElements || (N > 0 && slab > kMaxElements))
    return ShapeError("attention weights " + ShapeStr(o.need_weights ? w_shape : Shape{L, S2}) +
                      " exceed 2^29 elements");
  AW_RETURN_IF_ERROR(q_.Resize(size_t(n_q), "projected query"));
  AW_RETURN_IF_ERROR(k_.Resize(size_t(n_kv), "projected key"));
  AW_RETURN_IF_ERROR(v_.Resize(size_t(n_kv), "projected value"));
  AW_RETURN_IF_ERROR(attn_.Resize(size_t(n_q), "attention output"));
  // One (L, S') scores slab per thread: ParallelForRowBlocks hands each thread
  // whole row blocks, and a thread never allocates (only this thread does).
  AW_RETURN_IF_ERROR(scores_.Resize(size_t(slabs), "attention scores"));
  AW_RETURN_IF_ERROR(r->output.Resize(size_t(n_q), "output"));
  r->output_shape = out_shape;
  if (o.need_weights) {
    AW_RETURN_IF_ERROR(r->weights.Resize(size_t(NumelChecked(w_shape)), "attention weights"));
    kernels::f32_fill(r->weights.size(), r->weights.data(), 0.0f);
  } else {
    r->weights.Release();
  }
  r->weights_shape = w_shape;
  const float* amf = nullptr;
  const float* kpmf = nullptr;
  if (am.present()) AW_RETURN_IF_ERROR(Additive(am, &am_, &amf));
  if (kpm.present()) AW_RETURN_IF_ERROR(Additive(kpm, &kpm_, &kpmf));
  if (N == 0 || L == 0) return Status::OK();

  // ---- in-projection ----
  const float* wq = wq_;
  const float* wk = wk_;
  const float* wv = wv_;
  const float* bq = b_in_;
  const float* bk = bq ? bq + E : nullptr;
  const float* bv = bq ? bq + 2 * E : nullptr;
  const bool bf = batched && c.batch_first;
  for (int64_t n = 0; n < N; ++n) {
    const Rows qr = RowsOf(query.data, n, N, L, E, bf);
    const Rows kr = RowsOf(key.data, n, N, S, c.kdim, bf);
    const Rows vr = RowsOf(value.data, n, N, S, c.vdim, bf);
    float* qn = q_.data() + n * L * E;
    float* kn = k_.data() + n * S2 * E;
    float* vn = v_.data() + n * S2 * E;
    ParallelGemmNt(size_t(L), size_t(E), size_t(E), qn, size_t(E), qr.base, qr.stride, wq, size_t(E), bq, 1.0f);
    ParallelGemmNt(size_t(S), size_t(E), size_t(c.kdim), kn, size_t(E), kr.base, kr.stride, wk, size_t(c.kdim), bk, 1.0f);
    ParallelGemmNt(size_t(S), size_t(E), size_t(c.vdim), vn, size_t(E), vr.base, vr.stride, wv, size_t(c.vdim), bv, 1.0f);
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

  // ---- attention per (batch, block of query rows), every head in order ----
  // The blocks run in parallel (core/parallel.h), each thread with its own
  // scores slab; a block starts on a GEMM row tile, so every element is
  // computed as in one whole-(L) call. Blocks own disjoint rows of the output
  // and of the weights (also when averaged over heads: the head sum of a row
  // stays in head order in one thread).
  const float scale = float(1.0 / std::sqrt(double(hd)));
  const size_t rb = kernels::kGemmRowTile;
  const size_t grain = block_macs ? (size_t(1) << 16) / size_t(block_macs) + 1 : size_t(L);
  ParallelForRowBlocks(size_t(N), size_t(L), rb, grain, [&](size_t n_, size_t r0, size_t r1, int tid) {
    const int64_t n = int64_t(n_);
    const size_t rows = r1 - r0;
    float* sc = scores_.data() + size_t(tid) * size_t(slab);
    for (int64_t h = 0; h < H; ++h) {
      const float* qp = q_.data() + (n * L + int64_t(r0)) * E + h * hd;
      float* ap = attn_.data() + (n * L + int64_t(r0)) * E + h * hd;
      if (S2 == 0) {  // nothing to attend to: zero output (softmax over an empty row)
        for (size_t i = 0; i < rows; ++i) kernels::f32_fill(size_t(hd), ap + i * size_t(E), 0.0f);
        continue;
      }
      // After the S' = 0 case: k_ and v_ are then empty (null) and must not be offset.
      const float* kp = k_.data() + n * S2 * E + h * hd;
      const float* vp = v_.data() + n * S2 * E + h * hd;
      kernels::f32_gemm_nt(rows, size_t(S2), size_t(hd), sc, size_t(S2), qp, size_t(E), kp, size_t(E), nullptr, scale);
      for (size_t r = 0; r < rows; ++r) {
        const int64_t i = int64_t(r0 + r);
        float* row = sc + r * size_t(S2);
        // Masks cover the first S keys; appended bias_k / zero keys are never masked.
        if (amf) kernels::f32_mask_add(size_t(S), row, amf + (am.shape.size() == 3 ? (n * H + h) * L * S : 0) + i * S);
        if (kpmf) kernels::f32_mask_add(size_t(S), row, kpmf + n * S);
        kernels::f32_softmax_inplace(size_t(S2), row);
      }
      if (o.need_weights) {
        float* w = r->weights.data() + (o.average_attn_weights ? n * L * S2 : (n * H + h) * L * S2) + int64_t(r0) * S2;
        if (o.average_attn_weights) kernels::f32_mask_add(rows * size_t(S2), w, sc);  // sum over heads
        else std::memcpy(w, sc, rows * size_t(S2) * sizeof(float));
      }
      kernels::f32_gemm_nn(rows, size_t(hd), size_t(S2), ap, size_t(E), sc, size_t(S2), vp, size_t(E), nullptr);
    }
    if (o.need_weights && o.average_attn_weights) {
      float* w = r->weights.data() + (n * L + int64_t(r0)) * S2;
      for (size_t i = 0; i < rows * size_t(S2); ++i) w[i] /= float(H);
    }
  });

  // ---- out-projection, written in the query's layout ----
  for (int64_t n = 0; n < N; ++n) {
    float* dst = bf ? r->output.data() + n * L * E : r->output.data() + n * E;
    const size_t ldd = bf || !batched ? size_t(E) : size_t(N * E);
    out_proj_.Apply(size_t(L), attn_.data() + n * L * E, size_t(E), dst, ldd);
  }
  return Status::OK();
}

void MultiheadAttention::Project(int which, size_t rows, const float* x, size_t ldx, float* y, size_t ldy) const {
  const int64_t E = cfg_.embed_dim;
  const float* w = which == 0 ? wq_ : which == 1 ? wk_ : wv_;
  const int64_t in = which == 0 ? E : which == 1 ? cfg_.kdim : cfg_.vdim;
  const float* b = b_in_ ? b_in_ + which * E : nullptr;
  ParallelGemmNt(rows, size_t(E), size_t(in), y, ldy, x, ldx, w, size_t(in), b, 1.0f);
}

void MultiheadAttention::AttendRows(size_t B, const float* q, const float* k, const float* v, size_t kv_stride,
                                    size_t T, float* out, float* weights, float* scores) const {
  const size_t E = size_t(cfg_.embed_dim), H = size_t(cfg_.num_heads), hd = E / H;
  const float scale = float(1.0 / std::sqrt(double(hd)));
  for (size_t b = 0; b < B; ++b) {
    for (size_t h = 0; h < H; ++h) {
      const float* kp = k + b * kv_stride + h * hd;
      const float* vp = v + b * kv_stride + h * hd;
      kernels::f32_gemm_nt(1, T, hd, scores, T, q + b * E + h * hd, E, kp, E, nullptr, scale);
      kernels::f32_softmax_inplace(T, scores);
      if (weights) std::memcpy(weights + (b * H + h) * T, scores, T * sizeof(float));
      kernels::f32_gemm_nn(1, hd, T, out + b * E + h * hd, E, scores, T, vp, E, nullptr);
    }
  }
}

}  // namespace aw
