// The embind registrations of the model families' calls on a loaded model's handle (models/*.h): the causal
// LM's forward and KV-cache steps, the encoder's forward and one-pass pooling, the translator's decoding, the
// ViT classifier's classify. Marshalling: marshal.h; loading: files_bind.cpp.
#include <emscripten/bind.h>

#include "marshal.h"
#include "models/causal_lm.h"
#include "models/clip_model.h"
#include "kernels/softmax.h"
#include "models/encoder.h"
#include "models/family.h"
#include "models/seq2seq.h"
#include "models/whisper.h"
#include "models/translator.h"
#include "models/vit_classifier.h"

namespace awb {
namespace {


// Source ids → generated ids (T), cross-attention (layers, heads, T, S),
// step times (T, ms), summed log probability (1).
std::unique_ptr<CallResult> TranslatorDecode(ModuleHandle& h, val a) {
  aw::DecodeOptions o;
  o.first_token = a["firstToken"].as<int>();
  o.max_length = Int(a, "maxLength");
  o.beam_size = Int(a, "beamSize");
  o.length_penalty = a["lengthPenalty"].as<double>();
  o.beam_search = Flag(a, "beamSearch");
  aw::DecodeResult r;
  aw::Status s = h.as<aw::Translator>().Decode(Ids(a["src"]), Len(a["src"]), o, &r);
  auto res = std::make_unique<CallResult>(s);
  if (s.ok()) {
    const int64_t T = int64_t(r.ids.size());
    res->Add(std::move(r.ids), {T});
    res->Add(std::move(r.cross), r.cross_shape);
    res->Add(std::move(r.step_ms), {T});
    res->Add(std::vector<float>{float(r.score)}, {1});
  }
  return res;
}
std::unique_ptr<CallResult> TranslatorForwardFull(ModuleHandle& h, val a) {
  aw::Buffer logits;
  aw::Shape shape;
  aw::Status s = h.as<aw::Translator>().ForwardFull(Ids(a["src"]), Len(a["src"]), Ids(a["tgt"]), Len(a["tgt"]), &logits, &shape);
  return One(s, std::move(logits), shape);
}

// Image (C·H·W values) → logits (K), probabilities (K), index (1),
// attention (layers, heads, P), rollout (P).
std::unique_ptr<CallResult> ClassifierClassify(ModuleHandle& h, val a) {
  const aw::TensorView x = TensorArg(a["image"]);
  aw::ClassifyResult r;
  aw::Status s = h.as<aw::VitClassifier>().Classify(x.data, size_t(aw::NumelChecked(x.shape)), &r);
  auto res = std::make_unique<CallResult>(s);
  if (s.ok()) {
    const int64_t K = int64_t(r.logits.size()), P = int64_t(r.rollout.size());
    res->Add(std::move(r.logits), {K});
    res->Add(std::move(r.probabilities), {K});
    res->Add(std::vector<int32_t>{int32_t(r.index)}, {1});
    res->Add(std::move(r.attention), r.attention_shape);
    res->Add(std::move(r.rollout), {P});
  }
  return res;
}

// ---- the causal LM family (models/causal_lm.h) ----

// { ids: { ptr, shape (B, T) }, hidden } → logits (B, T, vocab), or with hidden the final norm's rows (B, T, hidden)
std::unique_ptr<CallResult> LmForward(ModuleHandle& h, val a) {
  return Forward<aw::CausalLm>(h, Ids(a["ids"]), ShapeFrom(a["ids"]["shape"]), Flag(a, "hidden"));
}

// An encoder's padded batch: {ids, types?, mask?} (B, T) → lastHiddenState (B, T, E) [, poolerOutput (B, E)].
std::unique_ptr<CallResult> EmbedderForward(ModuleHandle& h, val a) {
  const aw::Shape shape = ShapeFrom(a["ids"]["shape"]);
  if (shape.size() != 2) return std::make_unique<CallResult>(aw::ShapeError("inputIds: expected (batch, tokens), got " + aw::ShapeStr(shape)));
  auto opt = [&](const char* key) { return a[key].isUndefined() ? nullptr : Ids(a[key]); };
  aw::Buffer hidden, pooled, attention;
  auto& m = h.as<aw::Encoder>();
  const bool want = Flag(a, "attention");
  aw::Status s = m.Forward(Ids(a["ids"]), opt("types"), opt("mask"), shape[0], shape[1], &hidden, &pooled,
                           want ? &attention : nullptr);
  auto res = One(s, std::move(hidden), {shape[0], shape[1], m.config().hidden});
  if (s.ok()) {  // outputs: lastHiddenState, poolerOutput (empty without a pooler), attentions (when asked)
    res->Add(std::move(pooled), m.config().pooler ? aw::Shape{shape[0], m.config().hidden} : aw::Shape{0});
    if (want) res->Add(std::move(attention), {shape[0], m.config().layers, m.config().heads, shape[1], shape[1]});
  }
  return res;
}

// Sentences of their own lengths: {ids (total), lengths (n), types?, skip?, modes (a bitmask of Pooling),
// normalize, head} → (n, E · the modes on), one pass; with head the task head's logits, (n, labels) or (total
// tokens, labels).
std::unique_ptr<CallResult> EmbedderEmbed(ModuleHandle& h, val a) {
  auto& m = h.as<aw::Encoder>();
  const size_t n = Len(a["lengths"]);
  aw::EmbedOptions o;
  o.modes = uint32_t(a["modes"].as<int>());
  o.normalize = Flag(a, "normalize");
  o.skip = a["skip"].isUndefined() ? nullptr : Ids(a["skip"]);
  o.head = Flag(a, "head");
  aw::Buffer out;
  aw::Status s = m.Embed(Ids(a["ids"]), a["types"].isUndefined() ? nullptr : Ids(a["types"]), Ids(a["lengths"]), n, o, &out);
  int64_t k = 0;
  for (int i = 0; i < aw::kPoolingModes; ++i) k += (o.modes >> i) & 1;
  const int64_t rows = o.head && m.config().head == aw::EncoderHead::kToken ? int64_t(out.size()) / std::max<int64_t>(m.config().labels, 1) : int64_t(n);
  return One(s, std::move(out), {rows, o.head ? m.config().labels : k * m.config().hidden});
}

// A vision encoder (vit, deit, dinov2): {pixels: {ptr, shape (B, C, H, W)}, head, interpolate} → lastHiddenState (B, T, E),
// poolerOutput (B, E; empty without one), logits (B, labels; empty without head or an image-classification head)
// [, attentions (B, layers, heads, T, T) with attention].
std::unique_ptr<CallResult> VisionForward(ModuleHandle& h, val a) {
  auto& m = h.as<aw::Encoder>();
  const aw::TensorView x = TensorArg(a["pixels"]);
  const bool head = Flag(a, "head") && m.config().head == aw::EncoderHead::kImage;
  aw::Buffer hidden, pooled, logits, attention;
  const bool want = Flag(a, "attention");
  aw::Status s = m.ForwardPixels(x.data, x.shape, Flag(a, "interpolate"), &hidden, &pooled, head ? &logits : nullptr,
                                 want ? &attention : nullptr);
  const aw::EncoderConfig& c = m.config();
  const int64_t B = x.shape.empty() ? 0 : x.shape[0];
  const int64_t T = s.ok() ? int64_t(hidden.size()) / (B * c.hidden) : 0;
  auto res = One(s, std::move(hidden), {B, T, c.hidden});
  if (s.ok()) {
    const bool pools = c.pooler || c.dinov2;
    res->Add(std::move(pooled), pools ? aw::Shape{B, c.hidden} : aw::Shape{0});
    res->Add(std::move(logits), head ? aw::Shape{B, c.labels} : aw::Shape{0});
    if (want) res->Add(std::move(attention), {B, c.layers, c.heads, T, T});
  }
  return res;
}

// A two-tower model (clip, siglip): {pixels: {ptr, shape (B, C, H, W)}, interpolate, attention} → imageEmbeds (B, D)
// (get_image_features, not normalized), the vision tower's lastHiddenState (B, T, E) [, its attentions (B, layers,
// heads, T, T) with attention].
std::unique_ptr<CallResult> ClipImageEmbeds(ModuleHandle& h, val a) {
  auto& m = h.as<aw::ClipModel>();
  const aw::TensorView x = TensorArg(a["pixels"]);
  const bool want = Flag(a, "attention");
  aw::Buffer out, hidden, attention;
  aw::Status s = m.ImageEmbeds(x.data, x.shape, Flag(a, "interpolate"), &out, &hidden, want ? &attention : nullptr);
  const int64_t B = x.shape.empty() ? 0 : x.shape[0];
  const int64_t D = s.ok() && B > 0 ? int64_t(out.size()) / B : 0;
  auto res = One(s, std::move(out), {B, D});
  if (s.ok()) {
    const aw::EncoderConfig& c = m.vision_config();
    const int64_t T = int64_t(hidden.size()) / (B * c.hidden);
    res->Add(std::move(hidden), {B, T, c.hidden});
    if (want) res->Add(std::move(attention), {B, c.layers, c.heads, T, T});
  }
  return res;
}

// {ids: {ptr, shape (B, T)}, mask?} → textEmbeds (B, D) (get_text_features, not normalized).
std::unique_ptr<CallResult> ClipTextEmbeds(ModuleHandle& h, val a) {
  const aw::Shape shape = ShapeFrom(a["ids"]["shape"]);
  if (shape.size() != 2) return std::make_unique<CallResult>(aw::ShapeError("inputIds: expected (batch, tokens), got " + aw::ShapeStr(shape)));
  aw::Buffer out;
  aw::Status s = h.as<aw::ClipModel>().TextEmbeds(Ids(a["ids"]), a["mask"].isUndefined() ? nullptr : Ids(a["mask"]), shape[0], shape[1], &out);
  const int64_t D = s.ok() ? int64_t(out.size()) / shape[0] : 0;
  return One(s, std::move(out), {shape[0], D});
}

// → (2): exp(logit_scale), logit_bias (1 and 0 for a one-tower model).
std::unique_ptr<CallResult> ClipLogitScale(ModuleHandle& h) {
  const auto& m = h.as<aw::ClipModel>();
  auto res = std::make_unique<CallResult>(aw::Status::OK());
  res->Add(std::vector<float>{m.LogitScale(), m.LogitBias()}, {2});
  return res;
}

// A KV cache being generated into. Owner: the JS generator (deleted when it ends, or by close()).
class KvCacheHandle {
 public:
  KvCacheHandle(ModuleHandle& h, size_t batch, size_t capacity) {
    status_ = h.as<aw::CausalLm>().Begin(batch, capacity, &cache_);
  }
  int code() const { return int(status_.code()); }
  std::string message() const { return status_.message(); }
  double length() const { return double(cache_.len); }
  aw::KvCache& cache() { return cache_; }

