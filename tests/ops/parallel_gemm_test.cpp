// Tests for src/ops/parallel_gemm.h: with 1 to 4 threads, ParallelGemmNt and
// ParallelGemmNn give results bit-identical to one kernel call (the blocks are
// whole register tiles), at sizes around the tiles and above the parallel
// threshold, with strided operands and bias; and they leave the cells outside
// C's (m, n) region alone.
#include "ops/parallel_gemm.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "core/parallel.h"
#include "kernels/gemm.h"

namespace aw {
namespace {

constexpr float kSentinel = -12345.5f;

std::vector<float> Random(std::mt19937& rng, size_t n) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

struct Case { size_t m, n, k; };
// Big enough to split (>= 2^18 multiply-adds) with ragged edges, and small ones.
const Case kCases[] = {{1, 1, 1}, {3, 5, 7}, {64, 64, 64}, {65, 67, 63}, {128, 130, 33}, {7, 515, 129},
                       {2, 1001, 300}, {301, 9, 200}, {257, 256, 64}};

TEST(ParallelGemm, NtBitIdenticalToOneCall) {
  std::mt19937 rng(7);
  for (const Case& c : kCases) {
    const size_t lda = c.k + 3, ldb = c.k + 1, ldc = c.n + 2;
    const auto a = Random(rng, c.m * lda), b = Random(rng, c.n * ldb), bias = Random(rng, c.n);
    for (const float* bp : {static_cast<const float*>(nullptr), bias.data()}) {
      std::vector<float> want(c.m * ldc, kSentinel);
      kernels::f32_gemm_nt(c.m, c.n, c.k, want.data(), ldc, a.data(), lda, b.data(), ldb, bp, 0.75f);
      for (int threads : {1, 2, 3, 4}) {
        SetNumThreads(threads);
        std::vector<float> got(c.m * ldc, kSentinel);
        ParallelGemmNt(c.m, c.n, c.k, got.data(), ldc, a.data(), lda, b.data(), ldb, bp, 0.75f);
        EXPECT_TRUE(SameBits(got, want)) << c.m << "x" << c.n << "x" << c.k << " threads " << threads
                                         << (bp ? " bias" : "");
      }
      SetNumThreads(1);
    }
  }
}

TEST(ParallelGemm, NnBitIdenticalToOneCall) {
  std::mt19937 rng(8);
  for (const Case& c : kCases) {
    const size_t lda = c.k + 2, ldb = c.n + 5, ldc = c.n + 1;
    const auto a = Random(rng, c.m * lda), b = Random(rng, c.k * ldb), bias = Random(rng, c.n);
    for (const float* bp : {static_cast<const float*>(nullptr), bias.data()}) {
      std::vector<float> want(c.m * ldc, kSentinel);
      kernels::f32_gemm_nn(c.m, c.n, c.k, want.data(), ldc, a.data(), lda, b.data(), ldb, bp);
      for (int threads : {1, 2, 3, 4}) {
        SetNumThreads(threads);
        std::vector<float> got(c.m * ldc, kSentinel);
        ParallelGemmNn(c.m, c.n, c.k, got.data(), ldc, a.data(), lda, b.data(), ldb, bp);
        EXPECT_TRUE(SameBits(got, want)) << c.m << "x" << c.n << "x" << c.k << " threads " << threads
                                         << (bp ? " bias" : "");
      }
      SetNumThreads(1);
    }
  }
}

}  // namespace
}  // namespace aw
