// ParallelGemmPacked: the block split (see parallel_gemm.h).
#include "ops/parallel_gemm.h"

#include <algorithm>

#include "core/parallel.h"
#include "core/workspace.h"
#include "kernels/gemm.h"

namespace aw {
namespace {

// Below this many multiply-adds a product runs as one call: waking the pool
// costs a few µs, about 2^17 multiply-adds of SIMD work.
constexpr size_t kMinParallelMacs = size_t(1) << 18;
// Smallest block worth handing to a thread.
constexpr size_t kMinChunkMacs = size_t(1) << 16;
// Whether this build runs threads at all (the single-thread wasm build does not: what only threads use is left
// out of its .wasm).
#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)
constexpr bool kThreadsBuilt = true;
#else
constexpr bool kThreadsBuilt = false;
#endif

size_t CeilDiv(size_t a, size_t b) { return (a + b - 1) / b; }

// Calls block(r0, r1, c0, c1) over blocks of C that start and end on tile
// boundaries (rows: kGemmMR; columns: col_tile) or at the edge of C.
template <class Block>
void Split(size_t m, size_t n, size_t k, size_t col_tile, Block&& block) {
  const size_t macs = m * n * k;
  const int threads = NumThreads();
  if (threads == 1 || macs < kMinParallelMacs) {
    block(0, m, 0, n);
    return;
  }
  const size_t row_units = CeilDiv(m, kernels::kGemmMR);
  const size_t col_units = CeilDiv(n, col_tile);
  // Rows when every thread gets a couple of row tiles: each block then reads
  // all of B but only its own rows of A (B is the weight matrix, shared in cache).
  if (row_units >= size_t(2 * threads)) {
    const size_t unit_macs = kernels::kGemmMR * n * k;
    ParallelFor(row_units, CeilDiv(kMinChunkMacs, unit_macs), [&](size_t u0, size_t u1, int) {
      block(u0 * kernels::kGemmMR, std::min(m, u1 * kernels::kGemmMR), 0, n);
    });
  } else {
    const size_t unit_macs = m * col_tile * k;
    ParallelFor(col_units, CeilDiv(kMinChunkMacs, unit_macs), [&](size_t u0, size_t u1, int) {
      block(0, m, u0 * col_tile, std::min(n, u1 * col_tile));
    });
  }
}

}  // namespace

void ParallelGemmPacked(size_t m, size_t n, size_t k, float* c, size_t ldc, const float* a, size_t lda,
                        const float* bp, size_t bp_cols, size_t j0, const float* bias, float alpha) {
  // Columns split on panel boundaries (windows of whole panels). One row (a
  // decoding step) goes to the matrix-vector kernel: the same results, B read
  // once without the micro-kernel's zero rows.
  Split(m, n, k, kernels::kGemmNR, [&](size_t r0, size_t r1, size_t c0, size_t c1) {
    if (r1 - r0 == 1) {
      kernels::f32_gemv_packed_window(c1 - c0, k, c + r0 * ldc + c0, a + r0 * lda, bp, bp_cols, j0 + c0,
                                      bias ? bias + c0 : nullptr, alpha);
      return;
    }
    kernels::f32_gemm_packed_window(r1 - r0, c1 - c0, k, c + r0 * ldc + c0, ldc, a + r0 * lda, lda, bp, bp_cols,
                                    j0 + c0, bias ? bias + c0 : nullptr, alpha);
  });
}

void ParallelGemmH16(kernels::Half h, size_t m, size_t n, size_t k, float* c, size_t ldc, const float* a, size_t lda,
                     const uint16_t* bp, size_t bp_cols, const float* bias, float alpha) {
  Split(m, n, k, kernels::kH16Cols, [&](size_t r0, size_t r1, size_t c0, size_t c1) {
    if (r1 - r0 == 1) {
      kernels::h16_gemv_packed_window(h, c1 - c0, k, c + r0 * ldc + c0, a + r0 * lda, bp, bp_cols, c0,
                                      bias ? bias + c0 : nullptr, alpha);
      return;
    }
    kernels::h16_gemm_packed_window(h, r1 - r0, c1 - c0, k, c + r0 * ldc + c0, ldc, a + r0 * lda, lda, bp, bp_cols, c0,
                                    bias ? bias + c0 : nullptr, alpha);
  });
}

void ParallelQGemm(kernels::QBits b, size_t m, size_t n, size_t k, float* c, size_t ldc, const float* a, size_t lda,
                   const uint8_t* bp, const float* bias, float alpha) {
  // Rows split on the kernel's 4-row tiles, columns on its 8-output panels: every element is computed the same
  // way wherever its block starts.
  Split(m, n, k, 8, [&](size_t r0, size_t r1, size_t c0, size_t c1) {
    kernels::q_gemm(b, r1 - r0, c1 - c0, k, c + r0 * ldc + c0, ldc, a + r0 * lda, lda, bp, n, c0,
                    bias ? bias + c0 : nullptr, alpha);
  });
}

void ParallelQ4GemmA8(size_t m, size_t n, size_t k, float* c, size_t ldc, const float* a, size_t lda, const uint8_t* bp,
                      const float* bias, float alpha) {
  // A decoding step's row split over threads by windows of panels: quantized once here, not once per window
  // (at SmolLM2-135M's down_proj a window's share of quantizing 1536 inputs was a third of its product). Where
  // the scratch is not to be had, each window quantizes it as the GEMM does: the same bits either way.
  if constexpr (kThreadsBuilt) {
    if (m == 1 && NumThreads() > 1 && n * k >= kMinParallelMacs) {
      ScratchScope scope;
      uint8_t* row = nullptr;
      if (scope.Take(kernels::q4_a8_row_bytes(k), "a quantized row", &row).ok()) {
        kernels::q4_a8_quantize_row(k, a, row);
        Split(m, n, k, 8, [&](size_t, size_t, size_t c0, size_t c1) {
          kernels::q4_gemv_a8(c1 - c0, k, c + c0, row, bp, n, c0, bias ? bias + c0 : nullptr, alpha);
        });
        return;
      }
    }
  }
  Split(m, n, k, 8, [&](size_t r0, size_t r1, size_t c0, size_t c1) {
    kernels::q4_gemm_a8(r1 - r0, c1 - c0, k, c + r0 * ldc + c0, ldc, a + r0 * lda, lda, bp, n, c0,
                        bias ? bias + c0 : nullptr, alpha);
  });
}

}  // namespace aw