 private:
  aw::Status status_;
  aw::KvCache cache_;
};

std::unique_ptr<KvCacheHandle> LmBegin(ModuleHandle& h, double batch, double capacity) {
  return std::make_unique<KvCacheHandle>(h, size_t(batch), size_t(capacity));
}

// { ids: { ptr, shape (batch, T) }, window, attention: bool } → logits (batch, vocab) [, attention (batch,
// layers, heads, positions)]
std::unique_ptr<CallResult> LmAppend(ModuleHandle& h, KvCacheHandle& c, val a) {
  aw::Buffer logits, attention;
  aw::Shape ls, as;
  const bool want_attention = Flag(a, "attention");
  aw::Status s = h.as<aw::CausalLm>().Append(&c.cache(), Ids(a["ids"]), ShapeFrom(a["ids"]["shape"]), Int(a, "window"),
                                             want_attention, &logits, &ls, &attention, &as);
  auto res = One(s, std::move(logits), ls);
  if (s.ok() && want_attention) res->Add(std::move(attention), as);
  return res;
}

// A batch of sources being decoded (models/seq2seq.h Seq2SeqState). Owner: the JS generation (deleted when it ends,
// or by close()).
class Seq2SeqStateHandle {
 public:
  int code() const { return int(status_.code()); }
  std::string message() const { return status_.message(); }
  double length() const { return double(state_.self.len); }
  aw::Seq2SeqState& state() { return state_; }
  aw::Status status_;

