// The causal LM family (src/models/causal_lm.*) natively, against the PyTorch
// goldens of tests/data/make_lm_goldens.py (tests/data/goldens/lm/models/):
// Llama and Qwen2 checkpoints in F32, F16 and BF16, tied and untied, with and
// without biases, grouped-query heads 1 … 8, head dims 8 … 128:
//   - Forward's logits at every position within the golden's tolerance;
//   - a prefill then one token at a time through the KV cache: the same logits
//     at every position, and the attention of the last token;
//   - greedy continuations equal torch's (KV cache) at every step;
// and its own invariants: a prompt cut into pieces by a small working-memory
// budget gives the bits of the whole prompt; 1, 2 and 3 threads give the same
// bits; a window as long as the sequence changes nothing, a shorter one masks
// the keys behind it in both paths (step and chunk) alike; the Hugging Face
// checkpoints it must refuse are refused by name (refusals/cases.json); bad
// ids and a full cache are errors naming the argument.
//
// Elsewhere: the same goldens through the JS API (tests/js/models/causal_lm.test.mjs).
#include "models/causal_lm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "core/workspace.h"
#include "io/json.h"
#include "io/safetensors.h"
#include "model_test_util.h"

namespace aw {
namespace {

const char* const kModels[] = {"llama_bias_gqa4_hd64",       "llama_tied_bias_gqa8_hd8",  "llama_tied_gqa2_hd128_bf16",
                               "llama_untied_gqa2_hd8",      "qwen2_tied_gqa3_hd16_bf16", "qwen2_untied_gqa1_hd32_f16"};

std::string TextOf(const std::vector<uint8_t>& b) { return std::string(b.begin(), b.end()); }

// One golden model: the checkpoint loaded as aw.loadModel would load it, and its expected values.
struct Case {
  std::string name;
  std::vector<uint8_t> weights;
  io::StFile file;
  std::unique_ptr<Module> module;
  io::StConverted expected;
  io::JsonValue spec;
  double atol = 0, rtol = 0;
  CausalLm* lm() const { return static_cast<CausalLm*>(module.get()); }
  const io::StTensor* Tensor(const std::string& key, size_t* index) const {
    for (size_t i = 0; i < expected.file.tensors.size(); ++i)
      if (expected.file.tensors[i].name == key) {
        *index = i;
        return &expected.file.tensors[i];
      }
    return nullptr;
  }
  std::vector<float> F32(const std::string& key, Shape* shape = nullptr) const {
    size_t i = 0;
    const io::StTensor* t = Tensor(key, &i);
    EXPECT_TRUE(t) << key;
    if (!t) return {};
    if (shape) *shape = t->shape;
    return std::vector<float>(expected.f32[i].data(), expected.f32[i].data() + expected.f32[i].size());
  }
  std::vector<int32_t> I32(const std::string& key, Shape* shape = nullptr) const {
    size_t i = 0;
    const io::StTensor* t = Tensor(key, &i);
    EXPECT_TRUE(t) << key;
    if (!t) return {};
    if (shape) *shape = t->shape;
    return std::vector<int32_t>(expected.i32[i].data(), expected.i32[i].data() + expected.i32[i].size());
  }
};

Status LoadCheckpoint(const std::string& dir, bool with_config, Case* c) {
  c->weights = test::ReadBytes(dir + "/model.safetensors");
  AW_RETURN_IF_ERROR(io::ParseSafetensors(c->weights.data(), c->weights.size(), &c->file));
  const std::string config = with_config ? TextOf(test::ReadBytes(dir + "/config.json")) : std::string();
  std::string kind;
  AW_RETURN_IF_ERROR(LoadModel(c->weights.data(), c->weights.size(), c->file, "", config, &c->module, &kind));
  if (kind != "causal_lm") return ArgError("kind " + kind);
  return Status::OK();
}

void LoadCase(const std::string& name, Case* c) {
  c->name = name;
  const std::string dir = "tests/data/goldens/lm/models/" + name;
  const std::vector<uint8_t> exp = test::ReadBytes(dir + "/expected.safetensors");
  ASSERT_TRUE(io::ReadSafetensors(exp.data(), exp.size(), &c->expected).ok()) << name;
  for (const auto& kv : c->expected.file.metadata)
    if (kv.first == "case") ASSERT_TRUE(io::ParseJson(kv.second, &c->spec).ok());
  c->atol = c->spec.Find("atol")->number;
  c->rtol = c->spec.Find("rtol")->number;
  // Files with attnwasm.config load alone; HF's save_pretrained files need their config.json.
  const bool own = c->spec.Find("checkpoint")->Find("attnwasmMetadata")->boolean;
  const Status s = LoadCheckpoint(dir, !own, c);
  ASSERT_TRUE(s.ok()) << name << ": " << s.message();
}

// max over i of |got - want| / (atol + rtol |want|): <= 1 passes.
double Ratio(const float* got, const float* want, size_t n, double atol, double rtol) {
  double worst = 0;
  for (size_t i = 0; i < n; ++i) {
    const double d = std::fabs(double(got[i]) - want[i]);
    worst = std::max(worst, std::isnan(d) ? 1e30 : d / (atol + rtol * std::fabs(want[i])));
  }
  return worst;
}

// Prefill P tokens of every sequence, then one at a time; the logits (B, T, V) of positions P-1 … T-1
// (earlier rows left as they were) and the attention of the last call.
Status RunCached(CausalLm* m, const std::vector<int32_t>& ids, size_t B, size_t T, size_t P, size_t window,
                 std::vector<float>* logits, std::vector<float>* attention) {
  const size_t V = size_t(m->config().vocab), L = size_t(m->config().layers), H = size_t(m->config().heads);
  KvCache cache;
  AW_RETURN_IF_ERROR(m->Begin(B, T, &cache));
  std::vector<float> lg(B * V);
  size_t done = 0;
  while (done < T) {
    const size_t n = done == 0 ? P : 1;
    std::vector<int32_t> chunk(B * n);
    for (size_t b = 0; b < B; ++b)
      for (size_t t = 0; t < n; ++t) chunk[b * n + t] = ids[b * T + done + t];
    if (attention) attention->assign(B * L * H * (done + n), -1.0f);
    AW_RETURN_IF_ERROR(m->Append(&cache, chunk.data(), n, window, lg.data(), attention ? attention->data() : nullptr));
    done += n;
    for (size_t b = 0; b < B; ++b) std::copy(lg.begin() + b * V, lg.begin() + (b + 1) * V, logits->begin() + (b * T + done - 1) * V);
  }
  return Status::OK();
}

TEST(CausalLm, ForwardLogitsOfEveryGolden) {
  double worst = 0;
  for (const char* name : kModels) {
    SCOPED_TRACE(name);
    Case c;
    LoadCase(name, &c);
    if (HasFatalFailure()) return;
    Shape ids_shape;
    const std::vector<int32_t> ids = c.I32("input.ids", &ids_shape);
    const std::vector<float> want = c.F32("expected.logits");
    Buffer logits;
    const Status s = c.lm()->Forward(ids.data(), ids_shape[0], ids_shape[1], &logits);
    ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_EQ(logits.size(), want.size());
    const double r = Ratio(logits.data(), want.data(), want.size(), c.atol, c.rtol);
    EXPECT_LE(r, 1.0) << "logits: max |got - torch| / (atol + rtol |torch|)";
    worst = std::max(worst, r);
  }
  std::printf("[  worst   ] causal LM goldens, Forward: %.3g of the tolerance\n", worst);
}

TEST(CausalLm, KvCacheGivesTheLogitsAndAttentionOfTheGolden) {
  for (const char* name : kModels) {
    SCOPED_TRACE(name);
    Case c;
    LoadCase(name, &c);
    if (HasFatalFailure()) return;
    Shape s;
    const std::vector<int32_t> ids = c.I32("input.ids", &s);
    const size_t B = size_t(s[0]), T = size_t(s[1]), V = size_t(c.lm()->config().vocab);
    const size_t P = size_t(c.spec.Find("kvCache")->Find("prefill")->number);
    const std::vector<float> want = c.F32("expected.logits");
    std::vector<float> logits(want.size(), 0.0f), attention;
    const Status st = RunCached(c.lm(), ids, B, T, P, 0, &logits, &attention);
    ASSERT_TRUE(st.ok()) << st.message();
    for (size_t b = 0; b < B; ++b)
      for (size_t t = P - 1; t < T; ++t)
        EXPECT_LE(Ratio(&logits[(b * T + t) * V], &want[(b * T + t) * V], V, c.atol, c.rtol), 1.0)
            << "sequence " << b << " position " << t;
    // expected.last_attention (layers, B, H, T); ours (B, layers, H, T).
    Shape as;
    const std::vector<float> wa = c.F32("expected.last_attention", &as);
    const size_t L = size_t(as[0]), H = size_t(as[2]);
    for (size_t l = 0; l < L; ++l)
      for (size_t b = 0; b < B; ++b)
        for (size_t h = 0; h < H; ++h)
          EXPECT_LE(Ratio(&attention[((b * L + l) * H + h) * T], &wa[((l * B + b) * H + h) * T], T, c.atol, c.rtol), 1.0)
              << "attention layer " << l << " sequence " << b << " head " << h;
  }
}

TEST(CausalLm, GreedyContinuationsEqualTorch) {
  for (const char* name : kModels) {
    SCOPED_TRACE(name);
    Case c;
    LoadCase(name, &c);
    if (HasFatalFailure()) return;
    const double min_margin = c.spec.Find("greedyMinMargin")->number;
    const size_t V = size_t(c.lm()->config().vocab);
    for (const io::JsonValue& g : c.spec.Find("greedy")->items) {
      const std::vector<int32_t> prompt = c.I32(g.Find("prompt")->str);
      const std::vector<int32_t> want = c.I32(g.Find("ids")->str);
      const std::vector<float> margins = c.F32(g.Find("margins")->str);
      KvCache cache;
      ASSERT_TRUE(c.lm()->Begin(1, prompt.size() + want.size(), &cache).ok());
      std::vector<float> lg(V);
      ASSERT_TRUE(c.lm()->Append(&cache, prompt.data(), prompt.size(), 0, lg.data(), nullptr).ok());
      for (size_t i = 0; i < want.size() && margins[i] >= min_margin; ++i) {
        const int32_t next = int32_t(std::max_element(lg.begin(), lg.end()) - lg.begin());
        ASSERT_EQ(next, want[i]) << g.Find("prompt")->str << " step " << i;
        ASSERT_TRUE(c.lm()->Append(&cache, &next, 1, 0, lg.data(), nullptr).ok());
      }
    }
  }
}

// A long prompt: random ids over a model of random weights (GQA 2, biases everywhere, tied) long enough for
// several attention chunks (core: 64 keys) and pieces.
struct LongPrompt {
  CausalLm model;
  std::vector<int32_t> ids;
  size_t T = 0;
  CausalLm* lm() { return &model; }
};

void MakeLongPrompt(size_t B, size_t T, LongPrompt* p) {
  CausalLmConfig cfg;
  cfg.vocab = 61; cfg.hidden = 48; cfg.intermediate = 72; cfg.layers = 2;
  cfg.heads = 4; cfg.kv_heads = 2; cfg.head_dim = 16; cfg.max_positions = 256;
  cfg.tied = true; cfg.qkv_bias = cfg.o_bias = cfg.mlp_bias = true;
  Rng rng(11);
  ASSERT_TRUE(p->model.Init(cfg, rng).ok());
  p->T = T;
  p->ids.resize(B * T);
  for (auto& id : p->ids) id = int32_t(rng.Next() % uint32_t(cfg.vocab));
}

TEST(CausalLm, PiecesWithinTheBudgetGiveTheBitsOfOnePiece) {
  LongPrompt p;
  const size_t B = 2;
  MakeLongPrompt(B, 150, &p);
  if (HasFatalFailure()) return;
  const size_t V = size_t(p.lm()->config().vocab);
  Buffer whole, cut;
  ASSERT_TRUE(p.lm()->Forward(p.ids.data(), B, p.T, &whole).ok());
  std::vector<float> cached(B * p.T * V, 0.0f), cached_cut(B * p.T * V, 0.0f);
  ASSERT_TRUE(RunCached(p.lm(), p.ids, B, p.T, 100, 0, &cached, nullptr).ok());
  const size_t budget = WorkBudget();
  ASSERT_TRUE(SetWorkBudget(64 << 10).ok());  // a few rows per piece
  const Status s1 = p.lm()->Forward(p.ids.data(), B, p.T, &cut);
  const Status s2 = RunCached(p.lm(), p.ids, B, p.T, 100, 0, &cached_cut, nullptr);
  ASSERT_TRUE(SetWorkBudget(int64_t(budget)).ok());
  ASSERT_TRUE(s1.ok() && s2.ok()) << s1.message() << s2.message();
  ASSERT_EQ(0, std::memcmp(whole.data(), cut.data(), whole.size() * sizeof(float)));
  ASSERT_EQ(0, std::memcmp(cached.data(), cached_cut.data(), cached.size() * sizeof(float)));
  // The cached path's rows are Forward's rows, bit for bit (the same arithmetic row by row).
  for (size_t b = 0; b < B; ++b)
    for (size_t t = 99; t < p.T; ++t)
      ASSERT_EQ(0, std::memcmp(&cached[(b * p.T + t) * V], whole.data() + (b * p.T + t) * V, V * sizeof(float)))
          << "sequence " << b << " position " << t;
}

TEST(CausalLm, ThreadsGiveBitIdenticalResults) {
  if (!ThreadsSupported()) GTEST_SKIP() << "single-thread build";
  LongPrompt p;
  const size_t B = 3;
  MakeLongPrompt(B, 130, &p);
  if (HasFatalFailure()) return;
  const size_t V = size_t(p.lm()->config().vocab);
  std::vector<std::vector<float>> runs;
  for (int threads : {1, 2, 3}) {
    SetNumThreads(threads);
    std::vector<float> out(B * p.T * V, 0.0f);
    const Status s = RunCached(p.lm(), p.ids, B, p.T, 70, 40, &out, nullptr);
    SetNumThreads(1);
    ASSERT_TRUE(s.ok()) << s.message();
    runs.push_back(std::move(out));
  }
  ASSERT_EQ(runs[0], runs[1]);
  ASSERT_EQ(runs[0], runs[2]);
}

TEST(CausalLm, AttentionWindow) {
  LongPrompt p;
  const size_t B = 2, W = 37;
  MakeLongPrompt(B, 140, &p);
  if (HasFatalFailure()) return;
  CausalLm* m = p.lm();
  const size_t V = size_t(m->config().vocab), L = size_t(m->config().layers), H = size_t(m->config().heads);
  // A window as long as the sequence is no window.
  std::vector<float> none(B * p.T * V), full(B * p.T * V);
  ASSERT_TRUE(RunCached(m, p.ids, B, p.T, 60, 0, &none, nullptr).ok());
  ASSERT_TRUE(RunCached(m, p.ids, B, p.T, 60, p.T, &full, nullptr).ok());
  ASSERT_EQ(none, full);
  // A shorter one: the whole prompt in one call (chunk, mask) and step by step give the same logits,
  // the attention of the last token is zero behind the window and sums to one inside it, and the logits
  // differ from the unwindowed ones.
  std::vector<float> chunk(B * p.T * V), step(B * p.T * V), attention;
  ASSERT_TRUE(RunCached(m, p.ids, B, p.T, p.T, W, &chunk, nullptr).ok());
  ASSERT_TRUE(RunCached(m, p.ids, B, p.T, 1, W, &step, &attention).ok());
  const size_t last = (p.T - 1) * V;
  for (size_t b = 0; b < B; ++b) {
    EXPECT_LE(Ratio(&step[b * p.T * V + last], &chunk[b * p.T * V + last], V, 1e-5, 1e-5), 1.0) << "sequence " << b;
    EXPECT_GT(Ratio(&none[b * p.T * V + last], &chunk[b * p.T * V + last], V, 1e-3, 1e-3), 1.0) << "sequence " << b;
    for (size_t l = 0; l < L; ++l)
      for (size_t h = 0; h < H; ++h) {
        const float* row = &attention[((b * L + l) * H + h) * p.T];
        double inside = 0;
        for (size_t j = 0; j < p.T; ++j) {
          if (j < p.T - W) ASSERT_EQ(row[j], 0.0f) << "key " << j;
          else inside += row[j];
        }
        EXPECT_NEAR(inside, 1.0, 1e-5);
      }
  }
}

TEST(CausalLm, RefusesTheCheckpointsTorchWouldNotRun) {
  const std::vector<uint8_t> text = test::ReadBytes("tests/data/goldens/lm/refusals/cases.json");
  io::JsonValue cases;
  ASSERT_TRUE(io::ParseJson(TextOf(text), &cases).ok());
  size_t n = 0;
  for (const io::JsonValue& k : cases.Find("cases")->items) {
    SCOPED_TRACE(k.Find("name")->str);
    Case c;
    const Status s = LoadCheckpoint("tests/data/goldens/lm/" + k.Find("checkpoint")->str, true, &c);
    if (k.Find("expect")->str == "accepted") {
      EXPECT_TRUE(s.ok()) << s.message();
    } else {
      ASSERT_FALSE(s.ok());
      EXPECT_NE(s.message().find(k.Find("errorMentions")->str), std::string::npos) << s.message();
      EXPECT_EQ(c.module, nullptr);
    }
    ++n;
  }
  EXPECT_GE(n, 15u);
}

TEST(CausalLm, BadIdsAndAFullCacheAreErrorsNamingTheArgument) {
  Case c;
  LoadCase("llama_untied_gqa2_hd8", &c);
  if (HasFatalFailure()) return;
  CausalLm* m = c.lm();
  const int32_t V = int32_t(m->config().vocab);
  std::vector<float> lg(static_cast<size_t>(V), 0.0f);
  KvCache cache;
  ASSERT_TRUE(m->Begin(1, 3, &cache).ok());
  const int32_t bad[] = {1, V};
  Status s = m->Append(&cache, bad, 2, 0, lg.data(), nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("ids"), std::string::npos) << s.message();
  EXPECT_EQ(cache.len, 0u);  // nothing appended
  const int32_t ok[] = {1, 2, 3};
  ASSERT_TRUE(m->Append(&cache, ok, 3, 0, lg.data(), nullptr).ok());
  s = m->Append(&cache, ok, 1, 0, lg.data(), nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("more than the cache holds (3)"), std::string::npos) << s.message();
  EXPECT_FALSE(m->Begin(0, 3, &cache).ok());
  EXPECT_FALSE(m->Begin(1, size_t(m->config().max_positions) + 1, &cache).ok());
  Buffer logits;
  s = m->Forward(ok, 1, m->config().max_positions + 1, &logits);
  EXPECT_NE(s.message().find("ids.shape[1]"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace aw
