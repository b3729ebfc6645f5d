// ParallelGemmNt / ParallelGemmNn: the block split (see parallel_gemm.h).
#include "ops/parallel_gemm.h"

#include <algorithm>

#include "core/parallel.h"
#include "kernels/gemm.h"

namespace aw {
namespace {

// Below this many multiply-adds a product runs as one call: waking the pool
// costs a few µs, about 2^17 multiply-adds of SIMD work.
constexpr size_t kMinParallelMacs = size_t(1) << 18;
// Smallest block worth handing to a thread.
constexpr size_t kMinChunkMacs = size_t(1) << 16;

size_t CeilDiv(size_t a, size_t b) { return (a + b - 1) / b; }

// Calls block(r0, r1, c0, c1) over blocks of C that start and end on tile
// boundaries (rows: row_tile; columns: col_tile) or at the edge of C.
template <class Block>
void Split(size_t m, size_t n, size_t k, size_t col_tile, Block&& block) {
  const size_t macs = m * n * k;
  const int threads = NumThreads();
  if (threads == 1 || macs < kMinParallelMacs) {
    block(0, m, 0, n);
    return;
  }
  const size_t row_units = CeilDiv(m, kernels::kGemmRowTile);
  const size_t col_units = CeilDiv(n, col_tile);
  // Rows when every thread gets a couple of row tiles: each block then reads
  // all of B but only its own rows of A (B is the weight matrix, shared in cache).
  if (row_units >= size_t(2 * threads)) {
    const size_t unit_macs = kernels::kGemmRowTile * n * k;
    ParallelFor(row_units, CeilDiv(kMinChunkMacs, unit_macs), [&](size_t u0, size_t u1, int) {
      block(u0 * kernels::kGemmRowTile, std::min(m, u1 * kernels::kGemmRowTile), 0, n);
    });
  } else {
    const size_t unit_macs = m * col_tile * k;
    ParallelFor(col_units, CeilDiv(kMinChunkMacs, unit_macs), [&](size_t u0, size_t u1, int) {
      block(0, m, u0 * col_tile, std::min(n, u1 * col_tile));
    });
  }
}

}  // namespace

void ParallelGemmNt(size_t m, size_t n, size_t k, float* c, size_t ldc, const float* a, size_t lda,
                    const float* b, size_t ldb, const float* bias, float alpha) {
  Split(m, n, k, kernels::kGemmNtColTile, [&](size_t r0, size_t r1, size_t c0, size_t c1) {
    kernels::f32_gemm_nt(r1 - r0, c1 - c0, k, c + r0 * ldc + c0, ldc, a + r0 * lda, lda, b + c0 * ldb, ldb,
                         bias ? bias + c0 : nullptr, alpha);
  });
}

void ParallelGemmNn(size_t m, size_t n, size_t k, float* c, size_t ldc, const float* a, size_t lda,
                    const float* b, size_t ldb, const float* bias) {
  Split(m, n, k, kernels::f32_gemm_nn_col_tile(), [&](size_t r0, size_t r1, size_t c0, size_t c1) {
    kernels::f32_gemm_nn(r1 - r0, c1 - c0, k, c + r0 * ldc + c0, ldc, a + r0 * lda, lda, b + c0, ldb,
                         bias ? bias + c0 : nullptr);
  });
}

}  // namespace aw
