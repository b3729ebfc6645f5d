// Tests for src/io/load_params.h (parameters straight from safetensors bytes)
// and LayerStack::CopyFrom (a stack's layers copied natively): values equal
// the reader's own conversion for F32 / F16 / BF16, the same all-or-nothing
// checks and messages as LoadStateDict, integer dtypes refused, and `used`
// marking what each module took.
#include "io/load_params.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "layers/layer_norm.h"
#include "layers/linear.h"
#include "layers/transformer.h"

namespace aw::io {
namespace {

using Bytes = std::vector<uint8_t>;

struct Tensor {
  std::string name, dtype;
  std::vector<int64_t> shape;
  Bytes data;
};

// A valid safetensors file of the tensors, in order.
Bytes MakeFile(const std::vector<Tensor>& ts) {
  std::string header = "{";
  Bytes data;
  for (const Tensor& t : ts) {
    std::string shape = "[";
    for (size_t i = 0; i < t.shape.size(); ++i) shape += (i ? "," : "") + std::to_string(t.shape[i]);
    shape += "]";
    if (header.size() > 1) header += ",";
    header += "\"" + t.name + "\":{\"dtype\":\"" + t.dtype + "\",\"shape\":" + shape + ",\"data_offsets\":[" +
              std::to_string(data.size()) + "," + std::to_string(data.size() + t.data.size()) + "]}";
    data.insert(data.end(), t.data.begin(), t.data.end());
  }
  header += "}";
  Bytes f(8);
  for (size_t i = 0; i < 8; ++i) f[i] = uint8_t(uint64_t(header.size()) >> (8 * i));
  f.insert(f.end(), header.begin(), header.end());
  f.insert(f.end(), data.begin(), data.end());
  return f;
}

Bytes F32(const std::vector<float>& v) {
  Bytes b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}
// Little-endian 16-bit patterns (F16 or BF16).
Bytes Bits16(const std::vector<uint16_t>& v) {
  Bytes b;
  for (uint16_t x : v) { b.push_back(uint8_t(x)); b.push_back(uint8_t(x >> 8)); }
  return b;
}

struct Loaded {
  Bytes file;
  StFile st;
};
Loaded Parse(std::vector<Tensor> ts) {
  Loaded l{MakeFile(ts), {}};
  const Status s = ParseSafetensors(l.file.data(), l.file.size(), &l.st);
  EXPECT_TRUE(s.ok()) << s.message();
  return l;
}

std::vector<float> ParamValues(const Module& m, const std::string& name) {
  for (const auto& p : m.Params())
    if (p.name == name) return std::vector<float>(m.Param(name), m.Param(name) + NumelChecked(p.shape));
  return {};
}

// Linear(3 → 2): weight (2, 3) in F16, bias (2) in BF16, under "head.";
// plus a tensor of another module.
std::vector<Tensor> LinearTensors() {
  return {{"head.weight", "F16", {2, 3}, Bits16({0x3C00, 0xC000, 0x3800, 0x0001, 0x7BFF, 0x8000})},
          {"head.bias", "BF16", {2}, Bits16({0x3F80, 0xC2F7})},
          {"other.weight", "F32", {1}, F32({5.0f})}};
}

TEST(LoadParamsFromSafetensors, ConvertsStraightIntoTheParameters) {
  Loaded l = Parse(LinearTensors());
  Linear lin;
  Rng rng;
  ASSERT_TRUE(lin.Init(3, 2, true, rng).ok());
  std::vector<uint8_t> used;
  const Status s = LoadParamsFromSafetensors(&lin, l.file.data(), l.file.size(), l.st, "head.", "Linear", &used);
  ASSERT_TRUE(s.ok()) << s.message();
  // The reader's own conversion is the oracle.
  std::vector<float> w(6), b(2);
  ASSERT_TRUE(ReadAsF32(l.file.data(), l.file.size(), l.st.tensors[0], w.data()).ok());
  ASSERT_TRUE(ReadAsF32(l.file.data(), l.file.size(), l.st.tensors[1], b.data()).ok());
  EXPECT_EQ(ParamValues(lin, "weight"), w);
  EXPECT_EQ(ParamValues(lin, "bias"), b);
  EXPECT_EQ(w[0], 1.0f);
  EXPECT_EQ(w[1], -2.0f);
  EXPECT_EQ(b[0], 1.0f);
  EXPECT_EQ(used, (std::vector<uint8_t>{1, 1, 0}));
}

TEST(LoadParamsFromSafetensors, AllOrNothingWithLoadStateDictsMessages) {
  Linear lin;
  Rng rng;
  ASSERT_TRUE(lin.Init(3, 2, true, rng).ok());
  const std::vector<float> w0 = ParamValues(lin, "weight");
  // bias mis-shaped, an unexpected key, weight fine: nothing may change.
  Loaded l = Parse({{"weight", "F32", {2, 3}, F32({1, 2, 3, 4, 5, 6})},
                    {"bias", "F32", {3}, F32({1, 2, 3})},
                    {"extra", "F32", {1}, F32({1})}});
  std::vector<uint8_t> used;
  const Status s = LoadParamsFromSafetensors(&lin, l.file.data(), l.file.size(), l.st, "", "Linear", &used);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kStateDict);
  EXPECT_NE(s.message().find("error(s) loading state_dict for Linear:"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("unexpected key(s): \"extra\""), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("size mismatch for bias: expected shape (2,)"), std::string::npos) << s.message();
  EXPECT_EQ(ParamValues(lin, "weight"), w0);
  EXPECT_TRUE(used.empty() || used == std::vector<uint8_t>(3, 0));
  // A missing key.
  Loaded m = Parse({{"weight", "F32", {2, 3}, F32({1, 2, 3, 4, 5, 6})}});
  const Status s2 = LoadParamsFromSafetensors(&lin, m.file.data(), m.file.size(), m.st, "", "Linear", nullptr);
  ASSERT_FALSE(s2.ok());
  EXPECT_NE(s2.message().find("missing key(s): \"bias\""), std::string::npos) << s2.message();
  EXPECT_EQ(ParamValues(lin, "weight"), w0);
}

TEST(LoadParamsFromSafetensors, IntegerTensorsAreRefusedByName) {
  Linear lin;
  Rng rng;
  ASSERT_TRUE(lin.Init(1, 1, true, rng).ok());
  Loaded l = Parse({{"weight", "I32", {1, 1}, Bytes{1, 0, 0, 0}}, {"bias", "F32", {1}, F32({0})}});
  const Status s = LoadParamsFromSafetensors(&lin, l.file.data(), l.file.size(), l.st, "", "Linear", nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kDtype);
  EXPECT_NE(s.message().find("weight: expected a float tensor (F32, F16, BF16 or F64), got I32"), std::string::npos)
      << s.message();
}

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
}  // namespace aw::io
