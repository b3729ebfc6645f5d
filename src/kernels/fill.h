// f32_fill: x[j] = value over n contiguous floats (causal tails, padding,
// default parameters). No scalar twin: a fill is its own oracle
// (tests/kernels/fill_test.cpp checks it at awkward sizes).
#pragma once
#include <cstddef>

namespace aw::kernels {

void f32_fill(size_t n, float* x, float value);

}  // namespace aw::kernels
