// The one-input functions of the libFuzzer targets, shared by the fuzzers
// (fuzz_<target>.cpp, built by tools/fuzz.sh with clang and ASan/UBSan) and by
// corpus_replay_test.cpp, which replays tests/fuzz/corpus/<target>/* in every
// native build. Each function feeds one input to a public entry point and
// checks its contract; it returns what it saw. Memory errors and undefined
// behaviour are the sanitizers' to report, not these checks'.
//
//   SafetensorsOneInput  bytes → ParseSafetensors, then ReadAsF32/ReadAsI32 of
//                        every tensor and the registry's check of the metadata's attnwasm.config
//   ModelConfigOneInput  bytes as text → the registry's check of a file's own config (each kind,
//                        models/families.h CheckFamilyConfig), the translator's and classifier's readers,
//                        ParseJson; the Hugging Face config readers and rules (causal LM families, encoders)
//   AttentionOneInput    bytes decoded (layout below) into one call of
//                        ScaledDotProductAttention or MultiheadAttention
//                        Init + Forward: a non-OK Status or a correct output
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/broadcast.h"
#include "core/rng.h"
#include "core/status.h"
#include "core/tensor.h"
#include "io/json.h"
#include "models/causal_lm_config.h"
#include "models/encoder_config.h"
#include "io/json_fields.h"
#include "models/families.h"
#include "models/translator.h"
#include "models/vit_classifier.h"
#include "models/causal_lm.h"
#include "models/encoder.h"
#include "io/safetensors.h"
#include "layers/multihead_attention.h"
#include "ops/scaled_dot_product_attention.h"

