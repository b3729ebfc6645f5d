#include "models/translator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/limits.h"
#include "core/rules.h"
#include "core/workspace.h"
#include "kernels/elementwise.h"
#include "kernels/softmax.h"

namespace aw {

Status Translator::Init(const TranslatorConfig& c, Rng& rng) {
  AW_RETURN_IF_ERROR(IntInRange("srcVocab", c.src_vocab, 1, kMaxVocab));
  AW_RETURN_IF_ERROR(IntInRange("tgtVocab", c.tgt_vocab, 1, kMaxVocab));
  AW_RETURN_IF_ERROR(IntInRange("maxLen", c.max_len, 1, kMaxSequence));
  AW_RETURN_IF_ERROR(IntInRange("eos", c.eos, -1, c.tgt_vocab - 1));  // -1: none
  cfg_ = c;
  const int64_t E = c.layer.d_model;
  AW_RETURN_IF_ERROR(src_embed_.Init(c.src_vocab, E, 0, false, rng));
  AW_RETURN_IF_ERROR(tgt_embed_.Init(c.tgt_vocab, E, 0, false, rng));
  AW_RETURN_IF_ERROR(transformer_.Init(c.layer, c.num_encoder_layers, c.num_decoder_layers, rng));
  AW_RETURN_IF_ERROR(generator_.Init(E, c.tgt_vocab, true, rng));
  AW_RETURN_IF_ERROR(pe_.Init(E, c.max_len + 1, false));
  AddChild("src_embed", &src_embed_);
  AddChild("tgt_embed", &tgt_embed_);
  AddChild("transformer", &transformer_);
  AddChild("generator", &generator_);
  return Status::OK();
}

Status Translator::Embed(const Embedding& e, const int32_t* ids, size_t n, int64_t step_pos, const char* what,
                         float* out) {
  AW_RETURN_IF_ERROR(e.CheckIds(ids, int64_t(n), what));
  const size_t E = size_t(cfg_.layer.d_model);
  e.Lookup(n, ids, out, E);
  const float scale = float(cfg_.embed_scale);
  for (size_t i = 0; i < n * E; ++i) out[i] *= scale;
  for (size_t i = 0; i < n; ++i) kernels::f32_add(E, out + i * E, pe_.Row(step_pos >= 0 ? step_pos : int64_t(i)));
  return Status::OK();
}

Status Translator::Encode(const int32_t* src, size_t S, size_t max_beams, TranslatorState* st) {
  if (S == 0 || S > size_t(cfg_.max_len))
    return ShapeError("text: expected 1 to maxLen = " + std::to_string(cfg_.max_len) + " tokens, got " + std::to_string(S));
  AW_RETURN_IF_ERROR(IntInRange("beamSize", int64_t(max_beams), 1, kMaxBeams));
  const size_t E = size_t(cfg_.layer.d_model), L = size_t(cfg_.num_decoder_layers);
  AW_RETURN_IF_ERROR(st->memory.Resize(S * E, "memory"));
  AW_RETURN_IF_ERROR(Embed(src_embed_, src, S, -1, "source", st->memory.data()));
  AW_RETURN_IF_ERROR(transformer_.encoder().Run(st->memory.data(), {int64_t(S), int64_t(E)}, EncoderLayerForward()));
  AW_RETURN_IF_ERROR(st->self.Init(L, max_beams, size_t(cfg_.max_len), E, "self-attention KV cache"));
  st->cross.resize(L);
  for (size_t l = 0; l < L; ++l)
    AW_RETURN_IF_ERROR(transformer_.decoder().layer(l).ProjectMemory(st->memory.data(), S, &st->cross[l]));
  st->S = S; st->beams = max_beams; st->B = 0;
  return Status::OK();
}

Status Translator::Step(TranslatorState* st, const int32_t* tokens, size_t B, float* logits, float* cross) {
  if (st->S == 0) return ArgError("step: call encode() first");
  if (B == 0 || B > st->beams)
    return ArgError("tokens: expected 1 to " + std::to_string(st->beams) + " sequences, got " + std::to_string(B));
  const size_t t = st->self.len;
  if (t >= size_t(cfg_.max_len)) return ArgError("step: the target reached maxLen = " + std::to_string(cfg_.max_len) + " tokens");
  const size_t E = size_t(cfg_.layer.d_model), V = size_t(cfg_.tgt_vocab), H = size_t(cfg_.layer.nhead);
  const size_t L = st->cross.size(), S = st->S;
  ScratchScope scope;
  float* x = nullptr;
  AW_RETURN_IF_ERROR(scope.Take(B * E, "step activations", &x));
  AW_RETURN_IF_ERROR(Embed(tgt_embed_, tokens, B, int64_t(t), "tokens", x));
  for (size_t l = 0; l < L; ++l)
    AW_RETURN_IF_ERROR(transformer_.decoder().layer(l).Step(x, B, &st->self, l, st->cross[l], cross + l * B * H * S));
  st->self.len = t + 1;
  transformer_.decoder().FinalNorm(x, {int64_t(B), int64_t(E)});
  generator_.Apply(B, x, E, logits, V);
  st->B = B;
  return Status::OK();
}

Status Translator::Reorder(TranslatorState* st, const int32_t* parents, size_t B) {
  if (B == 0 || B > st->beams)
    return ArgError("parents: expected 1 to " + std::to_string(st->beams) + " entries, got " + std::to_string(B));
  for (size_t b = 0; b < B; ++b)
    if (parents[b] < 0 || size_t(parents[b]) >= st->B)
      return ArgError("parents: entry " + std::to_string(b) + " = " + std::to_string(parents[b]) +
                      " is not one of the " + std::to_string(st->B) + " current sequences");
  AW_RETURN_IF_ERROR(st->self.Reorder(parents, B));
  st->B = B;
  return Status::OK();
}

Status Translator::ForwardFull(const int32_t* src, size_t S, const int32_t* tgt, size_t T, Buffer* logits,
                               Shape* logits_shape) {
  if (T == 0 || T > size_t(cfg_.max_len))
    return ShapeError("targetIds: expected 1 to maxLen = " + std::to_string(cfg_.max_len) + " tokens, got " + std::to_string(T));
  TranslatorState st;
  AW_RETURN_IF_ERROR(Encode(src, S, 1, &st));
  const size_t E = size_t(cfg_.layer.d_model), V = size_t(cfg_.tgt_vocab);
  ScratchScope scope;
  float* x = nullptr;
  AW_RETURN_IF_ERROR(scope.Take(T * E, "target activations", &x));
  AW_RETURN_IF_ERROR(Embed(tgt_embed_, tgt, T, -1, "targetIds", x));
  DecoderLayerForward o;
  o.tgt_causal = true;
  AW_RETURN_IF_ERROR(transformer_.decoder().Run(x, {int64_t(T), int64_t(E)},
                                                TensorView{st.memory.data(), {int64_t(S), int64_t(E)}}, o));
  AW_RETURN_IF_ERROR(logits->Resize(T * V, "logits"));
  generator_.Apply(T, x, E, logits->data(), V);
  if (logits_shape) *logits_shape = {int64_t(T), int64_t(V)};
  return Status::OK();
}

namespace {

double NowMs() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// steps: T blocks of rows (L·H·S floats each, (layer, head, source) order) →
// out (L·H, T, S).
Status StepsToLayout(const std::vector<float>& steps, size_t T, size_t LH, size_t S, DecodeResult* out) {
  AW_RETURN_IF_ERROR(out->cross.Resize(LH * T * S, "cross-attention weights"));
  for (size_t t = 0; t < T; ++t)
    for (size_t lh = 0; lh < LH; ++lh)
      std::memcpy(out->cross.data() + (lh * T + t) * S, steps.data() + (t * LH + lh) * S, S * sizeof(float));
  return Status::OK();
}

}  // namespace

Status Translator::Decode(const int32_t* src, size_t S, const DecodeOptions& o, DecodeResult* out) {
  const int64_t limit = cfg_.max_len - 1;
  if (o.max_length < 1 || o.max_length > limit)
    return OutOfRangeError("maxLength: expected an integer in [1, " + std::to_string(limit) + "] (maxLen - 1), got " +
                           std::to_string(o.max_length));
  AW_RETURN_IF_ERROR(IntInRange("beamSize", o.beam_size, 1, kMaxBeams));
  AW_RETURN_IF_ERROR(Finite("lengthPenalty", o.length_penalty));
  AW_RETURN_IF_ERROR(IntInRange("firstToken", o.first_token, 0, cfg_.tgt_vocab - 1));
  TranslatorState st;
  AW_RETURN_IF_ERROR(Encode(src, S, size_t(o.beam_size), &st));
  *out = DecodeResult();
  AW_RETURN_IF_ERROR(o.beam_size == 1 && !o.beam_search ? Greedy(&st, o, out) : Beam(&st, o, out));
  out->cross_shape = {cfg_.num_decoder_layers, cfg_.layer.nhead, int64_t(out->ids.size()), int64_t(S)};
  return Status::OK();
}

namespace {

// A step's outputs, reused by every step of a decoding: logits (beams, V), cross-attention (L, beams, H, S).
struct StepOutputs {
  float* logits = nullptr;
  float* cross = nullptr;
  Status Take(ScratchScope* scope, const TranslatorConfig& c, const TranslatorState& st) {
    AW_RETURN_IF_ERROR(scope->Take(st.beams * size_t(c.tgt_vocab), "logits", &logits));
    return scope->Take(size_t(c.num_decoder_layers * c.layer.nhead) * st.beams * st.S, "cross-attention weights", &cross);
  }
};

}  // namespace

Status Translator::Greedy(TranslatorState* st, const DecodeOptions& o, DecodeResult* out) {
  const size_t V = size_t(cfg_.tgt_vocab), LH = size_t(cfg_.num_decoder_layers * cfg_.layer.nhead);
  const size_t S = st->S;
  ScratchScope scope;
  StepOutputs step;
  AW_RETURN_IF_ERROR(step.Take(&scope, cfg_, *st));
  std::vector<float> steps;
  std::vector<double> lp;
  int32_t tok = o.first_token;
  for (int64_t t = 0; t < o.max_length; ++t) {
    const double t0 = NowMs();
    AW_RETURN_IF_ERROR(Step(st, &tok, 1, step.logits, step.cross));
    out->step_ms.push_back(float(NowMs() - t0));
    const float* l = step.logits;
    size_t best = 0;
    for (size_t j = 1; j < V; ++j)
      if (l[j] > l[best]) best = j;
    lp.resize(V);
    kernels::f32_log_softmax_f64(V, l, lp.data());
    out->score += lp[best];
    steps.insert(steps.end(), step.cross, step.cross + LH * S);
    out->ids.push_back(int32_t(best));
    if (int64_t(best) == cfg_.eos) break;
    tok = int32_t(best);
  }
  return StepsToLayout(steps, out->ids.size(), LH, S, out);
}

Status Translator::Beam(TranslatorState* st, const DecodeOptions& o, DecodeResult* out) {
  struct Hyp {
    std::vector<int32_t> ids;
    std::vector<float> steps;  // per step: L·H·S cross-attention rows
    double score = 0, norm = 0;
    int32_t parent = 0;
  };
  struct Cand {
    int32_t parent, token;
    double score;
  };
  const size_t V = size_t(cfg_.tgt_vocab), H = size_t(cfg_.layer.nhead), L = size_t(cfg_.num_decoder_layers);
  const size_t S = st->S, HS = H * S;
  ScratchScope scope;
  StepOutputs step;
  AW_RETURN_IF_ERROR(step.Take(&scope, cfg_, *st));
  auto norm = [&](double score, size_t len) { return score / std::pow(double(len), o.length_penalty); };
  std::vector<Hyp> beams(1), finished, next;
  std::vector<int32_t> last{o.first_token}, parents;
  std::vector<double> lp;
  std::vector<uint8_t> taken;
  std::vector<Cand> cand;
  for (int64_t t = 0; t < o.max_length && !beams.empty(); ++t) {
    const size_t B = beams.size();
    const double t0 = NowMs();
    AW_RETURN_IF_ERROR(Step(st, last.data(), B, step.logits, step.cross));
    out->step_ms.push_back(float(NowMs() - t0));
    const size_t width = size_t(o.beam_size) - finished.size();
    cand.clear();
    for (size_t b = 0; b < B; ++b) {
      lp.resize(V);
      kernels::f32_log_softmax_f64(V, step.logits + b * V, lp.data());
      // Each beam's top `width` tokens contain the global top `width` continuations.
      // (Selection loops, not std::sort: width <= 16, and the .wasm stays small.)
      taken.assign(V, 0);
      for (size_t i = 0; i < std::min(width, V); ++i) {
        size_t best = V;
        for (size_t j = 0; j < V; ++j)
          if (!taken[j] && (best == V || lp[j] > lp[best])) best = j;  // ties: the lower token
        taken[best] = 1;
        cand.push_back({int32_t(b), int32_t(best), beams[b].score + lp[best]});
      }
    }
    // The top `width` candidates in order: higher score, then lower parent, then lower token.
    auto before = [](const Cand& x, const Cand& y) {
      if (x.score != y.score) return x.score > y.score;
      return x.parent != y.parent ? x.parent < y.parent : x.token < y.token;
    };
    for (size_t i = 0; i < std::min(width, cand.size()); ++i) {
      size_t best = i;
      for (size_t j = i + 1; j < cand.size(); ++j)
        if (before(cand[j], cand[best])) best = j;
      std::swap(cand[i], cand[best]);
    }
    next.clear();
    for (size_t i = 0; i < std::min(width, cand.size()); ++i) {
      const Cand& c = cand[i];
      const Hyp& p = beams[size_t(c.parent)];
      Hyp h;
      h.ids = p.ids;
      h.ids.push_back(c.token);
      h.steps = p.steps;
      for (size_t l = 0; l < L; ++l) {  // this step's cross-attention of the parent beam
        const float* row = step.cross + (l * B + size_t(c.parent)) * HS;
        h.steps.insert(h.steps.end(), row, row + HS);
      }
      h.score = c.score;
      h.parent = c.parent;
      if (int64_t(c.token) == cfg_.eos) {
        h.norm = norm(h.score, h.ids.size());
        finished.push_back(std::move(h));
      } else {
        next.push_back(std::move(h));
      }
    }
    beams.swap(next);
    if (!beams.empty()) {
      parents.clear();
      last.clear();
      for (const Hyp& h : beams) {
        parents.push_back(h.parent);
        last.push_back(h.ids.back());
      }
      AW_RETURN_IF_ERROR(Reorder(st, parents.data(), parents.size()));
    }
  }
  for (Hyp& h : beams) {
    h.norm = norm(h.score, h.ids.size());
    finished.push_back(std::move(h));
  }
  size_t win = 0;  // the first hypothesis with the highest normalised score
  for (size_t i = 1; i < finished.size(); ++i)
    if (finished[i].norm > finished[win].norm) win = i;
  Hyp& best = finished[win];
  out->ids = std::move(best.ids);
  out->score = best.score;
  return StepsToLayout(best.steps, out->ids.size(), L * H, S, out);
}

}  // namespace aw
