// Tests for src/kernels/elementwise.h: the scalar references against hand
// computed values (one float rounding, NaN and inf as IEEE says), then the
// xsimd kernels against the references bit for bit at lengths around the
// vector width, at unaligned starts, with a sentinel guard after the data,
// and aliased (y op= y). The row kernels of attention's direct path (f32_dot_rows, f32_axpy_rows): their
// references against double sums, the SIMD twins against the references at awkward row counts, widths and row
// strides (dot products within a few ulps of the sum's magnitude; axpy bit for bit where a multiply-add rounds
// twice), NaN and inf carried, the guard after the output intact.
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

// |got − want| within a few ulps of Σ|terms| (the orders of summation differ; a real fma skips roundings).
::testing::AssertionResult close_sums(size_t n, const float* got, const float* want, const std::vector<double>& scale) {
  for (size_t i = 0; i < n; ++i) {
    if (std::isnan(want[i]) || std::isinf(want[i])) {
      if (std::isnan(want[i]) ? std::isnan(got[i]) : got[i] == want[i]) continue;
      return ::testing::AssertionFailure() << "[" << i << "]: " << got[i] << " vs " << want[i];
    }
    if (std::fabs(double(got[i]) - double(want[i])) > 4e-6 * scale[i] + 1e-30)
      return ::testing::AssertionFailure() << "[" << i << "]: " << got[i] << " vs " << want[i] << " (scale " << scale[i] << ")";
  }
  return ::testing::AssertionSuccess();
}

TEST(RowsRef, DoubleSums) {
  std::mt19937 rng(40);
  const size_t n = 7, k = 13, lda = 16;
  const std::vector<float> a = random_vec(rng, n * lda, -1.0f, 1.0f), x = random_vec(rng, k, -1.0f, 1.0f);
  const std::vector<float> p = random_vec(rng, 2 * n, 0.0f, 1.0f);
  std::vector<float> y(n), z(k, 0.5f);
  f32_dot_rows_ref(n, k, a.data(), lda, x.data(), y.data());
  f32_axpy_rows_ref(n, k, a.data(), lda, p.data(), 2, z.data());
  for (size_t i = 0; i < n; ++i) {
    double d = 0;
    for (size_t j = 0; j < k; ++j) d += double(a[i * lda + j]) * x[j];
    EXPECT_NEAR(y[i], d, 1e-5);
  }
  for (size_t j = 0; j < k; ++j) {
    double d = 0.5;
    for (size_t i = 0; i < n; ++i) d += double(p[2 * i]) * a[i * lda + j];
    EXPECT_NEAR(z[j], d, 1e-5);
  }
  float inf_row[] = {1.0f, kInf, 2.0f}, nan_row[] = {kNaN, 0.0f, 1.0f}, ones[] = {1.0f, 1.0f, 1.0f}, out[2];
  f32_dot_rows_ref(1, 3, inf_row, 3, ones, out);
  f32_dot_rows_ref(1, 3, nan_row, 3, ones, out + 1);
  EXPECT_EQ(out[0], kInf);
  EXPECT_TRUE(std::isnan(out[1]));
}

TEST(RowsSimd, AgainstTheReferenceAtAwkwardSizes) {
  std::mt19937 rng(41);
  for (size_t k : {0, 1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 80, 127}) {
    for (size_t n : {0, 1, 2, 3, 4, 5, 7, 8, 9, 13, 64, 65}) {  // f32_dot_rows runs the vector width's rows at a time
      for (size_t extra : {0, 3}) {
        const size_t lda = k + extra;
        const std::vector<float> a = random_vec(rng, n * lda + 1, -2.0f, 2.0f), x = random_vec(rng, k + 1, -2.0f, 2.0f);
        const std::vector<float> p = random_vec(rng, 3 * n + 1, 0.0f, 1.0f), y0 = random_vec(rng, k, -1.0f, 1.0f);
        std::vector<float> got(n + kGuard, kSentinel), want(n);
        f32_dot_rows(n, k, a.data(), lda, x.data(), got.data());
        f32_dot_rows_ref(n, k, a.data(), lda, x.data(), want.data());
        std::vector<double> scale(n, 0.0), zscale(k, 0.0);
        for (size_t i = 0; i < n; ++i)
          for (size_t j = 0; j < k; ++j) scale[i] += std::fabs(double(a[i * lda + j]) * x[j]);
        ASSERT_TRUE(close_sums(n, got.data(), want.data(), scale)) << "dot n=" << n << " k=" << k;
        ASSERT_TRUE(guard_intact(got.data() + n)) << "dot n=" << n << " k=" << k;
        std::vector<float> zg(k + kGuard, kSentinel), zw(y0);
        std::copy(y0.begin(), y0.end(), zg.begin());
        f32_axpy_rows(n, k, a.data(), lda, p.data(), 3, zg.data());
        f32_axpy_rows_ref(n, k, a.data(), lda, p.data(), 3, zw.data());
        for (size_t j = 0; j < k; ++j) {
          zscale[j] = std::fabs(double(y0[j]));
          for (size_t i = 0; i < n; ++i) zscale[j] += std::fabs(double(p[3 * i]) * a[i * lda + j]);
        }
#if defined(__wasm__)
        ASSERT_TRUE(same_bits(k, zg.data(), zw.data())) << "axpy n=" << n << " k=" << k;
#else
        ASSERT_TRUE(close_sums(k, zg.data(), zw.data(), zscale)) << "axpy n=" << n << " k=" << k;
#endif
        ASSERT_TRUE(guard_intact(zg.data() + k)) << "axpy n=" << n << " k=" << k;
      }
    }
  }
  // NaN and inf carried by the SIMD twins.
  // Nine rows: in the groups of the vector width's rows and in the rows left after them.
  std::vector<float> a(9 * 40, 1.0f), x(40, 1.0f), y(9);
  a[5] = kNaN;
  a[40 + 17] = kInf;
  a[8 * 40 + 39] = kNaN;
  f32_dot_rows(9, 40, a.data(), 40, x.data(), y.data());
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[1], kInf);
  for (size_t i = 2; i < 8; ++i) EXPECT_EQ(y[i], 40.0f);
  EXPECT_TRUE(std::isnan(y[8]));
  std::vector<float> z(40, 0.0f);
  const float w[] = {1.0f, 1.0f};
  f32_axpy_rows(2, 40, a.data(), 40, w, 1, z.data());
  EXPECT_TRUE(std::isnan(z[5]));
  EXPECT_EQ(z[17], kInf);
}

}  // namespace
}  // namespace aw::kernels
