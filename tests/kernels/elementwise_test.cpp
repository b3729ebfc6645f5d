// Tests for src/kernels/elementwise.h: the scalar references against hand
// computed values (one float rounding, NaN and inf as IEEE says), then the
// xsimd kernels against the references bit for bit at lengths around the
// vector width, at unaligned starts, with a sentinel guard after the data,
// and aliased (y op= y).
#include "kernels/elementwise.h"

#include <gtest/gtest.h>

#include "../kernel_test_util.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <random>
#include <vector>

namespace aw::kernels {
namespace {

using namespace test;

TEST(AddRef, HandComputed) {
  float y[] = {1.0f, -2.0f, 0.1f, kInf, 1.0f, FLT_MAX};
  const float x[] = {2.0f, 2.0f, 0.2f, -kInf, kNaN, FLT_MAX};
  f32_add_ref(6, y, x);
  EXPECT_EQ(y[0], 3.0f);
  EXPECT_EQ(y[1], 0.0f);
  EXPECT_EQ(y[2], 0.1f + 0.2f);  // float sum, one rounding
  EXPECT_TRUE(std::isnan(y[3]));
  EXPECT_TRUE(std::isnan(y[4]));
  EXPECT_EQ(y[5], kInf);
}

TEST(MulRef, HandComputed) {
  float y[] = {1.5f, -2.0f, 0.1f, kInf, 0.0f, FLT_MAX, -0.0f};
  const float x[] = {2.0f, 0.5f, 0.3f, 0.0f, kNaN, 2.0f, 5.0f};
  f32_mul_ref(7, y, x);
  EXPECT_EQ(y[0], 3.0f);
  EXPECT_EQ(y[1], -1.0f);
  EXPECT_EQ(y[2], 0.1f * 0.3f);  // float product, one rounding
  EXPECT_TRUE(std::isnan(y[3]));  // inf * 0
  EXPECT_TRUE(std::isnan(y[4]));
  EXPECT_EQ(y[5], kInf);
  EXPECT_TRUE(y[6] == 0.0f && std::signbit(y[6]));
}

// The kernels and their references, tested alike.
struct Op {
  const char* name;
  void (*simd)(size_t, float*, const float*);
  void (*ref)(size_t, float*, const float*);
};
const Op kOps[] = {{"f32_add", f32_add, f32_add_ref}, {"f32_mul", f32_mul, f32_mul_ref}};

TEST(ElementwiseSimd, BitwiseEqualToReference) {
  std::mt19937 rng(34);
  for (const Op& op : kOps) {
    for (size_t n : awkward_lengths()) {
      for (size_t off : {0, 1}) {
        const std::vector<float> y0 = mixed(rng, n), x = mixed(rng, n);
        std::vector<float> got(off + n + kGuard, kSentinel);
        std::copy(y0.begin(), y0.end(), got.begin() + off);
        std::vector<float> want(got);
        op.simd(n, got.data() + off, x.data());
        op.ref(n, want.data() + off, x.data());
        ASSERT_TRUE(same_bits(n, got.data() + off, want.data() + off)) << op.name << " n=" << n << " off=" << off;
        ASSERT_TRUE(guard_intact(got.data() + off + n)) << op.name << " n=" << n;
      }
    }
  }
}

TEST(ElementwiseSimd, Aliased) {
  // y op= y: doubling, squaring, on both sides.
  std::mt19937 rng(35);
  for (const Op& op : kOps) {
    for (size_t n : awkward_lengths()) {
      std::vector<float> got = mixed(rng, n), want(got);
      op.simd(n, got.data(), got.data());
      op.ref(n, want.data(), want.data());
      ASSERT_TRUE(same_bits(n, got.data(), want.data())) << op.name << " n=" << n;
    }
  }
}

}  // namespace
}  // namespace aw::kernels
