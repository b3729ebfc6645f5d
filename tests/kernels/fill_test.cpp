// Tests for src/kernels/fill.h: f32_fill writes exactly n copies of the value
// (bitwise, so -0 stays -0) at every length 0..70 and a few long ones, at
// unaligned start addresses, touching nothing before or after the row.
#include "kernels/fill.h"

#include <gtest/gtest.h>

#include "../kernel_test_util.h"

#include <cmath>
#include <vector>

namespace aw::kernels {
namespace {

using namespace test;


TEST(FillSimd, EveryLengthAndOffset) {
  for (size_t n : awkward_lengths()) {
    for (size_t offset : {0, 1, 3}) {
      for (float value : {0.0f, -0.0f, -kInf, 1.25f}) {
        std::vector<float> x(offset + n + kGuard, kSentinel);
        f32_fill(n, x.data() + offset, value);
        for (size_t j = 0; j < offset; ++j) ASSERT_EQ(x[j], kSentinel) << "before the row, j=" << j;
        ASSERT_TRUE(same_bits(n, x.data() + offset, std::vector<float>(n, value).data()))
            << "n=" << n << " offset=" << offset << " value=" << value;
        ASSERT_TRUE(guard_intact(x.data() + offset + n));
      }
    }
  }
}

TEST(FillSimd, NaN) {
  std::vector<float> x(13 + kGuard, kSentinel);
  f32_fill(13, x.data(), kNaN);
  for (size_t j = 0; j < 13; ++j) EXPECT_TRUE(std::isnan(x[j])) << j;
  EXPECT_TRUE(guard_intact(x.data() + 13));
}

}  // namespace
}  // namespace aw::kernels
