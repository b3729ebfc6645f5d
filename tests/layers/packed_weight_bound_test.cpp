// A bounded float32 weight (PackedWeight::KeepBound: a q8 copy beside the float32 panels): the same products and
// rows as float32; BoundedProduct's bounds hold the exact values (Product + bias) for every output, at awkward
// sizes (k not a multiple of the 32-input groups, n not of the 8-output panels, 1 to 5 rows), stay narrow for
// ordinary weights, and turn NaN where x or a weight is not finite; ExactOutputs gives Product's bits at any
// ids, in any order.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/qgemm.h"
#include "layers/packed_weight.h"

namespace aw {
namespace {

std::vector<float> Random(std::mt19937& rng, size_t n, float scale) {
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

void Load(PackedWeight* w, size_t n, size_t k, bool bound, const std::vector<float>& rows) {
  w->SetShape(n, k);
  if (bound) w->KeepBound();
  ASSERT_TRUE(w->Reserve(WeightType::kF32).ok());
  // Half the rows one at a time, the rest at once, as the loader may write them.
  for (size_t r = 0; r < n / 2; ++r) w->PutRow(r, rows.data() + r * k);
  w->PutRows(n / 2, n - n / 2, rows.data() + n / 2 * k, k);
}

TEST(PackedWeightBound, BoundsHoldTheExactLogitsAndExactOutputsGiveTheirBits) {
  std::mt19937 rng(4040);
  for (size_t k : {5, 33, 64, 512, 700})
    for (size_t n : {1, 15, 17, 301}) {
      SCOPED_TRACE("k=" + std::to_string(k) + " n=" + std::to_string(n));
      const std::vector<float> rows = Random(rng, n * k, 0.05f), bias = Random(rng, n, 1.0f);
      PackedWeight plain, bounded;
      Load(&plain, n, k, false, rows);
      Load(&bounded, n, k, true, rows);
      ASSERT_FALSE(plain.bounded());
      ASSERT_TRUE(bounded.bounded());
      std::vector<float> back(k);
      for (size_t r = 0; r < n; ++r) {
        bounded.GetRow(r, back.data());
        ASSERT_EQ(0, std::memcmp(back.data(), rows.data() + r * k, k * sizeof(float)));
      }
      for (size_t m : {size_t(1), size_t(3), size_t(5)}) {
        SCOPED_TRACE("m=" + std::to_string(m));
        const std::vector<float> x = Random(rng, m * k, 3.0f);
        for (float alpha : {1.0f, 0.0441941738f}) {
          for (const float* b : {static_cast<const float*>(nullptr), bias.data()}) {
            std::vector<float> want(m * n), got(m * n), lower(m * n), upper(m * n);
            plain.Product(m, x.data(), k, want.data(), n, nullptr, alpha);
            bounded.Product(m, x.data(), k, got.data(), n, nullptr, alpha);
            ASSERT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * sizeof(float)));
            if (b)
              for (size_t r = 0; r < m; ++r)
                for (size_t i = 0; i < n; ++i) want[r * n + i] += b[i];
            bounded.BoundedProduct(m, x.data(), k, alpha, b, lower.data(), upper.data(), n);
            double widest = 0.0, sum2 = 0.0;
            for (size_t i = 0; i < m * n; ++i) {
              ASSERT_LE(lower[i], want[i]) << i;
              ASSERT_GE(upper[i], want[i]) << i;
              widest = std::max(widest, double(upper[i]) - double(lower[i]));
              sum2 += double(want[i]) * double(want[i]);
            }
            // q8 rounds each weight by at most max|w| / 254 of its group of 32 (‖e_i‖ about 1/180 of ‖w_i‖): the
            // bounds stay a part of the logits' spread (their root mean square: 0.25–0.42 of it here, Cauchy–Schwarz
            // on ‖x̂‖·‖e_i‖ being √k times the typical |x̂ · e_i|).
            if (k >= 64 && n > 1) EXPECT_LT(widest, 0.5 * std::sqrt(sum2 / double(m * n)));
            // Exact outputs at scattered ids (repeats, across panels, descending): Product's bits.
            for (size_t r = 0; r < m; ++r) {
              std::vector<int32_t> ids;
              for (size_t i = n; i-- > 0;)
                if (i % 7 == 0 || i == n - 1 || i == 16) ids.push_back(int32_t(i));
              ids.push_back(int32_t(n - 1));
              std::vector<float> out(ids.size());
              bounded.ExactOutputs(x.data() + r * k, alpha, ids.data(), ids.size(), out.data());
              for (size_t j = 0; j < ids.size(); ++j)
                ASSERT_EQ(0, std::memcmp(&out[j], &got[r * n + size_t(ids[j])], sizeof(float))) << ids[j];
            }
          }
        }
        // Not finite: NaN bounds, so that the caller takes the exact product.
        std::vector<float> bad = x, lower(m * n), upper(m * n);
        bad[1] = std::numeric_limits<float>::quiet_NaN();
        bounded.BoundedProduct(1, bad.data(), k, 1.0f, nullptr, lower.data(), upper.data(), n);
        for (size_t i = 0; i < n; ++i) ASSERT_FALSE(lower[i] <= upper[i]) << i;
        bad = x;
        bad[k - 1] = std::numeric_limits<float>::infinity();
        bounded.BoundedProduct(1, bad.data(), k, 1.0f, nullptr, lower.data(), upper.data(), n);
        for (size_t i = 0; i < n; ++i) ASSERT_FALSE(lower[i] <= upper[i]) << i;
      }
    }
}

TEST(PackedWeightBound, AnInfiniteWeightOrAnOverflowGivesNaNBoundsForItsOutput) {
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

// The bounds follow the q8 copy's rounding, not a loose constant: rows whose values are multiples of their q8 step
// give narrow bounds (what is left: the inputs' int16 rounding, bounded from max|x|); a row of small values beside
// one large one per group (the others round to steps of 1/127) gives bounds 80 times wider.
TEST(PackedWeightBound, TheBoundsFollowTheQ8CopysRounding) {
  const size_t n = 16, k = 64;
  std::vector<float> rows(n * k);
  for (size_t r = 0; r < n; ++r)
    for (size_t p = 0; p < k; ++p)  // each group's largest is 1: the others are multiples of its q8 step 1/127
      rows[r * k + p] = p % 32 == 0 ? 1.0f : float(int((r * 7 + p * 3) % 255) - 127) / 127.0f;
  for (size_t p = 0; p < k; ++p) rows[9 * k + p] = 0.001f * float(p % 5) + (p % 32 == 0 ? 1.0f : 0.0f);
  PackedWeight w;
  Load(&w, n, k, true, rows);
  // Multiples of 2^-13, the largest 32767 of them: exact in the int16 inputs (t = 2^-13).
  std::vector<float> x(k), lower(n), upper(n), exact(n);
  for (size_t p = 0; p < k; ++p) x[p] = std::ldexp(p == 0 ? 32767.0f : float((int(p % 9) - 4) * 4096), -13);
  w.BoundedProduct(1, x.data(), k, 1.0f, nullptr, lower.data(), upper.data(), n);
  w.Product(1, x.data(), k, exact.data(), n, nullptr, 1.0f);
  for (size_t i = 0; i < n; ++i) {
    ASSERT_LE(lower[i], exact[i]) << i;
    ASSERT_GE(upper[i], exact[i]) << i;
    if (i != 9) EXPECT_LT(upper[i] - lower[i], 0.01f) << i;  // the inputs' int16 rounding, bounded: 0.004–0.0055
  }
  EXPECT_GT(upper[9] - lower[9], 0.1f);
}

TEST(PackedWeightBound, OtherTypesIgnoreKeepBoundAndTheSizeCountsTheCopy) {
  PackedWeight w;
  w.SetShape(33, 40);
  w.KeepBound();
  PackedWeight plain;
  plain.SetShape(33, 40);
  EXPECT_EQ(w.BytesFor(WeightType::kBF16), plain.BytesFor(WeightType::kBF16));
  ASSERT_TRUE(w.Reserve(WeightType::kQ8).ok());
  EXPECT_FALSE(w.bounded());
  PackedWeight f;
  f.SetShape(33, 40);
  f.KeepBound();
  ASSERT_TRUE(f.Reserve(WeightType::kF32).ok());
  EXPECT_EQ(f.bytes(), f.BytesFor(WeightType::kF32));
  // 40 padded outputs × 40 inputs of float32 and the slack; the q8 copy (5 panels of 8 outputs, 2 groups of 32
  // inputs, 288 bytes each) and its slack; two norms per output.
  EXPECT_EQ(kernels::q_packed_bytes(kernels::QBits::kQ8, 33, 40), size_t(5 * 2 * 288));
  EXPECT_EQ(f.bytes(), 40 * 40 * sizeof(float) + 64 + 5 * 2 * 288 + 64 + 2 * 33 * sizeof(float));
}

}  // namespace
}  // namespace aw
