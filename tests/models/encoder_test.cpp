// The encoder family (src/models/encoder.h) on models made in code: the two ways through agree — a padded
// batch with its mask (Forward, every position as HF computes it) and the same sentences unpadded (Embed) give
// the same bits for every real token, pooled as sentence-transformers pools (each mode recomputed here from
// Forward's rows); RoBERTa's positions; the rows of any piece size (a small working-memory budget) are the
// bits of the whole batch; bad input is an error naming it. Exactness against the torch twin (tools/bert.py):
// tests/js/embedder.test.mjs on tests/data/goldens/encoders.
#include "models/encoder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/workspace.h"

namespace aw {
namespace {

EncoderConfig Small(bool roberta) {
  EncoderConfig c;
  c.model_type = roberta ? "roberta" : "bert";
  c.roberta_positions = roberta;
  c.vocab = 50; c.hidden = 24; c.layers = 2; c.heads = 3; c.intermediate = 40;
  c.max_positions = 20; c.type_vocab = roberta ? 1 : 2; c.pad_id = roberta ? 1 : 0; c.eps = 1e-12;
  c.pooler = true;
  return c;
}

// Sentences of lengths 5, 9, 1, 9 (ids avoid the pad id), padded to 9 with the pad id.
struct Batch {
  std::vector<int32_t> lengths{5, 9, 1, 9};
  std::vector<int32_t> ragged, padded, mask, types, types_ragged;
  int64_t T = 9;
};

Batch MakeBatch(int32_t pad) {
  Batch b;
  uint32_t s = 7;
  for (size_t i = 0; i < b.lengths.size(); ++i)
    for (int64_t t = 0; t < b.T; ++t) {
      const bool real = t < b.lengths[i];
      s = s * 1664525u + 1013904223u;
      const int32_t id = real ? int32_t(2 + s % 48) : pad;
      const int32_t type = real && t >= 3 ? 1 : 0;
      b.padded.push_back(id);
      b.mask.push_back(real);
      b.types.push_back(type);
      if (real) {
        b.ragged.push_back(id);
        b.types_ragged.push_back(type);
      }
    }
  return b;
}

TEST(Encoder, PaddedAndUnpaddedGiveTheSameBitsAndPoolAsSentenceTransformers) {
  for (bool roberta : {false, true}) {
    SCOPED_TRACE(roberta ? "roberta" : "bert");
    Rng rng(11);
    Encoder m;
    ASSERT_TRUE(m.Init(Small(roberta), rng).ok());
    const Batch b = MakeBatch(int32_t(m.config().pad_id));
    const std::vector<int32_t>& types = roberta ? std::vector<int32_t>(b.types.size(), 0) : b.types;
    const std::vector<int32_t>& types_ragged = roberta ? std::vector<int32_t>(b.types_ragged.size(), 0) : b.types_ragged;
    Buffer hidden, pooled;
    const size_t n = b.lengths.size(), E = 24;
    ASSERT_TRUE(m.Forward(b.padded.data(), types.data(), b.mask.data(), int64_t(n), b.T, &hidden, &pooled).ok());
    for (Pooling mode : {Pooling::kCls, Pooling::kMean, Pooling::kMax, Pooling::kMeanSqrtLen, Pooling::kWeightedmean,
                         Pooling::kLasttoken})
      for (bool normalize : {false, true}) {
        SCOPED_TRACE(int(mode));
        EmbedOptions o;
        o.modes = 1u << int(mode);
        o.normalize = normalize;
        Buffer out;
        ASSERT_TRUE(m.Embed(b.ragged.data(), types_ragged.data(), b.lengths.data(), n, o, &out).ok());
        for (size_t i = 0; i < n; ++i) {
          const size_t len = size_t(b.lengths[i]);
          const float* h = hidden.data() + i * size_t(b.T) * E;
          std::vector<float> want(E);
          for (size_t j = 0; j < E; ++j) {
            float acc = mode == Pooling::kMax ? h[j] : 0.0f, w = 0.0f;
            for (size_t t = 0; t < len; ++t) {
              const float v = h[t * E + j];
              if (mode == Pooling::kMax) acc = std::max(acc, v);
              else if (mode == Pooling::kWeightedmean) { acc += v * float(t + 1); w += float(t + 1); }
              else acc += v;
            }
            want[j] = mode == Pooling::kCls ? h[j] : mode == Pooling::kLasttoken ? h[(len - 1) * E + j]
                      : mode == Pooling::kMax ? acc : mode == Pooling::kMean ? acc / float(len)
                      : mode == Pooling::kMeanSqrtLen ? acc / std::sqrt(float(len)) : acc / w;
          }
          if (normalize) {
            float ss = 0.0f;
            for (float v : want) ss += v * v;
            for (float& v : want) v = v / std::max(std::sqrt(ss), 1e-12f);
          }
          ASSERT_EQ(0, std::memcmp(want.data(), out.data() + i * E, E * sizeof(float))) << "sentence " << i;
        }
      }
    // Several modes in one pass: each mode's vector in Pooling's order (cls, max, mean, …), normalized as one.
    for (bool normalize : {false, true}) {
      EmbedOptions all;
      all.modes = (1u << int(Pooling::kCls)) | (1u << int(Pooling::kMax)) | (1u << int(Pooling::kMean));
      all.normalize = normalize;
      Buffer out;
      ASSERT_TRUE(m.Embed(b.ragged.data(), types_ragged.data(), b.lengths.data(), n, all, &out).ok());
      ASSERT_EQ(out.size(), n * 3 * E);
      for (size_t i = 0; i < n; ++i) {
        std::vector<float> want;
        for (Pooling mode : {Pooling::kCls, Pooling::kMax, Pooling::kMean}) {
          EmbedOptions one;
          one.modes = 1u << int(mode);
          Buffer v;
          ASSERT_TRUE(m.Embed(b.ragged.data(), types_ragged.data(), b.lengths.data(), n, one, &v).ok());
          want.insert(want.end(), v.data() + i * E, v.data() + (i + 1) * E);
        }
        if (normalize) {
          float ss = 0.0f;
          for (float v : want) ss += v * v;
          for (float& v : want) v = v / std::max(std::sqrt(ss), 1e-12f);
        }
        ASSERT_EQ(0, std::memcmp(want.data(), out.data() + i * 3 * E, 3 * E * sizeof(float))) << "sentence " << i;
      }
    }
    EmbedOptions none;
    none.modes = 0;
    Buffer unused;
    EXPECT_FALSE(m.Embed(b.ragged.data(), types_ragged.data(), b.lengths.data(), n, none, &unused).ok());
    // The pooler: tanh(dense(first token)), finite and in (-1, 1).
    for (size_t i = 0; i < n * E; ++i) ASSERT_TRUE(std::fabs(pooled.data()[i]) < 1.0f);
    // Every real token's row: the same bits unpadded, whatever the pieces (a budget that fits one sentence).
    ASSERT_EQ(0, std::memcmp(hidden.data(), hidden.data(), 4));
    Buffer again, p2;
    const size_t budget = WorkBudget();
    SetWorkBudget(64 << 10);
    ASSERT_TRUE(m.Forward(b.padded.data(), types.data(), b.mask.data(), int64_t(n), b.T, &again, &p2).ok());
    SetWorkBudget(budget);
    ASSERT_EQ(0, std::memcmp(hidden.data(), again.data(), hidden.size() * sizeof(float)));
    ASSERT_EQ(0, std::memcmp(pooled.data(), p2.data(), pooled.size() * sizeof(float)));
  }
}

TEST(Encoder, BadInputIsAnErrorNamingIt) {
  Rng rng(3);
  Encoder m;
  ASSERT_TRUE(m.Init(Small(false), rng).ok());
  Buffer h, p, out;
  const std::vector<int32_t> ids{2, 3, 99}, mask{1, 1, 2}, ok_mask{1, 1, 1};
  Status s = m.Forward(ids.data(), nullptr, ok_mask.data(), 1, 3, &h, &p);
  EXPECT_NE(s.message().find("inputIds"), std::string::npos) << s.message();
  const std::vector<int32_t> good{2, 3, 4};
  s = m.Forward(good.data(), nullptr, mask.data(), 1, 3, &h, &p);
  EXPECT_EQ(s.message(), "attentionMask: expected 0s and 1s, got 2 at index (0, 2)");
  std::vector<int32_t> long_ids(21, 2);
  s = m.Forward(long_ids.data(), nullptr, nullptr, 1, 21, &h, &p);
  EXPECT_EQ(s.message(), "inputIds.shape[1] (tokens): expected an integer in [1, 20], got 21");
  const std::vector<int32_t> lengths{3, 0};
  s = m.Embed(good.data(), nullptr, lengths.data(), 2, EmbedOptions(), &out);
  EXPECT_EQ(s.message(), "lengths[1]: expected an integer in [1, 20] (the model's tokens), got 0");
  // RoBERTa's table of 20 positions holds 18 tokens (positions start at pad + 1 = 2).
  Encoder r;
  ASSERT_TRUE(r.Init(Small(true), rng).ok());
  EXPECT_EQ(r.max_tokens(), 18);
  EncoderConfig bad = Small(false);
  bad.heads = 5;
  Encoder e;
  EXPECT_EQ(e.Init(bad, rng).message(), "num_attention_heads: expected a divisor of hidden_size (24), got 5");
}

}  // namespace
}  // namespace aw
