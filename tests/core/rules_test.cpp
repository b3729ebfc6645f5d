// The argument rules (src/core/rules.h) and the layers and ops that apply
// them: each rule's code and exact message, as the JS API shows them
// (tests/js/rules.test.mjs reaches the same rules through the boundary).
#include "core/rules.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "layers/activation.h"
#include "layers/embedding.h"
#include "layers/layer_norm.h"
#include "layers/linear.h"
#include "layers/multihead_attention.h"
#include "layers/patch_embedding.h"
#include "layers/positional_encoding.h"
#include "layers/transformer.h"
#include "ops/scaled_dot_product_attention.h"

namespace aw {
namespace {

void ExpectError(const Status& s, Code code, const std::string& message) {
  EXPECT_EQ(s.code(), code) << s.message();
  EXPECT_EQ(s.message(), message);
}

TEST(Rules, NumbersPrintAsInJavaScript) {
  const std::vector<std::pair<double, std::string>> cases = {
      {0, "0"}, {-0.0, "0"}, {1, "1"}, {-1, "-1"}, {1.5, "1.5"}, {0.1, "0.1"}, {1e-7, "1e-7"},
      {0.000001, "0.000001"}, {1.23e-18, "1.23e-18"}, {1e21, "1e+21"}, {1e300, "1e+300"},
      {1099511627776.0, "1099511627776"}, {std::ldexp(1.0, 60), "1152921504606847000"},
      {123456789012345680000.0, "123456789012345680000"}, {5e-324, "5e-324"}, {-2.5e-9, "-2.5e-9"},
      {std::numeric_limits<double>::quiet_NaN(), "NaN"}, {INFINITY, "Infinity"}, {-INFINITY, "-Infinity"},
  };
  for (const auto& [v, want] : cases) EXPECT_EQ(NumStr(v), want) << v;
}

// The digits printf would choose (the shortest %.*e that strtod reads back, as NumStr chose before it stopped
// using printf to keep the .wasm small): the oracle for NumStr's own exact decimal expansion.
std::string PrintfShortest(double v) {
  char buf[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*e", precision - 1, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

TEST(Rules, NumStrHasPrintfsShortestDigits) {
  // Random bit patterns (every exponent, subnormals), round decimals, halfway cases, powers of two.
  std::vector<double> values;
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < 20000; ++i) {
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    double v;
    std::memcpy(&v, &x, 8);
    if (std::isfinite(v) && v != 0) values.push_back(v);
  }
  for (int i = -30; i <= 30; ++i) values.push_back(std::pow(10.0, i) * 1.5);
  for (int i = -1074; i <= 1023; i += 7) values.push_back(std::ldexp(1.0, i));
  for (double v : {0.5, 2.5, 1e23, 9.5367431640625e-7, 123.456, 0.3, 2.0 / 3, DBL_MAX, DBL_MIN, 4.9e-324})
    values.push_back(v);
  for (double v : values) {
    const std::string want = PrintfShortest(v);  // [-]d[.ddd]e±x
    const std::string got = NumStr(v);
    std::string digits, got_digits;
    for (char c : want.substr(0, want.find('e'))) if (c >= '0' && c <= '9') digits += c;
    for (char c : got.substr(0, got.find('e'))) if (c >= '0' && c <= '9') got_digits += c;
    got_digits.erase(0, got_digits.find_first_not_of('0'));
    while (got_digits.size() > digits.size() && got_digits.back() == '0') got_digits.pop_back();
    ASSERT_EQ(got_digits, digits) << v << " printed " << got << ", printf " << want;
    ASSERT_EQ(std::strtod(got.c_str(), nullptr), v) << got;
  }
}

TEST(Rules, HexAndMiBForMessages) {
  EXPECT_EQ(HexStr(0x3a, 2, true), "3A");
  EXPECT_EQ(HexStr(0x1f, 4, false), "001f");
  EXPECT_EQ(HexStr(0xABCDE, 4, true), "BCDE");
  EXPECT_EQ(MiBStr(1572864), "1.5");
  EXPECT_EQ(MiBStr(1048576 * 2048.0), "2048");
  EXPECT_EQ(MiBStr(100), "0");
}

TEST(Rules, EachRuleItsCodeAndMessage) {
  EXPECT_TRUE(IntInRange("n", 3, 1, 3).ok());
  ExpectError(IntInRange("n", 4, 1, 3), Code::kOutOfRange, "n: expected an integer in [1, 3], got 4");
  ExpectError(PositiveInt("n", 0), Code::kOutOfRange, "n: expected an integer in [1, 2147483647], got 0");
  EXPECT_TRUE(Probability("p", 1).ok());
  ExpectError(Probability("p", -0.1), Code::kOutOfRange, "p: expected a probability in [0, 1], got -0.1");
  ExpectError(Probability("p", NAN), Code::kOutOfRange, "p: expected a probability in [0, 1], got NaN");
  EXPECT_TRUE(NonNegativeFinite("eps", 0).ok());
  ExpectError(NonNegativeFinite("eps", INFINITY), Code::kOutOfRange, "eps: expected a finite number >= 0, got Infinity");
  EXPECT_TRUE(PositiveFinite("base", 1e-30).ok());
  ExpectError(PositiveFinite("base", 0), Code::kOutOfRange, "base: expected a finite number > 0, got 0");
  ExpectError(PositiveFinite("base", -INFINITY), Code::kOutOfRange, "base: expected a finite number > 0, got -Infinity");
  ExpectError(DivisibleBy("a", 10, "b", 3), Code::kInvalidArgument, "a: must be divisible by b (3), got 10");
  EXPECT_TRUE(CheckShape("x", {0, int64_t(1) << 29}).ok());  // no elements
  // No elements, but dims that would size loops and strides past the limit (the fuzz gate's
  // corpus/attention/crash-sdpa-zero-dim-with-oversized-other-dims): refused in any order.
  ExpectError(CheckShape("x", {0, int64_t(1) << 40}), Code::kOutOfRange,
              "x.shape: (0, 1099511627776) has a 0 dim, but its other dims multiply to 1099511627776, more than the limit 2^29");
  ExpectError(CheckShape("x", {int64_t(1) << 40, 0}), Code::kOutOfRange,
              "x.shape: (1099511627776, 0) has a 0 dim, but its other dims multiply to 1099511627776, more than the limit 2^29");
  EXPECT_TRUE(CheckShape("x", {int64_t(1) << 29}).ok());
  ExpectError(CheckShape("x", {2, -3}), Code::kOutOfRange, "x.shape: dims must be >= 0, got (2, -3)");
  ExpectError(CheckShape("x", {int64_t(1) << 20, int64_t(1) << 20}), Code::kOutOfRange,
              "x.shape: (1048576, 1048576) has 1099511627776 elements, more than the limit 2^29");
}

TEST(Rules, LayerConstructorsNameTheirArguments) {
  Rng rng;
  ExpectError(Linear().Init(0, 2, true, rng), Code::kOutOfRange,
              "inFeatures: expected an integer in [1, 2147483647], got 0");
  ExpectError(LayerNorm().Init(4, NAN, true, true), Code::kOutOfRange, "eps: expected a finite number >= 0, got NaN");
  ExpectError(LayerNorm().Init(-4, 1e-5, true, true), Code::kOutOfRange,
              "normalizedShape: expected an integer in [1, 2147483647], got -4");
  ExpectError(Embedding().Init(10, 4, 10, true, rng), Code::kOutOfRange,
              "paddingIdx: expected an integer in [-10, 9], got 10");
  EXPECT_TRUE(Embedding().Init(10, 4, -10, true, rng).ok());
  ExpectError(PatchEmbedding().Init(1, 8, 4097, true, false, rng), Code::kOutOfRange,
              "patchSize: expected an integer in [1, 4096], got 4097");
  ExpectError(SinusoidalPositionalEncoding().Init(8, 0, false), Code::kOutOfRange,
              "maxLen: expected an integer in [1, 2147483647], got 0");
}

TEST(Rules, MultiheadAttentionConfig) {
  Rng rng;
  MhaConfig c;
  c.embed_dim = 0; c.num_heads = 1;
  ExpectError(MultiheadAttention().Init(c, rng), Code::kOutOfRange,
              "embedDim: expected an integer in [1, 536870912], got 0");
  c.embed_dim = int64_t(1) << 62;
  ExpectError(MultiheadAttention().Init(c, rng), Code::kOutOfRange,
              "embedDim: expected an integer in [1, 536870912], got 4611686018427387904");
  c.embed_dim = 10; c.num_heads = 3;
  ExpectError(MultiheadAttention().Init(c, rng), Code::kInvalidArgument,
              "embedDim: must be divisible by numHeads (3), got 10");
  c.embed_dim = 8; c.num_heads = 2;
  c.kdim = 0;  // explicit 0 is refused; unset means embedDim
  ExpectError(MultiheadAttention().Init(c, rng), Code::kOutOfRange, "kdim: expected an integer in [1, 2147483647], got 0");
  c.kdim.reset();
  c.dropout = 2;
  ExpectError(MultiheadAttention().Init(c, rng), Code::kOutOfRange, "dropout: expected a probability in [0, 1], got 2");
  c.dropout = 0;
  MultiheadAttention m;
  ASSERT_TRUE(m.Init(c, rng).ok());
  EXPECT_EQ(m.Params()[0].name, "in_proj_weight");  // kdim = vdim = embedDim
}

TEST(Rules, TransformerConfigAndStacks) {
  Rng rng;
  TransformerLayerConfig c;
  c.d_model = 8; c.nhead = 2; c.dim_feedforward = 16;
  c.layer_norm_eps = -1;
  ExpectError(TransformerEncoderLayer().Init(c, rng), Code::kOutOfRange,
              "layerNormEps: expected a finite number >= 0, got -1");
  c.layer_norm_eps = 1e-5;
  c.dropout = 1.5;
  ExpectError(TransformerDecoderLayer().Init(c, rng), Code::kOutOfRange,
              "dropout: expected a probability in [0, 1], got 1.5");
  c.dropout = 0.1;
  ExpectError(TransformerEncoder().Init(c, 1001, false, 1e-5, rng), Code::kOutOfRange,
              "numLayers: expected an integer in [0, 1000], got 1001");
  ExpectError(Transformer().Init(c, 1, -1, rng), Code::kOutOfRange,
              "numDecoderLayers: expected an integer in [0, 1000], got -1");
  Activation a;
  ExpectError(ParseActivation("tanh", &a), Code::kOutOfRange,
              "activation: expected 'relu', 'gelu', 'gelu_tanh' or 'silu', got 'tanh'");

  // The final norm handed to a stack: LayerNorm(dModel), elementwiseAffine, the layer's bias.
  TransformerEncoderLayer layer;
  ASSERT_TRUE(layer.Init(c, rng).ok());
  TransformerEncoder stack;
  ASSERT_TRUE(stack.Init(c, 2, true, 1e-5, rng).ok());
  LayerNorm wrong_size, no_affine, no_bias;
  ASSERT_TRUE(wrong_size.Init(6, 1e-5, true, true).ok());
  ASSERT_TRUE(no_affine.Init(8, 1e-5, false, true).ok());
  ASSERT_TRUE(no_bias.Init(8, 1e-5, true, false).ok());
  ExpectError(stack.CopyFrom(layer, &wrong_size), Code::kInvalidArgument,
              "norm: expected LayerNorm(8) with elementwiseAffine, got LayerNorm(6)");
  ExpectError(stack.CopyFrom(layer, &no_affine), Code::kInvalidArgument,
              "norm: expected LayerNorm(8) with elementwiseAffine, got LayerNorm(8) without elementwiseAffine");
  ExpectError(stack.CopyFrom(layer, &no_bias), Code::kInvalidArgument,
              "norm: bias must match the layer's bias option (true), got false");
  ExpectError(stack.CopyFrom(layer, &layer), Code::kInvalidArgument,
              "norm: expected LayerNorm(8) with elementwiseAffine, got another module");
  LayerNorm good;
  ASSERT_TRUE(good.Init(8, 1e-5, true, true).ok());
  EXPECT_TRUE(stack.CopyFrom(layer, &good).ok());
}

// Every input tensor goes through CheckShape first, named as in the JS API.
TEST(Rules, InputShapesAreCheckedByEveryForward) {
  Rng rng;
  const std::vector<float> x(6, 0.5f);
  const Shape negative = {-2, -3};  // 6 elements by product, but not a shape
  Buffer y;
  Shape ys;
  Linear lin;
  ASSERT_TRUE(lin.Init(3, 2, true, rng).ok());
  ExpectError(lin.Forward({x.data(), negative}, &y, &ys), Code::kOutOfRange,
              "input.shape: dims must be >= 0, got (-2, -3)");
  LayerNorm ln;
  ASSERT_TRUE(ln.Init(3, 1e-5, true, true).ok());
  EXPECT_EQ(ln.Forward({x.data(), negative}, &y, &ys).code(), Code::kOutOfRange);
  PatchEmbedding pe;
  ASSERT_TRUE(pe.Init(1, 4, 2, true, false, rng).ok());
  ExpectError(pe.Forward({x.data(), {1, 1, -2, -3}}, &y, &ys), Code::kOutOfRange,
              "images.shape: dims must be >= 0, got (1, 1, -2, -3)");
  TransformerLayerConfig c;
  c.d_model = 4; c.nhead = 2; c.dim_feedforward = 8;
  TransformerEncoderLayer enc;
  ASSERT_TRUE(enc.Init(c, rng).ok());
  EXPECT_EQ(enc.Forward({x.data(), {-1, -1, 4}}, EncoderLayerForward(), &y, &ys).code(), Code::kOutOfRange);
  const std::vector<int32_t> ids(6, 1);
  Embedding emb;
  ASSERT_TRUE(emb.Init(10, 4, 0, false, rng).ok());
  ExpectError(emb.Forward(ids.data(), negative, &y, &ys), Code::kOutOfRange,
              "input.shape: dims must be >= 0, got (-2, -3)");

  SdpaOptions o;
  SdpaResult r;
  ExpectError(ScaledDotProductAttention({x.data(), {-1, -2, 3}}, {x.data(), {2, 3}}, {x.data(), {2, 3}}, o, &r),
              Code::kOutOfRange, "query.shape: dims must be >= 0, got (-1, -2, 3)");
  const std::vector<uint8_t> m(6, 1);
  o.attn_mask = MaskView{m.data(), DType::kBool, {-2, -3}};
  ExpectError(ScaledDotProductAttention({x.data(), {2, 3}}, {x.data(), {2, 3}}, {x.data(), {2, 3}}, o, &r),
              Code::kOutOfRange, "attnMask.shape: dims must be >= 0, got (-2, -3)");
  MultiheadAttention mha;
  MhaConfig mc;
  mc.embed_dim = 4; mc.num_heads = 2;
  ASSERT_TRUE(mha.Init(mc, rng).ok());
  MhaForwardOptions mo;
  mo.key_padding_mask = MaskView{m.data(), DType::kBool, {-6}};
  MhaResult mr;
  const std::vector<float> q(8, 0.25f);
  ExpectError(mha.Forward({q.data(), {2, 4}}, {q.data(), {2, 4}}, {q.data(), {2, 4}}, mo, &mr), Code::kOutOfRange,
              "keyPaddingMask.shape: dims must be >= 0, got (-6,)");
}

}  // namespace
}  // namespace aw
