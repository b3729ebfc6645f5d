// What moved out of the embind boundary into src/ (bindings/attnwasm_bindings.cpp
// only registers and marshals): the functional activations by name, repeated
// SDPA calls on the thread's workspace and reading a whole safetensors file
// into float32 / int32 buffers.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "io/safetensors.h"
#include "layers/activation.h"
#include "ops/scaled_dot_product_attention.h"

namespace aw {
namespace {

TEST(Boundary, ActivationForwardByName) {
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

// Repeated calls take their scratch from the thread's workspace: the same
// results every time.
TEST(Boundary, SdpaRepeatedCallsGiveTheSameResults) {
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

// [u64 LE header length][header][data]
std::vector<uint8_t> File(const std::string& header, const std::vector<uint8_t>& data) {
  std::vector<uint8_t> f(8, 0);
  for (size_t i = 0; i < 8; ++i) f[i] = uint8_t(uint64_t(header.size()) >> (8 * i));
  f.insert(f.end(), header.begin(), header.end());
  f.insert(f.end(), data.begin(), data.end());
  return f;
}

TEST(Boundary, ReadSafetensorsConvertsEveryTensor) {
  // "h": F16 [1.0, -2.0]; "b": BOOL [1, 0, 1]
  const std::vector<uint8_t> f = File(
      R"({"h":{"dtype":"F16","shape":[2],"data_offsets":[0,4]},"b":{"dtype":"BOOL","shape":[3],"data_offsets":[4,7]},)"
      R"("__metadata__":{"k":"v"}})",
      {0x00, 0x3C, 0x00, 0xC0, 1, 0, 1});
  io::StConverted st;
  ASSERT_TRUE(io::ReadSafetensors(f.data(), f.size(), &st).ok());
  ASSERT_EQ(st.file.tensors.size(), 2u);
  EXPECT_TRUE(io::IsFloat(st.file.tensors[0].dtype));
  EXPECT_FALSE(io::IsFloat(st.file.tensors[1].dtype));
  EXPECT_EQ(std::vector<float>(st.f32[0].data(), st.f32[0].data() + 2), (std::vector<float>{1.0f, -2.0f}));
  EXPECT_EQ(st.i32[0].size(), 0u);
  EXPECT_EQ(std::vector<int32_t>(st.i32[1].data(), st.i32[1].data() + 3), (std::vector<int32_t>{1, 0, 1}));
  EXPECT_EQ(st.file.metadata.size(), 1u);
  // A conversion error stops it (a BOOL byte other than 0 / 1), naming the tensor.
  const std::vector<uint8_t> bad = File(R"({"b":{"dtype":"BOOL","shape":[2],"data_offsets":[0,2]}})", {1, 7});
  const Status s = io::ReadSafetensors(bad.data(), bad.size(), &st);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("'b'"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace aw