 private:
  aw::Seq2SeqState state_;
};

// {ids: {ptr, shape (B, S)}, mask?, beams, capacity} → a state (its code() says whether the encoder ran).
std::unique_ptr<Seq2SeqStateHandle> Seq2SeqBegin(ModuleHandle& h, val a) {
  auto st = std::make_unique<Seq2SeqStateHandle>();
  const aw::Shape shape = ShapeFrom(a["ids"]["shape"]);
  if (shape.size() != 2) {
    st->status_ = aw::ShapeError("inputIds: expected (batch, tokens), got " + aw::ShapeStr(shape));
    return st;
  }
  st->status_ = h.as<aw::Seq2SeqModel>().Begin(Ids(a["ids"]), a["mask"].isUndefined() ? nullptr : Ids(a["mask"]), shape[0],
                                            shape[1], Int(a, "beams"), Int(a, "capacity"), &st->state());
  return st;
}

// {tokens: {ptr, shape (rows, T)}, all, logSoftmax} → logits (rows, V), or (rows, T, V) when all; with logSoftmax
// each row's log-probabilities instead (kernels f32_log_softmax: beam search's scores). With bounded (T = 1, not
// all, a bounded head: Seq2SeqModel::HeadBounded): nothing; the state keeps lower and upper bounds (rows, V) of
// the logits, from the head's q8 copy. After a bounded step: {exact: {ptr, shape (n)}, row} → the exact logits of
// that row at those ids, or with row −1 each row's candidates (Seq2SeqModel::SelectBounded: `exact` its request)
// (one entry for all: a few hundred bytes less .wasm than three).
std::unique_ptr<CallResult> Seq2SeqStep(ModuleHandle& h, Seq2SeqStateHandle& st, val a) {
  auto& m = h.as<aw::Seq2SeqModel>();
  if (!a["exact"].isUndefined()) {  // row −1: select
    const int64_t row = Int(a, "row"), n = int64_t(Len(a["exact"]));
    aw::Buffer out;
    aw::Status s = row == -1 ? m.SelectBounded(&st.state(), Ids(a["exact"]), n, &out)
                             : out.Resize(size_t(n), "exact logits");
    if (s.ok() && row != -1) s = m.HeadExact(st.state(), row, Ids(a["exact"]), n, out.data());
    const int64_t size = int64_t(out.size());
    return One(s, std::move(out), aw::Shape{size});
  }
  const aw::Shape shape = ShapeFrom(a["tokens"]["shape"]);
  if (shape.size() != 2 || size_t(shape[0]) != st.state().rows)
    return std::make_unique<CallResult>(aw::ShapeError("decoderInputIds: expected (" + std::to_string(st.state().rows) +
                                                       ", tokens), got " + aw::ShapeStr(shape)));
  const bool all = Flag(a, "all"), bounded = Flag(a, "bounded");
  const int64_t V = m.out_vocab();
  if (bounded && (all || shape[1] != 1 || !m.HeadBounded()))
    return std::make_unique<CallResult>(aw::ArgError("bounded: one token per row and a float32 head only"));
  if (bounded) {  // the lower bounds into the state's buffer, kept for select
    st.state().bounded_step = true;
    aw::Status s = m.Append(&st.state(), Ids(a["tokens"]), shape[1], false, &st.state().lower);
    st.state().bounded_step = false;
    if (!s.ok()) st.state().head_rows = 0;
    return std::make_unique<CallResult>(s);
  }
  aw::Buffer logits;
  aw::Status s = m.Append(&st.state(), Ids(a["tokens"]), shape[1], all, &logits);
  if (s.ok() && Flag(a, "logSoftmax"))
    for (size_t r = 0; r < logits.size() / size_t(V); ++r) aw::kernels::f32_log_softmax(size_t(V), logits.data() + r * size_t(V));
  return One(s, std::move(logits), all ? aw::Shape{shape[0], shape[1], V} : aw::Shape{shape[0], V});
}

// {x: (rows, n)} → each row's log-probabilities (kernels f32_log_softmax): generate()'s renormalize_logits
// (LogitNormalization) on the scores of a stepper that gave log-probabilities.
std::unique_ptr<CallResult> LogSoftmaxRows(val a) {
  const aw::TensorView x = TensorArg(a["x"]);
  if (x.shape.size() != 2 || x.shape[0] < 1 || x.shape[1] < 1)
    return std::make_unique<CallResult>(aw::ShapeError("scores: expected (rows, vocab) with both >= 1, got " + aw::ShapeStr(x.shape)));
  const size_t rows = size_t(x.shape[0]), n = size_t(x.shape[1]);
  aw::Buffer y;
  aw::Status s = y.Resize(rows * n, "log-probabilities");
  if (s.ok()) {
    std::memcpy(y.data(), x.data, rows * n * sizeof(float));
    for (size_t r = 0; r < rows; ++r) aw::kernels::f32_log_softmax(n, y.data() + r * n);
  }
  return One(s, std::move(y), x.shape);
}

// {parents: {ptr, shape (rows)}} → nothing; or {sources: {ptr, shape (n)}}: the state keeps those sources only
// (Seq2SeqModel::Keep; one call for both, a few hundred bytes less .wasm than two).
std::unique_ptr<CallResult> Seq2SeqReorder(ModuleHandle& h, Seq2SeqStateHandle& st, val a) {
  auto& m = h.as<aw::Seq2SeqModel>();
  const bool keep = !a["sources"].isUndefined();
  const val t = a[keep ? "sources" : "parents"];
  const aw::Shape shape = ShapeFrom(t["shape"]);
  const int64_t n = shape.empty() ? 0 : shape[0];
  return std::make_unique<CallResult>(keep ? m.Keep(&st.state(), Ids(t), n) : m.Reorder(&st.state(), Ids(t), n));
}

// {ids: (B, S), mask?, dec: (B, T)} → logits (B, T, V), encoderLastHiddenState (B, S, E).
std::unique_ptr<CallResult> Seq2SeqForward(ModuleHandle& h, val a) {
  const aw::Shape shape = ShapeFrom(a["ids"]["shape"]), dshape = ShapeFrom(a["dec"]["shape"]);
  if (shape.size() != 2) return std::make_unique<CallResult>(aw::ShapeError("inputIds: expected (batch, tokens), got " + aw::ShapeStr(shape)));
  if (dshape.size() != 2 || dshape[0] != shape[0])
    return std::make_unique<CallResult>(aw::ShapeError("decoderInputIds: expected (" + std::to_string(shape[0]) +
                                                       ", tokens) (inputIds' batch), got " + aw::ShapeStr(dshape)));
  auto& m = h.as<aw::Seq2SeqModel>();
  aw::Buffer logits, hidden;
  aw::Status s = m.Forward(Ids(a["ids"]), a["mask"].isUndefined() ? nullptr : Ids(a["mask"]), shape[0], shape[1],
                           Ids(a["dec"]), dshape[1], &logits, &hidden);
  auto res = One(s, std::move(logits), {dshape[0], dshape[1], m.out_vocab()});
  if (s.ok()) res->Add(std::move(hidden), {shape[0], shape[1], m.hidden_size()});
  return res;
}

// Whisper (models/whisper.h). {features: (B, n_mels, frames) float32, beams, capacity} → a state, as seq2seqBegin
// (then stepped, reordered and freed by the seq2seq functions).
aw::Status NotWhisper(const ModuleHandle& h, const char* what = "inputFeatures: only a Whisper checkpoint takes input features") {
  if (h.family() && std::string(h.family()->kind) == "whisper") return aw::Status::OK();
  return aw::ArgError(what);
}

std::unique_ptr<Seq2SeqStateHandle> SpeechBegin(ModuleHandle& h, val a) {
  auto st = std::make_unique<Seq2SeqStateHandle>();
  if (!(st->status_ = NotWhisper(h)).ok()) return st;
  const aw::TensorView x = TensorArg(a["features"]);
  if (x.shape.size() != 3) {
    st->status_ = aw::ShapeError("inputFeatures: expected (batch, num_mel_bins, frames), got " + aw::ShapeStr(x.shape));
    return st;
  }
  st->status_ = h.as<aw::WhisperLm>().BeginFeatures(x.data, x.shape[0], x.shape[1], x.shape[2], Int(a, "beams"),
                                                    Int(a, "capacity"), &st->state());
  return st;
}

// {features: (B, n_mels, frames), dec: (B, T)} → logits (B, T, V), encoderLastHiddenState (B, max_source, E).
std::unique_ptr<CallResult> SpeechForward(ModuleHandle& h, val a) {
  if (aw::Status s = NotWhisper(h); !s.ok()) return std::make_unique<CallResult>(s);
  const aw::TensorView x = TensorArg(a["features"]);
  const aw::Shape dshape = ShapeFrom(a["dec"]["shape"]);
  if (x.shape.size() != 3)
    return std::make_unique<CallResult>(aw::ShapeError("inputFeatures: expected (batch, num_mel_bins, frames), got " + aw::ShapeStr(x.shape)));
  if (dshape.size() != 2 || dshape[0] != x.shape[0])
    return std::make_unique<CallResult>(aw::ShapeError("decoderInputIds: expected (" + std::to_string(x.shape[0]) +
                                                       ", tokens) (inputFeatures' batch), got " + aw::ShapeStr(dshape)));
  auto& m = h.as<aw::WhisperLm>();
  aw::Buffer logits, hidden;
  aw::Status s = m.ForwardFeatures(x.data, x.shape[0], x.shape[1], x.shape[2], Ids(a["dec"]), dshape[1], &logits, &hidden);
  auto res = One(s, std::move(logits), {dshape[0], dshape[1], m.out_vocab()});
  if (s.ok()) res->Add(std::move(hidden), {x.shape[0], m.config().max_source, m.hidden_size()});
  return res;
}

// {tokens: (rows, T), heads: (n, 2) int32 [layer, head] pairs} → the alignment heads' cross-attention probabilities
// (rows, n, T, max_source) under teacher forcing against the state (models/whisper.h AlignmentWeights).
std::unique_ptr<CallResult> SpeechAlignment(ModuleHandle& h, Seq2SeqStateHandle& st, val a) {
  if (aw::Status s = NotWhisper(h, "alignmentHeads: only a Whisper checkpoint has cross-attention alignment heads"); !s.ok())
    return std::make_unique<CallResult>(s);
  const aw::Shape ts = ShapeFrom(a["tokens"]["shape"]), hs = ShapeFrom(a["heads"]["shape"]);
  if (ts.size() != 2) return std::make_unique<CallResult>(aw::ShapeError("tokens: expected (rows, positions), got " + aw::ShapeStr(ts)));
  if (hs.size() != 2 || hs[1] != 2)
    return std::make_unique<CallResult>(aw::ShapeError("alignmentHeads: expected (pairs, 2) [layer, head] pairs, got " + aw::ShapeStr(hs)));
  const int32_t* hp = Ids(a["heads"]);
  std::vector<std::pair<int64_t, int64_t>> heads(static_cast<size_t>(hs[0]));
  for (size_t i = 0; i < heads.size(); ++i) heads[i] = {hp[2 * i], hp[2 * i + 1]};
  auto& m = h.as<aw::WhisperLm>();
  aw::Buffer out;
  aw::Status s = m.AlignmentWeights(&st.state(), Ids(a["tokens"]), ts[0], ts[1], heads, &out);
  return One(s, std::move(out), {ts[0], hs[0], ts[1], m.config().max_source});
}

// The attention window rule (models/causal_lm.h CheckAttentionWindow), for generate()'s option before it runs.
std::unique_ptr<CallResult> CheckAttentionWindow(double window) {
  return std::make_unique<CallResult>(aw::CheckAttentionWindow(int64_t(window)));
}

}  // namespace
}  // namespace awb

