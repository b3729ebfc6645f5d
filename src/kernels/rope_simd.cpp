// xsimd versions of the RoPE rotations (rope.h), templated on the xsimd arch
// and instantiated for xsimd::default_arch (W = batch::size = 8 or 4).
// Scalar twins: rope_ref.cpp; the results are the same bit for bit (each
// output is a·c - b·s or b·c + a·s with both products rounded, no fma).
//   half:        W pairs at a time: x[j..j+W) and x[j+h..j+h+W) against
//                cos/sin[j..j+W): plain loads, no shuffles.
//   interleaved: 2W outputs (W pairs) at a time: cos/sin[i..i+W) duplicated
//                into lanes (c_i, c_i, c_i+1, c_i+1, …) by two swizzles each,
//                sin's even lanes negated (exact), and x's pairs swapped by a
//                swizzle: y = x·c2 + swap(x)·s2, which at an even lane is
//                a·c + b·(-s) = a·c - b·s and at an odd one b·c + a·s, bit for
//                bit the reference (x - y and x + (-y) are the same IEEE
//                operation). On sse4.1 (the wasm build) a swizzle is one
//                shufps / i8x16.shuffle; on avx2 one vpermps.
// Tails (fewer than W pairs) use the scalar formula.
#include "kernels/rope.h"

#include <cstdint>

#include <xsimd/xsimd.hpp>

namespace aw::kernels {
namespace {

struct SwapPairs {
  static constexpr uint32_t get(uint32_t i, uint32_t) { return i ^ 1u; }
};
struct DupLow {  // lanes (0, 0, 1, 1, …): the first half of a batch, each twice
  static constexpr uint32_t get(uint32_t i, uint32_t) { return i / 2; }
};
struct DupHigh {  // the second half, each twice
  static constexpr uint32_t get(uint32_t i, uint32_t n) { return n / 2 + i / 2; }
};

template <class Arch>
void rope_half_impl(size_t rows, size_t d, float* x, size_t ld, const float* cos, const float* sin) {
  using batch = xsimd::batch<float, Arch>;
  constexpr size_t W = batch::size;
  const size_t h = d / 2;
  for (size_t r = 0; r < rows; ++r) {
    float* row = x + r * ld;
    size_t j = 0;
    for (; j + W <= h; j += W) {
      const batch a = batch::load_unaligned(row + j), b = batch::load_unaligned(row + j + h);
      const batch c = batch::load_unaligned(cos + j), s = batch::load_unaligned(sin + j);
      (a * c - b * s).store_unaligned(row + j);
      (b * c + a * s).store_unaligned(row + j + h);
    }
    for (; j < h; ++j) {
      const float a = row[j], b = row[j + h];
      row[j] = a * cos[j] - b * sin[j];
      row[j + h] = b * cos[j] + a * sin[j];
    }
  }
}

template <class Arch>
void rope_interleaved_impl(size_t rows, size_t d, float* x, size_t ld, const float* cos, const float* sin) {
  using batch = xsimd::batch<float, Arch>;
  using ubatch = xsimd::batch<uint32_t, Arch>;
  constexpr size_t W = batch::size;
  constexpr auto swap = xsimd::make_batch_constant<ubatch, SwapPairs>();
  constexpr auto lo = xsimd::make_batch_constant<ubatch, DupLow>();
  constexpr auto hi = xsimd::make_batch_constant<ubatch, DupHigh>();
  alignas(Arch::alignment()) float signs[W];
  for (size_t l = 0; l < W; ++l) signs[l] = l % 2 ? 1.0f : -1.0f;
  const batch sign = batch::load_aligned(signs);
  const size_t h = d / 2;
  for (size_t r = 0; r < rows; ++r) {
    float* row = x + r * ld;
    size_t i = 0;
    for (; i + W <= h; i += W) {  // pairs [i, i + W): outputs [2i, 2i + 2W)
      const batch c = batch::load_unaligned(cos + i), s = batch::load_unaligned(sin + i);
      const batch c0 = xsimd::swizzle(c, lo), c1 = xsimd::swizzle(c, hi);
      const batch s0 = xsimd::swizzle(s, lo) * sign, s1 = xsimd::swizzle(s, hi) * sign;
      const batch x0 = batch::load_unaligned(row + 2 * i), x1 = batch::load_unaligned(row + 2 * i + W);
      (x0 * c0 + xsimd::swizzle(x0, swap) * s0).store_unaligned(row + 2 * i);
      (x1 * c1 + xsimd::swizzle(x1, swap) * s1).store_unaligned(row + 2 * i + W);
    }
    for (; i < h; ++i) {
      const float a = row[2 * i], b = row[2 * i + 1];
      row[2 * i] = a * cos[i] - b * sin[i];
      row[2 * i + 1] = b * cos[i] + a * sin[i];
    }
  }
}

}  // namespace

void f32_rope_half(size_t rows, size_t d, float* x, size_t ld, const float* cos, const float* sin) {
  rope_half_impl<xsimd::default_arch>(rows, d, x, ld, cos, sin);
}
void f32_rope_interleaved(size_t rows, size_t d, float* x, size_t ld, const float* cos, const float* sin) {
  rope_interleaved_impl<xsimd::default_arch>(rows, d, x, ld, cos, sin);
}

}  // namespace aw::kernels
