// PackedWeight's split float32 layout (Split()): the same products, rows and bytes as float32; BoundedProduct's
// bounds hold the exact values (Product + bias) for every output, stay narrow for ordinary weights, and turn NaN
// where x or a weight is not finite; ExactOutputs gives Product's bits at any ids, in any order.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/gemm.h"
#include "layers/packed_weight.h"

namespace aw {
namespace {

std::vector<float> Random(std::mt19937& rng, size_t n, float scale) {
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

void Load(PackedWeight* w, size_t n, size_t k, bool split, const std::vector<float>& rows) {
  w->SetShape(n, k);
  if (split) w->Split();
  ASSERT_TRUE(w->Reserve(WeightType::kF32).ok());
  // Half the rows one at a time, the rest at once, as the loader may write them.
  for (size_t r = 0; r < n / 2; ++r) w->PutRow(r, rows.data() + r * k);
  w->PutRows(n / 2, n - n / 2, rows.data() + n / 2 * k, k);
}

TEST(PackedWeightSplit, BoundsHoldTheExactLogitsAndExactOutputsGiveTheirBits) {
  std::mt19937 rng(4040);
  for (size_t k : {5, 64, 512, 700})
    for (size_t n : {1, 15, 17, 301}) {
      SCOPED_TRACE("k=" + std::to_string(k) + " n=" + std::to_string(n));
      const std::vector<float> rows = Random(rng, n * k, 0.05f), bias = Random(rng, n, 1.0f);
      PackedWeight plain, split;
      Load(&plain, n, k, false, rows);
      Load(&split, n, k, true, rows);
      ASSERT_FALSE(plain.bounded());
      ASSERT_TRUE(split.bounded());
      std::vector<float> back(k);
      for (size_t r = 0; r < n; ++r) {
        split.GetRow(r, back.data());
        ASSERT_EQ(0, std::memcmp(back.data(), rows.data() + r * k, k * sizeof(float)));
      }
      const size_t m = 3;
      const std::vector<float> x = Random(rng, m * k, 3.0f);
      for (float alpha : {1.0f, 0.0441941738f}) {
        for (const float* b : {static_cast<const float*>(nullptr), bias.data()}) {
          std::vector<float> want(m * n), got(m * n), lower(m * n), upper(m * n);
          plain.Product(m, x.data(), k, want.data(), n, nullptr, alpha);
          split.Product(m, x.data(), k, got.data(), n, nullptr, alpha);
          ASSERT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * sizeof(float)));
          if (b)
            for (size_t r = 0; r < m; ++r)
              for (size_t i = 0; i < n; ++i) want[r * n + i] += b[i];
          split.BoundedProduct(m, x.data(), k, alpha, b, lower.data(), upper.data(), n);
          double widest = 0.0, sum2 = 0.0;
          for (size_t i = 0; i < m * n; ++i) {
            ASSERT_LE(lower[i], want[i]) << i;
            ASSERT_GE(upper[i], want[i]) << i;
            widest = std::max(widest, double(upper[i]) - double(lower[i]));
            sum2 += double(want[i]) * double(want[i]);
          }
          // Truncation drops less than 2^-7 of each weight (2^-8 on average): the bounds stay a small part of
          // the logits' spread (their root mean square; about 1/6 of it here).
          if (k >= 64 && n > 1) EXPECT_LT(widest, 0.3 * std::sqrt(sum2 / double(m * n)));
          // Exact outputs at scattered ids (repeats, across panel pairs, descending): Product's bits.
          for (size_t r = 0; r < m; ++r) {
            std::vector<int32_t> ids;
            for (size_t i = n; i-- > 0;)
              if (i % 7 == 0 || i == n - 1 || i == 16) ids.push_back(int32_t(i));
            ids.push_back(int32_t(n - 1));
            std::vector<float> out(ids.size());
            split.ExactOutputs(x.data() + r * k, alpha, ids.data(), ids.size(), out.data());
            for (size_t j = 0; j < ids.size(); ++j)
              ASSERT_EQ(0, std::memcmp(&out[j], &got[r * n + size_t(ids[j])], sizeof(float))) << ids[j];
          }
        }
      }
      // Not finite: NaN bounds, so that the caller takes the exact product.
      std::vector<float> bad = x, lower(m * n), upper(m * n);
      bad[1] = std::numeric_limits<float>::quiet_NaN();
      split.BoundedProduct(1, bad.data(), k, 1.0f, nullptr, lower.data(), upper.data(), n);
      for (size_t i = 0; i < n; ++i) ASSERT_FALSE(lower[i] <= upper[i]) << i;
    }
}

TEST(PackedWeightSplit, AnInfiniteWeightOrAnOverflowGivesNaNBoundsForItsOutput) {
  const size_t n = 20, k = 16;
  std::vector<float> rows(n * k, 0.25f);
  rows[3 * k + 2] = std::numeric_limits<float>::infinity();
  for (size_t p = 0; p < k; ++p) rows[5 * k + p] = 3e38f;  // finite weights whose product overflows
  PackedWeight w;
  Load(&w, n, k, true, rows);
  std::vector<float> x(k, 1.0f), lower(n), upper(n);
  w.BoundedProduct(1, x.data(), k, 1.0f, nullptr, lower.data(), upper.data(), n);
  EXPECT_FALSE(lower[3] <= upper[3]);
  EXPECT_FALSE(lower[5] <= upper[5]);
  EXPECT_LE(lower[4], 4.0f);
  EXPECT_GE(upper[4], 4.0f);
}

TEST(PackedWeightSplit, OtherTypesIgnoreSplitAndTheSizeCountsTheNorms) {
  PackedWeight w;
  w.SetShape(33, 40);
  w.Split();
  PackedWeight plain;
  plain.SetShape(33, 40);
  EXPECT_EQ(w.BytesFor(WeightType::kBF16), plain.BytesFor(WeightType::kBF16));
  ASSERT_TRUE(w.Reserve(WeightType::kQ8).ok());
  EXPECT_FALSE(w.bounded());
  PackedWeight f;
  f.SetShape(33, 40);
  f.Split();
  ASSERT_TRUE(f.Reserve(WeightType::kF32).ok());
  EXPECT_EQ(f.bytes(), f.BytesFor(WeightType::kF32));
  // Two planes of 48 padded outputs × 40 inputs, the skew between them, the slack, two norms per output.
  EXPECT_EQ(f.bytes(), (2 * 48 * 40 + kernels::kS32Skew) * sizeof(uint16_t) + 64 + 2 * 33 * sizeof(float));
}

}  // namespace
}  // namespace aw
