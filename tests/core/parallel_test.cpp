// Tests for src/core/parallel.h: every unit is visited exactly once, thread
// ids are in range and never run two chunks at once, nested loops run
// serially on the caller's tid, workers asleep between jobs wake for the next
// one, the pool survives many back-to-back jobs and resizes, and ParallelForRowBlocks cuts a (batches, rows) grid on block
// boundaries. Natively the pool runs real std::threads.
#include "core/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace aw {
namespace {

// Restores the single-thread default after a test (the pool is process-wide).
struct Threads {
  explicit Threads(int n) { EXPECT_EQ(SetNumThreads(n), n); }
  ~Threads() { SetNumThreads(1); }
};

TEST(Parallel, NativeBuildHasThreads) {
  EXPECT_TRUE(ThreadsSupported());
  EXPECT_EQ(NumThreads(), 1);
  Threads t(3);
  EXPECT_EQ(NumThreads(), 3);
  EXPECT_EQ(SetNumThreads(0), 1);                      // clamped
  EXPECT_EQ(SetNumThreads(1000), kMaxThreads);         // clamped
}

// Runs ParallelFor and checks coverage, chunk grain and tid exclusivity.
void CheckCoverage(size_t n, size_t grain) {
  std::vector<std::atomic<int>> hits(n);
  std::vector<std::atomic<int>> busy(kMaxThreads);
  std::atomic<int> bad_tid{0}, overlap{0}, small{0};
  ParallelFor(n, grain, [&](size_t b, size_t e, int tid) {
    if (tid < 0 || tid >= NumThreads()) { ++bad_tid; return; }
    if (busy[size_t(tid)].fetch_add(1) != 0) ++overlap;
    if (e - b < grain && e != n && n > grain) ++small;
    for (size_t i = b; i < e; ++i) hits[i].fetch_add(1);
    busy[size_t(tid)].fetch_sub(1);
  });
  for (size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "unit " << i << " of " << n << ", grain " << grain;
  EXPECT_EQ(bad_tid.load(), 0);
  EXPECT_EQ(overlap.load(), 0);
  EXPECT_EQ(small.load(), 0) << "a chunk below the grain";
}

TEST(Parallel, EveryUnitOnceAtManySizes) {
  for (int threads : {1, 2, 3, 4}) {
    Threads t(threads);
    for (size_t n : {0, 1, 2, 3, 7, 8, 9, 64, 65, 1000}) {
      for (size_t grain : {1, 2, 5, 64}) CheckCoverage(n, grain);
    }
  }
}

TEST(Parallel, UsesMoreThanOneThread) {
  Threads t(2);
  // Each chunk waits until it sees another thread working (bounded): with two
  // threads and enough chunks, some chunk runs on a worker.
  std::atomic<int> seen_worker{0};
  for (int rep = 0; rep < 200 && !seen_worker.load(); ++rep) {
    ParallelFor(64, 1, [&](size_t, size_t, int tid) {
      if (tid != 0) seen_worker = 1;
      volatile double x = 0;
      for (int i = 0; i < 20000; ++i) x = x + i;
    });
  }
  EXPECT_EQ(seen_worker.load(), 1);
}

// Workers that went to sleep between jobs (idle past their spin) are woken by the next job: every chunk of a job
// waits (bounded, seconds) until every thread has a chunk in hand, which only all threads joining ends early. Each
// of several sleeps: a lost wake-up leaves the caller alone and the job runs into its bound.
TEST(Parallel, SleepingWorkersWakeForTheNextJob) {
  Threads t(3);
  for (int rep = 0; rep < 5; ++rep) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // > the pool's spin: the workers sleep
    std::atomic<int> inside{0}, all_met{0};
    ParallelFor(3, 1, [&](size_t, size_t, int) {
      ++inside;
      const auto t0 = std::chrono::steady_clock::now();
      while (inside.load() < 3 && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5)) {
      }
      if (inside.load() == 3) ++all_met;
    });
    EXPECT_EQ(all_met.load(), 3) << "rep " << rep;
  }
}

TEST(Parallel, NestedRunsSeriallyOnTheCallersTid) {
  Threads t(2);
  std::atomic<int> wrong{0}, inner_calls{0};
  ParallelFor(16, 1, [&](size_t, size_t, int outer) {
    ParallelFor(100, 1, [&](size_t b, size_t e, int inner) {
      ++inner_calls;
      if (inner != outer || b != 0 || e != 100) ++wrong;
    });
  });
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GE(inner_calls.load(), 1);
}

TEST(Parallel, ManyJobsAndResizes) {
  for (int round = 0; round < 20; ++round) {
    Threads t(1 + round % 4);
    for (int job = 0; job < 500; ++job) {
      std::atomic<size_t> sum{0};
      ParallelFor(37, 1, [&](size_t b, size_t e, int) {
        for (size_t i = b; i < e; ++i) sum += i;
      });
      ASSERT_EQ(sum.load(), size_t(37 * 36 / 2));
    }
  }
}

TEST(Parallel, RowBlocksCoverTheGridOnBlockBoundaries) {
  for (int threads : {1, 2, 3}) {
    Threads t(threads);
    for (size_t batches : {1, 2, 5}) {
      for (size_t rows : {1, 3, 4, 5, 17, 64}) {
        for (size_t grain : {1, 3}) {
          std::vector<std::atomic<int>> hits(batches * rows);
          std::atomic<int> bad{0};
          ParallelForRowBlocks(batches, rows, 4, grain, [&](size_t b, size_t r0, size_t r1, int) {
            if (b >= batches || r0 >= r1 || r1 > rows || r0 % 4 || (r1 % 4 && r1 != rows)) ++bad;
            for (size_t r = r0; r < r1 && r < rows; ++r) hits[b * rows + r].fetch_add(1);
          });
          EXPECT_EQ(bad.load(), 0);
          for (size_t i = 0; i < hits.size(); ++i) ASSERT_EQ(hits[i].load(), 1) << batches << "x" << rows << " unit " << i;
        }
      }
    }
  }
}

}  // namespace
}  // namespace aw
