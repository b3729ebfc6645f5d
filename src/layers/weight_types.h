// The weight types as one table (as ggml's type_traits): for each type a PackedWeight may keep its matrix as,
// what it takes — the bytes of its layout, the outputs the layout holds, rows into and out of it as float32, and
// the product. PackedWeight (packed_weight.h) is written once against this table; a new type is a row here
// (and its kernels), not a case in every method.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/module.h"

namespace aw {

struct WeightTypeOps {
  // The layout's bytes for n outputs and k inputs (without PackedWeight's 64 bytes of slack).
  size_t (*bytes)(size_t n, size_t k);
  // The outputs the layout holds: n rounded up to its panels (the rows past n are zeros).
  size_t (*padded_rows)(size_t n);
  // Output row r (k floats) into the layout b; rows r0 … r0 + count − 1 (ldw apart) at once, by whole panels
  // where they cover some (kernels/pack.h); row r out of it, as float32.
  void (*put_row)(size_t n, size_t k, size_t r, const float* w, uint8_t* b);
  void (*put_rows)(size_t n, size_t k, size_t r0, size_t count, const float* w, size_t ldw, uint8_t* b);
  void (*get_row)(size_t n, size_t k, size_t r, const uint8_t* b, float* w);
  // y (m, n) rows ldy apart = alpha · x (m, k) · Wᵀ [+ bias], over the thread pool (ops/parallel_gemm.h).
  void (*product)(size_t m, size_t n, size_t k, float* y, size_t ldy, const float* x, size_t ldx, const uint8_t* b,
                  const float* bias, float alpha);
  // Whether a checkpoint's 16-bit rows go in as they are stored (PackedWeight::PutRowsBits): bf16, f16.
  bool holds_16bit_rows;
};

// The row of type t.
const WeightTypeOps& OpsOf(WeightType t);

}  // namespace aw
