// The functional activations by name (src/layers/activation.h ActivationForward,
// what aw.relu / aw.gelu call): the names ParseActivation accepts, the shape
// rule, and the messages. Their kernels: tests/kernels/activation_test.cpp;
// their PyTorch goldens: tests/js/layers/activations.test.mjs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "layers/activation.h"

namespace aw {
namespace {

TEST(Activation, ForwardByName) {
  const std::vector<float> x = {-1.0f, 0.0f, 2.0f};
  Buffer y;
  Shape ys;
  ASSERT_TRUE(ActivationForward("relu", {x.data(), {3}}, &y, &ys).ok());
  EXPECT_EQ(ys, Shape{3});
  EXPECT_EQ(std::vector<float>(y.data(), y.data() + 3), (std::vector<float>{0.0f, 0.0f, 2.0f}));
  ASSERT_TRUE(ActivationForward("gelu_tanh", {x.data(), {1, 3}}, &y, &ys).ok());
  EXPECT_EQ(ys, (Shape{1, 3}));
  EXPECT_NEAR(y.data()[2], 1.9546f, 1e-3f);
  ASSERT_TRUE(ActivationForward(Activation::kGelu, {nullptr, {0, 3}}, &y, &ys).ok());
  EXPECT_EQ(y.size(), 0u);
  Status s = ActivationForward("swish", {x.data(), {3}}, &y, &ys);
  EXPECT_EQ(s.code(), Code::kOutOfRange);
  EXPECT_EQ(s.message(), "activation: expected 'relu', 'gelu', 'gelu_tanh' or 'silu', got 'swish'");
  s = ActivationForward("relu", {x.data(), {3, -1}}, &y, &ys);
  EXPECT_EQ(s.code(), Code::kOutOfRange);
  EXPECT_EQ(s.message(), "input.shape: dims must be >= 0, got (3, -1)");
}

}  // namespace
}  // namespace aw
