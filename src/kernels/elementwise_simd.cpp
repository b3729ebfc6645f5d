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

void f32_dot_rows(size_t n, size_t k, const float* a, size_t lda, const float* x, float* y) {
  using batch = xsimd::batch<float, xsimd::default_arch>;
  constexpr size_t W = batch::size;
  size_t i0 = 0;
  // W rows at a time: each vector of x loaded once for the W rows, W independent chains of adds, and one
  // transposing sum (haddp) for the W results, where a row alone pays a horizontal sum of its own.
  if (k >= W) {
    for (; i0 + W <= n; i0 += W) {
      batch s[W];
      for (size_t r = 0; r < W; ++r) s[r] = batch(0.0f);
      size_t j = 0;
      for (; j + W <= k; j += W) {
        const batch xv = batch::load_unaligned(x + j);
        for (size_t r = 0; r < W; ++r) s[r] += batch::load_unaligned(a + (i0 + r) * lda + j) * xv;
      }
      xsimd::haddp(s).store_unaligned(y + i0);
      for (; j < k; ++j)
        for (size_t r = 0; r < W; ++r) y[i0 + r] += a[(i0 + r) * lda + j] * x[j];
    }
  }
  for (size_t i = i0; i < n; ++i) {
    const float* row = a + i * lda;
    batch s0(0.0f), s1(0.0f);
    size_t j = 0;
    for (; j + 2 * W <= k; j += 2 * W) {
      s0 += batch::load_unaligned(row + j) * batch::load_unaligned(x + j);
      s1 += batch::load_unaligned(row + j + W) * batch::load_unaligned(x + j + W);
    }
    for (; j + W <= k; j += W) s0 += batch::load_unaligned(row + j) * batch::load_unaligned(x + j);
    float acc = xsimd::hadd(s0 + s1);
    for (; j < k; ++j) acc += row[j] * x[j];
    y[i] = acc;
  }
}

void f32_axpy_rows(size_t n, size_t k, const float* a, size_t lda, const float* p, size_t ps, float* y) {
  using batch = xsimd::batch<float, xsimd::default_arch>;
  constexpr size_t W = batch::size, V = 8;  // columns of V vectors at a time, each summed over every row
  size_t j = 0;
  for (; j + V * W <= k; j += V * W) {
    batch acc[V];
    for (size_t v = 0; v < V; ++v) acc[v] = batch::load_unaligned(y + j + v * W);
    for (size_t i = 0; i < n; ++i) {
      const batch w(p[i * ps]);
      const float* row = a + i * lda + j;
      for (size_t v = 0; v < V; ++v) acc[v] += w * batch::load_unaligned(row + v * W);
    }
    for (size_t v = 0; v < V; ++v) acc[v].store_unaligned(y + j + v * W);
  }
  for (; j + W <= k; j += W) {
    batch acc = batch::load_unaligned(y + j);
    for (size_t i = 0; i < n; ++i) acc += batch(p[i * ps]) * batch::load_unaligned(a + i * lda + j);
    acc.store_unaligned(y + j);
  }
  for (; j < k; ++j)
    for (size_t i = 0; i < n; ++i) y[j] += p[i * ps] * a[i * lda + j];
}

}  // namespace aw::kernels
