// The thread pool behind ParallelFor (parallel.h).
//
// One job at a time. The caller writes the job (function, context, chunk
// count), opens it and bumps the generation, then takes chunks itself.
// Chunks are handed out by an atomic counter, so whoever is free takes the
// next one: a worker that is slow to wake (descheduled, or in a browser not
// started yet) just gets fewer chunks, and the caller never waits for a
// worker that has not joined the job. Joining and closing are one atomic word
// (open bit | workers inside): a worker joins only an open job, the caller
// closes it when every chunk has been handed out and then waits only for the
// joined workers to finish. No mutex on that path: with one, a worker woke to
// a job while the caller still held it, blocked, and the caller's unlock had
// to wake it through a futex (in Node's wasm threads ~15 µs, a fifth of a
// 2-thread SmolLM2-135M decoding step was emscripten_futex_wake).
//
// Idle workers spin on the generation for a short while (parallel regions of a
// forward pass come back to back; waking a sleeping thread costs tens of µs in
// wasm), then sleep on a condition variable; the caller takes the mutex and
// notifies only when one sleeps.
#include "core/parallel.h"

#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)
#define AW_HAVE_THREADS 1
#else
#define AW_HAVE_THREADS 0
#endif

#include <algorithm>

#if AW_HAVE_THREADS
#include <atomic>
#include <cstdint>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>
#endif

namespace aw {

#if AW_HAVE_THREADS
namespace {

// How long an idle worker polls for the next job before it sleeps.
constexpr auto kSpin = std::chrono::microseconds(300);

// Chunks per thread: more than one, so that a thread slowed down by another
// process on the machine does not hold the others up at the end of the job.
constexpr size_t kChunksPerThread = 4;

thread_local bool t_in_job = false;  // nested ParallelFor runs serially ...
thread_local int t_tid = 0;          // ... with this thread's tid (its scratch is its own)

class Pool {
 public:
  ~Pool() { Resize(1); }

  int size() const { return int(workers_.size()) + 1; }

  void Resize(int threads) {
    if (!workers_.empty()) {
      stop_.store(true, std::memory_order_seq_cst);
      gen_.fetch_add(1, std::memory_order_seq_cst);
      {
        std::lock_guard<std::mutex> lk(mu_);
      }
      cv_.notify_all();
      for (std::thread& w : workers_) w.join();
      workers_.clear();
      stop_.store(false, std::memory_order_relaxed);
    }
    // A worker compares against the generation of its creation, not of its
    // start: in wasm a thread starts some time later, possibly after a job or
    // a stop was already published.
    const uint64_t gen = gen_.load(std::memory_order_acquire);
    for (int tid = 1; tid < threads; ++tid) workers_.emplace_back([this, tid, gen] { WorkerLoop(tid, gen); });
  }

  void Run(size_t n, size_t grain, ChunkFn fn, void* ctx) {
    const size_t max_chunks = n / grain;  // so that every chunk has >= grain units
    const size_t nchunks = std::min(max_chunks, size_t(size()) * kChunksPerThread);
    // Nobody is inside (state_ is 0): the job is the caller's to write until it opens.
    job_ = Job{fn, ctx, n, nchunks};
    next_.store(0, std::memory_order_relaxed);
    state_.store(kOpen, std::memory_order_release);
    gen_.fetch_add(1, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) {
      {
        std::lock_guard<std::mutex> lk(mu_);  // a worker between its check and its wait holds it: no lost wake-up
      }
      cv_.notify_all();
    }
    t_in_job = true;
    Work(job_, 0);
    t_in_job = false;
    state_.fetch_and(~kOpen, std::memory_order_acq_rel);  // every chunk is handed out: nobody joins
    while ((state_.load(std::memory_order_acquire) & kInside) != 0) {
    }
  }

 private:
  struct Job {
    ChunkFn fn = nullptr;
    void* ctx = nullptr;
    size_t n = 0, nchunks = 0;
  };
  static constexpr uint32_t kOpen = 1u << 31, kInside = kOpen - 1;

