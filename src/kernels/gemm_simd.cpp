// xsimd versions of the gemm kernels in gemm.h, templated on the xsimd arch and
// instantiated for xsimd::default_arch (fma3<avx2> natively with -mavx2 -mfma,
// sse4_1 -> WASM SIMD128 in the wasm builds). Everything derives from
// batch::size (W = 8 or 4). Scalar twins: gemm_ref.cpp.
// One register micro-kernel (packed A, packed B) with the BLIS cache
// blocking around it; the packing routines; the entry points. The same
// source makes both wasm builds: the baseline (mul + add) and, compiled with
// -mrelaxed-simd, the relaxed-SIMD build (f32x4.relaxed_madd; see madd()).
#include "kernels/gemm.h"

#include <algorithm>
#include <cassert>
#include <type_traits>
#include <utility>

#include <smmintrin.h>
#include <xmmintrin.h>
#include <xsimd/xsimd.hpp>
#if defined(__wasm_relaxed_simd__)
#if __clang_major__ < 16
#error "the relaxed build needs em++ on clang-19 (docs/TOOLCHAIN.md, SIMD): older clangs emit a pre-standard f32x4.fma"
#endif
#include <wasm_simd128.h>
#endif

#include "core/tiering.h"
#include "kernels/convert.h"

namespace aw::kernels {
namespace {

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

// The micro-kernel's multiply-add, acc + a·b, in one of two instantiations
// chosen by the build flags:
// - compiled with -mrelaxed-simd (the relaxed wasm build, by clang-19, which
//   defines __wasm_relaxed_simd__), the 4-lane one is f32x4.relaxed_madd. The engine
//   lowers it to one fused multiply-add where the CPU has one (V8: vfmadd on
//   x64 with FMA3, fmla on ARM and Apple M) and to mul + add elsewhere; on
//   CPUs whose 128-bit adds share ports with the multiplies, FMA runs up to
//   1.6–1.8× the mul + add rate (docs/TOOLCHAIN.md, SIMD). A fused result
//   rounds once where mul + add rounds twice, so this build's products differ
//   from the references' in the last bits (tests compare within the
//   dot-product bound; gemm.h "Summation order" still holds: each element is
//   summed in k order, so thread counts and cache blocks change nothing);
// - otherwise xsimd::fma: on sse4.1, and so the baseline wasm build, a
//   multiply then an add (bit-identical to the references); natively with
//   -mfma a real FMA.
// Only this kernel uses it: it is where the flops are (the attention core's
// Q·Kᵀ and P·V run through it too, f32_gemm_pp).
template <class Arch>
inline xsimd::batch<float, Arch> madd(xsimd::batch<float, Arch> a, xsimd::batch<float, Arch> b,
                                      xsimd::batch<float, Arch> acc) {
#if defined(__wasm_relaxed_simd__)
  if constexpr (xsimd::batch<float, Arch>::size == 4) {
    // batch<float, sse4_1> holds an __m128, which is SIMD128's v128 (bit casts).
    const v128_t r = wasm_f32x4_relaxed_madd((v128_t)(__m128)a, (v128_t)(__m128)b, (v128_t)(__m128)acc);
    return xsimd::batch<float, Arch>((__m128)r);
  }
#endif
  return xsimd::fma(a, b, acc);
}

// ---- packed operands: micro-kernel and cache blocking (layouts in gemm.h) ----
//
// Micro-kernel: an MR × NR tile of C in MR · NV accumulators (NV = NR / W
// vectors per row: 2 for SIMD128, 1 for AVX2). Per k step: NV vector loads
// of the B panel, MR broadcast loads of the A panel, MR · NV multiply-adds.
// Both operands are packed, so one pointer walks each and every load has a
// constant offset: in wasm `v128.load32_splat offset=4i` and `v128.load
// offset=16v`, with no per-row address arithmetic (with A read in place, the
// four row addresses cost as many scalar instructions as the vector work and
// the kernel ran at ~58 % of the peak). On SIMD128 with MR = 4: 8
// accumulators + 2 B vectors + 1 broadcast + 1 product = 12 live vectors,
// inside the ~12 that V8 keeps in the 16 XMM registers without spilling
// (docs/TOOLCHAIN.md, SIMD).
//
// Cache blocking (the BLIS loops): k in blocks of KC = kGemmKC = 512 (B is
// packed that way: a KC × NR slice of a panel, 16 KB, stays in L1 while the
// MC rows of A pass over it); rows in blocks of kMC = 72 (the packed MC × KC
// block of A, 144 KB, stays in L2 while every panel passes over it). The
// KC × n block of B is one contiguous stream, read once per row block: 2·MC
// = 144 flops per float read, so even from L3 it keeps up with the
// multiply-adds. These fit the L1 (32 KB) and L2 (≥ 256 KB) of the x86 and
// ARM cores browsers run on, so the speed does not hinge on one machine's
// cache sizes. Measured on 1 MB L2 (bench/README.md, "GEMM blocking"): KC
// 256 → 512 and the block-contiguous B took M = 32, K = 1024, N = 4096 from
// 32 to 41 GFLOP/s; MC 144 was no faster than 72.
constexpr size_t kKC = kGemmKC;
constexpr size_t kMC = 18 * kGemmMR;

// Where a tile's accumulators start.
enum class Start { kZero, kLoad, kLoadScaled };

// One tile: C rows [0, rows) × columns [0, cols) (rows ≤ R, cols ≤ NR; the
// packed operands are zero-padded to whole tiles). R: the rows the registers
// hold, MR for every tile but the last of a row count that MR does not divide;
// A's panels are MR rows wide either way (its first R rows read).
template <class Arch, Start start, bool alpha_bias, size_t R = kGemmMR>
inline void packed_tile(size_t kc, const float* ap, const float* bp, float* c, size_t ldc, size_t rows,
                        size_t cols, const float* row_scale, float alpha, const float* bias) {
  using batch = xsimd::batch<float, Arch>;
  constexpr size_t W = batch::size;
  constexpr size_t MR = R;  // the tile's rows
  constexpr size_t NV = kGemmNR / W;
  static_assert(NV * W == kGemmNR, "a panel is a whole number of vectors");
  const bool full = rows == MR && cols == kGemmNR;
  alignas(Arch::alignment()) float tmp[MR * kGemmNR];  // partial tiles go through here
  batch acc[MR * NV];
  if constexpr (start == Start::kZero) {
    unroll<MR * NV>([&](auto t) { acc[t] = batch(0.0f); });
  } else {
    if (!full) {
      for (size_t i = 0; i < MR; ++i)
        for (size_t j = 0; j < kGemmNR; ++j) tmp[i * kGemmNR + j] = i < rows && j < cols ? c[i * ldc + j] : 0.0f;
    }
    unroll<MR>([&](auto i) {
      const float s = start == Start::kLoadScaled && i < rows ? row_scale[i] : 1.0f;
      unroll<NV>([&](auto v) {
        acc[i * NV + v] = full ? batch::load_unaligned(c + i * ldc + v * W) : batch::load_aligned(tmp + i * kGemmNR + v * W);
        if constexpr (start == Start::kLoadScaled) acc[i * NV + v] *= batch(s);
      });
    });
  }
  // (Not unrolled: unrolling by 2 or 4 let the compiler hoist loads of later
  // steps, V8 then spilled accumulators, and the kernel ran at half speed.)
  for (size_t p = 0; p < kc; ++p, ap += kGemmMR, bp += kGemmNR) {
    batch bv[NV];
    unroll<NV>([&](auto v) { bv[v] = batch::load_unaligned(bp + v * W); });
    unroll<MR>([&](auto i) {
      const batch av(ap[i]);
      unroll<NV>([&](auto v) { acc[i * NV + v] = madd<Arch>(av, bv[v], acc[i * NV + v]); });
    });
  }
  if constexpr (alpha_bias) {
    const batch va(alpha);
    unroll<MR * NV>([&](auto t) { acc[t] *= va; });
    if (bias) {
      alignas(Arch::alignment()) float bt[kGemmNR];
      for (size_t j = 0; j < kGemmNR; ++j) bt[j] = j < cols ? bias[j] : 0.0f;
      unroll<NV>([&](auto v) {
        const batch bb = batch::load_aligned(bt + v * W);
        unroll<MR>([&](auto i) { acc[i * NV + v] += bb; });
      });
    }
  }
  if (full) {
    unroll<MR>([&](auto i) { unroll<NV>([&](auto v) { acc[i * NV + v].store_unaligned(c + i * ldc + v * W); }); });
  } else {
    unroll<MR>([&](auto i) { unroll<NV>([&](auto v) { acc[i * NV + v].store_aligned(tmp + i * kGemmNR + v * W); }); });
    for (size_t i = 0; i < rows; ++i)
      for (size_t j = 0; j < cols; ++j) c[i * ldc + j] = tmp[i * kGemmNR + j];
  }
}

// C(m, n) over packed A and packed B slices of depth kc: ap (a_pstride
// floats between MR-row panels), bp (b_pstride floats between NR-column
// panels). Every panel, tiles within a panel.
template <class Arch, Start start, bool alpha_bias>
void packed_block(size_t m, size_t n, size_t kc, const float* ap, size_t a_pstride, const float* bp, size_t b_pstride,
                  float* c, size_t ldc, const float* row_scale, float alpha, const float* bias) {
  constexpr size_t MR = kGemmMR;
  const size_t panels = (n + kGemmNR - 1) / kGemmNR;
  // The last 1 or 2 rows of a row count that MR does not divide run in a 2-row
  // tile: half the multiply-adds of a 4-row one (a 30-token source is 7 tiles
  // of 4 and one of 2, not 8 of 4). Each element's sum is the same either way.
  const size_t whole = m / MR * MR, rest = m - whole;
  for (size_t jp = 0; jp < panels; ++jp) {
    const size_t j = jp * kGemmNR, cols = std::min(kGemmNR, n - j);
    for (size_t i = 0; i < m; i += MR) {
      const float* api = ap + i / MR * a_pstride;
      const float* rs = row_scale ? row_scale + i : nullptr;
      const float* bj = bias ? bias + j : nullptr;
      if (i == whole && rest <= 2)
        packed_tile<Arch, start, alpha_bias, 2>(kc, api, bp + jp * b_pstride, c + i * ldc + j, ldc, rest, cols, rs, alpha, bj);
      else
        packed_tile<Arch, start, alpha_bias>(kc, api, bp + jp * b_pstride, c + i * ldc + j, ldc, std::min(MR, m - i), cols,
                                             rs, alpha, bj);
    }
  }
}

template <class Arch, Start start0, bool alpha_bias>
void packed_block_k(bool first, bool last, size_t m, size_t n, size_t kc, const float* ap, size_t a_pstride,
                    const float* bp, size_t b_pstride, float* c, size_t ldc, const float* row_scale, float alpha,
                    const float* bias) {
  if (first) {
    if (last) packed_block<Arch, start0, alpha_bias>(m, n, kc, ap, a_pstride, bp, b_pstride, c, ldc, row_scale, alpha, bias);
    else packed_block<Arch, start0, false>(m, n, kc, ap, a_pstride, bp, b_pstride, c, ldc, row_scale, alpha, bias);
  } else {
    if (last) packed_block<Arch, Start::kLoad, alpha_bias>(m, n, kc, ap, a_pstride, bp, b_pstride, c, ldc, row_scale, alpha, bias);
    else packed_block<Arch, Start::kLoad, false>(m, n, kc, ap, a_pstride, bp, b_pstride, c, ldc, row_scale, alpha, bias);
  }
}

// Packs rows [0, m) of A(·, lda), depth kc, times alpha, into MR-row panels
// of depth kc: ap[(i / MR) · kc · MR + p · MR + i % MR], rows past m zero.
template <class Arch>
void pack_a_block(size_t m, size_t kc, const float* a, size_t lda, float* ap, float alpha = 1.0f) {
  constexpr size_t MR = kGemmMR;
  for (size_t i0 = 0; i0 < m; i0 += MR) {
    float* dst = ap + i0 / MR * kc * MR;
    const size_t rows = std::min(MR, m - i0);
    if constexpr (xsimd::batch<float, Arch>::size == 4 && MR == 4) {
      if (rows == MR) {
        const __m128 va = _mm_set1_ps(alpha);
        size_t p = 0;
        for (; p + 4 <= kc; p += 4) {  // 4 × 4 transposes
          __m128 t[4];
          for (size_t r = 0; r < 4; ++r) t[r] = _mm_loadu_ps(a + (i0 + r) * lda + p);
          _MM_TRANSPOSE4_PS(t[0], t[1], t[2], t[3]);
          for (size_t q = 0; q < 4; ++q) _mm_storeu_ps(dst + (p + q) * MR, alpha == 1.0f ? t[q] : _mm_mul_ps(t[q], va));
        }
        for (; p < kc; ++p)
          for (size_t r = 0; r < MR; ++r) dst[p * MR + r] = alpha * a[(i0 + r) * lda + p];
        continue;
      }
    }
    for (size_t p = 0; p < kc; ++p)
      for (size_t r = 0; r < MR; ++r) dst[p * MR + r] = r < rows ? alpha * a[(i0 + r) * lda + p] : 0.0f;
  }
}

// One row block of one k block: packs rows [0, rows ≤ kMC) of A, depth kc,
// into apack (kMC × kKC floats), then runs every panel of the block of B.
// The unit a first call tiers up on (core/tiering.h): entered ceil(m / kMC)
// times per k block.
template <class Arch>
AW_TIER_ENTRY void rows_block(bool first, bool last, size_t rows, size_t n, size_t kc, const float* a, size_t lda,
                              const float* block, float* c, size_t ldc, float alpha, const float* bias, float* apack) {
  pack_a_block<Arch>(rows, kc, a, lda, apack);
  packed_block_k<Arch, Start::kZero, true>(first, last, rows, n, kc, apack, kc * kGemmMR, block, kc * kGemmNR, c,
                                           ldc, nullptr, alpha, bias);
}

// The BLIS loops over k blocks and row blocks (rows_block), over the panels
// [jp0, jp0 + ceil(n / NR)) of a B packed with bp_cols columns. The first k
// block starts from zero; later blocks load C back (so each element's sum
// stays in k order); alpha/bias finish the last k block.
template <class Arch>
void packed_impl(size_t m, size_t n, size_t k, float* c, size_t ldc, const float* a, size_t lda, const float* bp,
                 size_t bp_cols, size_t jp0, float alpha, const float* bias) {
  if (m == 0 || n == 0) return;
  // The packed A block, 144 KB on the stack of the calling thread: no
  // allocation in a kernel, and each thread has its own. (Not a thread_local
  // array: in the pthreads .wasm that is a 144 KB all-zero TLS data segment,
  // which the relaxed build's wasm-opt does not shrink; docs/TOOLCHAIN.md,
  // SIMD.) Stacks are 5 MB on the wasm main thread and 2 MB on wasm pthreads
  // (Emscripten 3.1.6 defaults), 8 MB natively.
  alignas(16) float apack[kMC * kKC];
  const size_t np = f32_gemm_packed_cols(bp_cols);
  const auto rows_block_fn = TierEntry<&rows_block<Arch>>();
  for (size_t p0 = 0;; p0 += kKC) {
    const size_t kc = std::min(kKC, k - p0);
    const bool first = p0 == 0, last = p0 + kc == k;
    const float* block = bp + p0 * np + jp0 * kc * kGemmNR;  // this k block's first panel of the window
    for (size_t i0 = 0; i0 < m; i0 += kMC)
      rows_block_fn(first, last, std::min(kMC, m - i0), n, kc, a + i0 * lda + p0, lda, block, c + i0 * ldc, ldc, alpha,
                    bias, apack);
    if (last) break;
  }
}

// ---- 16-bit floats widened to float32 (gemm.h "B stored as 16-bit floats") ----
//
// Widening is exact, so the float32 kernels run unchanged on the widened
// values: the GEMV below widens each k step's 8 values in registers, the GEMM
// (after it) a group of panels of a k block into a stack buffer that then
// plays the part of the packed float32 block.

#if defined(__SSE4_1__) || defined(__wasm_simd128__)
// 4 binary16 values (zero-extended in 32-bit lanes) → float32, exact: the
// exponent and mantissa shifted into place and scaled by 2^112 (normal and
// subnormal inputs alike: a product by a power of two), ±inf and NaN rebuilt
// with an all-ones exponent, then the sign.
inline __m128 f16x4_to_f32(__m128i h) {
  const __m128i sign = _mm_slli_epi32(_mm_and_si128(h, _mm_set1_epi32(0x8000)), 16);
  const __m128i em = _mm_and_si128(h, _mm_set1_epi32(0x7FFF));
  const __m128i shifted = _mm_slli_epi32(em, 13);
  const __m128 finite = _mm_mul_ps(_mm_castsi128_ps(shifted), _mm_castsi128_ps(_mm_set1_epi32(0x77800000)));  // × 2^112
  const __m128i special = _mm_or_si128(shifted, _mm_set1_epi32(0x7F800000));
  const __m128i is_special = _mm_cmpgt_epi32(em, _mm_set1_epi32(0x7BFF));
  return _mm_castsi128_ps(_mm_or_si128(_mm_blendv_epi8(_mm_castps_si128(finite), special, is_special), sign));
}

// 8 stored values (one panel row, columns 0, 4, 1, 5, … : gemm.h h16_slot) → two float32 vectors, columns
// 0–3 from the low halves of the 32-bit lanes, 4–7 from the high halves: a shift and a mask, no shuffle.
template <Half H>
inline void widen8_sse(const uint16_t* src, __m128* lo, __m128* hi) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
  if constexpr (H == Half::kBF16) {  // bf16 is the top half of a float32
    *lo = _mm_castsi128_ps(_mm_slli_epi32(v, 16));
    *hi = _mm_castsi128_ps(_mm_and_si128(v, _mm_set1_epi32(int(0xFFFF0000u))));
  } else {
    *lo = f16x4_to_f32(_mm_and_si128(v, _mm_set1_epi32(0xFFFF)));
    *hi = f16x4_to_f32(_mm_srli_epi32(v, 16));
  }
}
#endif

template <Half H>
inline float widen1(uint16_t v) { return H == Half::kBF16 ? bf16_to_f32(v) : f16_to_f32(v); }

// One panel row (NR stored values) as NV batches.
template <class Arch, Half H>
inline void widen_row(const uint16_t* src, xsimd::batch<float, Arch>* out) {
  using batch = xsimd::batch<float, Arch>;
  constexpr size_t W = batch::size;
#if defined(__SSE4_1__) || defined(__wasm_simd128__)
  if constexpr (W == 4 && kGemmNR == 8) {
    __m128 lo, hi;
    widen8_sse<H>(src, &lo, &hi);
    out[0] = batch(lo);
    out[1] = batch(hi);
    return;
  }
#endif
  alignas(Arch::alignment()) float tmp[kGemmNR];
  for (size_t j = 0; j < kGemmNR; ++j) tmp[j] = widen1<H>(src[h16_slot(j)]);
  for (size_t v = 0; v < kGemmNR / W; ++v) out[v] = batch::load_aligned(tmp + v * W);
}

// ---- M = 1: the matrix-vector product (a decoding step's projections) ----
//
// One row of A against packed B: each panel's NR columns in NV accumulators,
// k in order, each B float read once and used once, so B streams through the
// core — the kernel is bound by memory bandwidth, not by the multiply-adds the
// micro-kernel would spend on MR − 1 zero rows. Float32 panels run two at a
// time, far apart in the window (gemv_block says why: neighbours are 16 KB
// apart and read slowly); a 16-bit stream is a panel pair already, four
// accumulators. More than two panels would overflow x86's 16 SIMD registers in
// V8. Every element is the micro-kernel's: acc = madd(a[k], b[k], acc) in k
// order from 0, C loaded back between k blocks, alpha then bias on the last
// one, so C(1, n) is bit-identical to the GEMM's row (gemm.h, "Summation
// order") whichever panel it is paired with.

// B's panel row (NR values) as NV float batches: loaded, or widened from 16-bit floats (exact: the same
// madd then runs on the same values, so a stored-half B gives the float32 GEMV's bits).
template <class Arch, Half H>
inline void load_b_row(const float* row, xsimd::batch<float, Arch>* out) {
  using batch = xsimd::batch<float, Arch>;
  unroll<kGemmNR / batch::size>([&](auto v) { out[v] = batch::load_unaligned(row + v * batch::size); });
}
template <class Arch, Half H>
inline void load_b_row(const uint16_t* row, xsimd::batch<float, Arch>* out) {
  widen_row<Arch, H>(row, out);
}

// The columns one stream of B holds: a panel of float32, a panel pair of 16-bit values (gemm.h).
template <class T>
constexpr size_t kStreamCols = std::is_same_v<T, float> ? kGemmNR : kH16Cols;

// One stream (a panel, or a pair of 16-bit panels) of one k block (bp: its kc rows of kStreamCols<T> values,
// float32 or H) into c (its `cols` <= kStreamCols<T> columns).
template <class Arch, Half H, class T>
inline void gemv_panel(bool first, bool last, size_t kc, const float* a, const T* bp, float* c, size_t cols,
                       float alpha, const float* bias) {
  using batch = xsimd::batch<float, Arch>;
  constexpr size_t W = batch::size, S = kStreamCols<T>;
  constexpr size_t NV = S / W, PV = kGemmNR / W;  // accumulators; batches per panel
  alignas(Arch::alignment()) float tmp[S];
  batch acc[NV];
  if (first) {
    unroll<NV>([&](auto v) { acc[v] = batch(0.0f); });
  } else {
    for (size_t j = 0; j < S; ++j) tmp[j] = j < cols ? c[j] : 0.0f;
    unroll<NV>([&](auto v) { acc[v] = batch::load_aligned(tmp + v * W); });
  }
  for (size_t p = 0; p < kc; ++p) {
    const batch av(a[p]);
    batch bv[NV];
    unroll<S / kGemmNR>([&](auto q) { load_b_row<Arch, H>(bp + p * S + q * kGemmNR, bv + q * PV); });
    unroll<NV>([&](auto v) { acc[v] = madd<Arch>(av, bv[v], acc[v]); });
  }
  if (last) {
    const batch va(alpha);
    unroll<NV>([&](auto v) { acc[v] *= va; });
    if (bias) {
      for (size_t j = 0; j < S; ++j) tmp[j] = j < cols ? bias[j] : 0.0f;
      unroll<NV>([&](auto v) { acc[v] += batch::load_aligned(tmp + v * W); });
    }
  }
  unroll<NV>([&](auto v) { acc[v].store_aligned(tmp + v * W); });
  for (size_t j = 0; j < cols; ++j) c[j] = tmp[j];
}

// Two whole float32 panels of one k block at once (b0, b1: their kc rows; c0, c1 and bias0, bias1: their 8
// columns), each column as gemv_panel computes it: the same multiply-adds in the same order. Four chains of
// multiply-adds instead of two. With relaxed SIMD's fused multiply-add a column's chain waits on the FMA's latency:
// one panel's two chains read 24.7–25.8 GB/s where four read 27.6–29.5 (Zen 5, the shapes of a Marian decoding
// step, weights streamed from memory, A/B in one process; 1.04–1.10× in a slower spell of the machine). The
// baseline build's multiply then add, whose chain waits on the add alone, keeps one panel at a time: pairs there
// ran 0.89–0.98× in the slow spell. Hence kGemvPairs.
#if defined(__wasm_relaxed_simd__)
constexpr bool kGemvPairs = true;
#else
constexpr bool kGemvPairs = false;
#endif
template <class Arch>
inline void gemv_panel_pair(bool first, bool last, size_t kc, const float* a, const float* b0, const float* b1,
                            float* c0, float* c1, float alpha, const float* bias0, const float* bias1) {
  using batch = xsimd::batch<float, Arch>;
  constexpr size_t W = batch::size, NV = kGemmNR / W;
  static_assert(NV == 2, "a panel is two vectors");
  batch acc[4];
  if (first) {
    unroll<4>([&](auto v) { acc[v] = batch(0.0f); });
  } else {
    unroll<4>([&](auto v) { acc[v] = batch::load_unaligned((v < 2 ? c0 : c1) + v % 2 * W); });
  }
#pragma clang loop unroll(disable)
  for (size_t p = 0; p < kc; ++p) {
    const batch av(a[p]);
    unroll<4>([&](auto v) { acc[v] = madd<Arch>(av, batch::load_unaligned((v < 2 ? b0 : b1) + p * kGemmNR + v % 2 * W), acc[v]); });
  }
  if (last) {
    const batch va(alpha);
    unroll<4>([&](auto v) { acc[v] *= va; });
    if (bias0) unroll<4>([&](auto v) { acc[v] += batch::load_unaligned((v < 2 ? bias0 : bias1) + v % 2 * W); });
  }
  unroll<4>([&](auto v) { acc[v].store_unaligned((v < 2 ? c0 : c1) + v % 2 * W); });
}

// One k block, every stream of the window. The unit a first call tiers up on (core/tiering.h). Float32 panels
// go in pairs (gemv_panel_pair), panel j beside panel j + half of the window's whole panels: two read streams
// far apart. Neighbours, 16 KB apart (a panel of a k block), read 14–16 GB/s in every shape tried, the
// second stream skewed by 256 bytes or not: two streams that close measured 40–50 % slower from memory on
// Zen 5, as before (bench/lm.mjs).
template <class Arch, Half H, class T>
AW_TIER_ENTRY void gemv_block(bool first, bool last, size_t n, size_t kc, const float* a, const T* block,
                              float* c, float alpha, const float* bias) {
  constexpr size_t S = kStreamCols<T>;
  const size_t streams = (n + S - 1) / S, pstride = kc * S;
  if constexpr (std::is_same_v<T, float> && kGemvPairs) {
    // Pairs (js, js + half) of the whole panels, then one pair of what is left: the last whole panel of an odd
    // count and the partial one, or either with itself, their columns through zero-padded copies (the packed
    // panels are zero-padded to whole panels already).
    const size_t half = n / S / 2, left = streams - 2 * half;
    alignas(16) float tc[2 * S], tb[2 * S];
    for (size_t q = 0; q < half + (left > 0); ++q) {
      const bool rest = q == half;
      size_t j[2] = {q * S, (q + half) * S};
      if (rest) {
        j[0] = 2 * half * S;
        j[1] = left > 1 ? j[0] + S : j[0];
        for (size_t i = 0; i < 2 * S; ++i) {
          const size_t col = j[i / S] + i % S;
          tc[i] = !first && col < n ? c[col] : 0.0f;
          tb[i] = bias && col < n ? bias[col] : 0.0f;
        }
      }
      gemv_panel_pair<Arch>(first, last, kc, a, block + j[0] / S * pstride, block + j[1] / S * pstride,
                            rest ? tc : c + j[0], rest ? tc + S : c + j[1], alpha,
                            !bias ? nullptr : rest ? tb : bias + j[0], !bias ? nullptr : rest ? tb + S : bias + j[1]);
      if (rest)
        for (size_t i = 0; i < 2 * S; ++i)
          if (j[i / S] + i % S < n) c[j[i / S] + i % S] = tc[i];
    }
  } else {
    for (size_t js = 0; js < streams; ++js) {
      const size_t j = js * S;
      gemv_panel<Arch, H>(first, last, kc, a, block + js * pstride, c + j, std::min(S, n - j), alpha,
                          bias ? bias + j : nullptr);
    }
  }
}

// H: the halves' format when T is uint16_t (ignored for float). j0: the window's first column (a multiple of
// the stream's columns).
template <class Arch, Half H, class T>
void gemv_impl(size_t n, size_t k, float* c, const float* a, const T* bp, size_t bp_cols, size_t j0, float alpha,
               const float* bias) {
  if (n == 0) return;
  const size_t np = std::is_same_v<T, float> ? f32_gemm_packed_cols(bp_cols) : h16_packed_cols(bp_cols);
  const auto block_fn = TierEntry<&gemv_block<Arch, H, T>>();
  for (size_t p0 = 0;; p0 += kKC) {
    const size_t kc = std::min(kKC, k - p0);
    block_fn(p0 == 0, p0 + kc == k, n, kc, a + p0, bp + p0 * np + j0 * kc, c, alpha, bias);
    if (p0 + kc == k) break;
  }
}

// ---- the GEMM with B stored as 16-bit floats ----

// `pairs` panel pairs of a k block of depth kc → the float32 layout of their panels (gemm.h h16_widen).
template <class Arch, Half H>
void widen_impl(size_t kc, size_t pairs, const uint16_t* src, float* dst) {
  using batch = xsimd::batch<float, Arch>;
  constexpr size_t W = batch::size, NV = kGemmNR / W;
  for (size_t q = 0; q < pairs; ++q)
    for (size_t half = 0; half < 2; ++half) {
      const uint16_t* s = src + q * kc * kH16Cols + half * kGemmNR;
      float* d = dst + (2 * q + half) * kc * kGemmNR;
      for (size_t p = 0; p < kc; ++p) {
        batch b[NV];
        widen_row<Arch, H>(s + p * kH16Cols, b);
        unroll<NV>([&](auto v) { b[v].store_unaligned(d + p * kGemmNR + v * W); });
      }
    }
}

// Panels of a k block widened at once: kWidenPanels · KC · NR floats (128 KB) on the stack, beside the packed
// A block; they stay in L2 while the row block's tiles pass over them. Whole pairs: even.
constexpr size_t kWidenPanels = 8;
static_assert(kWidenPanels % 2 == 0, "the GEMM widens whole panel pairs");

// One row block of one k block with B stored as H: A packed once, then each group of panels widened and run
// on the micro-kernel. The unit a first call tiers up on.
template <class Arch, Half H>
AW_TIER_ENTRY void rows_block_h16(bool first, bool last, size_t rows, size_t n, size_t kc, const float* a, size_t lda,
                                  const uint16_t* block, float* c, size_t ldc, float alpha, const float* bias,
                                  float* apack, float* wide) {
  pack_a_block<Arch>(rows, kc, a, lda, apack);
  const size_t panels = (n + kGemmNR - 1) / kGemmNR, pstride = kc * kGemmNR;
  for (size_t g0 = 0; g0 < panels; g0 += kWidenPanels) {
    const size_t gp = std::min(kWidenPanels, panels - g0), j = g0 * kGemmNR;
    widen_impl<Arch, H>(kc, (gp + 1) / 2, block + g0 * pstride, wide);  // pair g0 / 2 starts at g0 · kc · NR
    packed_block_k<Arch, Start::kZero, true>(first, last, rows, std::min(gp * kGemmNR, n - j), kc, apack,
                                             kc * kGemmMR, wide, pstride, c + j, ldc, nullptr, alpha,
                                             bias ? bias + j : nullptr);
  }
}

template <class Arch, Half H>
void packed_h16_impl(size_t m, size_t n, size_t k, float* c, size_t ldc, const float* a, size_t lda,
                     const uint16_t* bp, size_t bp_cols, size_t jp0, float alpha, const float* bias) {
  if (m == 0 || n == 0) return;
  alignas(16) float apack[kMC * kKC];
  alignas(16) float wide[kWidenPanels * kKC * kGemmNR];
  const size_t np = h16_packed_cols(bp_cols);
  const auto rows_block_fn = TierEntry<&rows_block_h16<Arch, H>>();
  for (size_t p0 = 0;; p0 += kKC) {
    const size_t kc = std::min(kKC, k - p0);
    const bool first = p0 == 0, last = p0 + kc == k;
    const uint16_t* block = bp + p0 * np + jp0 * kc * kGemmNR;
    for (size_t i0 = 0; i0 < m; i0 += kMC)
      rows_block_fn(first, last, std::min(kMC, m - i0), n, kc, a + i0 * lda + p0, lda, block, c + i0 * ldc, ldc,
                    alpha, bias, apack, wide);
    if (last) break;
  }
}

// packed_impl with A already packed (MR-row panels of depth k), B packed with
// depth bk >= k (bk = k when k > KC).
template <class Arch, Start start0>
void pp_impl(size_t m, size_t n, size_t k, float* c, size_t ldc, const float* ap, const float* bp, size_t bk,
             const float* row_scale) {
  if (m == 0 || n == 0) return;
  const size_t np = f32_gemm_packed_cols(n);
  for (size_t p0 = 0;; p0 += kKC) {
    const size_t kc = std::min(kKC, k - p0);
    const bool first = p0 == 0, last = p0 + kc == k;
    const size_t bkc = std::min(kKC, bk - p0);  // the depth of this block as packed
    packed_block_k<Arch, start0, false>(first, last, m, n, kc, ap + p0 * kGemmMR, k * kGemmMR, bp + p0 * np,
                                        bkc * kGemmNR, c, ldc, row_scale, 1.0f, nullptr);
    if (last) break;
  }
}

// Packing into the layout of gemm.h: k blocks of KC, panels of NR columns.
// pack_panel_nt: one panel's kc rows (p0 … p0 + kc − 1) from B(n, k) rows.
template <class Arch>
void pack_panel_nt(size_t kc, size_t cols, const float* b, size_t ldb, float* dst) {
  // B(n, k) rows become panel columns: a transpose. With 4-lane vectors
  // (sse4.1, so SIMD128) whole 4 × 4 blocks go through _MM_TRANSPOSE4_PS
  // (unpack/move shuffles, which Emscripten maps to single i8x16.shuffles);
  // the rest, and other widths, is scalar.
  using batch = xsimd::batch<float, Arch>;
  size_t p = 0;
  if constexpr (batch::size == 4) {
    if (cols == kGemmNR) {
      for (; p + 4 <= kc; p += 4) {
        for (size_t h = 0; h < 2; ++h) {  // panel columns 4h … 4h + 3
          __m128 t[4];
          for (size_t c = 0; c < 4; ++c) t[c] = _mm_loadu_ps(b + (4 * h + c) * ldb + p);
          _MM_TRANSPOSE4_PS(t[0], t[1], t[2], t[3]);
          for (size_t q = 0; q < 4; ++q) _mm_storeu_ps(dst + (p + q) * kGemmNR + 4 * h, t[q]);
        }
      }
    }
  }
  for (; p < kc; ++p)
    for (size_t c = 0; c < kGemmNR; ++c) dst[p * kGemmNR + c] = c < cols ? b[c * ldb + p] : 0.0f;
}

template <class Arch>
void pack_nt_impl(size_t n, size_t k, const float* b, size_t ldb, float* bp) {
  const size_t np = f32_gemm_packed_cols(n);
  for (size_t p0 = 0; p0 < k; p0 += kKC) {
    const size_t kc = std::min(kKC, k - p0);
    for (size_t j0 = 0; j0 < np; j0 += kGemmNR)  // (j0 < n: np rounds n up by less than NR)
      pack_panel_nt<Arch>(kc, std::min(kGemmNR, n - j0), b + j0 * ldb + p0, ldb, bp + p0 * np + j0 * kc);
  }
}

template <class Arch>
void pack_nn_impl(size_t n, size_t k, const float* b, size_t ldb, float* bp) {
  using batch = xsimd::batch<float, Arch>;
  constexpr size_t W = batch::size;
  const size_t np = f32_gemm_packed_cols(n);
  for (size_t p0 = 0; p0 < k; p0 += kKC) {
    const size_t kc = std::min(kKC, k - p0);
    for (size_t j0 = 0; j0 < np; j0 += kGemmNR) {
      float* dst = bp + p0 * np + j0 * kc;
      const size_t cols = std::min(kGemmNR, n - j0);
      const float* src = b + p0 * ldb + j0;
      if (cols == kGemmNR) {
        for (size_t p = 0; p < kc; ++p)
          for (size_t v = 0; v < kGemmNR / W; ++v)
            batch::load_unaligned(src + p * ldb + v * W).store_unaligned(dst + p * kGemmNR + v * W);
      } else {
        for (size_t p = 0; p < kc; ++p)
          for (size_t c = 0; c < kGemmNR; ++c) dst[p * kGemmNR + c] = c < cols ? src[p * ldb + c] : 0.0f;
      }
    }
  }
}

}  // namespace

