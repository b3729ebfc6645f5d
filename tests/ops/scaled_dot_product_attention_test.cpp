// scaled_dot_product_attention (src/ops/scaled_dot_product_attention.*), the
// function behind aw.scaledDotProductAttention, natively: a hand-computed
// case, the fully masked row, validation messages, the causal bias objects
// (causal_upper_left / causal_lower_right, never materialised) against the
// bool masks they stand for, repeated calls on the thread's workspace, and
// bit-identical output and weights with 1, 2 and 3 threads (odd lengths,
// masks, causal, broadcast batches).
//
// Elsewhere: full parity with PyTorch (tests/data/goldens/sdpa.json), errors
// and the threads tests through the JS API:
// tests/js/layers/scaled_dot_product_attention.test.mjs. The attention core
// under it: tests/ops/attention_test.cpp; the fuzz target
// tests/fuzz/fuzz_attention.cpp (its corpus replayed by tests/fuzz/corpus_replay_test.cpp).
#include "ops/scaled_dot_product_attention.h"

#include <gtest/gtest.h>

#include "../kernel_test_util.h"
#include "../layers/layer_test_util.h"

#include <cmath>
#include <vector>

#include "core/parallel.h"

namespace aw {
namespace {

TEST(Sdpa, HandComputedTwoKeys) {
  // q = [1, 0], keys [1, 0] and [0, 1], values [1, 2] and [3, 4]; scale 1/sqrt(2).
  std::vector<float> q{1, 0}, k{1, 0, 0, 1}, v{1, 2, 3, 4};
  SdpaOptions o;
  o.need_weights = true;
  SdpaResult r;
  ASSERT_TRUE(ScaledDotProductAttention({q.data(), {1, 2}}, {k.data(), {2, 2}}, {v.data(), {2, 2}}, o, &r).ok());
  const double e = std::exp(1 / std::sqrt(2.0)), w0 = e / (e + 1), w1 = 1 / (e + 1);
  EXPECT_NEAR(r.weights.data()[0], w0, 1e-6);
  EXPECT_NEAR(r.weights.data()[1], w1, 1e-6);
  EXPECT_NEAR(r.output.data()[0], w0 * 1 + w1 * 3, 1e-6);
  EXPECT_NEAR(r.output.data()[1], w0 * 2 + w1 * 4, 1e-6);
  EXPECT_EQ(r.output_shape, (Shape{1, 2}));
}

TEST(Sdpa, FullyMaskedRowGivesZeros) {
  std::vector<float> q{1, 2, 3, 4}, k{1, 0, 0, 1}, v{1, 2, 3, 4};
  std::vector<uint8_t> mask{1, 1, 0, 0};  // row 1 attends to nothing
  SdpaOptions o;
  o.need_weights = true;
  o.attn_mask = MaskView{mask.data(), DType::kBool, {2, 2}};
  SdpaResult r;
  ASSERT_TRUE(ScaledDotProductAttention({q.data(), {2, 2}}, {k.data(), {2, 2}}, {v.data(), {2, 2}}, o, &r).ok());
  for (int j = 0; j < 2; ++j) {
    EXPECT_EQ(r.weights.data()[2 + j], 0.0f);
    EXPECT_EQ(r.output.data()[2 + j], 0.0f);
  }
  EXPECT_FALSE(std::isnan(r.output.data()[0]));
}

TEST(Sdpa, ErrorsNameTheArgument) {
  std::vector<float> x(64, 0.5f);
  SdpaResult r;
  SdpaOptions o;
  Status s = ScaledDotProductAttention({x.data(), {2, 4}}, {x.data(), {3, 5}}, {x.data(), {3, 4}}, o, &r);
  EXPECT_EQ(s.code(), Code::kShape);
  EXPECT_EQ(s.message(), "key: expected last dim E = 4 (query's), got (3, 5)");
  o.dropout_p = 0.5;
  s = ScaledDotProductAttention({x.data(), {2, 4}}, {x.data(), {3, 4}}, {x.data(), {3, 4}}, o, &r);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  o.dropout_p = 0;
  std::vector<uint8_t> m(6, 1);
  o.attn_mask = MaskView{m.data(), DType::kBool, {2, 1, 3, 1}};
  s = ScaledDotProductAttention({x.data(), {2, 4}}, {x.data(), {3, 4}}, {x.data(), {3, 4}}, o, &r);
  EXPECT_EQ(s.code(), Code::kShape);
  EXPECT_NE(s.message().find("attnMask: expected a shape broadcastable to the attention weights (2, 3)"), std::string::npos)
      << s.message();
}

// torch.nn.attention.bias's causal_upper_left / causal_lower_right as
// attn_mask: the same bits as the bool (L, S) masks they stand for (tril(0),
// tril(S - L)), with grouped-query heads and weights; rows of a lower-right
// bias with no key (L > S) give zeros.
TEST(Sdpa, CausalBiasEqualsItsMaterialisedMask) {
  const std::pair<int64_t, int64_t> LS[] = {{3, 7}, {7, 3}, {6, 4}, {1, 9}, {5, 5}, {13, 33}, {70, 130}, {130, 70}};
  for (auto [L, S] : LS)
    for (CausalBias bias : {CausalBias::kUpperLeft, CausalBias::kLowerRight})
      for (bool weights : {false, true}) {
        const Shape qs{2, 6, L, 16}, ks{2, 2, S, 16}, vs{2, 2, S, 8};
        const auto q = Random(1, NumelChecked(qs)), k = Random(2, NumelChecked(ks)), v = Random(3, NumelChecked(vs));
        SdpaOptions o;
        o.enable_gqa = true;
        o.need_weights = weights;
        o.causal_bias = bias;
        o.causal_bias_l = L;
        o.causal_bias_s = S;
        SdpaResult got;
        ASSERT_TRUE(ScaledDotProductAttention({q.data(), qs}, {k.data(), ks}, {v.data(), vs}, o, &got).ok());
        const int64_t off = bias == CausalBias::kLowerRight ? S - L : 0;
        std::vector<uint8_t> mask(size_t(L * S));
        for (int64_t i = 0; i < L; ++i)
          for (int64_t j = 0; j < S; ++j) mask[size_t(i * S + j)] = j <= i + off;
        SdpaOptions m = o;
        m.causal_bias = CausalBias::kNone;
        m.attn_mask = MaskView{mask.data(), DType::kBool, {L, S}};
        SdpaResult want;
        ASSERT_TRUE(ScaledDotProductAttention({q.data(), qs}, {k.data(), ks}, {v.data(), vs}, m, &want).ok());
        EXPECT_TRUE(test::bit_identical(got.output, want.output)) << L << " " << S << " offset " << off;
        EXPECT_TRUE(test::bit_identical(got.weights, want.weights)) << L << " " << S << " offset " << off;
        for (int64_t i = 0; i < -off && weights; ++i)  // rows with no key: zeros
          EXPECT_EQ(got.output.data()[size_t(i * 8)], 0.0f) << L << " " << S;
      }
}

TEST(Sdpa, CausalBiasErrors) {
  std::vector<float> x(64, 0.5f);
  SdpaResult r;
  SdpaOptions o;
  o.causal_bias = CausalBias::kLowerRight;
  o.causal_bias_l = 2;
  o.causal_bias_s = 4;
  Status s = ScaledDotProductAttention({x.data(), {2, 4}}, {x.data(), {3, 4}}, {x.data(), {3, 4}}, o, &r);
  EXPECT_EQ(s.code(), Code::kShape);
  EXPECT_EQ(s.message(), "attnMask: causalLowerRight(2, 4) does not match the call's (L, S) = (2, 3)");
  o.causal_bias = CausalBias::kUpperLeft;
  o.causal_bias_l = 3;
  s = ScaledDotProductAttention({x.data(), {2, 4}}, {x.data(), {4, 4}}, {x.data(), {4, 4}}, o, &r);
  EXPECT_EQ(s.message(), "attnMask: causalUpperLeft(3, 4) does not match the call's (L, S) = (2, 4)");
  o.causal_bias_l = 2;
  o.is_causal = true;
  s = ScaledDotProductAttention({x.data(), {2, 4}}, {x.data(), {4, 4}}, {x.data(), {4, 4}}, o, &r);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "attnMask: must not be set when isCausal is true (as in torch)");
  s = CheckCausalBias(-1, 4);
  EXPECT_EQ(s.code(), Code::kOutOfRange);
  EXPECT_EQ(s.message(), "L: expected an integer in [0, 536870912], got -1");
  EXPECT_EQ(CheckCausalBias(3, int64_t(1) << 30).message(), "S: expected an integer in [0, 536870912], got 1073741824");
}

// A case's options: causal, weights, a bool mask of (L, S) (it must outlive
// them; null: none), and with `gqa` enable_gqa with causal_lower_right(L, S).
SdpaOptions CaseOptions(const Shape& q, const Shape& k, bool causal, bool need_weights,
                        const std::vector<uint8_t>* mask, bool gqa) {
  const int64_t L = q.end()[-2], S = k.end()[-2];
  SdpaOptions o;
  o.is_causal = causal;
  if (gqa) {
    o.enable_gqa = true;
    o.causal_bias = CausalBias::kLowerRight;
    o.causal_bias_l = L;
    o.causal_bias_s = S;
  }
  o.need_weights = need_weights;
  if (mask) o.attn_mask = MaskView{mask->data(), DType::kBool, {L, S}};
  return o;
}

// A keep mask of n values with every `period`-th one (from `skip`) masked.
std::vector<uint8_t> KeepMask(int64_t n, size_t period, size_t skip) {
  std::vector<uint8_t> mask(static_cast<size_t>(n));
  for (size_t i = 0; i < mask.size(); ++i) mask[i] = uint8_t(i % period != skip);
  return mask;
}

TEST(AttentionThreads, SdpaBitIdentical) {
  struct Case { Shape q, k, v; bool causal, need_weights, mask; };
  const Case cases[] = {
      {{2, 3, 37, 16}, {2, 3, 41, 16}, {2, 3, 41, 8}, false, true, true},
      {{1, 4, 130, 32}, {1, 4, 130, 32}, {1, 4, 130, 32}, true, false, false},
      {{3, 65, 24}, {3, 70, 24}, {3, 70, 24}, false, false, true},
      {{5, 9}, {7, 9}, {4, 7, 6}, false, true, false},  // value widens the batch: weights shared
      {{2, 4, 97, 16}, {2, 2, 140, 16}, {2, 2, 140, 16}, false, true, false},  // + lower-right causal bias, GQA
  };
  for (const Case& c : cases) {
    const auto q = Random(1, NumelChecked(c.q)), k = Random(2, NumelChecked(c.k)), v = Random(3, NumelChecked(c.v));
    const auto mask = KeepMask(c.q.end()[-2] * c.k.end()[-2], 7, 3);
    const bool gqa = c.q.size() == 4 && c.q[1] != c.k[1];  // the GQA case: causal_lower_right(L, S)
    const SdpaOptions o = CaseOptions(c.q, c.k, c.causal, c.need_weights, c.mask ? &mask : nullptr, gqa);
    SdpaResult want;
    ASSERT_TRUE(ScaledDotProductAttention({q.data(), c.q}, {k.data(), c.k}, {v.data(), c.v}, o, &want).ok());
    for (int threads : {2, 3}) {
      SetNumThreads(threads);
      SdpaResult got;
      ASSERT_TRUE(ScaledDotProductAttention({q.data(), c.q}, {k.data(), c.k}, {v.data(), c.v}, o, &got).ok());
      EXPECT_TRUE(test::bit_identical(got.output, want.output)) << ShapeStr(c.q) << " threads " << threads;
      EXPECT_TRUE(test::bit_identical(got.weights, want.weights)) << ShapeStr(c.q) << " weights, threads " << threads;
      SetNumThreads(1);
    }
  }
}

// output_over_query (the bindings' mode): the output written over the query's
// memory gives the bits of a separate output buffer, with 1, 2 and 3 threads,
// masks, causal (offset), GQA, weights, a NaN query row; and it is not taken
// where the shapes differ or the query's memory is also the key's or value's.
TEST(Sdpa, OutputOverQueryIsExact) {
  struct Case { Shape q, k, v; bool causal, need_weights, mask, gqa; };
  const Case cases[] = {
      {{2, 3, 37, 16}, {2, 3, 41, 16}, {2, 3, 41, 16}, false, true, true, false},
      {{1, 4, 130, 32}, {1, 4, 130, 32}, {1, 4, 130, 32}, true, false, false, false},
      {{3, 65, 24}, {3, 70, 24}, {3, 70, 24}, false, false, true, false},
      {{2, 4, 97, 16}, {2, 2, 140, 16}, {2, 2, 140, 16}, false, true, false, true},
      {{1, 300, 8}, {1, 300, 8}, {1, 300, 8}, true, false, false, false},
  };
  for (const Case& c : cases) {
    auto q = Random(1, NumelChecked(c.q));
    q[size_t(c.q.back()) * 5] = NAN;  // row 5 of the first head: that head's rows are NaN, torch's and ours
    const auto k = Random(2, NumelChecked(c.k)), v = Random(3, NumelChecked(c.v));
    const auto mask = KeepMask(c.q.end()[-2] * c.k.end()[-2], 5, 2);
    const SdpaOptions o = CaseOptions(c.q, c.k, c.causal, c.need_weights, c.mask ? &mask : nullptr, c.gqa);
    SdpaResult want;
    ASSERT_TRUE(ScaledDotProductAttention({q.data(), c.q}, {k.data(), c.k}, {v.data(), c.v}, o, &want).ok());
    const std::vector<float> want_out(want.output.data(), want.output.data() + want.output.size());
    for (int threads : {1, 2, 3}) {
      SetNumThreads(threads);
      std::vector<float> over = q;
      SdpaOptions oo = o;
      oo.output_over_query = true;
      SdpaResult got;
      ASSERT_TRUE(ScaledDotProductAttention({over.data(), c.q}, {k.data(), c.k}, {v.data(), c.v}, oo, &got).ok());
      EXPECT_EQ(got.output.size(), 0u) << ShapeStr(c.q);
      EXPECT_EQ(got.output_data, over.data()) << ShapeStr(c.q);
      EXPECT_TRUE(test::bit_identical(over, want_out)) << ShapeStr(c.q) << " threads " << threads;
      EXPECT_TRUE(test::bit_identical(got.weights, want.weights)) << ShapeStr(c.q) << " weights, threads " << threads;
      SetNumThreads(1);
    }
  }
  // Not over the query: value widens the output; q = k = v in one array.
  const auto q = Random(4, 5 * 9), k = Random(5, 7 * 9), v = Random(6, 4 * 7 * 6);
  SdpaOptions o;
  o.output_over_query = true;
  SdpaResult r;
  ASSERT_TRUE(ScaledDotProductAttention({q.data(), {5, 9}}, {k.data(), {7, 9}}, {v.data(), {4, 7, 6}}, o, &r).ok());
  EXPECT_EQ(r.output.size(), size_t(4 * 5 * 6));
  EXPECT_EQ(r.output_data, r.output.data());
  auto x = Random(7, 2 * 33 * 16);
  SdpaOptions plain;
  SdpaResult want, self;
  ASSERT_TRUE(ScaledDotProductAttention({x.data(), {2, 33, 16}}, {x.data(), {2, 33, 16}}, {x.data(), {2, 33, 16}}, plain, &want).ok());
  ASSERT_TRUE(ScaledDotProductAttention({x.data(), {2, 33, 16}}, {x.data(), {2, 33, 16}}, {x.data(), {2, 33, 16}}, o, &self).ok());
  EXPECT_EQ(self.output.size(), x.size());
  EXPECT_TRUE(test::bit_identical(self.output, want.output));
}

// Repeated calls take their scratch from the thread's workspace: the same
// results every time.
TEST(Sdpa, RepeatedCallsGiveTheSameResults) {
  std::vector<float> q(2 * 4), k(3 * 4), v(3 * 2);
  for (size_t i = 0; i < q.size(); ++i) q[i] = float(i % 5) * 0.25f - 0.5f;
  for (size_t i = 0; i < k.size(); ++i) k[i] = float(i % 7) * 0.125f - 0.3f;
  for (size_t i = 0; i < v.size(); ++i) v[i] = float(i);
  SdpaOptions o;
  o.need_weights = true;
  SdpaResult want, got;
  ASSERT_TRUE(ScaledDotProductAttention({q.data(), {2, 4}}, {k.data(), {3, 4}}, {v.data(), {3, 2}}, o, &want).ok());
  for (int rep = 0; rep < 2; ++rep) {
    ASSERT_TRUE(ScaledDotProductAttention({q.data(), {2, 4}}, {k.data(), {3, 4}}, {v.data(), {3, 2}}, o, &got).ok());
    EXPECT_EQ(std::vector<float>(got.output.data(), got.output.data() + 4),
              std::vector<float>(want.output.data(), want.output.data() + 4));
    EXPECT_EQ(std::vector<float>(got.weights.data(), got.weights.data() + 6),
              std::vector<float>(want.weights.data(), want.weights.data() + 6));
  }
}

}  // namespace
}  // namespace aw
