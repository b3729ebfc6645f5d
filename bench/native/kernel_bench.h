// Timing of kernels alone, for bench/ only: the calls a layer makes, on
// buffers allocated once per call of these functions, without the copies in
// and out of wasm memory that every JS call pays. Not in the shipped .wasm:
// built as its own module, build/wasm/attnwasm_bench{,_rs}.mjs (CMakeLists.txt,
// `bash tools/build.sh bench`), loaded by bench/lib.mjs kernelBench().
// bench/gemm.mjs, breakdown.mjs, relaxed.mjs and lm.mjs compare the results
// with the same run's SIMD peak. Data is a fixed pattern; results are discarded.
#pragma once
#include <cstddef>

#include "core/status.h"

namespace aw {

// Median ms of `reps` calls of ParallelGemmPacked (the Linear path):
// C(m, n) = A(m, k) · W(n, k)^T + bias, W packed once beforehand.
Status BenchGemm(size_t m, size_t n, size_t k, int reps, double* median_ms);

// The same product over `copies` packed copies of W in turn (each rep runs them all; the median is per copy):
// with copies · n · k · 4 bytes past the last-level cache, every call streams its weights from memory, as a
// model's layers do. BenchGemm is one copy. At most 256 copies and 2^28 weights in all.
Status BenchGemmStreamed(size_t m, size_t n, size_t k, size_t copies, int reps, double* median_ms);

// Median ms of `reps` calls of an activation kernel in place on n values of [-6, 6]: kind 0 f32_gelu (erf), 1
// f32_gelu_tanh, 2 f32_silu.
Status BenchActivation(int kind, size_t n, int reps, double* median_ms);

// Median ms of `reps` calls of the quantized products (the PackedWeight path), one thread: kind 0 q8, 1 q4a16
// (int16 activations: ParallelQGemm), 2 q4 (int8 activations per group: ParallelQ4GemmA8); W quantized once.
Status BenchQGemm(int kind, size_t m, size_t n, size_t k, int reps, double* median_ms);

// Median ms of `reps` calls of the attention core (ops/attention.h) on
// `heads` heads of q = k = v (L = S rows of hd), no mask or causal, no weights.
Status BenchAttention(size_t heads, size_t L, size_t hd, bool causal, int reps, double* median_ms);

}  // namespace aw

// The module's exports (C names, called from JS): the median ms, or -1 for sizes out of range.
extern "C" {
double aw_bench_gemm(int m, int n, int k, int reps);
double aw_bench_gemm_streamed(int m, int n, int k, int copies, int reps);
double aw_bench_activation(int kind, int n, int reps);
double aw_bench_attention(int heads, int L, int hd, int causal, int reps);
double aw_bench_qgemm(int kind, int m, int n, int k, int reps);
}
