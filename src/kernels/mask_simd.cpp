// xsimd versions of the masking kernels in mask.h, templated on the xsimd arch
// and instantiated for xsimd::default_arch (W = batch::size = 8 or 4), with
// scalar tails. Scalar twins: mask_ref.cpp.
#include "kernels/mask.h"

#include <limits>

#include <xsimd/xsimd.hpp>

namespace aw::kernels {
namespace {

// keep_nonzero: nonzero bytes keep (keep), or mask (drop).
template <class Arch, bool keep_nonzero>
void mask_u8_impl(size_t n, float* x, const uint8_t* keep) {
  using batch = xsimd::batch<float, Arch>;
  constexpr size_t W = batch::size;
  const float neg_inf = -std::numeric_limits<float>::infinity();
  const batch vneg_inf(neg_inf);
  const batch zero(0.0f);
  size_t j = 0;
  for (; j + W <= n; j += W) {
    // W bytes widened to W floats (xsimd 8.1 has no u8 -> f32 widening load
    // for these archs, so this goes through a small stack buffer; fine for a
    // kernel that is memory-bound anyway). 0 -> 0.0f, any nonzero -> >= 1.0f.
    const batch k = batch::load_unaligned(keep + j);
    xsimd::select(keep_nonzero ? k != zero : k == zero, batch::load_unaligned(x + j), vneg_inf).store_unaligned(x + j);
  }
  for (; j < n; ++j) {
    if ((keep[j] == 0) == keep_nonzero) x[j] = neg_inf;
  }
}

// x − x is 0 for a finite x and NaN for NaN or ±inf; the sum of those
// stays 0 exactly when every element is finite.
template <class Arch>
bool all_finite_impl(size_t rows, size_t n, const float* x, size_t ld) {
  using batch = xsimd::batch<float, Arch>;
  constexpr size_t W = batch::size;
  batch acc(0.0f);
  float tail = 0.0f;
  for (size_t i = 0; i < rows; ++i) {
    const float* row = x + i * ld;
    size_t j = 0;
    for (; j + W <= n; j += W) {
      const batch v = batch::load_unaligned(row + j);
      acc += v - v;
    }
    for (; j < n; ++j) tail += row[j] - row[j];
  }
  return xsimd::hadd(acc) + tail == 0.0f;
}

}  // namespace

bool f32_all_finite(size_t rows, size_t n, const float* x, size_t ld) {
  return all_finite_impl<xsimd::default_arch>(rows, n, x, ld);
}

void f32_mask_keep_u8(size_t n, float* x, const uint8_t* keep) {
  mask_u8_impl<xsimd::default_arch, true>(n, x, keep);
}

void f32_mask_drop_u8(size_t n, float* x, const uint8_t* drop) {
  mask_u8_impl<xsimd::default_arch, false>(n, x, drop);
}

}  // namespace aw::kernels
