// Tests for src/kernels/rope.h: the references against hand-computed
// rotations and against each other (the two pairings are the same rotation
// up to a permutation of the row), then the xsimd kernels against the
// references, bit for bit, at every even row length 0..70 and 128, 256
// (below, at and above W and 2W pairs), several rows with padded strides,
// random and real angle tables, large magnitudes, NaN / inf; nothing outside
// the rows is written.
#include "kernels/rope.h"

#include <gtest/gtest.h>

#include "../kernel_test_util.h"

#include <cmath>
#include <random>
#include <vector>

namespace aw::kernels {
namespace {

using namespace test;

using Rope = void (*)(size_t, size_t, float*, size_t, const float*, const float*);
struct Kind {
  const char* name;
  Rope simd, ref;
};
const Kind kKinds[] = {{"half", f32_rope_half, f32_rope_half_ref},
                       {"interleaved", f32_rope_interleaved, f32_rope_interleaved_ref}};

std::vector<size_t> even_lengths() {
  std::vector<size_t> v;
  for (size_t d = 0; d <= 70; d += 2) v.push_back(d);
  for (size_t d : {126, 128, 130, 256}) v.push_back(d);
  return v;
}

// cos/sin of angles p * 10000^(-2i/d) at position p (a real table), or random values.
void table(std::mt19937& rng, size_t h, bool real, std::vector<float>* c, std::vector<float>* s) {
  c->resize(h + kGuard);
  s->resize(h + kGuard);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const double p = std::uniform_int_distribution<int>(0, 5000)(rng);
  for (size_t i = 0; i < h; ++i) {
    const double a = p * std::pow(10000.0, -double(i) / double(h));
    (*c)[i] = real ? float(std::cos(a)) : u(rng);
    (*s)[i] = real ? float(std::sin(a)) : u(rng);
  }
}

// Kernel and reference on rows of x (rows × ld, sentinels in the padding and
// after the last row): bitwise equal, padding untouched.
void check(const Kind& k, size_t rows, size_t d, size_t ld, const std::vector<float>& x, const std::vector<float>& c,
           const std::vector<float>& s) {
  SCOPED_TRACE(std::string(k.name) + " rows=" + std::to_string(rows) + " d=" + std::to_string(d) +
               " ld=" + std::to_string(ld));
  std::vector<float> got(x), want(x);
  k.simd(rows, d, got.data(), ld, c.data(), s.data());
  k.ref(rows, d, want.data(), ld, c.data(), s.data());
  ASSERT_TRUE(same_bits(got.size(), got.data(), want.data()));
  for (size_t idx = 0; idx < got.size(); ++idx)
    if (idx / ld >= rows || idx % ld >= d) ASSERT_EQ(got[idx], kSentinel) << "written outside the rows at " << idx;
}

std::vector<float> rows_of(std::mt19937& rng, size_t rows, size_t d, size_t ld, float scale) {
  std::vector<float> x(rows * ld + kGuard, kSentinel);
  std::uniform_real_distribution<float> u(-scale, scale);
  for (size_t r = 0; r < rows; ++r)
    for (size_t j = 0; j < d; ++j) x[r * ld + j] = u(rng);
  return x;
}

TEST(RopeRef, HandComputed) {
  // d = 4, h = 2: angle 0 (c 1, s 0) leaves pair 0 alone; 90 degrees (c 0, s 1) maps (a, b) to (-b, a).
  const float c[] = {1, 0}, s[] = {0, 1};
  float half[] = {1, 2, 3, 4};  // pairs (1, 3), (2, 4)
  f32_rope_half_ref(1, 4, half, 4, c, s);
  EXPECT_EQ(half[0], 1.0f);
  EXPECT_EQ(half[2], 3.0f);
  EXPECT_EQ(half[1], -4.0f);
  EXPECT_EQ(half[3], 2.0f);
  float inter[] = {1, 2, 3, 4};  // pairs (1, 2), (3, 4)
  f32_rope_interleaved_ref(1, 4, inter, 4, c, s);
  EXPECT_EQ(inter[0], 1.0f);
  EXPECT_EQ(inter[1], 2.0f);
  EXPECT_EQ(inter[2], -4.0f);
  EXPECT_EQ(inter[3], 3.0f);
  // 60 degrees on (2, 0): (2 cos, 2 sin) = (1, sqrt 3).
  const float c60[] = {0.5f}, s60[] = {float(std::sqrt(3.0) / 2)};
  float p[] = {2, 0};
  f32_rope_half_ref(1, 2, p, 2, c60, s60);
  EXPECT_EQ(p[0], 1.0f);
  EXPECT_FLOAT_EQ(p[1], std::sqrt(3.0f));
}

TEST(RopeRef, PairingsArePermutationsOfEachOther) {
  // Element 2i of the interleaved layout is element i of the half layout and
  // 2i + 1 is i + h: the same pairs, the same arithmetic, bit for bit.
  std::mt19937 rng(51);
  for (size_t d : {2, 8, 18, 64}) {
    const size_t h = d / 2;
    std::vector<float> c, s;
    table(rng, h, true, &c, &s);
    std::vector<float> half = rows_of(rng, 3, d, d, 2.0f), inter(half);
    for (size_t r = 0; r < 3; ++r)
      for (size_t i = 0; i < h; ++i) {
        inter[r * d + 2 * i] = half[r * d + i];
        inter[r * d + 2 * i + 1] = half[r * d + i + h];
      }
    f32_rope_half(3, d, half.data(), d, c.data(), s.data());
    f32_rope_interleaved(3, d, inter.data(), d, c.data(), s.data());
    for (size_t r = 0; r < 3; ++r)
      for (size_t i = 0; i < h; ++i) {
        ASSERT_EQ(inter[r * d + 2 * i], half[r * d + i]) << d;
        ASSERT_EQ(inter[r * d + 2 * i + 1], half[r * d + i + h]) << d;
      }
  }
}

TEST(RopeSimd, BitIdenticalToReferenceAtAwkwardSizes) {
  std::mt19937 rng(52);
  for (const Kind& k : kKinds)
    for (size_t d : even_lengths())
      for (size_t rows : {1, 2, 5})
        for (size_t ld : {d, d + 1, d + 6})
          for (bool real : {false, true}) {
            if (ld == 0) continue;
            std::vector<float> c, s;
            table(rng, d / 2, real, &c, &s);
            check(k, rows, d, ld, rows_of(rng, rows, d, ld, 3.0f), c, s);
          }
}

TEST(RopeSimd, LargeMagnitudesAndNonFinite) {
  // Products that overflow give inf (and inf - inf = NaN) on both sides in
  // the same places; NaN and inf inputs propagate through their pair only.
  std::mt19937 rng(53);
  for (const Kind& k : kKinds)
    for (size_t d : {2, 6, 8, 16, 18, 34, 64}) {
      std::vector<float> c, s;
      table(rng, d / 2, true, &c, &s);
      for (float scale : {1e-30f, 1e20f, 3e38f}) check(k, 3, d, d + 1, rows_of(rng, 3, d, d + 1, scale), c, s);
      for (float bad : {kNaN, kInf, -kInf}) {
        std::vector<float> x = rows_of(rng, 3, d, d + 1, 1.0f);
        x[(d + 1) + (d / 2 - 1)] = bad;
        check(k, 3, d, d + 1, x, c, s);
        std::vector<float> cb(c);
        cb[0] = bad;  // a non-finite table entry
        check(k, 3, d, d + 1, rows_of(rng, 3, d, d + 1, 1.0f), cb, s);
      }
    }
}

TEST(RopeSimd, EmptyIsANoOp) {
  float x[2] = {kSentinel, kSentinel};
  const float c[1] = {0.5f}, s[1] = {0.5f};
  for (const Kind& k : kKinds) {
    k.simd(0, 2, x, 2, c, s);
    k.simd(3, 0, x, 0, c, s);
    k.ref(0, 2, x, 2, c, s);
  }
  EXPECT_EQ(x[0], kSentinel);
  EXPECT_EQ(x[1], kSentinel);
}

}  // namespace
}  // namespace aw::kernels
