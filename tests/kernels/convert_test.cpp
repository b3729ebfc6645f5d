// Tests for src/kernels/convert.h and the SIMD widening of kernels/gemm.h (h16_widen): every one of the 65 536
// bit patterns of bf16 and f16 widened exactly (subnormals, ±inf, NaN) and back to the same bits; float32 →
// f16 against the compiler's _Float16 conversion (IEEE round to nearest even) on edge values and a million
// random bit patterns; float32 → bf16 against a rounding written from the definition.
#include "kernels/convert.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/gemm.h"

namespace aw::kernels {
namespace {

bool IsNanBits16(uint16_t h, Half f) {
  return f == Half::kBF16 ? (h & 0x7F80) == 0x7F80 && (h & 0x7F) != 0 : (h & 0x7C00) == 0x7C00 && (h & 0x3FF) != 0;
}

TEST(Convert, EveryHalfPatternWidensExactlyAndNarrowsBack) {
  for (Half f : {Half::kBF16, Half::kF16}) {
    std::vector<uint16_t> all(65536);
    for (uint32_t h = 0; h < 65536; ++h) all[h] = uint16_t(h);
    // As one k block of depth 256 and 16 panel pairs (gemm.h's 16-bit layout).
    const size_t kc = 256, pairs = all.size() / (kc * kH16Cols);
    std::vector<float> ref(65536), simd(65536);
    h16_widen_ref(f, kc, pairs, all.data(), ref.data());
    h16_widen(f, kc, pairs, all.data(), simd.data());
    for (uint32_t i = 0; i < 65536; ++i) {
      // Output i is row p, column j of panel P of the float layout: stored in pair P / 2 at h16_slot.
      const size_t P = i / (kc * kGemmNR), p = i / kGemmNR % kc, j = i % kGemmNR;
      const uint32_t h = all[(P / 2 * kc + p) * kH16Cols + P % 2 * kGemmNR + h16_slot(j)];
      SCOPED_TRACE(std::to_string(h) + (f == Half::kBF16 ? " bf16" : " f16"));
      const bool nan = IsNanBits16(uint16_t(h), f);
      ASSERT_EQ(std::isnan(ref[i]), nan);
      // The SIMD widening gives the reference's bits (NaN payloads: wasm may canonicalise, so NaN-ness only).
      if (nan) ASSERT_TRUE(std::isnan(simd[i]));
      else ASSERT_EQ(f32_bits(simd[i]), f32_bits(ref[i]));
      if (nan) continue;
      // Narrowing the widened value gives the pattern back (the widening was exact).
      ASSERT_EQ(f == Half::kBF16 ? f32_to_bf16(ref[i]) : f32_to_f16(ref[i]), uint16_t(h));
    }
  }
  // Spot values.
  EXPECT_EQ(f16_to_f32(0x3C00), 1.0f);
  EXPECT_EQ(f16_to_f32(0x0001), 0x1p-24f);          // the smallest subnormal
  EXPECT_EQ(f16_to_f32(0x7BFF), 65504.0f);          // the largest finite
  EXPECT_EQ(f16_to_f32(0xFC00), -INFINITY);
  EXPECT_EQ(bf16_to_f32(0x3F80), 1.0f);
  EXPECT_EQ(bf16_to_f32(0x0001), 0x1p-133f);        // a bf16 subnormal
}

// The nearest bf16 of f by the definition: the two neighbours that truncation and the next pattern give,
// the closer one, the even one on a tie.
uint16_t Bf16ByDefinition(float f) {
  const uint32_t b = f32_bits(f);
  const uint16_t lo = uint16_t(b >> 16);
  if ((b & 0xFFFF) == 0) return lo;
  const uint16_t hi = uint16_t(lo + 1);
  // Past the largest finite value the next pattern is ±inf, which rounding treats as ±2^128 (IEEE 754).
  const double v_hi = std::isinf(bf16_to_f32(hi)) ? std::copysign(0x1p128, double(f)) : double(bf16_to_f32(hi));
  const double d_lo = std::fabs(double(f) - double(bf16_to_f32(lo))), d_hi = std::fabs(v_hi - double(f));
  if (d_lo != d_hi) return d_lo < d_hi ? lo : hi;
  return (lo & 1) ? hi : lo;
}

TEST(Convert, Float32ToHalfRoundsToNearestEven) {
  std::mt19937 rng(2026);
  std::vector<float> values = {0.0f, -0.0f, 1.0f, -1.0f, 65504.0f, 65519.99f, 65520.0f, -65520.0f, 1e10f, -1e10f,
                               0x1p-14f, 0x1p-24f, 0x1p-25f, 0x1.8p-25f, 0x1p-26f, 5.96e-8f, 3e-8f, 1e-45f,
                               1.00048828125f, 1.0009765625f, 1.00146484375f, INFINITY, -INFINITY};
  for (int i = 0; i < 1000000; ++i) {
    uint32_t b = rng();
    // Half of them in f16's range (exponent 127 ± 25), where the rounding matters most.
    if (i % 2) b = (b & 0x807FFFFFu) | (uint32_t(102 + rng() % 50) << 23);
    float f;
    std::memcpy(&f, &b, 4);
    values.push_back(f);
  }
  size_t checked = 0;
  for (float f : values) {
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(f16_to_f32(f32_to_f16(f))));
      EXPECT_TRUE(std::isnan(bf16_to_f32(f32_to_bf16(f))));
      continue;
    }
#if defined(__FLT16_MAX__)
    const _Float16 h = static_cast<_Float16>(f);
    uint16_t want;
    std::memcpy(&want, &h, 2);
    ASSERT_EQ(f32_to_f16(f), want) << f;
#endif
    ASSERT_EQ(f32_to_bf16(f), Bf16ByDefinition(f)) << f;
    ++checked;
  }
  EXPECT_GT(checked, 900000u);
}

}  // namespace
}  // namespace aw::kernels
