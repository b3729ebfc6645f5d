// MultiheadAttention (src/layers/multihead_attention.*), natively: its output
// and weights are bit-identical with 1, 2 and 3 threads (the work is split on
// GEMM tile boundaries only: core/parallel.h, ops/parallel_gemm.h), at odd
// lengths (row tails), N > 1, H > 1, masks, bias_k/v, zero attention,
// head-averaged and per-head weights.
//
// Elsewhere: its PyTorch goldens, errors and the threads tests through the JS
// API: tests/js/layers/multihead_attention.test.mjs. Module's state_dict
// handling, through MHA: tests/core/module_test.cpp (Module.*). The attention
// core under it: tests/ops/attention_test.cpp.
#include <gtest/gtest.h>

#include "../kernel_test_util.h"
#include "layer_test_util.h"

#include <string>
#include <vector>

#include "core/parallel.h"
#include "core/rng.h"
#include "layers/multihead_attention.h"

namespace aw {
namespace {

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

}  // namespace
}  // namespace aw
