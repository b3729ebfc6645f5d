// Tests for f32_from_bf16_bytes (SIMD = scalar, every length 0 … 70 and long ones, at odd addresses, every
// 16-bit pattern), and for the multi-row writers of a packed B (src/kernels/pack_simd.cpp against their one-row-at-a-time
// references): f32_packed_put_rows, h16_packed_put_rows_bits and q_pack_rows write the same bytes as the _ref
// versions, at awkward n (around the panels of 8 and pairs of 16) and k (around 4, 8, the group of 32 and the
// k block of 512), rows given in runs that start and end inside panels (as a streamed load hands them over),
// row strides that are not the row's length, unaligned bit rows, and values that test the quantizer's edges:
// NaN and ±inf in a group, zero and −0 groups, subnormals, exact halves between two steps (ties to even).
#include "kernels/convert.h"
#include "kernels/gemm.h"
#include "kernels/pack.h"
#include "kernels/qgemm.h"

#include <gtest/gtest.h>

#include "../kernel_test_util.h"

#include <cstring>
#include <random>
#include <vector>

namespace aw::kernels {
namespace {

const size_t kNs[] = {1, 7, 8, 9, 15, 16, 17, 24, 33, 40};
const size_t kKs[] = {1, 3, 4, 5, 8, 9, 31, 32, 33, 64, 100, 511, 512, 513, 1030};

// Run lengths in which rows are handed over: all at once, one at a time, and runs that cross panels.
std::vector<std::vector<size_t>> Schedules(size_t n) {
  return {{n}, {1}, {3, 5}, {8}, {16}, {7, 9}, {13}, {2, 17, 5}};
}

// Calls f(r0, count) over rows 0 … n − 1 in runs of the schedule's lengths (cycled).
template <class F>
void InRuns(size_t n, const std::vector<size_t>& runs, F&& f) {
  size_t r = 0, i = 0;
  while (r < n) {
    const size_t c = std::min(runs[i++ % runs.size()], n - r);
    f(r, c);
    r += c;
  }
}

TEST(PackRows, Bf16BytesWidenAsTheScalarCode) {
  // Every 16-bit pattern (NaN payloads, subnormals, ±inf, ±0), from an odd address.
  std::vector<uint8_t> all(1 + 2 * 65536);
  for (uint32_t h = 0; h < 65536; ++h) {
    all[1 + 2 * h] = uint8_t(h & 0xFF);
    all[2 + 2 * h] = uint8_t(h >> 8);
  }
  std::vector<float> got(65536), ref(65536);
  f32_from_bf16_bytes(65536, all.data() + 1, got.data());
  f32_from_bf16_bytes_ref(65536, all.data() + 1, ref.data());
  ASSERT_EQ(std::memcmp(got.data(), ref.data(), got.size() * 4), 0);
  for (size_t n : test::awkward_lengths()) {
    std::vector<float> a(n + test::kGuard, test::kSentinel), b(n + test::kGuard, test::kSentinel);
    f32_from_bf16_bytes(n, all.data() + 1 + 2 * 1000, a.data());
    f32_from_bf16_bytes_ref(n, all.data() + 1 + 2 * 1000, b.data());
    ASSERT_EQ(std::memcmp(a.data(), b.data(), a.size() * 4), 0) << "n " << n;  // the guard cells included
  }
}

TEST(PackRows, F32EqualsRowByRow) {
  std::mt19937 rng(11);
  for (size_t n : kNs)
    for (size_t k : kKs) {
      const size_t ldw = k + 3;
      const std::vector<float> w = test::mixed(rng, n * ldw);
      const size_t count = f32_gemm_packed_floats(n, k);
      std::vector<float> ref(count, test::kSentinel);
      f32_packed_put_rows_ref(n, k, 0, n, w.data(), ldw, ref.data());
      for (const auto& runs : Schedules(n)) {
        std::vector<float> got(count, test::kSentinel);
        InRuns(n, runs, [&](size_t r0, size_t c) { f32_packed_put_rows(n, k, r0, c, w.data() + r0 * ldw, ldw, got.data()); });
        ASSERT_EQ(std::memcmp(got.data(), ref.data(), count * sizeof(float)), 0)
            << "n " << n << " k " << k << " first run " << runs[0];
      }
    }
}

TEST(PackRows, H16BitsEqualRowByRow) {
  std::mt19937 rng(12);
  std::uniform_int_distribution<int> byte(0, 255);
  for (size_t n : kNs)
    for (size_t k : kKs) {
      const size_t ld = 2 * k + 6;
      // One byte in: the rows start at odd addresses, as a file's rows may.
      std::vector<uint8_t> storage(1 + n * ld);
      for (uint8_t& b : storage) b = uint8_t(byte(rng));
      const uint8_t* bits = storage.data() + 1;
      const size_t count = h16_packed_count(n, k);
      std::vector<uint16_t> ref(count, 0xBEEF);
      h16_packed_put_rows_bits_ref(n, k, 0, n, bits, ld, ref.data());
      for (const auto& runs : Schedules(n)) {
        std::vector<uint16_t> got(count, 0xBEEF);
        InRuns(n, runs, [&](size_t r0, size_t c) { h16_packed_put_rows_bits(n, k, r0, c, bits + r0 * ld, ld, got.data()); });
        ASSERT_EQ(std::memcmp(got.data(), ref.data(), count * 2), 0) << "n " << n << " k " << k << " first run " << runs[0];
      }
    }
}

// Rows for the quantizer: random groups, with groups holding a NaN, an inf, all zeros, all −0, subnormals
// only, a max of ±Q·2^e with exact halves of the step (ties), and a single nonzero value.
std::vector<float> QuantRows(std::mt19937& rng, size_t n, size_t k, size_t ldw) {
  std::vector<float> w = test::random_vec(rng, n * ldw, -3.0f, 3.0f);
  std::uniform_int_distribution<int> kind(0, 9);
  for (size_t r = 0; r < n; ++r)
    for (size_t g = 0; g * kQGroup < k; ++g) {
      float* x = w.data() + r * ldw + g * kQGroup;
      const size_t len = std::min(kQGroup, k - g * kQGroup);
      switch (kind(rng)) {
        case 0: x[len / 2] = test::kNaN; break;
        case 1: x[len - 1] = -test::kInf; break;
        case 2: for (size_t j = 0; j < len; ++j) x[j] = 0.0f; break;
        case 3: for (size_t j = 0; j < len; ++j) x[j] = -0.0f; break;
        case 4: for (size_t j = 0; j < len; ++j) x[j] = (j % 3 == 0 ? -1e-40f : 3e-41f); break;
        case 5:  // s = 1 (q8) or 0.5 (q4): values k + 0.5 steps fall on ties
          for (size_t j = 0; j < len; ++j) x[j] = j == 0 ? 127.0f : float(int(j) - 16) + 0.5f;
          break;
        case 6: for (size_t j = 0; j < len; ++j) x[j] = j == len / 3 ? -2.5f : 0.0f; break;
        case 7: x[0] = 1e30f; break;
        default: break;
      }
    }
  return w;
}

TEST(PackRows, QuantizedEqualRowByRow) {
  std::mt19937 rng(13);
  for (QBits b : {QBits::kQ8, QBits::kQ4})
    for (size_t n : kNs)
      for (size_t k : kKs) {
        const size_t ldw = k + 5;
        const std::vector<float> w = QuantRows(rng, n, k, ldw);
        const size_t bytes = q_packed_bytes(b, n, k);
        std::vector<uint8_t> ref(bytes, 0);
        q_pack_rows_ref(b, n, k, 0, n, w.data(), ldw, ref.data());
        for (const auto& runs : Schedules(n)) {
          std::vector<uint8_t> got(bytes, 0);
          InRuns(n, runs, [&](size_t r0, size_t c) { q_pack_rows(b, n, k, r0, c, w.data() + r0 * ldw, ldw, got.data()); });
          ASSERT_EQ(std::memcmp(got.data(), ref.data(), bytes), 0)
              << (b == QBits::kQ8 ? "q8" : "q4") << " n " << n << " k " << k << " first run " << runs[0];
        }
      }
}

// The reference's bytes do not depend on what the buffer held before (every byte of a row's groups is
// written), so neither may the SIMD version's: packed into 0x00 and into 0xFF, the same bytes where rows are.
TEST(PackRows, QuantizedOverwriteEveryByteOfTheirRows) {
  std::mt19937 rng(14);
  for (QBits b : {QBits::kQ8, QBits::kQ4}) {
    const size_t n = 16, k = 100;
    const std::vector<float> w = QuantRows(rng, n, k, k);
    std::vector<uint8_t> zero(q_packed_bytes(b, n, k), 0x00), ones(q_packed_bytes(b, n, k), 0xFF);
    q_pack_rows(b, n, k, 0, n, w.data(), k, zero.data());
    q_pack_rows(b, n, k, 0, n, w.data(), k, ones.data());
    EXPECT_EQ(zero, ones) << (b == QBits::kQ8 ? "q8" : "q4");
  }
}

}  // namespace
}  // namespace aw::kernels