namespace aw::fuzz {

struct Outcome {
  bool accepted = false;  // the entry point returned OK (for attention: ran)
  std::string violation;  // empty, or how the contract was broken
};

namespace detail {

inline std::string CodeName(Code c) { return std::to_string(int(c)); }

// Appends to o->violation (first problems first).
inline void Violate(Outcome* o, const std::string& what) {
  if (!o->violation.empty()) o->violation += "; ";
  o->violation += what;
}

inline bool StartsWith(const std::string& s, std::string_view prefix) {
  return s.size() >= prefix.size() && std::string_view(s).substr(0, prefix.size()) == prefix;
}

// Visits every node of a parsed JSON tree through the public accessors.
inline void TouchJson(const io::JsonValue& v, int depth, Outcome* o) {
  uint64_t u = 0;
  if (v.AsUint53(&u)) {
    if (!v.is_number() || double(u) != v.number) Violate(o, "json: AsUint53 disagrees with the number " + v.str);
  }
  if (v.is_number() && !std::isfinite(v.number)) Violate(o, "json: non-finite number " + v.str);
  if (depth > io::kJsonMaxDepth) Violate(o, "json: tree deeper than kJsonMaxDepth");
  for (const io::JsonValue& item : v.items) TouchJson(item, depth + 1, o);
  for (const io::JsonMember& m : v.members) {
    if (v.Find(m.key) == nullptr) Violate(o, "json: Find misses a member");
    TouchJson(m.value, depth + 1, o);
  }
}

}  // namespace detail

// ---- safetensors ----------------------------------------------------------

inline Outcome SafetensorsOneInput(const uint8_t* data, size_t size) {
  using namespace io;
  Outcome o;
  StFile f;
  f.data_start = 12345;  // must be reset by the parser
  const Status s = ParseSafetensors(data, size, &f);
  if (!s.ok()) {
    if (s.code() != Code::kInvalidArgument || !detail::StartsWith(s.message(), "safetensors: "))
      detail::Violate(&o, "parse error with code " + detail::CodeName(s.code()) + ": " + s.message());
    if (!f.tensors.empty() || !f.metadata.empty() || f.data_start != 0)
      detail::Violate(&o, "the output is not reset after a parse error");
    return o;
  }
  o.accepted = true;
  if (f.data_start < 8 || f.data_start > size) detail::Violate(&o, "data_start outside the file");
  std::set<std::string> names;
  for (const StTensor& t : f.tensors) {
    if (!names.insert(t.name).second) detail::Violate(&o, "duplicate tensor name accepted");
    const int64_t numel = NumelChecked(t.shape);
    if (numel < 0) {
      detail::Violate(&o, "tensor " + t.name + " accepted with shape " + ShapeStr(t.shape));
      continue;
    }
    if (t.begin < f.data_start || t.begin > t.end || t.end > size ||
        t.end - t.begin != uint64_t(numel) * StDTypeSize(t.dtype)) {
      detail::Violate(&o, "tensor " + t.name + " accepted with a byte range that does not fit");
      continue;
    }
    // Exactly numel elements, so ASan sees any write past them.
    std::unique_ptr<float[]> fv(new float[size_t(numel)]);
    std::unique_ptr<int32_t[]> iv(new int32_t[size_t(numel)]);
    const Status sf = ReadAsF32(data, size, t, fv.get());
    const Status si = ReadAsI32(data, size, t, iv.get());
    const bool is_float = t.dtype == StDType::kF64 || t.dtype == StDType::kF32 ||
                          t.dtype == StDType::kF16 || t.dtype == StDType::kBF16;
    const Status& ok_one = is_float ? sf : si;
    const Status& dtype_one = is_float ? si : sf;
    if (dtype_one.code() != Code::kDtype) detail::Violate(&o, "tensor " + t.name + ": wrong-dtype read gave code " + detail::CodeName(dtype_one.code()));
    const bool may_fail = t.dtype == StDType::kI64 || t.dtype == StDType::kBool;  // range checks
    if (!ok_one.ok() && !(may_fail && ok_one.code() == Code::kInvalidArgument))
      detail::Violate(&o, "tensor " + t.name + ": read failed: " + ok_one.message());
    if (t.dtype == StDType::kF32 && sf.ok()) {
      for (int64_t i = 0; i < numel; ++i) {
        uint32_t want = 0, got = 0;
        std::memcpy(&want, data + t.begin + 4 * size_t(i), 4);
        std::memcpy(&got, &fv[size_t(i)], 4);
        if (want != got) {
          detail::Violate(&o, "tensor " + t.name + ": F32 element " + std::to_string(i) + " changed");
          break;
        }
      }
    }
    // Reads re-check the tensor against the file: a range past the end is refused.
    StTensor past = t;
    past.end = uint64_t(size) + 1;
    past.begin = past.end - (t.end - t.begin);
    if (ReadAsF32(data, size, past, fv.get()).ok() || ReadAsI32(data, size, past, iv.get()).ok())
      detail::Violate(&o, "tensor " + t.name + ": read accepted a byte range past the end of the file");
  }
  std::set<std::string> keys;
  for (const auto& kv : f.metadata) {
    if (!keys.insert(kv.first).second) detail::Violate(&o, "duplicate metadata key accepted");
    if (kv.first == "attnwasm.config") {
      const Status c = CheckFamilyConfig(kv.second, /*own=*/true, "");
      if (!c.ok() && (c.code() != Code::kInvalidArgument || !detail::StartsWith(c.message(), "attnwasm.config")))
        detail::Violate(&o, "config error with code " + detail::CodeName(c.code()) + ": " + c.message());
    }
  }
  return o;
}

// ---- model config ---------------------------------------------------------

inline Outcome ModelConfigOneInput(const uint8_t* data, size_t size) {
  Outcome o;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  io::JsonValue tree;
  const Status js = io::ParseJson(text, &tree);
  if (js.ok()) {
    detail::TouchJson(tree, 0, &o);
  } else if (js.code() != Code::kInvalidArgument || !detail::StartsWith(js.message(), "json: ")) {
    detail::Violate(&o, "json error with code " + detail::CodeName(js.code()) + ": " + js.message());
  }
  // A shallower limit may only turn success into failure.
  io::JsonValue shallow;
  if (io::ParseJson(text, &shallow, 2).ok() && !js.ok()) detail::Violate(&o, "json: depth 2 accepted what depth 64 refused");

  const char* kinds[] = {"", "translator", "vit", "causal_lm"};
  Status s[4];
  for (int i = 0; i < 4; ++i) {
    s[i] = CheckFamilyConfig(text, /*own=*/true, kinds[i]);
    if (s[i].ok()) continue;
    if (s[i].code() != Code::kInvalidArgument || !detail::StartsWith(s[i].message(), "attnwasm.config"))
      detail::Violate(&o, std::string("kind '") + kinds[i] + "': code " + detail::CodeName(s[i].code()) + ": " + s[i].message());
    if (!js.ok() && detail::StartsWith(js.message(), "json: ")) {
      const std::string want = "attnwasm.config: not valid JSON: " + js.message().substr(6);
      if (s[i].message() != want) detail::Violate(&o, "invalid JSON reported as: " + s[i].message());
    }
  }
  const int kinds_ok = int(s[1].ok()) + int(s[2].ok()) + int(s[3].ok());
  if (!js.ok() && (s[0].ok() || kinds_ok)) detail::Violate(&o, "a config that is not JSON was accepted");
  // Accepted with no kind asked for <=> accepted as exactly one kind.
  if (s[0].ok() != (kinds_ok > 0) || kinds_ok > 1)
    detail::Violate(&o, "kinds disagree: any " + std::to_string(s[0].ok()) + ", translator " +
                        std::to_string(s[1].ok()) + ", vit " + std::to_string(s[2].ok()) + ", causal_lm " +
                        std::to_string(s[3].ok()));
  // An accepted translator or classifier config reads into a config its model can build (the families'
  // readers rely on the checks before them).
  if (s[1].ok() || s[2].ok()) {
    const io::FieldReader c(tree, "attnwasm.config");
    TranslatorConfig t;
    VitConfig v;
    const Status p = s[1].ok() ? ReadTranslatorFile(c, &t) : ReadVitFile(c, &v);
    const TransformerLayerConfig& l = s[1].ok() ? t.layer : v.layer;
    if (!p.ok() || !(l.d_model >= 1 && l.nhead >= 1 && l.d_model % l.nhead == 0))
      detail::Violate(&o, "a family's reader disagrees with its check: " + p.message());
  }
  // A Hugging Face config.json, as loadModel reads it with a checkpoint: the causal LM families' reader and rules,
  // and the encoders'. Refusals are ERR_INVALID_ARGUMENT naming the config; what is accepted is a model they can
  // build (the invariants Init relies on).
  if (js.ok() && tree.is_object()) {
    const io::ConfigSource src{&tree, "config"};
    CausalLmConfig lm;
    Status r = ReadCausalLmConfig(tree, "config", &lm);
    if (r.ok()) r = CheckCausalLmConfig(lm, &src);
    if (!r.ok() && (r.code() != Code::kInvalidArgument || !detail::StartsWith(r.message(), "config")))
      detail::Violate(&o, "causal LM config: code " + detail::CodeName(r.code()) + ": " + r.message());
    if (r.ok()) {
      const bool sane = lm.heads >= 1 && lm.kv_heads >= 1 && lm.heads % lm.kv_heads == 0 && lm.head_dim >= 2 &&
                        lm.head_dim % 2 == 0 && (lm.layer_sliding.empty() || (int64_t(lm.layer_sliding.size()) == lm.layers &&
                                                                              lm.sliding_window >= 1)) &&
                        (lm.layer_rope.empty() || int64_t(lm.layer_rope.size()) == lm.layers) &&
                        lm.partial_rotary_factor > 0 && lm.partial_rotary_factor <= 1;
      if (!sane) detail::Violate(&o, "an accepted causal LM config Init could not build");
    }
    EncoderConfig enc;
    Status e = ReadEncoderConfig(tree, "config", &enc);
    if (e.ok()) e = CheckEncoderConfig(enc, &src);
    if (!e.ok() && (e.code() != Code::kInvalidArgument || !detail::StartsWith(e.message(), "config")))
      detail::Violate(&o, "encoder config: code " + detail::CodeName(e.code()) + ": " + e.message());
    if (e.ok() && !(enc.heads >= 1 && enc.hidden % enc.heads == 0 && EncoderMaxTokens(enc) >= 1))
      detail::Violate(&o, "an accepted encoder config Init could not build");
    if (r.ok() && e.ok()) detail::Violate(&o, "a config read as both a causal LM and an encoder");
  }
  o.accepted = s[0].ok();
  return o;
}

// ---- attention ------------------------------------------------------------
//
// Byte layout (reads past the end give 0). A "dim" byte b is: b < 0xA0 → b % 10;
// 0xA0..0xEF → a dim decoded earlier (the pool, below; 1 if empty), index
// (b - 0xA0) % pool size; 0xF0..0xFF → kSpecialDims[b - 0xF0]. A "shape" is a
// rank byte (% 6) followed by that many dim bytes. Every decoded dim joins the
// pool, so later shapes can repeat earlier sizes.
//   [0] op: even → SDPA, odd → MultiheadAttention
//   SDPA: flags (bit0 is_causal, 1 has_scale, 2 enable_gqa, 3 need_weights,
//         4 attn_mask, 5 mask bool, 6 mask dtype invalid, 7 dropout_p != 0;
//         6 without 4: a causal bias of the call's (L, S) instead, 5 = lower-right),
//         scale byte (kScales[b % 8]), query shape, key shape, value shape,
//         [mask shape], data byte
//   MHA:  embed_dim byte (kEmbedDims[b % 16]), num_heads dim byte, kdim dim
//         byte, vdim dim byte (0 = embed_dim), config flags (bit0 bias,
//         1 add_bias_kv, 2 add_zero_attn, 3 batch_first, bits 4-5 dropout
//         kDropouts), then the pool is seeded with embed_dim, num_heads, kdim,
//         vdim; forward flags (bit0 need_weights, 1 average_attn_weights,
//         2 is_causal, 3 key_padding_mask, 4 kpm bool, 5 attn_mask,
//         6 attn_mask bool, 7 the first present mask has an invalid dtype),
//         query, key, value shapes, [kpm shape], [attn_mask shape], data byte
//   data byte d: tensor values follow a pattern seeded by d; d & 0x80 plants
//         one NaN / +inf / -inf / 1e30 (by (d >> 4) & 3) in the query.

namespace detail {

constexpr int64_t kSpecialDims[16] = {
    int64_t(1) << 29,       (int64_t(1) << 29) + 1, int64_t(1) << 31, (int64_t(1) << 31) - 1,
    int64_t(1) << 32,       int64_t(1) << 53,       int64_t(1) << 62, std::numeric_limits<int64_t>::max(),
    -1,                     std::numeric_limits<int64_t>::min(),      46341, 23171,
    65536,                  10,                     16,               64};
constexpr int64_t kEmbedDims[16] = {0, 1, 2, 3, 4, 6, 8, 12, 16, 32, -4, int64_t(1) << 31,
                                    int64_t(1) << 62, std::numeric_limits<int64_t>::max(),
                                    int64_t(1) << 29, 5};
constexpr double kScales[8] = {1.0, 0.125, 0.0, -1.0, 1e30, HUGE_VAL, -HUGE_VAL, NAN};
constexpr double kDropouts[4] = {0.0, 0.1, NAN, 1.5};

// Inputs whose element count is above this are not allocated: the call is
// skipped (a legitimately huge tensor is not what this target is about).
constexpr int64_t kMaxInputElements = 1 << 16;
// Calls estimated above this many multiply-adds are skipped (speed).
constexpr double kMaxWork = double(1 << 24);
// What one attention head costs besides its multiply-adds (its setup, about
// 5 us under ASan + UBSan), in multiply-adds: a million heads of one element
// each are slow work too.
constexpr double kHeadWork = 1024;

class Reader {
 public:
  Reader(const uint8_t* p, size_t n) : p_(p), n_(n) {}
  uint8_t U8() { return i_ < n_ ? p_[i_++] : 0; }
  int64_t Dim() {
    const uint8_t b = U8();
    int64_t d;
    if (b < 0xA0) d = b % 10;
    else if (b < 0xF0) d = pool_.empty() ? 1 : pool_[size_t(b - 0xA0) % pool_.size()];
    else d = kSpecialDims[b - 0xF0];
    pool_.push_back(d);
    return d;
  }
  void Pool(int64_t d) { pool_.push_back(d); }
  Shape ShapeOf() {
    const int rank = U8() % 6;
    Shape s;
    for (int i = 0; i < rank; ++i) s.push_back(Dim());
    return s;
  }