using namespace awb;  // NOLINT: the registrations name this file's functions

EMSCRIPTEN_BINDINGS(attnwasm_models) {
  emscripten::function("translatorDecode", &TranslatorDecode);
  emscripten::function("translatorForwardFull", &TranslatorForwardFull);
  emscripten::function("classifierClassify", &ClassifierClassify);
  emscripten::class_<KvCacheHandle>("KvCacheHandle")
      .function("code", &KvCacheHandle::code)
      .function("message", &KvCacheHandle::message)
      .function("length", &KvCacheHandle::length);
  emscripten::function("lmForward", &LmForward);
  emscripten::function("embedderForward", &EmbedderForward);
  emscripten::function("embedderEmbed", &EmbedderEmbed);
  emscripten::function("visionForward", &VisionForward);
  emscripten::function("clipImageEmbeds", &ClipImageEmbeds);
  emscripten::function("clipTextEmbeds", &ClipTextEmbeds);
  emscripten::function("clipLogitScale", &ClipLogitScale);
  emscripten::function("lmBegin", &LmBegin);
  emscripten::function("lmAppend", &LmAppend);
  emscripten::function("checkAttentionWindow", &CheckAttentionWindow);
  emscripten::class_<Seq2SeqStateHandle>("Seq2SeqStateHandle")
      .function("code", &Seq2SeqStateHandle::code)
      .function("message", &Seq2SeqStateHandle::message)
      .function("length", &Seq2SeqStateHandle::length);
  emscripten::function("seq2seqBegin", &Seq2SeqBegin);
  emscripten::function("seq2seqStep", &Seq2SeqStep);
  emscripten::function("logSoftmaxRows", &LogSoftmaxRows);
  emscripten::function("seq2seqReorder", &Seq2SeqReorder);
  emscripten::function("seq2seqForward", &Seq2SeqForward);
  emscripten::function("speechBegin", &SpeechBegin);
  emscripten::function("speechForward", &SpeechForward);
  emscripten::function("speechAlignment", &SpeechAlignment);
}