  // Takes chunks until none is left. Chunk c covers [c*n/nchunks, (c+1)*n/nchunks).
  void Work(const Job& j, int tid) {
    for (;;) {
      const size_t c = next_.fetch_add(1, std::memory_order_relaxed);
      if (c >= j.nchunks) return;
      j.fn(j.ctx, c * j.n / j.nchunks, (c + 1) * j.n / j.nchunks, tid);
    }
  }

  void WorkerLoop(int tid, uint64_t seen) {
    t_in_job = true;  // a worker never starts a nested job
    t_tid = tid;
    for (;;) {
      // Poll for a while, then sleep.
      auto t0 = std::chrono::steady_clock::now();
      for (unsigned i = 1; gen_.load(std::memory_order_acquire) == seen; ++i) {
        if (i % 1024 == 0 && std::chrono::steady_clock::now() - t0 > kSpin) break;
      }
      if (gen_.load(std::memory_order_acquire) == seen) {
        std::unique_lock<std::mutex> lk(mu_);
        sleepers_.fetch_add(1, std::memory_order_seq_cst);
        cv_.wait(lk, [&] { return gen_.load(std::memory_order_seq_cst) != seen; });
        sleepers_.fetch_sub(1, std::memory_order_relaxed);
      }
      seen = gen_.load(std::memory_order_acquire);
      if (stop_.load(std::memory_order_acquire)) return;
      // Join the open job, if any (it may be a later one than `seen`'s: the same either way, its chunks).
      uint32_t st = state_.load(std::memory_order_acquire);
      while ((st & kOpen) && !state_.compare_exchange_weak(st, st + 1, std::memory_order_acq_rel, std::memory_order_acquire)) {
      }
      if (!(st & kOpen)) continue;  // missed that job: the others did it
      Work(job_, tid);
      state_.fetch_sub(1, std::memory_order_release);
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mu_;  // sleeping and waking only
  std::condition_variable cv_;
  std::atomic<uint64_t> gen_{0};     // bumped for every job and for stop
  std::atomic<uint32_t> state_{0};   // kOpen while the job takes joiners | workers inside it
  std::atomic<size_t> next_{0};      // next chunk to hand out
  std::atomic<int> sleepers_{0};     // workers asleep (or about to be) on cv_
  std::atomic<bool> stop_{false};
  Job job_;
};

Pool& ThePool() {
  static Pool* pool = new Pool();  // never destroyed: no thread joins at exit
  return *pool;
}

std::mutex g_caller_mu;  // one job at a time, whoever calls

}  // namespace

bool ThreadsSupported() { return true; }

int NumThreads() { return ThePool().size(); }

int SetNumThreads(int n) {
  n = std::clamp(n, 1, kMaxThreads);
  std::lock_guard<std::mutex> lk(g_caller_mu);
  Pool& p = ThePool();
  if (p.size() != n) p.Resize(n);
  return p.size();
}

void ParallelForRaw(size_t n, size_t grain, ChunkFn fn, void* ctx) {
  if (n == 0) return;
  grain = std::max<size_t>(grain, 1);
  Pool& p = ThePool();
  if (n <= grain || t_in_job || p.size() == 1) {
    fn(ctx, 0, n, t_tid);
    return;
  }
  std::unique_lock<std::mutex> lk(g_caller_mu, std::try_to_lock);
  if (!lk.owns_lock()) {  // another thread's job is running: do this one alone
    fn(ctx, 0, n, t_tid);
    return;
  }
  p.Run(n, grain, fn, ctx);
}

#else  // single-thread build: no std::thread at all

bool ThreadsSupported() { return false; }
int NumThreads() { return 1; }
int SetNumThreads(int) { return 1; }
void ParallelForRaw(size_t n, size_t, ChunkFn fn, void* ctx) {
  if (n) fn(ctx, 0, n, 0);
}

#endif

}  // namespace aw
