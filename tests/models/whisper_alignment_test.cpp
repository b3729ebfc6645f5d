// WhisperLm::AlignmentWeights (src/models/whisper.h): the alignment heads' cross-attention probabilities under
// teacher forcing, on the golden checkpoint tests/data/goldens/whisper/tiny (2 decoder layers of 4 heads, d_model 16),
// against a plain reference written here from transformers' modeling_whisper.py (every sum in double, the weights
// read straight from model.safetensors; the encoder's states from WhisperLm::Encode, checked against transformers
// by tests/js/whisper.test.mjs):
//   - one source, and two sources with two rows each (row r reads source r / 2's keys), every head of every layer;
//   - the state is left as it was: the next step's logits equal a twin state's bit for bit;
//   - bad arguments (heads, rows, positions, ids, a state not begun) are refused by name, and the state still works.
#include "models/whisper.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "model_test_util.h"

namespace aw {
namespace {

const std::string kDir = "tests/data/goldens/whisper/tiny/";

struct Tiny {
  test::LoadedFile f;
  WhisperLm* m = nullptr;
};

void LoadTiny(Tiny* t) {
  t->f.bytes = test::ReadBytes(kDir + "model.safetensors");
  ASSERT_FALSE(t->f.bytes.empty());
  ASSERT_TRUE(io::ParseSafetensors(t->f.bytes.data(), t->f.bytes.size(), &t->f.file).ok());
  const std::vector<uint8_t> cfg = test::ReadBytes(kDir + "config.json");
  const Status s = LoadModel(t->f.bytes.data(), t->f.bytes.size(), t->f.file, "", std::string(cfg.begin(), cfg.end()),
                             &t->f.model, &t->f.kind);
  ASSERT_TRUE(s.ok()) << s.message();
  t->m = dynamic_cast<WhisperLm*>(t->f.model.get());
  ASSERT_NE(t->m, nullptr);
}

// A float32 tensor of the file as doubles.
std::vector<double> W(const Tiny& t, const std::string& name) {
  for (const io::StTensor& x : t.f.file.tensors)
    if (x.name == name) {
      std::vector<double> out((x.end - x.begin) / 4);
      for (size_t i = 0; i < out.size(); ++i) {
        float v;
        std::memcpy(&v, t.f.bytes.data() + x.begin + 4 * i, 4);
        out[i] = v;
      }
      return out;
    }
  ADD_FAILURE() << "no tensor " << name;
  return {};
}

using Mat = std::vector<std::vector<double>>;  // rows of vectors

// y = x Wᵀ (+ b): W (out, in) row-major.
Mat Lin(const Mat& x, const std::vector<double>& w, const std::vector<double>* b) {
  const size_t in = x[0].size(), out = w.size() / in;
  Mat y(x.size(), std::vector<double>(out));
  for (size_t r = 0; r < x.size(); ++r)
    for (size_t o = 0; o < out; ++o) {
      double acc = b ? (*b)[o] : 0.0;
      for (size_t i = 0; i < in; ++i) acc += x[r][i] * w[o * in + i];
      y[r][o] = acc;
    }
  return y;
}

Mat Norm(const Mat& x, const std::vector<double>& g, const std::vector<double>& b) {
  Mat y = x;
  for (auto& row : y) {
    double mean = 0, var = 0;
    for (double v : row) mean += v;
    mean /= double(row.size());
    for (double v : row) var += (v - mean) * (v - mean);
    var /= double(row.size());
    for (size_t i = 0; i < row.size(); ++i) row[i] = (row[i] - mean) / std::sqrt(var + 1e-5) * g[i] + b[i];
  }
  return y;
}

// Multi-head attention of queries q (T, E) over keys / values (S, E); causal: query t sees keys 0 … t. The
// probabilities of every head go to probs[h][t][s] when given.
Mat Attend(const Mat& q, const Mat& k, const Mat& v, size_t H, bool causal, std::vector<Mat>* probs) {
  const size_t T = q.size(), S = k.size(), E = q[0].size(), D = E / H;
  Mat out(T, std::vector<double>(E, 0.0));
  if (probs) probs->assign(H, Mat(T, std::vector<double>(S, 0.0)));
  const double scale = 1.0 / std::sqrt(double(D));
  for (size_t h = 0; h < H; ++h)
    for (size_t t = 0; t < T; ++t) {
      const size_t n = causal ? t + 1 : S;
      std::vector<double> p(n);
      double mx = -1e300, sum = 0;
      for (size_t s = 0; s < n; ++s) {
        double acc = 0;
        for (size_t d = 0; d < D; ++d) acc += q[t][h * D + d] * scale * k[s][h * D + d];
        p[s] = acc;
        mx = std::max(mx, acc);
      }
      for (double& x : p) sum += (x = std::exp(x - mx));
      for (size_t s = 0; s < n; ++s) {
        p[s] /= sum;
        if (probs) (*probs)[h][t][s] = p[s];
        for (size_t d = 0; d < D; ++d) out[t][h * D + d] += p[s] * v[s][h * D + d];
      }
    }
  return out;
}

void AddTo(Mat* x, const Mat& y) {
  for (size_t r = 0; r < x->size(); ++r)
    for (size_t i = 0; i < y[r].size(); ++i) (*x)[r][i] += y[r][i];
}

// The decoder of transformers' WhisperDecoder on `tokens` against encoder states `enc` (S, E): per layer, the
// cross-attention probabilities [layer][head][t][s].
std::vector<std::vector<Mat>> Reference(const Tiny& t, const std::vector<int32_t>& tokens, const Mat& enc) {
  const WhisperConfig& c = t.m->config();
  const size_t E = size_t(c.s.d_model), H = size_t(c.s.decoder_heads);
  const std::vector<double> tab = W(t, "model.decoder.embed_tokens.weight"), pos = W(t, "model.decoder.embed_positions.weight");
  Mat x(tokens.size(), std::vector<double>(E));
  for (size_t i = 0; i < tokens.size(); ++i)
    for (size_t e = 0; e < E; ++e) x[i][e] = tab[size_t(tokens[i]) * E + e] + pos[i * E + e];
  std::vector<std::vector<Mat>> probs(size_t(c.s.decoder_layers));
  for (int64_t l = 0; l < c.s.decoder_layers; ++l) {
    const std::string p = "model.decoder.layers." + std::to_string(l) + ".";
    auto w = [&](const std::string& n) { return W(t, p + n); };
    const auto bq = w("self_attn.q_proj.bias"), bv = w("self_attn.v_proj.bias"), bo = w("self_attn.out_proj.bias");
    Mat h = Norm(x, w("self_attn_layer_norm.weight"), w("self_attn_layer_norm.bias"));
    AddTo(&x, Lin(Attend(Lin(h, w("self_attn.q_proj.weight"), &bq), Lin(h, w("self_attn.k_proj.weight"), nullptr),
                         Lin(h, w("self_attn.v_proj.weight"), &bv), H, true, nullptr),
                  w("self_attn.out_proj.weight"), &bo));
    const auto cbq = w("encoder_attn.q_proj.bias"), cbv = w("encoder_attn.v_proj.bias"), cbo = w("encoder_attn.out_proj.bias");
    h = Norm(x, w("encoder_attn_layer_norm.weight"), w("encoder_attn_layer_norm.bias"));
    AddTo(&x, Lin(Attend(Lin(h, w("encoder_attn.q_proj.weight"), &cbq), Lin(enc, w("encoder_attn.k_proj.weight"), nullptr),
                         Lin(enc, w("encoder_attn.v_proj.weight"), &cbv), H, false, &probs[size_t(l)]),
                  w("encoder_attn.out_proj.weight"), &cbo));
    const auto b1 = w("fc1.bias"), b2 = w("fc2.bias");
    Mat f = Lin(Norm(x, w("final_layer_norm.weight"), w("final_layer_norm.bias")), w("fc1.weight"), &b1);
    for (auto& row : f)
      for (double& v : row) v = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    AddTo(&x, Lin(f, w("fc2.weight"), &b2));
  }
  return probs;
}

std::vector<float> Features(int64_t B, const WhisperConfig& c, uint32_t seed) {
  std::vector<float> f(size_t(B * c.mel_bins * c.frames()));
  uint32_t x = seed;
  for (float& v : f) {
    x = x * 1664525u + 1013904223u;
    v = float(int32_t(x >> 8) % 2000) / 1000.0f - 1.0f;
  }
  return f;
}

Mat EncoderRows(const Buffer& hidden, size_t b, size_t S, size_t E) {
  Mat m(S, std::vector<double>(E));
  for (size_t s = 0; s < S; ++s)
    for (size_t e = 0; e < E; ++e) m[s][e] = hidden.data()[(b * S + s) * E + e];
  return m;
}

// Every (layer, head) pair of the model.
std::vector<std::pair<int64_t, int64_t>> AllHeads(const WhisperConfig& c) {
  std::vector<std::pair<int64_t, int64_t>> h;
  for (int64_t l = 0; l < c.s.decoder_layers; ++l)
    for (int64_t k = 0; k < c.s.decoder_heads; ++k) h.push_back({l, k});
  return h;
}

// |got − ref| <= 1e-6 + 1e-4·|ref| over out (rows, heads, T, S) against the reference of each row's tokens.
void ExpectMatches(const Tiny& t, const Buffer& out, const std::vector<std::vector<int32_t>>& rows, const std::vector<Mat>& enc,
                   size_t per_source, const std::vector<std::pair<int64_t, int64_t>>& heads) {
  const size_t T = rows[0].size(), S = size_t(t.m->config().max_source);
  ASSERT_EQ(out.size(), rows.size() * heads.size() * T * S);
  for (size_t r = 0; r < rows.size(); ++r) {
    const auto ref = Reference(t, rows[r], enc[r / per_source]);
    int bad = 0;
    for (size_t i = 0; i < heads.size(); ++i)
      for (size_t q = 0; q < T; ++q)
        for (size_t s = 0; s < S; ++s) {
          const double want = ref[size_t(heads[i].first)][size_t(heads[i].second)][q][s];
          const double got = out.data()[((r * heads.size() + i) * T + q) * S + s];
          if (std::fabs(got - want) > 1e-6 + 1e-4 * std::fabs(want) && bad++ < 5)
            ADD_FAILURE() << "row " << r << " head [" << heads[i].first << ", " << heads[i].second << "] position " << q
                          << " key " << s << ": " << got << " vs " << want;
        }
    EXPECT_EQ(bad, 0) << "row " << r;
  }
}

TEST(WhisperAlignment, OneSourceEveryHeadMatchesTheReference) {
  Tiny t;
  ASSERT_NO_FATAL_FAILURE(LoadTiny(&t));
  const WhisperConfig& c = t.m->config();
  const std::vector<float> feats = Features(1, c, 7);
  Buffer hidden;
  ASSERT_TRUE(t.m->Encode(feats.data(), 1, c.mel_bins, c.frames(), &hidden).ok());
  Seq2SeqState st;
  ASSERT_TRUE(t.m->BeginFeatures(feats.data(), 1, c.mel_bins, c.frames(), 1, 40, &st).ok());
  const std::vector<int32_t> tokens = {372, 373, 473, 380, 100, 220, 33, 1000, 371};
  Buffer out;
  const auto heads = AllHeads(c);
  const Status s = t.m->AlignmentWeights(&st, tokens.data(), 1, int64_t(tokens.size()), heads, &out);
  ASSERT_TRUE(s.ok()) << s.message();
  ExpectMatches(t, out, {tokens}, {EncoderRows(hidden, 0, size_t(c.max_source), size_t(c.s.d_model))}, 1, heads);
  // Each row is a distribution over the encoder's states.
  for (size_t r = 0; r < heads.size() * tokens.size(); ++r) {
    double sum = 0;
    for (int64_t k = 0; k < c.max_source; ++k) sum += out.data()[r * size_t(c.max_source) + size_t(k)];
    EXPECT_NEAR(sum, 1.0, 1e-5);
  }
}

TEST(WhisperAlignment, RowsPerSourceReadTheirSourcesKeys) {
  Tiny t;
  ASSERT_NO_FATAL_FAILURE(LoadTiny(&t));
  const WhisperConfig& c = t.m->config();
  const std::vector<float> feats = Features(2, c, 11);
  Buffer hidden;
  ASSERT_TRUE(t.m->Encode(feats.data(), 2, c.mel_bins, c.frames(), &hidden).ok());
  Seq2SeqState st;  // beam search's state: 3 rows per source; the alignment asks for 2 per source
  ASSERT_TRUE(t.m->BeginFeatures(feats.data(), 2, c.mel_bins, c.frames(), 3, 40, &st).ok());
  const std::vector<std::vector<int32_t>> rows = {
      {372, 373, 473, 220, 45}, {372, 380, 473, 300, 46}, {372, 373, 473, 500, 47}, {372, 373, 472, 2, 3}};
  std::vector<int32_t> flat;
  for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
  const std::vector<std::pair<int64_t, int64_t>> heads = {{1, 0}, {1, 2}, {0, 3}, {1, 3}};
  Buffer out;
  const Status s = t.m->AlignmentWeights(&st, flat.data(), 4, 5, heads, &out);
  ASSERT_TRUE(s.ok()) << s.message();
  const size_t S = size_t(c.max_source), E = size_t(c.s.d_model);
  ExpectMatches(t, out, rows, {EncoderRows(hidden, 0, S, E), EncoderRows(hidden, 1, S, E)}, 2, heads);
}

TEST(WhisperAlignment, LeavesTheStateAsItWas) {
  Tiny t;
  ASSERT_NO_FATAL_FAILURE(LoadTiny(&t));
  const WhisperConfig& c = t.m->config();
  const std::vector<float> feats = Features(1, c, 3);
  Seq2SeqState a, b;
  ASSERT_TRUE(t.m->BeginFeatures(feats.data(), 1, c.mel_bins, c.frames(), 2, 40, &a).ok());
  ASSERT_TRUE(t.m->BeginFeatures(feats.data(), 1, c.mel_bins, c.frames(), 2, 40, &b).ok());
  const std::vector<int32_t> prompt = {372, 372, 373, 373, 473, 473};
  Buffer la, lb, w;
  ASSERT_TRUE(t.m->Append(&a, prompt.data(), 3, false, &la).ok());
  ASSERT_TRUE(t.m->Append(&b, prompt.data(), 3, false, &lb).ok());
  const std::vector<int32_t> tokens = {372, 373, 473, 100, 372, 373, 473, 101};
  ASSERT_TRUE(t.m->AlignmentWeights(&a, tokens.data(), 2, 4, {{1, 1}}, &w).ok());
  EXPECT_EQ(a.self.len, 3u);
  const std::vector<int32_t> next = {100, 101};
  ASSERT_TRUE(t.m->Append(&a, next.data(), 1, false, &la).ok());
  ASSERT_TRUE(t.m->Append(&b, next.data(), 1, false, &lb).ok());
  ASSERT_EQ(la.size(), lb.size());
  EXPECT_EQ(std::memcmp(la.data(), lb.data(), la.size() * sizeof(float)), 0);
}

TEST(WhisperAlignment, BadArgumentsAreRefusedByName) {
  Tiny t;
  ASSERT_NO_FATAL_FAILURE(LoadTiny(&t));
  const WhisperConfig& c = t.m->config();
  const std::vector<float> feats = Features(2, c, 5);
  Seq2SeqState st;
  ASSERT_TRUE(t.m->BeginFeatures(feats.data(), 2, c.mel_bins, c.frames(), 1, 40, &st).ok());
  const std::vector<int32_t> tokens = {372, 373, 473, 100, 372, 373, 473, 101, 372, 373, 473, 102};
  Buffer out;
  auto message = [&](const int32_t* ids, int64_t rows, int64_t T, const std::vector<std::pair<int64_t, int64_t>>& heads) {
    const Status s = t.m->AlignmentWeights(&st, ids, rows, T, heads, &out);
    EXPECT_FALSE(s.ok());
    return s.message();
  };
  EXPECT_EQ(message(tokens.data(), 2, 4, {}), "alignmentHeads: expected at least one [layer, head] pair, got none");
  EXPECT_EQ(message(tokens.data(), 2, 4, {{1, 0}, {2, 0}}),
            "alignmentHeads[1][0] (decoder layer): expected an integer in [0, 1], got 2");
  EXPECT_EQ(message(tokens.data(), 2, 4, {{0, -1}}), "alignmentHeads[0][1] (head): expected an integer in [0, 3], got -1");
  EXPECT_EQ(message(tokens.data(), 3, 4, {{1, 0}}), "tokens: expected rows a multiple of the state's sources (2), got 3");
  EXPECT_EQ(message(tokens.data(), 0, 4, {{1, 0}}), "tokens.shape[0] (rows): expected an integer in [1, 4096], got 0");
  EXPECT_NE(message(tokens.data(), 2, 0, {{1, 0}}).find("tokens.shape[1] (positions)"), std::string::npos);
  EXPECT_NE(message(tokens.data(), 2, c.s.max_positions + 1, {{1, 0}}).find("tokens.shape[1] (positions)"), std::string::npos);
  const std::vector<int32_t> bad = {372, 373, 473, int32_t(c.s.vocab), 372, 373, 473, 101};
  EXPECT_NE(message(bad.data(), 2, 4, {{1, 0}}).find("tokens"), std::string::npos);
  Seq2SeqState none;
  EXPECT_EQ(t.m->AlignmentWeights(&none, tokens.data(), 1, 4, {{1, 0}}, &out).message(), "state: the decoding state is not begun");
  // The state still steps and still gives its weights.
  Buffer logits;
  const std::vector<int32_t> start = {372, 372};
  EXPECT_TRUE(t.m->Append(&st, start.data(), 1, false, &logits).ok());
  EXPECT_TRUE(t.m->AlignmentWeights(&st, tokens.data(), 2, 4, {{1, 0}}, &out).ok());
}

}  // namespace
}  // namespace aw
