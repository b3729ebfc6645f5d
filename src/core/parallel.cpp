// The thread pool behind ParallelFor (parallel.h).
//
// One job at a time. The caller publishes a job (function, context, chunk
// count) under the mutex, bumps the generation and wakes the workers, then
// takes chunks itself. Chunks are handed out by an atomic counter, so whoever
// is free takes the next one: a worker that is slow to wake (descheduled, or
// in a browser not started yet) just gets fewer chunks, and the caller never
// waits for a worker that has not joined the job. A worker joins under the
// mutex while the job is open; the caller closes the job when every chunk has
// been handed out and then waits only for the joined workers to finish.
//
// Idle workers spin on the generation for a short while (parallel regions of a
// forward pass come back to back; waking a sleeping thread costs tens of µs in
// wasm), then sleep on a condition variable.
#include "core/parallel.h"

#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)
#define AW_HAVE_THREADS 1
#else
#define AW_HAVE_THREADS 0
#endif

#include <algorithm>

#if AW_HAVE_THREADS
#include <atomic>
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
      {
        std::lock_guard<std::mutex> lk(mu_);
        stop_ = true;
        gen_.fetch_add(1, std::memory_order_release);
      }
      cv_.notify_all();
      for (std::thread& w : workers_) w.join();
      workers_.clear();
      stop_ = false;
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
    {
      std::lock_guard<std::mutex> lk(mu_);
      job_ = Job{fn, ctx, n, nchunks};
      next_.store(0, std::memory_order_relaxed);
      open_ = true;
      gen_.fetch_add(1, std::memory_order_release);
    }
    cv_.notify_all();
    t_in_job = true;
    Work(job_, 0);
    t_in_job = false;
    {
      std::lock_guard<std::mutex> lk(mu_);
      open_ = false;  // every chunk is handed out: nobody else joins
    }
    while (active_.load(std::memory_order_acquire) != 0) {
    }
  }

 private:
  struct Job {
    ChunkFn fn = nullptr;
    void* ctx = nullptr;
    size_t n = 0, nchunks = 0;
  };

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
      std::unique_lock<std::mutex> lk(mu_);
      cv_.wait(lk, [&] { return gen_.load(std::memory_order_relaxed) != seen; });
      seen = gen_.load(std::memory_order_relaxed);
      if (stop_) return;
      if (!open_) continue;  // missed that job: the others did it
      const Job j = job_;
      active_.fetch_add(1, std::memory_order_relaxed);
      lk.unlock();
      Work(j, tid);
      active_.fetch_sub(1, std::memory_order_release);
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mu_;  // guards job_, open_, stop_, joining (active_ increments)
  std::condition_variable cv_;
  std::atomic<uint64_t> gen_{0};  // bumped for every job and for stop
  std::atomic<size_t> next_{0};   // next chunk to hand out
  std::atomic<int> active_{0};    // workers inside the current job
  Job job_;
  bool open_ = false;
  bool stop_ = false;
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
