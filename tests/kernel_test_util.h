// Helpers shared by the kernel and op tests (tests/kernels/, tests/ops/,
// tests/layers/): random data, awkward lengths, bitwise comparisons and
// sentinel guards. Include as "../kernel_test_util.h"; everything is in
// aw::test (`using namespace test;` in a test's namespace takes it all).
#pragma once
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

namespace aw::test {

inline const float kInf = std::numeric_limits<float>::infinity();
inline const float kNaN = std::numeric_limits<float>::quiet_NaN();

// Written around outputs; a kernel that writes past its row overwrites it.
constexpr float kSentinel = -12345.5f;
// Sentinel cells after a row (guard_intact's default).
constexpr size_t kGuard = 8;

// n uniform floats in [lo, hi).
inline std::vector<float> random_vec(std::mt19937& rng, size_t count, float lo, float hi) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(count);
  for (float& x : v) x = dist(rng);
  return v;
}

// Special values: signed zeros, infinities, NaN, extremes, subnormals, and values where
// exp / erf / tanh change regime. Appended to or sprinkled into random data.
inline const float kSpecials[] = {0.0f,     -0.0f,    kInf,     -kInf,     kNaN,     FLT_MAX, -FLT_MAX, FLT_MIN,
                           -FLT_MIN, 1e-40f,   -1e-40f,  1e-30f,    -1e-30f,  10.0f,   -10.0f,   30.0f,
                           -30.0f,   100.0f,   -100.0f,  1e10f,     -1e10f,   1e20f,   -1e20f,   -8.3f,
                           -9.4f,    -13.3f,   -13.4f,   -88.0f,    88.0f,    2.0f / 3.0f, -0.9428f};

// Random values with the special ones sprinkled in.
inline std::vector<float> mixed(std::mt19937& rng, size_t n) {
  std::vector<float> v = random_vec(rng, n, -100.0f, 100.0f);
  std::uniform_int_distribution<size_t> pick(0, sizeof kSpecials / sizeof kSpecials[0] - 1);
  for (size_t j = 0; j < n; j += 3) v[j] = kSpecials[pick(rng)];
  return v;
}

// Every length 0..70 (around and across the vector widths 4 and 8 and their
// unrolls) and a few long ones, odd and even.
inline std::vector<size_t> awkward_lengths() {
  std::vector<size_t> v;
  for (size_t n = 0; n <= 70; ++n) v.push_back(n);
  for (size_t n : {127, 128, 129, 768, 1000, 1001}) v.push_back(n);
  return v;
}

// Bitwise equality of n floats (so -0 vs +0 counts), except that any NaN
// matches any NaN (payloads are not portable: wasm may canonicalize them);
// lists the first mismatches.
inline ::testing::AssertionResult same_bits(size_t n, const float* got, const float* want) {
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

// Exactly the same bytes, NaN payloads included (results that must not
// depend on the thread count). Any container with data() and size() of floats.
template <class A, class B>
bool bit_identical(const A& a, const B& b) {
  // memcmp of 0 bytes still needs valid pointers (UBSan): empty ones have none.
  return a.size() == b.size() && (a.size() == 0 || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

// Elements a (rows, cols) matrix with row stride ld spans, exactly (so that
// AddressSanitizer flags a read past the last row's last column).
inline size_t span(size_t rows, size_t cols, size_t ld) { return rows == 0 ? 0 : (rows - 1) * ld + cols; }

// A (rows, cols) matrix with row stride ld, uniform in [lo, hi); the row
// padding holds 1e30, which would wreck any row statistic that read it.
inline std::vector<float> random_rows(std::mt19937& rng, size_t rows, size_t cols, size_t ld, float lo, float hi) {
  std::vector<float> x = random_vec(rng, span(rows, cols, ld), lo, hi);
  for (size_t idx = 0; idx < x.size(); ++idx)
    if (idx % ld >= cols) x[idx] = 1e30f;
  return x;
}

// Every cell of buf outside the (rows, cols) region with row stride ld (row
// padding and a trailing guard) still holds kSentinel, bitwise.
inline ::testing::AssertionResult untouched(const std::vector<float>& buf, size_t rows, size_t cols, size_t ld) {
  size_t bad = 0;
  std::ostringstream msg;
  for (size_t idx = 0; idx < buf.size(); ++idx) {
    const size_t i = idx / ld, j = idx % ld;
    if (i < rows && j < cols) continue;
    if (std::memcmp(&buf[idx], &kSentinel, sizeof(float)) != 0 && bad++ < 8) {
      msg << "\n  offset " << idx << " (row " << i << ", col " << j << ") = " << buf[idx];
    }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " cells outside the output were written" << msg.str();
}

// The `cells` floats from `guard` on still hold kSentinel.
inline ::testing::AssertionResult guard_intact(const float* guard, size_t cells = kGuard) {
  for (size_t g = 0; g < cells; ++g) {
    if (std::memcmp(&guard[g], &kSentinel, sizeof(float)) != 0)
      return ::testing::AssertionFailure() << "guard cell " << g << " after the row was written: " << guard[g];
  }
  return ::testing::AssertionSuccess();
}

}  // namespace aw::test
