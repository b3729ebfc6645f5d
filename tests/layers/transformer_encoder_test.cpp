// TransformerEncoder, the stack (src/layers/transformer.*), natively:
// LayerStack::CopyFrom copies its layer into every layer and the norm, as
// torch's deepcopy (shared with TransformerDecoder).
//
// Elsewhere: its PyTorch goldens, errors and the threads tests through the JS
// API: tests/js/layers/transformer_encoder.test.mjs.
#include <gtest/gtest.h>

#include "layer_test_util.h"

#include <string>
#include <vector>

#include "layers/layer_norm.h"
#include "layers/transformer.h"

namespace aw {
namespace {

TEST(LayerStackCopyFrom, EveryLayerACopyAndTheNorm) {
  TransformerLayerConfig c;
  c.d_model = 8; c.nhead = 2; c.dim_feedforward = 16;
  Rng rng(7);
  TransformerEncoderLayer layer;
  ASSERT_TRUE(layer.Init(c, rng).ok());
  LayerNorm norm;
  ASSERT_TRUE(norm.Init(8, 1e-5, true, true).ok());
  std::vector<float> g(8);
  for (size_t i = 0; i < g.size(); ++i) g[i] = 0.5f + float(i);
  ASSERT_TRUE(norm.LoadStateDict({{"weight", {g.data(), {8}}}, {"bias", {g.data(), {8}}}}, "LayerNorm").ok());
  TransformerEncoder stack;
  ASSERT_TRUE(stack.Init(c, 3, true, 1e-5, rng).ok());
  const Status s = stack.CopyFrom(layer, &norm);
  ASSERT_TRUE(s.ok()) << s.message();
  for (const auto& p : layer.Params())
    for (int i = 0; i < 3; ++i)
      EXPECT_EQ(ParamValues(stack, "layers." + std::to_string(i) + "." + p.name), ParamValues(layer, p.name))
          << i << " " << p.name;
  EXPECT_EQ(ParamValues(stack, "norm.weight"), g);

  // A layer of another size, or a norm the stack does not have: refused, nothing changed.
  TransformerLayerConfig c2 = c;
  c2.dim_feedforward = 32;
  TransformerEncoderLayer other;
  ASSERT_TRUE(other.Init(c2, rng).ok());
  const std::vector<float> before = ParamValues(stack, "layers.0.linear1.weight");
  EXPECT_FALSE(stack.CopyFrom(other, &norm).ok());
  EXPECT_FALSE(stack.CopyFrom(layer, nullptr).ok());
  EXPECT_EQ(ParamValues(stack, "layers.0.linear1.weight"), before);
}

}  // namespace
}  // namespace aw