bool f32_gemm_relaxed_madd() {
#if defined(__wasm_relaxed_simd__)
  return true;
#else
  return false;
#endif
}

void f32_gemm_pack_nt(size_t n, size_t k, const float* b, size_t ldb, float* bp) {
  pack_nt_impl<xsimd::default_arch>(n, k, b, ldb, bp);
}

void f32_gemm_pack_nn(size_t n, size_t k, const float* b, size_t ldb, float* bp) {
  pack_nn_impl<xsimd::default_arch>(n, k, b, ldb, bp);
}

void f32_gemm_packed(size_t m, size_t n, size_t k, float* c, size_t ldc, const float* a, size_t lda,
                     const float* bp, const float* bias, float alpha) {
  assert(m == 0 || n == 0 || (lda >= k && ldc >= n));
  packed_impl<xsimd::default_arch>(m, n, k, c, ldc, a, lda, bp, n, 0, alpha, bias);
}

void f32_gemm_packed_window(size_t m, size_t n, size_t k, float* c, size_t ldc, const float* a, size_t lda,
                            const float* bp, size_t bp_cols, size_t j0, const float* bias, float alpha) {
  assert(j0 % kGemmNR == 0 && j0 + n <= bp_cols);
  assert(m == 0 || n == 0 || (lda >= k && ldc >= n));
  packed_impl<xsimd::default_arch>(m, n, k, c, ldc, a, lda, bp, bp_cols, j0 / kGemmNR, alpha, bias);
}

