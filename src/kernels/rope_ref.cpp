// Scalar references for the RoPE rotations (rope.h): the plain formulas, one
// pair at a time. The oracles of rope_simd.cpp (bitwise). Not meant to be fast.
#include "kernels/rope.h"

namespace aw::kernels {

void f32_rope_half_ref(size_t rows, size_t d, float* x, size_t ld, const float* cos, const float* sin) {
  const size_t h = d / 2;
  for (size_t r = 0; r < rows; ++r) {
    float* row = x + r * ld;
    for (size_t j = 0; j < h; ++j) {
      const float a = row[j], b = row[j + h];
      row[j] = a * cos[j] - b * sin[j];
      row[j + h] = b * cos[j] + a * sin[j];
    }
  }
}

void f32_rope_interleaved_ref(size_t rows, size_t d, float* x, size_t ld, const float* cos, const float* sin) {
  const size_t h = d / 2;
  for (size_t r = 0; r < rows; ++r) {
    float* row = x + r * ld;
    for (size_t i = 0; i < h; ++i) {
      const float a = row[2 * i], b = row[2 * i + 1];
      row[2 * i] = a * cos[i] - b * sin[i];
      row[2 * i + 1] = b * cos[i] + a * sin[i];
    }
  }
}

}  // namespace aw::kernels
