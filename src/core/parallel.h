// Parallel loops over one process-wide, persistent pool of worker threads.
// The pool has NumThreads() - 1 workers; the calling thread is the last one.
// Builds without threads (the single-thread wasm build: no std::thread there,
// it would abort) compile ParallelFor to a plain serial loop.
//
// Determinism: ParallelFor only decides *who* runs which chunk of [0, n);
// callers choose units whose boundaries do not change any result (whole GEMM
// register tiles, whole (batch, row block) pieces), so outputs are
// bit-identical for every thread count. See ops/parallel_gemm.h.
#pragma once
#include <algorithm>
#include <cstddef>
#include <type_traits>

namespace aw {

// True when this build can run more than one thread (native, or wasm built
// with -pthread). Compile time: the single-thread wasm build says false.
bool ThreadsSupported();

// Threads ParallelFor uses now (>= 1). Starts at 1.
int NumThreads();

// Sets the number of threads (clamped to [1, kMaxThreads]; always 1 without
// thread support), starting or stopping pool workers. Returns the number in
// effect. Call from the thread that calls ParallelFor, never from inside one.
// In a browser, workers beyond the pre-started Emscripten pool start only
// after the page returns to its event loop; until then ParallelFor still
// completes (the caller takes the chunks nobody else took).
int SetNumThreads(int n);
constexpr int kMaxThreads = 64;

// Signature of one chunk: units [begin, end), run on thread `tid` in
// [0, NumThreads()) (the caller is 0). A thread may get several chunks.
using ChunkFn = void (*)(void* ctx, size_t begin, size_t end, int tid);

// Runs fn over [0, n) in chunks of at least `grain` units; returns when all
// chunks are done. Runs serially, as one chunk on the calling thread with that
// thread's own tid, when n <= grain, with one thread, or when called from
// inside another ParallelFor (so per-tid scratch stays exclusive). The pool
// serves one caller thread at a time; the runtime only ever calls it from one.
void ParallelForRaw(size_t n, size_t grain, ChunkFn fn, void* ctx);

// Typed front end: f(begin, end, tid) with any callable, no allocation.
template <class F>
void ParallelFor(size_t n, size_t grain, F&& f) {
  using Fn = std::remove_reference_t<F>;
  ParallelForRaw(n, grain, [](void* ctx, size_t b, size_t e, int tid) { (*static_cast<Fn*>(ctx))(b, e, tid); },
                 const_cast<void*>(static_cast<const void*>(&f)));
}

// Pieces of a (batches, rows) grid: units are blocks of `row_block` rows of
// one batch entry (the last block of an entry may be short). Calls
// f(batch, r0, r1, tid) for contiguous row ranges [r0, r1) of one entry, with
// r0 a multiple of row_block and r1 one too or `rows`. `grain`: units per
// chunk at least.
template <class F>
void ParallelForRowBlocks(size_t batches, size_t rows, size_t row_block, size_t grain, F&& f) {
  if (batches == 0 || rows == 0) return;
  const size_t per = (rows + row_block - 1) / row_block;  // units per batch entry
  ParallelFor(batches * per, grain, [&](size_t u0, size_t u1, int tid) {
    for (size_t b = u0 / per; b * per < u1; ++b) {
      const size_t first = std::max(u0, b * per) - b * per, last = std::min(u1, (b + 1) * per) - b * per;
      f(b, first * row_block, std::min(rows, last * row_block), tid);
    }
  });
}

}  // namespace aw
