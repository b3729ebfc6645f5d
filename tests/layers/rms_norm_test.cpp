// RMSNorm (src/layers/rms_norm.*) natively: defaults as torch (eps None =
// float32 epsilon, weight of normalized_shape initialised to ones), a
// multi-dim normalized_shape normalising over the trailing dims together,
// the model family's entry (Apply, in place) equal to Forward, and the
// messages of its rules.
//
// Elsewhere: the PyTorch goldens, errors and stateDict through the JS API:
// tests/js/layers/rms_norm.test.mjs; the kernel: tests/kernels/rmsnorm_test.cpp.
#include "layers/rms_norm.h"

#include <gtest/gtest.h>

#include "../kernel_test_util.h"
#include "layer_test_util.h"

#include <cfloat>
#include <cmath>
#include <vector>

namespace aw {
namespace {

TEST(RMSNorm, DefaultsAsTorch) {
  RMSNorm n;
  ASSERT_TRUE(n.Init({3, 8}, std::nullopt, true).ok());
  EXPECT_EQ(n.eps(), FLT_EPSILON);  // torch.finfo(torch.float32).eps
  EXPECT_EQ(n.size(), 24);
  ASSERT_EQ(n.Params().size(), 1u);
  EXPECT_EQ(n.Params()[0].name, "weight");
  EXPECT_EQ(n.Params()[0].shape, (Shape{3, 8}));
  for (float w : ParamValues(n, "weight")) EXPECT_EQ(w, 1.0f);
  RMSNorm plain;
  ASSERT_TRUE(plain.Init({5}, 1e-6, false).ok());
  EXPECT_TRUE(plain.Params().empty());
  EXPECT_EQ(plain.eps(), 1e-6f);
}

TEST(RMSNorm, TrailingDimsTogetherAndApplyInPlace) {
  // normalized_shape (3, 8): one mean of squares over the 24 trailing elements.
  RMSNorm n;
  ASSERT_TRUE(n.Init({3, 8}, 1e-5, true).ok());
  const std::vector<float> x = Random(7, 2 * 24);
  Buffer y;
  Shape ys;
  ASSERT_TRUE(n.Forward({x.data(), {2, 3, 8}}, &y, &ys).ok());
  EXPECT_EQ(ys, (Shape{2, 3, 8}));
  for (size_t r = 0; r < 2; ++r) {
    double ss = 0;
    for (size_t j = 0; j < 24; ++j) ss += double(x[r * 24 + j]) * x[r * 24 + j];
    const double inv = 1 / std::sqrt(ss / 24 + 1e-5);
    for (size_t j = 0; j < 24; ++j) EXPECT_NEAR(y.data()[r * 24 + j], x[r * 24 + j] * inv, 1e-6) << r << " " << j;
  }
  // Apply in place on padded rows: the same bits.
  std::vector<float> rows(2 * 30, test::kSentinel);
  for (size_t r = 0; r < 2; ++r) std::copy(x.begin() + r * 24, x.begin() + (r + 1) * 24, rows.begin() + r * 30);
  n.Apply(2, rows.data(), 30, rows.data(), 30);
  for (size_t r = 0; r < 2; ++r) {
    EXPECT_TRUE(test::same_bits(24, rows.data() + r * 30, y.data() + r * 24));
    EXPECT_EQ(rows[r * 30 + 24], test::kSentinel);
  }
}

TEST(RMSNorm, ErrorsNameTheArgument) {
  auto expect = [](const Status& s, Code code, const std::string& message) {
    EXPECT_EQ(s.code(), code) << s.message();
    EXPECT_EQ(s.message(), message);
  };
  RMSNorm n;
  expect(n.Init({}, std::nullopt, true), Code::kOutOfRange, "normalizedShape: expected at least one dim, got ()");
  expect(n.Init({0}, std::nullopt, true), Code::kOutOfRange,
         "normalizedShape: expected an integer in [1, 2147483647], got 0");
  expect(n.Init({4, -2}, std::nullopt, true), Code::kOutOfRange,
         "normalizedShape[1]: expected an integer in [1, 2147483647], got -2");
  expect(n.Init({4}, -1e-6, true), Code::kOutOfRange, "eps: expected a finite number >= 0, got -0.000001");
  expect(n.Init({4}, NAN, true), Code::kOutOfRange, "eps: expected a finite number >= 0, got NaN");
  ASSERT_TRUE(n.Init({3, 8}, std::nullopt, true).ok());
  const std::vector<float> x(48, 1.0f);
  Buffer y;
  Shape ys;
  expect(n.Forward({x.data(), {2, 8, 3}}, &y, &ys), Code::kShape,
         "input: expected (…, normalizedShape) with normalizedShape = [3, 8], got (2, 8, 3)");
  expect(n.Forward({x.data(), {8}}, &y, &ys), Code::kShape,
         "input: expected (…, normalizedShape) with normalizedShape = [3, 8], got (8,)");
  RMSNorm one;
  ASSERT_TRUE(one.Init({16}, std::nullopt, true).ok());
  expect(one.Forward({x.data(), {3, 16, 1}}, &y, &ys), Code::kShape,
         "input: expected (…, normalizedShape) with normalizedShape = 16, got (3, 16, 1)");
}

}  // namespace
}  // namespace aw
