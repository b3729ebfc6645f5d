// The wasm heap's bytes in use and their peak, for aw.memory(): every
// allocation of the module (C++ new, Buffer, the workspace, the JS side's
// _malloc of inputs) goes through malloc, which this file replaces with
// Emscripten's dlmalloc plus two counters. dlmalloc's own mallinfo() gives
// the bytes in use but no peak of them (its max footprint is the heap's
// high-water mark, which never comes down). Counted in usable bytes
// (malloc_usable_size: the request rounded up to dlmalloc's chunk size).
// Only in the wasm builds (Emscripten names dlmalloc's entry points
// emscripten_builtin_* so that an application may wrap them like this).
#include <emscripten/heap.h>
#include <malloc.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>

extern "C" {
void* emscripten_builtin_malloc(size_t size);
void emscripten_builtin_free(void* p);
void* emscripten_builtin_memalign(size_t alignment, size_t size);
}

namespace {

std::atomic<size_t> g_in_use{0};
std::atomic<size_t> g_peak{0};

void* Counted(void* p) {
  if (!p) return p;
  const size_t now = g_in_use.fetch_add(malloc_usable_size(p), std::memory_order_relaxed) + malloc_usable_size(p);
  size_t peak = g_peak.load(std::memory_order_relaxed);
  while (now > peak && !g_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
  return p;
}

void Uncount(void* p) {
  if (p) g_in_use.fetch_sub(malloc_usable_size(p), std::memory_order_relaxed);
}

}  // namespace

extern "C" {

void* malloc(size_t size) { return Counted(emscripten_builtin_malloc(size)); }

void free(void* p) {
  Uncount(p);
  emscripten_builtin_free(p);
}

void* calloc(size_t n, size_t size) {
  if (size && n > SIZE_MAX / size) return nullptr;
  void* p = malloc(n * size);
  if (p) std::memset(p, 0, n * size);
  return p;
}

void* realloc(void* p, size_t size) {
  if (!p) return malloc(size);
  if (size == 0) {
    free(p);
    return nullptr;
  }
  const size_t old = malloc_usable_size(p);
  if (size <= old) return p;  // fits where it is (dlmalloc would keep it in place too)
  void* q = malloc(size);
  if (!q) return nullptr;
  std::memcpy(q, p, old);
  free(p);
  return q;
}

void* memalign(size_t alignment, size_t size) { return Counted(emscripten_builtin_memalign(alignment, size)); }

void* aligned_alloc(size_t alignment, size_t size) { return memalign(alignment, size); }

int posix_memalign(void** out, size_t alignment, size_t size) {
  if (alignment < sizeof(void*) || (alignment & (alignment - 1))) return EINVAL;
  void* p = memalign(alignment, size);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}

}  // extern "C"

// For the bindings: bytes in use now, and the most in use since the last reset.
size_t AwHeapInUse() { return g_in_use.load(std::memory_order_relaxed); }
size_t AwHeapPeak() { return g_peak.load(std::memory_order_relaxed); }
void AwResetHeapPeak() { g_peak.store(g_in_use.load(std::memory_order_relaxed), std::memory_order_relaxed); }
