// f32_fill (fill.h) with xsimd, instantiated for xsimd::default_arch, with a
// scalar tail.
#include "kernels/fill.h"

#include <xsimd/xsimd.hpp>

namespace aw::kernels {
namespace {

template <class Arch>
void fill_impl(size_t n, float* x, float value) {
  using batch = xsimd::batch<float, Arch>;
  constexpr size_t W = batch::size;
  const batch v(value);
  size_t j = 0;
  for (; j + W <= n; j += W) v.store_unaligned(x + j);
  for (; j < n; ++j) x[j] = value;
}

}  // namespace

void f32_fill(size_t n, float* x, float value) { fill_impl<xsimd::default_arch>(n, x, value); }

}  // namespace aw::kernels
