// Tests for src/ops/parallel_gemm.h: with 1 to 4 threads, ParallelGemmPacked
// gives results bit-identical to one kernel call (blocks of whole micro-tiles
// and panels), at sizes around the tiles and above the parallel threshold,
// with strided operands, bias, and column windows of a wider packed B; and
// it leaves the cells outside C's (m, n) region alone. The quantized products (ParallelQGemm for q8 and q4a16,
// ParallelQ4GemmA8 for q4) likewise, with 1 to 3 threads.
#include "ops/parallel_gemm.h"

#include <gtest/gtest.h>

#include "../kernel_test_util.h"

#include <cstring>
#include <random>
#include <vector>

#include "core/parallel.h"
#include "kernels/gemm.h"
#include "kernels/pack.h"
#include "kernels/qgemm.h"

namespace aw {
namespace {

using test::kSentinel;

std::vector<float> Random(std::mt19937& rng, size_t n) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

struct Case { size_t m, n, k; };
// Big enough to split (>= 2^18 multiply-adds) with ragged edges, and small ones.
const Case kCases[] = {{1, 1, 1}, {3, 5, 7}, {64, 64, 64}, {65, 67, 63}, {128, 130, 33}, {7, 515, 129},
                       {2, 1001, 300}, {301, 9, 200}, {257, 256, 64}};

TEST(ParallelGemm, PackedBitIdenticalToOneCall) {
  std::mt19937 rng(7);
  for (const Case& c : kCases) {
    const size_t lda = c.k + 3, ldb = c.k + 1, ldc = c.n + 2;
    const auto a = Random(rng, c.m * lda), b = Random(rng, c.n * ldb), bias = Random(rng, c.n);
    std::vector<float> bp(kernels::f32_gemm_packed_floats(c.n, c.k));
    kernels::f32_gemm_pack_nt(c.n, c.k, b.data(), ldb, bp.data());
    for (const float* bb : {static_cast<const float*>(nullptr), bias.data()}) {
      std::vector<float> want(c.m * ldc, kSentinel);
      kernels::f32_gemm_packed(c.m, c.n, c.k, want.data(), ldc, a.data(), lda, bp.data(), bb, 0.75f);
      for (int threads : {1, 2, 3, 4}) {
        SetNumThreads(threads);
        std::vector<float> got(c.m * ldc, kSentinel);
        ParallelGemmPacked(c.m, c.n, c.k, got.data(), ldc, a.data(), lda, bp.data(), c.n, 0, bb, 0.75f);
        EXPECT_TRUE(test::bit_identical(got, want)) << c.m << "x" << c.n << "x" << c.k << " threads " << threads
                                         << (bb ? " bias" : "");
      }
      SetNumThreads(1);
    }
  }
}

// A window of columns (MultiheadAttention's q, k, v projections of one packed
// in_proj_weight) split over threads: the same bits as the window in one call.
TEST(ParallelGemm, PackedWindowBitIdenticalToOneCall) {
  std::mt19937 rng(8);
  const size_t m = 130, E = 64, k = 72;
  const auto a = Random(rng, m * k), w = Random(rng, 3 * E * k), bias = Random(rng, 3 * E);
  std::vector<float> bp(kernels::f32_gemm_packed_floats(3 * E, k));
  kernels::f32_gemm_pack_nt(3 * E, k, w.data(), k, bp.data());
  for (size_t which = 0; which < 3; ++which) {
    std::vector<float> want(m * E, kSentinel);
    kernels::f32_gemm_packed_window(m, E, k, want.data(), E, a.data(), k, bp.data(), 3 * E, which * E,
                                    bias.data() + which * E, 1.0f);
    for (int threads : {1, 2, 3}) {
      SetNumThreads(threads);
      std::vector<float> got(m * E, kSentinel);
      ParallelGemmPacked(m, E, k, got.data(), E, a.data(), k, bp.data(), 3 * E, which * E, bias.data() + which * E, 1.0f);
      EXPECT_TRUE(test::bit_identical(got, want)) << "window " << which << " threads " << threads;
    }
    SetNumThreads(1);
  }
}

TEST(ParallelGemm, QuantizedBitIdenticalToOneCall) {
  std::mt19937 rng(9);
  std::vector<Case> cases(std::begin(kCases), std::end(kCases));
  for (Case c : {Case{1, 1001, 300}, Case{1, 515, 1100}, Case{1, 64, 4100}}) cases.push_back(c);  // decoding steps
  for (const Case& c : cases) {
    const size_t lda = c.k + 3, ldc = c.n + 2;
    const auto a = Random(rng, c.m * lda), w = Random(rng, c.n * c.k), bias = Random(rng, c.n);
    for (int kind = 0; kind < 3; ++kind) {  // q8, q4a16 (int16 activations), q4 (int8)
      const kernels::QBits b = kind == 0 ? kernels::QBits::kQ8 : kernels::QBits::kQ4;
      std::vector<uint8_t> bp(kernels::q_packed_bytes(b, c.n, c.k) + 64, 0);
      kernels::q_pack_rows(b, c.n, c.k, 0, c.n, w.data(), c.k, bp.data());
      auto run = [&](float* out, bool one_call) {
        if (one_call && kind < 2) kernels::q_gemm(b, c.m, c.n, c.k, out, ldc, a.data(), lda, bp.data(), c.n, 0, bias.data(), 0.75f);
        else if (one_call) kernels::q4_gemm_a8(c.m, c.n, c.k, out, ldc, a.data(), lda, bp.data(), c.n, 0, bias.data(), 0.75f);
        else if (kind < 2) ParallelQGemm(b, c.m, c.n, c.k, out, ldc, a.data(), lda, bp.data(), bias.data(), 0.75f);
        else ParallelQ4GemmA8(c.m, c.n, c.k, out, ldc, a.data(), lda, bp.data(), bias.data(), 0.75f);
      };
      std::vector<float> want(c.m * ldc, kSentinel);
      run(want.data(), true);
      for (int threads : {1, 2, 3}) {
        SetNumThreads(threads);
        std::vector<float> got(c.m * ldc, kSentinel);
        run(got.data(), false);
        EXPECT_TRUE(test::bit_identical(got, want)) << c.m << "x" << c.n << "x" << c.k << " kind " << kind << " threads " << threads;
      }
      SetNumThreads(1);
    }
  }
}

}  // namespace
}  // namespace aw
