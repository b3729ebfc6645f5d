// The embind registrations of the instance itself: the result and handle classes every call returns
// (marshal.h), the heap's figures and the working-memory budget (aw.memory()), the thread pool and which build
// runs (aw.capabilities()).
#include <emscripten/bind.h>
#include <emscripten/heap.h>

#include "marshal.h"
#include "core/parallel.h"
#include "core/workspace.h"
#include "kernels/gemm.h"

namespace awb {
namespace {

// bindings/heap_stats.cpp
}  // namespace
}  // namespace awb
size_t AwHeapInUse();
size_t AwHeapPeak();
void AwResetHeapPeak();
namespace awb {
namespace {

// The heap's bytes in use and their peak (heap_stats.cpp), the workspace
// budget (core/workspace.h): aw.memory().
double HeapInUse() { return double(AwHeapInUse()); }
double HeapPeak() { return double(AwHeapPeak()); }
double HeapMax() { return double(emscripten_get_heap_max()); }
void ResetHeapPeak() { AwResetHeapPeak(); }
double WorkBudget() { return double(aw::WorkBudget()); }
std::unique_ptr<CallResult> SetWorkBudget(double bytes) {
  return std::make_unique<CallResult>(aw::SetWorkBudget(int64_t(bytes)));  // a safe integer (checks.js)
}

// Thread pool (core/parallel.h): 1 and false in the single-thread build.
int SetNumThreads(int n) { return aw::SetNumThreads(n); }
int NumThreads() { return aw::NumThreads(); }
bool ThreadsSupported() { return aw::ThreadsSupported(); }
// The relaxed-SIMD build (kernels/gemm.h): true in attnwasm_core_rs / attnwasm_core_mt_rs.
bool RelaxedSimd() { return aw::kernels::f32_gemm_relaxed_madd(); }

}  // namespace
}  // namespace awb

using namespace awb;  // NOLINT: the registrations name this file's functions

EMSCRIPTEN_BINDINGS(attnwasm_runtime) {
  emscripten::class_<CallResult>("CallResult")
      .function("code", &CallResult::code)
      .function("message", &CallResult::message)
      .function("at", &CallResult::at)
      .function("count", &CallResult::count)
      .function("shape", &CallResult::shape)
      .function("data", &CallResult::data);
  emscripten::class_<ModuleHandle>("ModuleHandle")
      .function("code", &ModuleHandle::code)
      .function("message", &ModuleHandle::message)
      .function("at", &ModuleHandle::at)
      .function("paramNames", &ModuleHandle::paramNames)
      .function("paramShape", &ModuleHandle::paramShape)
      .function("paramData", &ModuleHandle::paramData)
      .function("info", &ModuleHandle::info)
      .function("loadStateDict", &ModuleHandle::loadStateDict);
  emscripten::function("heapInUse", &HeapInUse);
  emscripten::function("heapPeak", &HeapPeak);
  emscripten::function("heapMax", &HeapMax);
  emscripten::function("resetHeapPeak", &ResetHeapPeak);
  emscripten::function("workBudget", &WorkBudget);
  emscripten::function("setWorkBudget", &SetWorkBudget);
  emscripten::function("setNumThreads", &SetNumThreads);
  emscripten::function("numThreads", &NumThreads);
  emscripten::function("threadsSupported", &ThreadsSupported);
  emscripten::function("relaxedSimd", &RelaxedSimd);
}
