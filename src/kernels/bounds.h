// The bounded pass of greedy search (seq2seq): the bounds of a row's logits from the q8 copy's logits
// (PackedWeight::BoundedProduct says why e bounds the difference), and the scans that pick a row's candidates
// from them (Seq2SeqModel::SelectBounded), so that the search in JS reads a few ids, not two rows of the
// vocabulary. Scalar loops (bounds.cpp, -O2): the two scans of a 20-row step of 58 101 logits took 1.4 ms with
// the JS call around them, 0.4 ms more than SIMD twins, against a 47 ms step; the twins of the three were 695
// bytes of .wasm, which the 500 000-byte line left no room for (docs/architecture.md, "Sizes").
//
//   f32_bounds_spread  a row of logits y (in lo) into bounds: e = A·wn[i] + C·en[i] + K·(|y| + |bias[i]|) + FLT_MIN
//                      (|bias[i]| taken as 0 without a bias; summed left to right, each product and sum rounded
//                      once), lo[i] = y − e, up[i] = y + e; both NaN where y is not finite (an overflow, a NaN)
//   f32_bounds_best    the largest lower[i], i < n (−inf for n = 0); NaN when some i has !(lower[i] <= upper[i]):
//                      a NaN bound, which decides nothing
//   f32_bounds_above   the i < n with upper[i] >= t, ascending, written to ids[0, cap) as floats (exact: n <= 2^24);
//                      returns how many there are, but stops counting at cap + 1 (a return above cap: more than
//                      cap, the first cap written)
#pragma once
#include <cstddef>
#include <cstdint>

namespace aw::kernels {

void f32_bounds_spread(size_t n, float A, float C, float K, const float* wn, const float* en, const float* bias,
                       float* lo, float* up);

float f32_bounds_best(size_t n, const float* lower, const float* upper);

size_t f32_bounds_above(size_t n, const float* upper, float t, float* ids, size_t cap);

}  // namespace aw::kernels
