// Tests for src/kernels/mask.h: the scalar references against hand-computed
// rows, then the xsimd kernels against them at every length 0..70 and a few
// long ones (around and across the vector width W = 4 or 8), at unaligned
// start addresses, with a sentinel guard after the row. These kernels do one
// rounding at most (x + m) or none, so SIMD and reference must agree bitwise
// (NaN matches any NaN): the tolerance is zero.
#include "kernels/mask.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

namespace aw::kernels {
namespace {

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kSentinel = -12345.5f;
constexpr size_t kGuard = 8;

std::vector<size_t> lengths() {
  std::vector<size_t> v;
  for (size_t n = 0; n <= 70; ++n) v.push_back(n);
  for (size_t n : {127, 128, 129, 1000, 1001}) v.push_back(n);
  return v;
}

// Bitwise equality of n floats (so -0 vs +0 counts), except that any NaN
// matches any NaN (payloads are not portable: wasm may canonicalize them);
// lists the first mismatches.
::testing::AssertionResult same_bits(size_t n, const float* got, const float* want) {
  size_t bad = 0;
  std::ostringstream msg;
  for (size_t j = 0; j < n; ++j) {
    if (std::isnan(got[j]) && std::isnan(want[j])) continue;
    if (std::memcmp(&got[j], &want[j], sizeof(float)) != 0 && bad++ < 8) {
      msg << "\n  [" << j << "]: simd=" << got[j] << " ref=" << want[j];
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " of " << n << " elements differ" << msg.str();
}

::testing::AssertionResult guard_intact(const float* guard) {
  for (size_t g = 0; g < kGuard; ++g) {
    if (std::memcmp(&guard[g], &kSentinel, sizeof(float)) != 0)
      return ::testing::AssertionFailure() << "guard cell " << g << " after the row was written: " << guard[g];
  }
  return ::testing::AssertionSuccess();
}

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

TEST(MaskRef, AddHandComputed) {
  float x[] = {1.0f, 2.0f, 3.0f, -4.0f};
  const float m[] = {0.5f, -kInf, -1.0f, 0.0f};
  f32_mask_add_ref(4, x, m);
  EXPECT_EQ(x[0], 1.5f);
  EXPECT_EQ(x[1], -kInf);
  EXPECT_EQ(x[2], 2.0f);
  EXPECT_EQ(x[3], -4.0f);
}

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

TEST(MaskRef, ZeroLengthTouchesNothing) {
  float x[1] = {kSentinel};
  const float m[1] = {1.0f};
  const uint8_t keep[1] = {0};
  f32_mask_add_ref(0, x, m);
  f32_mask_keep_u8_ref(0, x, keep);
  EXPECT_EQ(x[0], kSentinel);
}

// ---------------------------------------------------------------------------
// SIMD against reference (bitwise).

TEST(MaskSimd, AddMatchesReference) {
  std::mt19937 rng(21);
  for (size_t n : lengths()) {
    for (size_t offset : {0, 1, 3}) {  // start at unaligned addresses
      SCOPED_TRACE("n=" + std::to_string(n) + " offset=" + std::to_string(offset));
      const std::vector<float> x0 = scores(rng, n);
      const std::vector<float> m = scores(rng, n);
      std::vector<float> got(offset + n + kGuard, kSentinel);
      std::copy(x0.begin(), x0.end(), got.begin() + offset);
      std::vector<float> want(got);
      f32_mask_add_ref(n, want.data() + offset, m.data());
      f32_mask_add(n, got.data() + offset, m.data());
      ASSERT_TRUE(same_bits(offset + n, got.data(), want.data()));
      ASSERT_TRUE(guard_intact(got.data() + offset + n));
    }
  }
}

TEST(MaskSimd, KeepU8MatchesReference) {
  std::mt19937 rng(22);
  const uint8_t byte_values[] = {0, 0, 0, 1, 2, 127, 128, 255};
  std::uniform_int_distribution<int> pick(0, 7);
  for (size_t n : lengths()) {
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
    }
  }
}

TEST(MaskSimd, KeepU8AllZeroAndAllKeep) {
  for (size_t n : lengths()) {
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

TEST(MaskSimd, Fill) {
  for (size_t n : lengths()) {
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

TEST(MaskSimd, FillNaN) {
  std::vector<float> x(13 + kGuard, kSentinel);
  f32_fill(13, x.data(), kNaN);
  for (size_t j = 0; j < 13; ++j) EXPECT_TRUE(std::isnan(x[j])) << j;
  EXPECT_TRUE(guard_intact(x.data() + 13));
}

}  // namespace
}  // namespace aw::kernels
