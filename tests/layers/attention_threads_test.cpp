// MultiheadAttention, TransformerEncoderLayer and scaled_dot_product_attention
// give bit-identical outputs (and weights) with 1, 2 and 3 threads: the work
// is split on GEMM tile boundaries only (core/parallel.h, ops/parallel_gemm.h).
// Shapes include odd lengths (row tails), N > 1, H > 1, masks, bias_k/v, zero
// attention, head-averaged and per-head weights, and broadcast SDPA batches.
#include <gtest/gtest.h>

#include "../kernel_test_util.h"

#include <cstring>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "core/rng.h"
#include "layers/multihead_attention.h"
#include "layers/transformer_encoder_layer.h"
#include "ops/scaled_dot_product_attention.h"

namespace aw {
namespace {

std::vector<float> Random(uint64_t seed, int64_t n) {
  Rng rng(seed);
  std::vector<float> out(static_cast<size_t>(n));
  rng.FillUniform(out.data(), n, 1.0);
  return out;
}

struct MhaCase {
  int64_t E, H, N, L, S;
  bool batch_first, add_bias_kv, add_zero_attn, mask, kpm, need_weights, average;
};

TEST(AttentionThreads, MultiheadAttentionBitIdentical) {
  const MhaCase cases[] = {
      {16, 2, 1, 7, 9, false, false, false, false, false, false, true},
      {32, 4, 3, 33, 17, true, false, false, true, true, true, true},
      {32, 4, 2, 65, 65, false, true, true, true, false, true, false},
      {48, 3, 2, 130, 67, false, false, false, false, true, true, true},
      {64, 8, 1, 129, 129, true, false, false, true, false, false, true},
  };
  for (const MhaCase& c : cases) {
    const std::string name = "E" + std::to_string(c.E) + " H" + std::to_string(c.H) + " N" + std::to_string(c.N) +
                             " L" + std::to_string(c.L) + " S" + std::to_string(c.S);
    MhaConfig cfg;
    cfg.embed_dim = c.E; cfg.num_heads = c.H; cfg.batch_first = c.batch_first;
    cfg.add_bias_kv = c.add_bias_kv; cfg.add_zero_attn = c.add_zero_attn;
    Rng rng(11);
    MultiheadAttention mha;
    ASSERT_TRUE(mha.Init(cfg, rng).ok());
    const Shape qs = c.batch_first ? Shape{c.N, c.L, c.E} : Shape{c.L, c.N, c.E};
    const Shape ks = c.batch_first ? Shape{c.N, c.S, c.E} : Shape{c.S, c.N, c.E};
    const auto q = Random(1, c.N * c.L * c.E), k = Random(2, c.N * c.S * c.E), v = Random(3, c.N * c.S * c.E);
    std::vector<float> am = Random(4, c.L * c.S);
    std::vector<uint8_t> kpm(size_t(c.N * c.S));
    for (size_t i = 0; i < kpm.size(); ++i) kpm[i] = uint8_t(i % 5 == 1);
    MhaForwardOptions o;
    if (c.mask) o.attn_mask = MaskView{am.data(), DType::kF32, {c.L, c.S}};
    if (c.kpm) o.key_padding_mask = MaskView{kpm.data(), DType::kBool, {c.N, c.S}};
    o.need_weights = c.need_weights;
    o.average_attn_weights = c.average;
    MhaResult want;
    ASSERT_TRUE(mha.Forward({q.data(), qs}, {k.data(), ks}, {v.data(), ks}, o, &want).ok()) << name;
    for (int threads : {2, 3}) {
      SetNumThreads(threads);
      MhaResult got;
      ASSERT_TRUE(mha.Forward({q.data(), qs}, {k.data(), ks}, {v.data(), ks}, o, &got).ok()) << name;
      EXPECT_TRUE(test::bit_identical(got.output, want.output)) << name << " threads " << threads;
      EXPECT_TRUE(test::bit_identical(got.weights, want.weights)) << name << " weights, threads " << threads;
      SetNumThreads(1);
    }
  }
}

TEST(AttentionThreads, EncoderLayerBitIdentical) {
  for (bool norm_first : {false, true}) {
    TransformerLayerConfig cfg;
    cfg.d_model = 64; cfg.nhead = 4; cfg.dim_feedforward = 96; cfg.norm_first = norm_first;
    Rng rng(5);
    TransformerEncoderLayer layer;
    ASSERT_TRUE(layer.Init(cfg, rng).ok());
    const auto x = Random(9, 2 * 75 * 64);
    const TensorView src{x.data(), {75, 2, 64}};
    Buffer want, got;
    Shape shape;
    ASSERT_TRUE(layer.Forward(src, {}, &want, &shape).ok());
    for (int threads : {2, 3}) {
      SetNumThreads(threads);
      ASSERT_TRUE(layer.Forward(src, {}, &got, &shape).ok());
      EXPECT_TRUE(test::bit_identical(got, want)) << "norm_first " << norm_first << " threads " << threads;
      SetNumThreads(1);
    }
  }
}

TEST(AttentionThreads, SdpaBitIdentical) {
  struct Case { Shape q, k, v; bool causal, need_weights, mask; };
  const Case cases[] = {
      {{2, 3, 37, 16}, {2, 3, 41, 16}, {2, 3, 41, 8}, false, true, true},
      {{1, 4, 130, 32}, {1, 4, 130, 32}, {1, 4, 130, 32}, true, false, false},
      {{3, 65, 24}, {3, 70, 24}, {3, 70, 24}, false, false, true},
      {{5, 9}, {7, 9}, {4, 7, 6}, false, true, false},  // value widens the batch: weights shared
  };
  for (const Case& c : cases) {
    const auto q = Random(1, NumelChecked(c.q)), k = Random(2, NumelChecked(c.k)), v = Random(3, NumelChecked(c.v));
    const int64_t L = c.q.end()[-2], S = c.k.end()[-2];
    std::vector<uint8_t> mask(size_t(L * S));
    for (size_t i = 0; i < mask.size(); ++i) mask[i] = uint8_t(i % 7 != 3);
    SdpaOptions o;
    o.is_causal = c.causal;
    o.need_weights = c.need_weights;
    if (c.mask) o.attn_mask = MaskView{mask.data(), DType::kBool, {L, S}};
    SdpaScratch scratch;
    SdpaResult want;
    ASSERT_TRUE(ScaledDotProductAttention({q.data(), c.q}, {k.data(), c.k}, {v.data(), c.v}, o, &scratch, &want).ok());
    for (int threads : {2, 3}) {
      SetNumThreads(threads);
      SdpaResult got;
      ASSERT_TRUE(ScaledDotProductAttention({q.data(), c.q}, {k.data(), c.k}, {v.data(), c.v}, o, &scratch, &got).ok());
      EXPECT_TRUE(test::bit_identical(got.output, want.output)) << ShapeStr(c.q) << " threads " << threads;
      EXPECT_TRUE(test::bit_identical(got.weights, want.weights)) << ShapeStr(c.q) << " weights, threads " << threads;
      SetNumThreads(1);
    }
  }
}

}  // namespace
}  // namespace aw
