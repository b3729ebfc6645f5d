// Tests for src/io/load_params.h (parameters straight from safetensors bytes):
// values equal the reader's own conversion for F32 / F16 / BF16, the same
// all-or-nothing checks and messages as LoadStateDict, integer dtypes refused,
// a prefix selecting a module's tensors. (LayerStack::CopyFrom, a stack's
// layers copied natively: tests/layers/transformer_encoder_test.cpp.)
#include "io/load_params.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "../layers/layer_test_util.h"
#include "layers/linear.h"

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
  const Status s = LoadParamsFromSafetensors(&lin, l.file.data(), l.file.size(), l.st, "head.", "Linear");
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
  const Status s = LoadParamsFromSafetensors(&lin, l.file.data(), l.file.size(), l.st, "", "Linear");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kStateDict);
  EXPECT_NE(s.message().find("error(s) loading state_dict for Linear:"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("unexpected key(s): \"extra\""), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("size mismatch for bias: expected shape (2,)"), std::string::npos) << s.message();
  EXPECT_EQ(ParamValues(lin, "weight"), w0);
  // A missing key.
  Loaded m = Parse({{"weight", "F32", {2, 3}, F32({1, 2, 3, 4, 5, 6})}});
  const Status s2 = LoadParamsFromSafetensors(&lin, m.file.data(), m.file.size(), m.st, "", "Linear");
  ASSERT_FALSE(s2.ok());
  EXPECT_NE(s2.message().find("missing key(s): \"bias\""), std::string::npos) << s2.message();
  EXPECT_EQ(ParamValues(lin, "weight"), w0);
}

TEST(LoadParamsFromSafetensors, IntegerTensorsAreRefusedByName) {
  Linear lin;
  Rng rng;
  ASSERT_TRUE(lin.Init(1, 1, true, rng).ok());
  Loaded l = Parse({{"weight", "I32", {1, 1}, Bytes{1, 0, 0, 0}}, {"bias", "F32", {1}, F32({0})}});
  const Status s = LoadParamsFromSafetensors(&lin, l.file.data(), l.file.size(), l.st, "", "Linear");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kDtype);
  EXPECT_NE(s.message().find("weight: expected a float tensor (F32, F16, BF16 or F64), got I32"), std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace aw::io
