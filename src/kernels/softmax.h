// Softmax kernels of the attention core (ops/attention.h), each with a scalar
// reference (softmax_ref.cpp) and an xsimd version (softmax_simd.cpp):
//
//   f32_softmax_inplace_ref: x[j] = exp(x[j] - max) / sum_j exp(x[j] - max)
//   f32_softmax_online:      the flash-attention update of running maxima and sums
//   f32_softmax_finish:      a row's weights from its final maximum and sum
//   f32_log_softmax_f64:     the model families' output rows as log-probabilities, in double (scalar only)
//   f32_log_softmax:         a vocabulary row's log-probabilities in float, in place (beam search's scores)
//
// Deliberate deviation from torch.softmax: a row whose maximum is -inf (every
// key masked) becomes all zeros instead of NaN. This is what PyTorch >= 2.5's
// SDPA math path (`_safe_softmax`) returns; see README "Fully masked rows".
// A row containing NaN or +inf propagates NaN as torch does.
#pragma once
#include <cstddef>

#include "kernels/gemm.h"

namespace aw::kernels {

// The reference only: the oracle of ops/attention_ref.cpp and of the tests
// (the runtime computes a row's softmax as f32_softmax_online + _finish).
void f32_softmax_inplace_ref(size_t n, float* x);

// Online (flash-attention) softmax: one update of the running maximum m and
// sum l of `rows` rows with a new block of n scores each (row i at s + i·lds):
//   m' = max(m[i], max_j s[i][j])      alpha[i] = exp(m[i] − m')
//   p[i][j] = exp(s[i][j] − m')        l[i] = l[i]·alpha[i] + Σ_j p[i][j]      m[i] = m'
// so that the caller rescales its output rows by alpha and adds p · V. p is
// written in the packed-A layout of kernels/gemm.h (f32_gemm_pp): MR-row
// panels of depth n, p[(i / MR)·n·MR + j·MR + i % MR], and the rows from
// `rows` up to the next multiple of MR are zero.
// Rows that have seen only -inf so far (every key masked): p = 0, alpha = 1,
// m and l stay (-inf, 0). A NaN or +inf score makes l NaN, so the row's
// output is NaN, as torch's softmax makes it.
// Start a row with m = -inf, l = 0.

// The weights of a row after the online pass: x[j] = exp(x[j] − m) / l for
// its masked scores x and final maximum m and sum l. A row that saw only
// -inf (m = -inf) becomes zeros, or NaN if its l is NaN.
void f32_softmax_finish_ref(size_t n, float* x, float m, float l);
void f32_softmax_finish(size_t n, float* x, float m, float l);
void f32_softmax_online_ref(size_t rows, size_t n, const float* s, size_t lds, float* m, float* l, float* alpha,
                            float* p);
void f32_softmax_online(size_t rows, size_t n, const float* s, size_t lds, float* m, float* l, float* alpha,
                        float* p);

// The model families' output rows — a vocabulary's logits, a classifier's
// classes — as log-probabilities in double: out[j] = x[j] − (max + log Σ_j
// exp(x[j] − max)), so that scores summed over many decoding steps and
// probabilities near 1 keep their digits. Runs once per generated token or
// image, over a few thousand values at most: a scalar kernel with no SIMD
// twin. A NaN or +inf logit makes every output NaN; n >= 1.
void f32_log_softmax_f64(size_t n, const float* x, double* out);

// A vocabulary's row of logits as log-probabilities in float, in place (beam search's scores, every step over
// every beam's row): x[j] = float(x[j] − lse) in double, lse = max + log Σ exp(x[j] − max) with the sum in double
// of float exps. The reference is f32_log_softmax_f64 rounded to float; the SIMD version's exps (exp_nonpos,
// within 2 ulp, and x − max rounded to float) move lse by at most 3e-7 (softmax_test.cpp bounds it), the same
// order as torch's own float32 log_softmax. NaN or +inf anywhere: every output NaN; n >= 1.
void f32_log_softmax_ref(size_t n, float* x);
void f32_log_softmax(size_t n, float* x);

}  // namespace aw::kernels
