// Tests for src/kernels/mask.h: the scalar references against hand-computed
// rows, then the xsimd kernels against them at every length 0..70 and a few
// long ones (around and across the vector width W = 4 or 8), at unaligned
// start addresses, with a sentinel guard after the row. These kernels do no
// rounding, so SIMD and reference must agree bitwise (NaN matches any NaN):
// the tolerance is zero. (An additive mask is f32_add: elementwise_test.cpp;
// f32_fill: fill_test.cpp.)
#include "kernels/mask.h"

#include <gtest/gtest.h>

#include "../kernel_test_util.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

namespace aw::kernels {
namespace {

using namespace test;


// Scores with some large magnitudes, infinities and NaN sprinkled in.
std::vector<float> scores(std::mt19937& rng, size_t n) {
  std::uniform_real_distribution<float> dist(-1000.0f, 1000.0f);
  std::uniform_int_distribution<int> pick(0, 19);
  std::vector<float> v(n);
  for (float& x : v) {
    const int p = pick(rng);
    x = p == 0 ? -kInf : p == 1 ? kInf : p == 2 ? kNaN : p == 3 ? -0.0f : dist(rng);
  }
  return v;
}

// ---------------------------------------------------------------------------
// References against hand-computed rows.

TEST(MaskRef, KeepU8HandComputed) {
  // Any nonzero byte keeps, not only 1.
  float x[] = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, kInf};
  const uint8_t keep[] = {1, 0, 255, 0, 128, 2};
  f32_mask_keep_u8_ref(6, x, keep);
  EXPECT_EQ(x[0], 1.0f);
  EXPECT_EQ(x[1], -kInf);
  EXPECT_EQ(x[2], 3.0f);
  EXPECT_EQ(x[3], -kInf);
  EXPECT_EQ(x[4], 5.0f);
  EXPECT_EQ(x[5], kInf);
}

TEST(MaskRef, DropU8NonzeroMasks) {
  // MultiheadAttention's convention: any nonzero byte masks.
  float x[] = {1.0f, 2.0f, 3.0f, 4.0f, 5.0f, kInf};
  const uint8_t drop[] = {1, 0, 255, 0, 128, 0};
  f32_mask_drop_u8_ref(6, x, drop);
  EXPECT_EQ(x[0], -kInf);
  EXPECT_EQ(x[1], 2.0f);
  EXPECT_EQ(x[2], -kInf);
  EXPECT_EQ(x[3], 4.0f);
  EXPECT_EQ(x[4], -kInf);
  EXPECT_EQ(x[5], kInf);
}

TEST(MaskRef, ZeroLengthTouchesNothing) {
  float x[1] = {kSentinel};
  const uint8_t keep[1] = {0};
  f32_mask_keep_u8_ref(0, x, keep);
  EXPECT_EQ(x[0], kSentinel);
}

// ---------------------------------------------------------------------------
// SIMD against reference (bitwise).

TEST(MaskSimd, KeepU8AndDropU8MatchReference) {
  std::mt19937 rng(22);
  const uint8_t byte_values[] = {0, 0, 0, 1, 2, 127, 128, 255};
  std::uniform_int_distribution<int> pick(0, 7);
  for (size_t n : awkward_lengths()) {
    for (size_t offset : {0, 1, 3}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " offset=" + std::to_string(offset));
      const std::vector<float> x0 = scores(rng, n);
      // The mask starts at an odd byte offset too.
      std::vector<uint8_t> keep(offset + n);
      for (uint8_t& k : keep) k = byte_values[pick(rng)];
      std::vector<float> got(offset + n + kGuard, kSentinel);
      std::copy(x0.begin(), x0.end(), got.begin() + offset);
      std::vector<float> want(got);
      f32_mask_keep_u8_ref(n, want.data() + offset, keep.data() + offset);
      f32_mask_keep_u8(n, got.data() + offset, keep.data() + offset);
      ASSERT_TRUE(same_bits(offset + n, got.data(), want.data()));
      ASSERT_TRUE(guard_intact(got.data() + offset + n));
      // The same bytes as a drop mask: the complement.
      std::copy(x0.begin(), x0.end(), got.begin() + offset);
      std::copy(x0.begin(), x0.end(), want.begin() + offset);
      f32_mask_drop_u8_ref(n, want.data() + offset, keep.data() + offset);
      f32_mask_drop_u8(n, got.data() + offset, keep.data() + offset);
      ASSERT_TRUE(same_bits(offset + n, got.data(), want.data()));
      ASSERT_TRUE(guard_intact(got.data() + offset + n));
      for (size_t j = 0; j < n; ++j) {
        if (keep[offset + j] != 0) ASSERT_EQ(got[offset + j], -kInf) << "j=" << j;
        else ASSERT_TRUE(same_bits(1, &got[offset + j], &x0[j])) << "j=" << j;
      }
    }
  }
}

TEST(MaskSimd, KeepU8AllZeroAndAllKeep) {
  for (size_t n : awkward_lengths()) {
    std::vector<float> x(n + kGuard, kSentinel);
    for (size_t j = 0; j < n; ++j) x[j] = float(j) - 3.0f;
    std::vector<uint8_t> keep(n, 0xFF);
    f32_mask_keep_u8(n, x.data(), keep.data());
    for (size_t j = 0; j < n; ++j) ASSERT_EQ(x[j], float(j) - 3.0f) << "n=" << n << " j=" << j;
    std::fill(keep.begin(), keep.end(), 0);
    f32_mask_keep_u8(n, x.data(), keep.data());
    for (size_t j = 0; j < n; ++j) ASSERT_EQ(x[j], -kInf) << "n=" << n << " j=" << j;
    ASSERT_TRUE(guard_intact(x.data() + n));
  }
}

}  // namespace
}  // namespace aw::kernels
