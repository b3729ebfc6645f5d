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
#include "kernels/gemm.h"
#include "kernels/fill.h"
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
  OnParamsLoaded();
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

MultiheadAttention::PackedProj MultiheadAttention::Packed(int which) const {
  const size_t E = size_t(cfg_.embed_dim);
  if (packed_in_.size()) return {packed_in_.data(), 3 * E, size_t(which) * E};
  return {(which == 0 ? packed_q_ : which == 1 ? packed_k_ : packed_v_).data(), E, 0};
}

Status MultiheadAttention::Forward(const TensorView& query, const TensorView& key, const TensorView& value,
                                   const MhaForwardOptions& o, MhaResult* r) {
  const MhaConfig& c = cfg_;
  const int64_t E = c.embed_dim, H = c.num_heads, hd = E / H;
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
  // before it bounds a loop or forms an offset. Each dim is <= 2^29 (above),
  // but a 0 dim lets products of the others exceed any bound.
  SizeMath sm;
  const int64_t NH = sm.Mul(N, H);
  const int64_t S2 = sm.Add(S, (c.add_bias_kv ? 1 : 0) + (c.add_zero_attn ? 1 : 0));  // keys incl. appended
  const int64_t n_q = sm.Prod({N, L, E}), n_kv = sm.Prod({N, S2, E});
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
  // With the packed in_proj_weight, inputs that are one tensor are projected
  // in one GEMM: a self-attention's query, key and value into qkv rows of 3E
  // (in q_), a cross-attention's key and value into kv rows of 2E (in k_).
  // bias_k / zero attention append keys per batch entry: K and V are then
  // (N, S', E); otherwise they keep the key input's row order.
  const bool appended = c.add_bias_kv || c.add_zero_attn;
  const bool kv_one = packed_in_.size() && key.data == value.data && key.shape == value.shape && !appended;
  const bool fused = kv_one && query.data == key.data && query.shape == key.shape;
  const int64_t kv_cols = fused ? 0 : kv_one ? 2 * E : E;  // floats per row of k_ (and of v_ if separate)
  Shape out_shape = query.shape;
  Shape w_shape;
  if (o.need_weights) {
    w_shape = o.average_attn_weights ? Shape{L, S2} : Shape{H, L, S2};
    if (batched) w_shape.insert(w_shape.begin(), N);
  }
  // Buffers hold at most 2^29 elements (the wasm heap).
  const int64_t n_qbuf = sm.Mul(n_q, fused ? 3 : 1), n_kbuf = sm.Prod({N, S2, kv_cols}), n_vbuf = fused || kv_one ? 0 : n_kv;
  if (NumelChecked(w_shape) < 0)
    return ShapeError("attention weights " + ShapeStr(w_shape) + " exceed 2^29 elements");
  if (sm.overflowed() || n_qbuf > kMaxElements || n_kbuf > kMaxElements || n_vbuf > kMaxElements)
    return ShapeError("projected keys and values (N, S', embedDim) = " + ShapeStr({N, S2, E}) + " exceed 2^29 elements");
  AW_RETURN_IF_ERROR(q_.Resize(size_t(n_qbuf), "projected query"));
  AW_RETURN_IF_ERROR(k_.Resize(size_t(n_kbuf), "projected key"));
  AW_RETURN_IF_ERROR(v_.Resize(size_t(n_vbuf), "projected value"));
  AW_RETURN_IF_ERROR(attn_.Resize(size_t(n_q), "attention output"));
  AW_RETURN_IF_ERROR(r->output.Resize(size_t(n_q), "output"));
  r->output_shape = out_shape;
  if (o.need_weights) AW_RETURN_IF_ERROR(r->weights.Resize(size_t(NumelChecked(w_shape)), "attention weights"));
  else r->weights.Release();
  r->weights_shape = w_shape;
  const float* amf = nullptr;
  const float* kpmf = nullptr;
  if (am.present()) AW_RETURN_IF_ERROR(Additive(am, &am_, &amf));
  if (kpm.present()) AW_RETURN_IF_ERROR(Additive(kpm, &kpm_, &kpmf));
  if (N == 0 || L == 0) return Status::OK();

  // ---- in-projection, over every row at once (rows keep the inputs' order) ----
  const bool bf = batched && c.batch_first;
  // Row t of batch entry n of a (T, N, ·) / (N, T, ·) / (T, ·) tensor is row
  // first(n, T) + t·step of its rows.
  auto first = [&](int64_t n, int64_t T) { return size_t(bf ? n * T : n); };
  const size_t step = bf || !batched ? 1 : size_t(N);
  const size_t ldq = fused ? size_t(3 * E) : size_t(E);
  if (fused) {
    ParallelGemmPacked(size_t(N * L), size_t(3 * E), size_t(E), q_.data(), ldq, query.data, size_t(E),
                       packed_in_.data(), 3 * size_t(E), 0, b_in_, 1.0f);
  } else {
    Project(0, size_t(N * L), query.data, size_t(E), q_.data(), size_t(E));
    if (kv_one) {  // columns [E, 3E) of the packed in_proj_weight: K then V
      ParallelGemmPacked(size_t(N * S), size_t(2 * E), size_t(E), k_.data(), size_t(2 * E), key.data, size_t(E),
                         packed_in_.data(), 3 * size_t(E), size_t(E), b_in_ ? b_in_ + E : nullptr, 1.0f);
    } else if (!appended) {
      Project(1, size_t(N * S), key.data, size_t(kdim_), k_.data(), size_t(E));
      Project(2, size_t(N * S), value.data, size_t(vdim_), v_.data(), size_t(E));
    } else {
      for (int64_t n = 0; n < N; ++n) {
        float* kn = k_.data() + n * S2 * E;
        float* vn = v_.data() + n * S2 * E;
        const size_t ldk_in = step * size_t(kdim_), ldv_in = step * size_t(vdim_);
        Project(1, size_t(S), key.data + first(n, S) * size_t(kdim_), ldk_in, kn, size_t(E));
        Project(2, size_t(S), value.data + first(n, S) * size_t(vdim_), ldv_in, vn, size_t(E));
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
  const float* kbase = fused ? q_.data() + E : k_.data();
  const float* vbase = fused ? q_.data() + 2 * E : kv_one ? k_.data() + E : v_.data();
  const size_t kv_ld = fused ? size_t(3 * E) : size_t(kv_cols);
  auto kv_first = [&](int64_t n) { return appended ? size_t(n * S2) : first(n, S); };

  // ---- attention: the core (ops/attention.h), heads of batch entry n as one group ----
  AttnShape sh;
  sh.L = size_t(L); sh.S = size_t(S2); sh.hd = sh.hdv = size_t(hd);
  sh.ldq = step * ldq;
  sh.ldk = sh.ldv = (appended ? 1 : step) * kv_ld;
  sh.ldo = step * size_t(E);
  sh.ldw = size_t(S2);
  sh.scale = float(1.0 / std::sqrt(double(hd)));
  sh.masked_keys = size_t(S);  // appended bias_k / zero keys are never masked
  sh.add_ld = size_t(S);
  sh.weights = o.need_weights;
  sh.average = o.need_weights && o.average_attn_weights;
  const bool am3 = am.present() && am.shape.size() == 3;
  auto head = [&](size_t g, size_t hh) {
    const int64_t n = int64_t(g), h = int64_t(hh);
    AttnHead a;
    a.q = q_.data() + first(n, L) * ldq + size_t(h * hd);
    if (S2 > 0) {  // (K and V are empty, null, otherwise)
      a.k = kbase + kv_first(n) * kv_ld + size_t(h * hd);
      a.v = vbase + kv_first(n) * kv_ld + size_t(h * hd);
    }
    a.out = attn_.data() + first(n, L) * size_t(E) + size_t(h * hd);
    if (o.need_weights)
      a.weights = r->weights.data() + (o.average_attn_weights ? n * L * S2 : (n * H + h) * L * S2);
    if (amf) a.add = amf + (am3 ? (n * H + h) * L * S : 0);
    if (kpmf) a.key_add = kpmf + n * S;
    return a;
  };
  AW_RETURN_IF_ERROR(Attend(sh, size_t(N), size_t(H), head, &attn_scratch_));

  // ---- out-projection over every row: attn_ rows are in the query's order ----
  out_proj_.Apply(size_t(N * L), attn_.data(), size_t(E), r->output.data(), size_t(E));
  return Status::OK();
}

void MultiheadAttention::Project(int which, size_t rows, const float* x, size_t ldx, float* y, size_t ldy) const {
  const int64_t E = cfg_.embed_dim;
  const int64_t in = which == 0 ? E : which == 1 ? kdim_ : vdim_;
  const float* b = b_in_ ? b_in_ + which * E : nullptr;
  const PackedProj p = Packed(which);
  ParallelGemmPacked(rows, size_t(E), size_t(in), y, ldy, x, ldx, p.bp, p.cols, p.j0, b, 1.0f);
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
  return Attend(sh, B, H, head, &attn_scratch_);
}

}  // namespace aw
