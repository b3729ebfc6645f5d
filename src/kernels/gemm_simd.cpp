// xsimd versions of the gemm kernels in gemm.h, templated on the xsimd arch and
// instantiated for xsimd::default_arch (fma3<avx2> natively with -mavx2 -mfma,
// sse4_1 -> WASM SIMD128 in the wasm build). Everything derives from
// batch::size (W = 8 or 4). Scalar twins: gemm_ref.cpp.
// Register tiles only; no cache blocking (attention shapes are small: k and n
// are a head dim or a sequence length, and a panel of A stays in L1).
#include "kernels/gemm.h"

#include <cassert>
#include <type_traits>
#include <utility>

#include <xsimd/xsimd.hpp>

namespace aw::kernels {
namespace {

// Register budget: wasm/V8 maps v128 onto the 16 x86 XMM registers and a tile
// needing more than ~12 live vectors spills (TOOLCHAIN.md, SIMD). Both tiles
// below are 4 x 2 accumulators = 8, plus 2 B vectors and 1 A vector = 11
// (12 on sse4_1, where fma is mul + add and needs a temporary).
constexpr size_t kMR = 4;  // rows of A per tile (both kernels)
constexpr size_t kNR = 2;  // nt: rows of B per tile; nn: vectors of C per row
static_assert(kMR == kGemmRowTile && kNR == kGemmNtColTile, "gemm.h documents the tiles");

// unroll<N>(f) calls f(integral_constant<size_t, 0>) ... f(<N-1>) in order.
// The tile loops must be unrolled in the source: with a runtime loop over
// `batch acc[MR * NR]`, g++ -O2 does not unroll it and keeps the accumulators
// in memory (a load and a store around every fma). With constant indices the
// arrays become registers under both g++ and clang.
template <class F, size_t... I>
inline void unroll_impl(F&& f, std::index_sequence<I...>) {
  (f(std::integral_constant<size_t, I>{}), ...);
}
template <size_t N, class F>
inline void unroll(F&& f) {
  unroll_impl(f, std::make_index_sequence<N>{});
}

// Horizontal sums of `count` accumulators into out[0..count). Groups of W
// accumulators go through haddp (one transpose-and-add, W sums per batch, made
// of unpack/move shuffles that translate well to SIMD128); the rest use hadd.
template <class Arch, size_t count>
inline void reduce_sums(const xsimd::batch<float, Arch>* acc, float* out) {
  constexpr size_t W = xsimd::batch<float, Arch>::size;
  constexpr size_t full = count / W * W;
  unroll<count / W>([&](auto g) { xsimd::haddp(acc + g * W).store_unaligned(out + g * W); });
  unroll<count - full>([&](auto r) { out[full + r] = xsimd::hadd(acc[full + r]); });
}

// nt tile: MR x NR dot products of length k, vectorized along k.
//   c(MR, NR) = alpha * a(MR, k) · b(NR, k)^T [+ bias(NR)]
// Accumulators acc[i * NR + j] hold W partial sums each; k % W leftovers are
// added in scalar after the horizontal sum. So the summation order differs
// from the reference (lanes, then tail): see the tolerance in gemm_test.cpp.
template <class Arch, size_t MR, size_t NR>
inline void nt_tile(size_t k, float* c, size_t ldc, const float* a, size_t lda,
                    const float* b, size_t ldb, const float* bias, float alpha) {
  using batch = xsimd::batch<float, Arch>;
  constexpr size_t W = batch::size;
  batch acc[MR * NR];
  unroll<MR * NR>([&](auto t) { acc[t] = batch(0.0f); });

  size_t p = 0;
  for (; p + W <= k; p += W) {
    batch bv[NR];
    unroll<NR>([&](auto j) { bv[j] = batch::load_unaligned(b + j * ldb + p); });
    unroll<MR>([&](auto i) {
      const batch av = batch::load_unaligned(a + i * lda + p);
      unroll<NR>([&](auto j) { acc[i * NR + j] = xsimd::fma(av, bv[j], acc[i * NR + j]); });
    });
  }

  float sum[MR * NR];
  reduce_sums<Arch, MR * NR>(acc, sum);
  for (; p < k; ++p) {
    for (size_t i = 0; i < MR; ++i) {
      for (size_t j = 0; j < NR; ++j) sum[i * NR + j] += a[i * lda + p] * b[j * ldb + p];
    }
  }

  for (size_t i = 0; i < MR; ++i) {
    for (size_t j = 0; j < NR; ++j) {
      float v = alpha * sum[i * NR + j];
      if (bias) v += bias[j];
      c[i * ldc + j] = v;
    }
  }
}

// MR rows of C for gemm_nt: tiles of kNR columns, then a 1-column tile.
template <class Arch, size_t MR>
inline void nt_rows(size_t n, size_t k, float* c, size_t ldc, const float* a, size_t lda,
                    const float* b, size_t ldb, const float* bias, float alpha) {
  size_t j = 0;
  for (; j + kNR <= n; j += kNR) {
    nt_tile<Arch, MR, kNR>(k, c + j, ldc, a, lda, b + j * ldb, ldb, bias ? bias + j : nullptr, alpha);
  }
  for (; j < n; ++j) {
    nt_tile<Arch, MR, 1>(k, c + j, ldc, a, lda, b + j * ldb, ldb, bias ? bias + j : nullptr, alpha);
  }
}

template <class Arch>
void gemm_nt_impl(size_t m, size_t n, size_t k, float* c, size_t ldc, const float* a,
                  size_t lda, const float* b, size_t ldb, const float* bias, float alpha) {
  static_assert(kMR == 4, "row tail below handles 1..3 leftover rows");
  size_t i = 0;
  for (; i + kMR <= m; i += kMR) {
    nt_rows<Arch, kMR>(n, k, c + i * ldc, ldc, a + i * lda, lda, b, ldb, bias, alpha);
  }
  if (i == m) return;  // (and never form a + m * lda, past the end of A)
  float* ci = c + i * ldc;
  const float* ai = a + i * lda;
  switch (m - i) {
    case 3: nt_rows<Arch, 3>(n, k, ci, ldc, ai, lda, b, ldb, bias, alpha); break;
    case 2: nt_rows<Arch, 2>(n, k, ci, ldc, ai, lda, b, ldb, bias, alpha); break;
    default: nt_rows<Arch, 1>(n, k, ci, ldc, ai, lda, b, ldb, bias, alpha); break;
  }
}

// nn tile: MR rows x NV vectors (NV * W columns) of C, vectorized along n.
//   c(MR, NV*W) = a(MR, k) · b(k, NV*W) [+ bias(NV*W)]
// For each p: load NV vectors of B's row p, broadcast a(i, p), fma. Every
// output element is accumulated in k order, like the reference; on sse4_1
// (fma = mul + add) the result is bit-identical to it; with a real fma it
// differs by the skipped product roundings (unless the compiler contracted
// the reference's a * b + sum into an fma too, as g++ -O2 -mfma does).
template <class Arch, size_t MR, size_t NV>
inline void nn_tile(size_t k, float* c, size_t ldc, const float* a, size_t lda,
                    const float* b, size_t ldb, const float* bias) {
  using batch = xsimd::batch<float, Arch>;
  constexpr size_t W = batch::size;
  batch acc[MR * NV];
  unroll<MR * NV>([&](auto t) { acc[t] = batch(0.0f); });

  for (size_t p = 0; p < k; ++p) {
    batch bv[NV];
    unroll<NV>([&](auto v) { bv[v] = batch::load_unaligned(b + p * ldb + v * W); });
    unroll<MR>([&](auto i) {
      const batch av(a[i * lda + p]);
      unroll<NV>([&](auto v) { acc[i * NV + v] = xsimd::fma(av, bv[v], acc[i * NV + v]); });
    });
  }

  if (bias) {  // added after the sum, as in the reference
    unroll<NV>([&](auto v) {
      const batch bb = batch::load_unaligned(bias + v * W);
      unroll<MR>([&](auto i) { acc[i * NV + v] += bb; });
    });
  }
  unroll<MR>([&](auto i) {
    unroll<NV>([&](auto v) { acc[i * NV + v].store_unaligned(c + i * ldc + v * W); });
  });
}

// nn scalar tail: MR rows x `cols` (< W) columns, plain k-order dot products.
template <size_t MR>
inline void nn_tail_cols(size_t cols, size_t k, float* c, size_t ldc, const float* a,
                         size_t lda, const float* b, size_t ldb, const float* bias) {
  for (size_t i = 0; i < MR; ++i) {
    for (size_t j = 0; j < cols; ++j) {
      float sum = 0.0f;
      for (size_t p = 0; p < k; ++p) sum += a[i * lda + p] * b[p * ldb + j];
      if (bias) sum += bias[j];
      c[i * ldc + j] = sum;
    }
  }
}

// MR rows of C for gemm_nn: tiles of kNR vectors, one 1-vector tile, scalar columns.
template <class Arch, size_t MR>
inline void nn_rows(size_t n, size_t k, float* c, size_t ldc, const float* a, size_t lda,
                    const float* b, size_t ldb, const float* bias) {
  constexpr size_t W = xsimd::batch<float, Arch>::size;
  size_t j = 0;
  for (; j + kNR * W <= n; j += kNR * W) {
    nn_tile<Arch, MR, kNR>(k, c + j, ldc, a, lda, b + j, ldb, bias ? bias + j : nullptr);
  }
  for (; j + W <= n; j += W) {
    nn_tile<Arch, MR, 1>(k, c + j, ldc, a, lda, b + j, ldb, bias ? bias + j : nullptr);
  }
  if (j < n) nn_tail_cols<MR>(n - j, k, c + j, ldc, a, lda, b + j, ldb, bias ? bias + j : nullptr);
}

template <class Arch>
void gemm_nn_impl(size_t m, size_t n, size_t k, float* c, size_t ldc, const float* a,
                  size_t lda, const float* b, size_t ldb, const float* bias) {
  static_assert(kMR == 4, "row tail below handles 1..3 leftover rows");
  size_t i = 0;
  for (; i + kMR <= m; i += kMR) {
    nn_rows<Arch, kMR>(n, k, c + i * ldc, ldc, a + i * lda, lda, b, ldb, bias);
  }
  if (i == m) return;  // (and never form a + m * lda, past the end of A)
  float* ci = c + i * ldc;
  const float* ai = a + i * lda;
  switch (m - i) {
    case 3: nn_rows<Arch, 3>(n, k, ci, ldc, ai, lda, b, ldb, bias); break;
    case 2: nn_rows<Arch, 2>(n, k, ci, ldc, ai, lda, b, ldb, bias); break;
    default: nn_rows<Arch, 1>(n, k, ci, ldc, ai, lda, b, ldb, bias); break;
  }
}

}  // namespace

size_t f32_gemm_nn_col_tile() { return kNR * xsimd::batch<float, xsimd::default_arch>::size; }

void f32_gemm_nt(size_t m, size_t n, size_t k, float* c, size_t ldc,
                 const float* a, size_t lda, const float* b, size_t ldb,
                 const float* bias, float alpha) {
  assert(m == 0 || n == 0 || (lda >= k && ldb >= k && ldc >= n));
  gemm_nt_impl<xsimd::default_arch>(m, n, k, c, ldc, a, lda, b, ldb, bias, alpha);
}

void f32_gemm_nn(size_t m, size_t n, size_t k, float* c, size_t ldc,
                 const float* a, size_t lda, const float* b, size_t ldb,
                 const float* bias) {
  assert(m == 0 || n == 0 || (lda >= k && ldb >= n && ldc >= n));
  gemm_nn_impl<xsimd::default_arch>(m, n, k, c, ldc, a, lda, b, ldb, bias);
}

}  // namespace aw::kernels
