// Tests for src/kernels/bounds.h: f32_bounds_spread on hand-computed values (NaN and inf give NaN bounds); the
// scans on hand-made rows (NaN anywhere, lower above upper, −inf rows, ties, the cap and the count past it), then
// against a plain search at every awkward length, with a NaN and the largest value at every place, thresholds
// that take none, some and all, and caps around the count (nothing written past the cap).
#include "kernels/bounds.h"

#include <gtest/gtest.h>

#include "../kernel_test_util.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace aw::kernels {
namespace {

using namespace test;

TEST(BoundsSpread, HandComputed) {
  const float wn[] = {1.0f, 2.0f, 0.5f, 1.0f, 1.0f}, en[] = {0.25f, 0.0f, 1.0f, 1.0f, 1.0f}, bias[] = {-1.0f, 0.0f, 2.0f, 0.0f, 0.0f};
  float lo[] = {3.0f, -2.0f, 0.0f, kNaN, -kInf}, up[5];
  f32_bounds_spread(5, 0.5f, 2.0f, 0.25f, wn, en, bias, lo, up);
  // e = 0.5·wn + 2·en + 0.25·(|y| + |b|) + FLT_MIN
  EXPECT_EQ(up[0] - 3.0f, 0.5f + 0.5f + 1.0f + FLT_MIN);
  EXPECT_EQ(lo[0], 3.0f - (2.0f + FLT_MIN));
  EXPECT_EQ(up[1], -2.0f + (1.0f + 0.5f));
  EXPECT_EQ(lo[1], -2.0f - (1.0f + 0.5f));
  EXPECT_EQ(up[2], 0.25f + 2.0f + 0.5f);
  EXPECT_TRUE(std::isnan(lo[3]) && std::isnan(up[3]));
  EXPECT_TRUE(std::isnan(lo[4]) && std::isnan(up[4]));
}

TEST(Bounds, HandMade) {
  const float lo[] = {1.0f, 3.0f, -kInf, 2.5f, 3.0f};
  const float up[] = {2.0f, 4.0f, -kInf, 3.5f, 3.0f};
  EXPECT_EQ(f32_bounds_best(5, lo, up), 3.0f);
  EXPECT_EQ(f32_bounds_best(0, lo, up), -kInf);
  EXPECT_EQ(f32_bounds_best(1, lo + 2, up + 2), -kInf);
  const float lo_nan[] = {1.0f, kNaN, 2.0f}, up_nan[] = {2.0f, 3.0f, kNaN}, up_below[] = {2.0f, 3.0f, 1.0f};
  EXPECT_TRUE(std::isnan(f32_bounds_best(3, lo_nan, up)));
  EXPECT_TRUE(std::isnan(f32_bounds_best(3, lo, up_nan)));
  EXPECT_TRUE(std::isnan(f32_bounds_best(3, lo + 2, up_below)));  // −inf ≤ 2, 2.5 ≤ 3, 3 > 1
  float ids[8];
  ASSERT_EQ(f32_bounds_above(5, up, 3.0f, ids, 8), 3u);
  EXPECT_EQ(ids[0], 1);
  EXPECT_EQ(ids[1], 3);
  EXPECT_EQ(ids[2], 4);
  EXPECT_EQ(f32_bounds_above(5, up, 5.0f, ids, 8), 0u);
  EXPECT_EQ(f32_bounds_above(5, up, kNaN, ids, 8), 0u);
  EXPECT_EQ(f32_bounds_above(5, up, -kInf, ids, 8), 5u);  // −inf >= −inf
  ids[2] = -7.0f;
  EXPECT_EQ(f32_bounds_above(5, up, -kInf, ids, 2), 3u);  // more than the cap: cap + 1, the first cap written
  EXPECT_EQ(ids[0], 0);
  EXPECT_EQ(ids[1], 1);
  EXPECT_EQ(ids[2], -7);
}

// A row of bounds: lower = y − e, upper = y + e, e >= 0.
void Row(std::mt19937& rng, size_t n, std::vector<float>* lo, std::vector<float>* up) {
  *lo = random_vec(rng, n, -10.0f, 10.0f);
  up->resize(n);
  const std::vector<float> e = random_vec(rng, n, 0.0f, 2.0f);
  for (size_t i = 0; i < n; ++i) {
    (*up)[i] = (*lo)[i] + e[i];
    (*lo)[i] -= e[i];
  }
}

// The scans against a plain search at every awkward length: the largest and a bad bound (NaN, lower above upper)
// at every place, thresholds that take none, some and all, caps around the count.
TEST(Bounds, ScansAgainstAPlainSearch) {
  std::mt19937 rng(40);
  std::vector<float> lo, up;
  for (size_t n : awkward_lengths()) {
    Row(rng, n, &lo, &up);
    float best = -kInf;
    for (size_t i = 0; i < n; ++i) best = std::max(best, lo[i]);
    EXPECT_EQ(f32_bounds_best(n, lo.data(), up.data()), best) << n;
    for (size_t at = 0; at < n && at < 80; ++at) {
      std::vector<float> l2 = lo, u2 = up;
      l2[at] = 11.0f;
      u2[at] = 12.0f;
      EXPECT_EQ(f32_bounds_best(n, l2.data(), u2.data()), 11.0f) << n << " at " << at;
      for (int kind = 0; kind < 3; ++kind) {
        std::vector<float> l3 = lo, u3 = up;
        if (kind == 0) l3[at] = kNaN;
        else if (kind == 1) u3[at] = kNaN;
        else l3[at] = u3[at] + 1.0f;
        EXPECT_TRUE(std::isnan(f32_bounds_best(n, l3.data(), u3.data()))) << "n " << n << " at " << at << " kind " << kind;
      }
    }
    for (float t : {-kInf, -20.0f, -1.0f, 0.0f, 5.0f, 11.5f, 20.0f, kNaN}) {
      std::vector<float> want;
      for (size_t i = 0; i < n; ++i)
        if (up[i] >= t) want.push_back(float(i));
      for (size_t cap : {size_t(0), size_t(1), size_t(3), want.size(), want.size() + 1, size_t(256)}) {
        std::vector<float> ids(cap + kGuard, kSentinel);
        const size_t got = f32_bounds_above(n, up.data(), t, ids.data(), cap);
        EXPECT_EQ(got, std::min(want.size(), cap + 1)) << "n " << n << " t " << t << " cap " << cap;
        for (size_t j = 0; j < cap + kGuard; ++j)
          EXPECT_EQ(ids[j], j < std::min(cap, want.size()) ? want[j] : kSentinel) << "n " << n << " t " << t << " cap " << cap << " j " << j;
      }
    }
  }
}

}  // namespace
}  // namespace aw::kernels
