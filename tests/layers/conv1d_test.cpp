// Conv1d (src/layers/conv1d.*) natively: its GEMM over gathered windows against a direct loop of torch's
// definition (y[t][o] = b[o] + Σ_c Σ_k w[o][c][k] · x[t·stride + k − padding][c], zeros outside), at awkward sizes
// (channels and lengths that fill no SIMD block, strides 1 and 2, paddings 0 and 1, kernels 1, 3 and 5, a row
// stride wider than the channels); its state_dict names and shapes; the rules on its arguments.
// Elsewhere: Whisper's stem against transformers (tests/js/whisper.test.mjs).
#include "layers/conv1d.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "layer_test_util.h"

namespace aw {
namespace {

std::vector<float> Direct(const Conv1d& conv, int64_t cin, int64_t cout, int64_t k, int64_t stride, int64_t pad, bool bias,
                          const std::vector<float>& x, int64_t t_in, int64_t ldx) {
  const float* w = conv.Param("weight");
  const float* b = bias ? conv.Param("bias") : nullptr;
  const int64_t t_out = (t_in + 2 * pad - k) / stride + 1;
  std::vector<float> y(size_t(t_out * cout));
  for (int64_t t = 0; t < t_out; ++t)
    for (int64_t o = 0; o < cout; ++o) {
      double acc = b ? b[o] : 0.0;
      for (int64_t c = 0; c < cin; ++c)
        for (int64_t j = 0; j < k; ++j) {
          const int64_t s = t * stride + j - pad;
          if (s >= 0 && s < t_in) acc += double(w[(o * cin + c) * k + j]) * double(x[size_t(s * ldx + c)]);
        }
      y[size_t(t * cout + o)] = float(acc);
    }
  return y;
}

TEST(Conv1d, EqualsTheDirectLoopAtAwkwardSizes) {
  struct Case { int64_t cin, cout, k, stride, pad, t_in, extra; bool bias; };
  const Case cases[] = {
      {5, 7, 3, 1, 1, 13, 0, true},  {5, 7, 3, 2, 1, 13, 0, true},  {80, 16, 3, 1, 1, 31, 0, true},
      {16, 16, 3, 2, 1, 30, 0, true}, {3, 9, 1, 1, 0, 5, 2, false},  {11, 6, 5, 2, 2, 17, 3, true},
      {1, 1, 3, 1, 1, 1, 0, true},   {37, 19, 3, 2, 1, 2, 1, false},
  };
  uint64_t seed = 1;
  for (const Case& c : cases) {
    Rng rng(seed++);
    Conv1d conv;
    ASSERT_TRUE(conv.Init(c.cin, c.cout, c.k, c.stride, c.pad, c.bias, rng).ok());
    const int64_t ldx = c.cin + c.extra;
    const std::vector<float> x = Random(seed++, c.t_in * ldx);
    const int64_t t_out = conv.out_length(c.t_in);
    std::vector<float> y(size_t(t_out * c.cout), NAN);
    ASSERT_TRUE(conv.Apply(size_t(c.t_in), x.data(), size_t(ldx), y.data()).ok());
    const std::vector<float> want = Direct(conv, c.cin, c.cout, c.k, c.stride, c.pad, c.bias, x, c.t_in, ldx);
    ASSERT_EQ(y.size(), want.size());
    for (size_t i = 0; i < y.size(); ++i)
      ASSERT_NEAR(y[i], want[i], 1e-5 + 1e-5 * std::fabs(want[i])) << "case cin " << c.cin << " cout " << c.cout << " k " << c.k
                                                                  << " stride " << c.stride << " index " << i;
  }
}

TEST(Conv1d, StateDictNamesAndShapes) {
  Rng rng(3);
  Conv1d conv;
  ASSERT_TRUE(conv.Init(80, 16, 3, 1, 1, true, rng).ok());
  ASSERT_EQ(conv.Params().size(), 2u);
  EXPECT_EQ(conv.Params()[0].name, "weight");
  EXPECT_EQ(conv.Params()[0].shape, (Shape{16, 80, 3}));
  EXPECT_EQ(conv.Params()[1].name, "bias");
  EXPECT_EQ(conv.Params()[1].shape, (Shape{16}));
  EXPECT_EQ(conv.out_length(3000), 3000);
  Conv1d down;
  ASSERT_TRUE(down.Init(16, 16, 3, 2, 1, false, rng).ok());
  EXPECT_EQ(down.out_length(3000), 1500);
  EXPECT_EQ(down.Params().size(), 1u);
}

TEST(Conv1d, RulesNameTheArgument) {
  Rng rng(4);
  Conv1d a, b, c;
  Status s = a.Init(0, 4, 3, 1, 1, true, rng);
  EXPECT_NE(s.message().find("inChannels"), std::string::npos) << s.message();
  s = b.Init(4, 4, 3, 0, 1, true, rng);
  EXPECT_NE(s.message().find("stride"), std::string::npos) << s.message();
  s = c.Init(4, 4, 3, 1, 3, true, rng);
  EXPECT_NE(s.message().find("padding"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace aw