 private:
  const uint8_t* p_;
  size_t n_;
  size_t i_ = 0;
  std::vector<int64_t> pool_;
};

// Data for one tensor: exactly numel elements when the shape is valid and
// small, one dummy element when the shape is invalid (validation must then
// refuse the call before reading). `skip` when legitimately too large.
template <typename T>
struct Data {
  std::unique_ptr<T[]> p;
  bool valid = false;  // NumelChecked(shape) >= 0
  bool skip = false;
  int64_t numel = 0;
};

template <typename T>
Data<T> Allocate(const Shape& s) {
  Data<T> d;
  d.numel = NumelChecked(s);
  d.valid = d.numel >= 0;
  if (d.numel > kMaxInputElements) d.skip = true;
  d.p.reset(new T[d.valid && !d.skip ? size_t(d.numel) : 1]);
  if (!d.valid || d.skip) d.p[0] = T();
  return d;
}

inline void FillFloats(Data<float>* d, uint8_t seed, bool mask) {
  if (!d->valid || d->skip) return;
  static constexpr float kMaskValues[4] = {0.0f, -1.0f, -HUGE_VALF, 0.5f};
  for (int64_t i = 0; i < d->numel; ++i) {
    const int64_t k = (i * 7 + seed) % 13;
    d->p[size_t(i)] = mask ? kMaskValues[k % 4] : float(k - 6) * 0.25f;
  }
}

inline void FillBools(Data<uint8_t>* d, uint8_t seed, int masked_one_in) {
  if (!d->valid || d->skip) return;
  for (int64_t i = 0; i < d->numel; ++i) d->p[size_t(i)] = ((i * 5 + seed) % masked_one_in) == 0;
}

// Checks a Buffer against its claimed shape.
inline bool SizeMatches(const Buffer& b, const Shape& s) {
  const int64_t n = NumelChecked(s);
  return n >= 0 && b.size() == size_t(n);
}

inline bool AllFinite(const Buffer& b) {
  for (size_t i = 0; i < b.size(); ++i)
    if (!std::isfinite(b.data()[i])) return false;
  return true;
}

// Rows of `row` softmax weights each sum to 1, or are all zeros (every key
// masked) where `allow_zero`.
inline bool RowsAreDistributions(const Buffer& b, int64_t row, bool allow_zero) {
  if (row <= 0) return true;
  for (size_t r = 0; r + size_t(row) <= b.size(); r += size_t(row)) {
    double sum = 0;
    bool all_zero = true;
    for (int64_t j = 0; j < row; ++j) {
      const float w = b.data()[r + size_t(j)];
      if (!(w >= 0.0f && w <= 1.0f + 1e-5f)) return false;
      sum += w;
      all_zero = all_zero && w == 0.0f;
    }
    if (all_zero ? !allow_zero : std::fabs(sum - 1.0) > 1e-3) return false;
  }
  return true;
}

inline bool AcceptableError(const Status& s) {
  return !s.message().empty() && (s.code() == Code::kShape || s.code() == Code::kDtype ||
                                   s.code() == Code::kInvalidArgument || s.code() == Code::kOutOfMemory ||
                                   s.code() == Code::kOutOfRange);
}

// Products in double: 0 stays 0, overflow becomes a large finite or inf.
inline double Prod(const Shape& s) {
  double p = 1;
  for (int64_t d : s) p *= double(d < 0 ? 0 : d);
  return p;
}

inline Outcome Sdpa(Reader& in) {
  Outcome o;
  const uint8_t flags = in.U8();
  const double scale = kScales[in.U8() % 8];
  SdpaOptions opts;
  opts.is_causal = flags & 1;
  opts.has_scale = flags & 2;
  opts.scale = scale;
  opts.enable_gqa = flags & 4;
  opts.need_weights = flags & 8;
  opts.dropout_p = (flags & 128) ? 0.5 : 0.0;
  const bool has_mask = flags & 16, mask_bool = flags & 32, mask_bad = flags & 64;
  const bool causal_bias = mask_bad && !has_mask;
  const Shape qs = in.ShapeOf(), ks = in.ShapeOf(), vs = in.ShapeOf();
  const Shape ms = has_mask ? in.ShapeOf() : Shape();
  const uint8_t seed = in.U8();

  Data<float> q = Allocate<float>(qs), k = Allocate<float>(ks), v = Allocate<float>(vs);
  Data<float> mf = Allocate<float>(ms);
  Data<uint8_t> mb = Allocate<uint8_t>(ms);
  if (q.skip || k.skip || v.skip || (has_mask && mf.skip)) return o;
  // Estimated work: broadcast batch × L × S × (E + Ev); skipped when large.
  if (q.valid && k.valid && v.valid && qs.size() >= 2 && ks.size() >= 2 && vs.size() >= 2) {
    Shape qb(qs.begin(), qs.end() - 2), kb(ks.begin(), ks.end() - 2), vb(vs.begin(), vs.end() - 2), wb, ob;
    if (opts.enable_gqa && !qb.empty() && !kb.empty() && !vb.empty()) kb.back() = vb.back() = qb.back();
    if (BroadcastShapes(qb, kb, &wb) && BroadcastShapes(wb, vb, &ob)) {
      // (S + 1): the output is written even when S = 0. With need_weights the
      // weights' batch runs even when the output is empty (a 0 in value's
      // batch dims): the larger of the two batches bounds the work.
      const double batch = std::max(Prod(ob), opts.need_weights ? Prod(wb) : 0.0);
      const double work = batch * (double(qs.end()[-2]) * (double(ks.end()[-2]) + 1) *
                                       (double(qs.back()) + double(vs.back()) + 1) + kHeadWork);
      if (work > kMaxWork) return o;
    }
  }
  FillFloats(&q, seed, false);
  FillFloats(&k, uint8_t(seed + 1), false);
  FillFloats(&v, uint8_t(seed + 2), false);
  FillFloats(&mf, seed, true);
  FillBools(&mb, seed, 3);  // SDPA: true = keep
  bool special = (seed & 0x80) != 0;
  if (special && q.valid && q.numel > 0) {
    static constexpr float kSpecial[4] = {NAN, HUGE_VALF, -HUGE_VALF, 1e30f};
    q.p[size_t(seed % q.numel)] = kSpecial[(seed >> 4) & 3];
  }
  special = special || (opts.has_scale && !(std::fabs(scale) <= 1.0));
  if (has_mask) {
    opts.attn_mask.data = mask_bool ? static_cast<const void*>(mb.p.get()) : mf.p.get();
    opts.attn_mask.dtype = mask_bad ? DType(7) : mask_bool ? DType::kBool : DType::kF32;
    opts.attn_mask.shape = ms;
  }
  if (causal_bias) {
    opts.causal_bias = mask_bool ? CausalBias::kLowerRight : CausalBias::kUpperLeft;
    opts.causal_bias_l = qs.size() >= 2 ? qs.end()[-2] : 0;
    opts.causal_bias_s = ks.size() >= 2 ? ks.end()[-2] : 0;
  }
  SdpaResult r;
  const Status s = ScaledDotProductAttention({q.p.get(), qs}, {k.p.get(), ks}, {v.p.get(), vs}, opts, &r);
  if (!s.ok()) {
    if (!AcceptableError(s)) Violate(&o, "error with code " + CodeName(s.code()) + ": '" + s.message() + "'");
    return o;
  }
  o.accepted = true;
  const std::string call = "SDPA q " + ShapeStr(qs) + " k " + ShapeStr(ks) + " v " + ShapeStr(vs) +
                           (has_mask ? " mask " + ShapeStr(ms) : "") + ": ";
  if (!q.valid || !k.valid || !v.valid || (has_mask && !mf.valid))
    return Violate(&o, call + "accepted an invalid shape"), o;
  if (opts.dropout_p != 0.0) Violate(&o, call + "accepted dropout_p != 0");
  if (opts.is_causal && has_mask) Violate(&o, call + "accepted is_causal with attn_mask");
  if (has_mask && mask_bad) Violate(&o, call + "accepted an invalid mask dtype");
  const Shape& os = r.output_shape;
  if (os.size() < 2 || os.end()[-2] != qs.end()[-2] || os.back() != vs.back())
    Violate(&o, call + "output shape " + ShapeStr(os) + " does not end in (L, Ev)");
  if (os.size() != std::max({qs.size(), ks.size(), vs.size()}))
    Violate(&o, call + "output rank " + ShapeStr(os) + " is not the largest input rank");
  if (!SizeMatches(r.output, os)) Violate(&o, call + "output buffer does not match " + ShapeStr(os));
  if (opts.need_weights) {
    const Shape& ws = r.weights_shape;
    if (ws.size() < 2 || ws.end()[-2] != qs.end()[-2] || ws.back() != ks.end()[-2])
      Violate(&o, call + "weights shape " + ShapeStr(ws) + " does not end in (L, S)");
    if (!SizeMatches(r.weights, ws)) Violate(&o, call + "weights buffer does not match " + ShapeStr(ws));
    // A lower-right causal bias with L > S leaves the first L - S rows no key:
    // zero rows, as documented (and as a mask can).
    const bool rows_without_keys = opts.causal_bias == CausalBias::kLowerRight && qs.end()[-2] > ks.end()[-2];
    if (!special && !RowsAreDistributions(r.weights, ks.end()[-2], has_mask || rows_without_keys))
      Violate(&o, call + "weight rows are not distributions");
  }
  if (!special && !AllFinite(r.output)) Violate(&o, call + "non-finite output from finite inputs");
  return o;
}

inline Outcome Mha(Reader& in) {
  Outcome o;
  MhaConfig c;
  c.embed_dim = kEmbedDims[in.U8() % 16];
  c.num_heads = in.Dim();
  const int64_t kdim_byte = in.Dim(), vdim_byte = in.Dim();  // 0 = unset (embed_dim)
  if (kdim_byte != 0) c.kdim = kdim_byte;
  if (vdim_byte != 0) c.vdim = vdim_byte;
  const uint8_t cflags = in.U8();
  c.bias = cflags & 1;
  c.add_bias_kv = cflags & 2;
  c.add_zero_attn = cflags & 4;
  c.batch_first = cflags & 8;
  c.dropout = kDropouts[(cflags >> 4) & 3];
  const int64_t kdim = c.kdim.value_or(c.embed_dim), vdim = c.vdim.value_or(c.embed_dim);
  in.Pool(c.embed_dim);
  in.Pool(c.num_heads);
  in.Pool(kdim);
  in.Pool(vdim);
  // Parameters of a legitimate size above the input limit are not allocated.
  for (int64_t in_dim : {c.embed_dim, kdim, vdim}) {
    const int64_t n = NumelChecked({c.embed_dim, in_dim});
    if (c.embed_dim > 0 && in_dim > 0 && n > kMaxInputElements) return o;
  }

  MultiheadAttention mha;
  Rng rng(7);
  const Status init = mha.Init(c, rng);
  if (!init.ok()) {
    if (!AcceptableError(init)) Violate(&o, "Init error with code " + CodeName(init.code()) + ": '" + init.message() + "'");
    return o;
  }
  const std::string cfg = "MHA(E " + std::to_string(c.embed_dim) + ", H " + std::to_string(c.num_heads) +
                          ", kdim " + std::to_string(kdim_byte) + ", vdim " + std::to_string(vdim_byte) + ")";
  if (c.embed_dim <= 0 || c.num_heads <= 0 || c.embed_dim % c.num_heads != 0 || kdim <= 0 || vdim <= 0 ||
      !(c.dropout >= 0.0 && c.dropout <= 1.0))
    return Violate(&o, cfg + ": Init accepted the config"), o;

  const uint8_t f = in.U8();
  MhaForwardOptions opts;
  opts.need_weights = f & 1;
  opts.average_attn_weights = f & 2;
  opts.is_causal = f & 4;
  const bool has_kpm = f & 8, kpm_bool = f & 16, has_am = f & 32, am_bool = f & 64, bad_dtype = f & 128;
  const Shape qs = in.ShapeOf(), ks = in.ShapeOf(), vs = in.ShapeOf();
  const Shape kpms = has_kpm ? in.ShapeOf() : Shape();
  const Shape ams = has_am ? in.ShapeOf() : Shape();
  const uint8_t seed = in.U8();

  Data<float> q = Allocate<float>(qs), k = Allocate<float>(ks), v = Allocate<float>(vs);
  Data<float> kpmf = Allocate<float>(kpms), amf = Allocate<float>(ams);
  Data<uint8_t> kpmb = Allocate<uint8_t>(kpms), amb = Allocate<uint8_t>(ams);
  if (q.skip || k.skip || v.skip || kpmf.skip || amf.skip) return o;
  if (q.valid && k.valid && qs.size() >= 2 && ks.size() >= 2) {
    // Work: in-projections + scores + weighted sum + out-projection over N batches.
    const bool bf = c.batch_first && qs.size() == 3;
    const double N = qs.size() == 3 ? double(qs[bf ? 0 : 1]) : 1.0;
    const double L = double(qs[bf ? 1 : 0]), E = double(c.embed_dim);
    const double S = double(ks[bf ? 1 : 0]) + c.add_bias_kv + c.add_zero_attn;
    // Forward returns before any loop when N or L is 0.
    const double work = N * L == 0 ? 0 : N * (2 * L * E * E + S * E * double(kdim + vdim) + 2 * L * S * E);
    if (work > kMaxWork) return o;
  }
  FillFloats(&q, seed, false);
  FillFloats(&k, uint8_t(seed + 1), false);
  FillFloats(&v, uint8_t(seed + 2), false);
  FillFloats(&kpmf, seed, true);
  FillFloats(&amf, uint8_t(seed + 3), true);
  FillBools(&kpmb, seed, 4);  // MHA: true = masked
  FillBools(&amb, uint8_t(seed + 3), 4);
  const bool special = (seed & 0x80) != 0;
  if (special && q.valid && q.numel > 0) {
    static constexpr float kSpecial[4] = {NAN, HUGE_VALF, -HUGE_VALF, 1e30f};
    q.p[size_t(seed % q.numel)] = kSpecial[(seed >> 4) & 3];
  }
  if (has_kpm) {
    opts.key_padding_mask.data = kpm_bool ? static_cast<const void*>(kpmb.p.get()) : kpmf.p.get();
    opts.key_padding_mask.dtype = bad_dtype ? DType(-1) : kpm_bool ? DType::kBool : DType::kF32;
    opts.key_padding_mask.shape = kpms;
  }
  if (has_am) {
    opts.attn_mask.data = am_bool ? static_cast<const void*>(amb.p.get()) : amf.p.get();
    opts.attn_mask.dtype = bad_dtype && !has_kpm ? DType(2) : am_bool ? DType::kBool : DType::kF32;
    opts.attn_mask.shape = ams;
  }

  MhaResult r;
  const Status s = mha.Forward({q.p.get(), qs}, {k.p.get(), ks}, {v.p.get(), vs}, opts, &r);
  if (!s.ok()) {
    if (!AcceptableError(s)) Violate(&o, "Forward error with code " + CodeName(s.code()) + ": '" + s.message() + "'");
    return o;
  }
  o.accepted = true;
  const std::string call = cfg + " q " + ShapeStr(qs) + " k " + ShapeStr(ks) + " v " + ShapeStr(vs) +
                           (has_kpm ? " kpm " + ShapeStr(kpms) : "") + (has_am ? " am " + ShapeStr(ams) : "") + ": ";
  if (!q.valid || !k.valid || !v.valid || (has_kpm && !kpmf.valid) || (has_am && !amf.valid))
    return Violate(&o, call + "accepted an invalid shape"), o;
  if (bad_dtype && (has_kpm || has_am)) Violate(&o, call + "accepted an invalid mask dtype");
  if (opts.is_causal && !has_am) Violate(&o, call + "accepted is_causal without attn_mask");
  if (qs.size() != 2 && qs.size() != 3) return Violate(&o, call + "accepted a query that is not 2-D or 3-D"), o;
  if (r.output_shape != qs) Violate(&o, call + "output shape " + ShapeStr(r.output_shape) + " is not the query's");
  if (!SizeMatches(r.output, r.output_shape)) Violate(&o, call + "output buffer does not match its shape");
  const bool batched = qs.size() == 3, bf = batched && c.batch_first;
  const int64_t N = batched ? qs[bf ? 0 : 1] : 1, L = qs[bf ? 1 : 0];
  const int64_t S2 = ks[bf ? 1 : 0] + (c.add_bias_kv ? 1 : 0) + (c.add_zero_attn ? 1 : 0);
  if (opts.need_weights) {
    Shape want = opts.average_attn_weights ? Shape{L, S2} : Shape{c.num_heads, L, S2};
    if (batched) want.insert(want.begin(), N);
    if (r.weights_shape != want)
      Violate(&o, call + "weights shape " + ShapeStr(r.weights_shape) + ", expected " + ShapeStr(want));
    if (!SizeMatches(r.weights, r.weights_shape)) Violate(&o, call + "weights buffer does not match its shape");
    // Averaged rows of per-head distributions (some all-zero) need not sum to 1.
    if (!special && !opts.average_attn_weights && !RowsAreDistributions(r.weights, S2, has_kpm || has_am))
      Violate(&o, call + "weight rows are not distributions");
  } else if (r.weights.size() != 0 || !r.weights_shape.empty()) {
    Violate(&o, call + "weights returned without need_weights");
  }
  if (!special && !AllFinite(r.output)) Violate(&o, call + "non-finite output from finite inputs");
  return o;
}

}  // namespace detail

inline Outcome AttentionOneInput(const uint8_t* data, size_t size) {
  detail::Reader in(data, size);
  return in.U8() % 2 == 0 ? detail::Sdpa(in) : detail::Mha(in);
}

}  // namespace aw::fuzz

// Defines LLVMFuzzerTestOneInput for one of the functions above: a contract
// violation is printed and aborts, which libFuzzer reports as a crash.
#define AW_FUZZ_TARGET(one_input)                                                    \
  extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {          \
    const ::aw::fuzz::Outcome outcome = one_input(data, size);                       \
    if (!outcome.violation.empty()) {                                                \
      std::fprintf(stderr, "contract violation: %s\n", outcome.violation.c_str());   \
      std::abort();                                                                  \
    }                                                                                \
    return 0;                                                                        \
  }
