// xsimd versions of elementwise.h: whole vectors, then the tail one by one.
#include "kernels/elementwise.h"

#include <xsimd/xsimd.hpp>

namespace aw::kernels {
namespace {

template <class Arch, class Op>
void apply(size_t n, float* y, const float* x, Op op) {
  using batch = xsimd::batch<float, Arch>;
  constexpr size_t W = batch::size;
  size_t j = 0;
  for (; j + W <= n; j += W) op(batch::load_unaligned(y + j), batch::load_unaligned(x + j)).store_unaligned(y + j);
  for (; j < n; ++j) y[j] = op(y[j], x[j]);
}

}  // namespace

void f32_add(size_t n, float* y, const float* x) {
  apply<xsimd::default_arch>(n, y, x, [](auto a, auto b) { return a + b; });
}

void f32_mul(size_t n, float* y, const float* x) {
  apply<xsimd::default_arch>(n, y, x, [](auto a, auto b) { return a * b; });
}

}  // namespace aw::kernels
