// TransformerEncoderLayer (src/layers/transformer_encoder_layer.*), natively:
// its output is bit-identical with 1, 2 and 3 threads (post- and pre-norm).
//
// Elsewhere: its PyTorch goldens, errors and the threads tests through the JS
// API: tests/js/layers/transformer_encoder_layer.test.mjs.
#include <gtest/gtest.h>

#include "../kernel_test_util.h"
#include "layer_test_util.h"

#include "core/parallel.h"
#include "core/rng.h"
#include "layers/transformer_encoder_layer.h"

namespace aw {
namespace {

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

}  // namespace
}  // namespace aw