void f32_gemv_packed_window(size_t n, size_t k, float* c, const float* a, const float* bp, size_t bp_cols, size_t j0,
                            const float* bias, float alpha) {
  assert(j0 % kGemmNR == 0 && j0 + n <= bp_cols);
  gemv_impl<xsimd::default_arch, Half::kBF16>(n, k, c, a, bp, bp_cols, j0, alpha, bias);
}

void h16_widen(Half h, size_t kc, size_t pairs, const uint16_t* src, float* dst) {
  if (h == Half::kBF16) widen_impl<xsimd::default_arch, Half::kBF16>(kc, pairs, src, dst);
  else widen_impl<xsimd::default_arch, Half::kF16>(kc, pairs, src, dst);
}

void h16_gemm_packed_window(Half h, size_t m, size_t n, size_t k, float* c, size_t ldc, const float* a, size_t lda,
                            const uint16_t* bp, size_t bp_cols, size_t j0, const float* bias, float alpha) {
  assert(j0 % kH16Cols == 0 && j0 + n <= bp_cols);
  assert(m == 0 || n == 0 || (lda >= k && ldc >= n));
  using A = xsimd::default_arch;
  if (h == Half::kBF16) packed_h16_impl<A, Half::kBF16>(m, n, k, c, ldc, a, lda, bp, bp_cols, j0 / kGemmNR, alpha, bias);
  else packed_h16_impl<A, Half::kF16>(m, n, k, c, ldc, a, lda, bp, bp_cols, j0 / kGemmNR, alpha, bias);
}

void h16_gemv_packed_window(Half h, size_t n, size_t k, float* c, const float* a, const uint16_t* bp, size_t bp_cols,
                            size_t j0, const float* bias, float alpha) {
  assert(j0 % kH16Cols == 0 && j0 + n <= bp_cols);
  using A = xsimd::default_arch;
  if (h == Half::kBF16) gemv_impl<A, Half::kBF16>(n, k, c, a, bp, bp_cols, j0, alpha, bias);
  else gemv_impl<A, Half::kF16>(n, k, c, a, bp, bp_cols, j0, alpha, bias);
}

void f32_gemm_pack_a(size_t m, size_t k, const float* a, size_t lda, float alpha, float* ap) {
  pack_a_block<xsimd::default_arch>(m, k, a, lda, ap, alpha);
}

void f32_gemm_pp(size_t m, size_t n, size_t k, float* c, size_t ldc, const float* ap, const float* bp, size_t bk,
                 const float* row_scale, bool accumulate) {
  assert(m == 0 || n == 0 || ldc >= n);
  assert(bk >= k && (k <= kKC || bk == k));
  using A = xsimd::default_arch;
  if (!accumulate) pp_impl<A, Start::kZero>(m, n, k, c, ldc, ap, bp, bk, nullptr);
  else if (row_scale) pp_impl<A, Start::kLoadScaled>(m, n, k, c, ldc, ap, bp, bk, row_scale);
  else pp_impl<A, Start::kLoad>(m, n, k, c, ldc, ap, bp, bk, nullptr);
}

}  // namespace aw::kernels
