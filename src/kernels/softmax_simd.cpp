// xsimd versions of the softmax kernels (softmax.h), templated on the xsimd
// arch and instantiated for xsimd::default_arch (W = batch::size = 8 or 4).
// Scalar twins: softmax_ref.cpp.
//   f32_softmax_online: per row the new maximum, then exp + sum of MR rows
//     together, written transposed into the packed-A layout.
//   f32_softmax_finish: exp(x − m) · (1 / l), the tail through the same
//     vector exp padded with -inf.
//   f32_log_softmax: a row's maximum, its exps by the same vector exp summed
//     lane by lane in double, x − lse in double.
// Deviations from the references, all within the test tolerances: the
// polynomial exp_nonpos instead of libm exp, lane-wise summation order,
// multiply by 1/sum.
#include "kernels/softmax.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include <xmmintrin.h>
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#endif
#include <xsimd/xsimd.hpp>

#include "kernels/exp_simd.h"

namespace aw::kernels {
namespace {

template <class F>
inline void unroll4(F&& f) {
  f(size_t(0)); f(size_t(1)); f(size_t(2)); f(size_t(3));
}

// The online update (softmax.h) of rows [0, rows), writing p packed.
template <class Arch>
void softmax_online_impl(size_t rows, size_t n, const float* s, size_t lds, float* m, float* l, float* alpha,
                         float* p) {
  using batch = xsimd::batch<float, Arch>;
  constexpr size_t W = batch::size;
  constexpr size_t MR = kGemmMR;
  static_assert(MR <= W, "one vector holds the alphas of MR rows");
  const float neg_inf = -std::numeric_limits<float>::infinity();
  const size_t padded = (rows + MR - 1) / MR * MR;
  alignas(Arch::alignment()) float lanes[W];

  // Pass 1 per row: the new maximum (NaN noted: it must poison l even when
  // every other score is -inf, see softmax.h), alpha, and m.
  float mnew[MR];
  for (size_t i0 = 0; i0 < padded; i0 += MR) {
    const size_t rs = rows > i0 ? std::min(MR, rows - i0) : 0;
    for (size_t r = 0; r < MR; ++r) {
      const size_t i = i0 + r;
      if (r >= rs) { mnew[r] = neg_inf; continue; }  // padding rows: p = 0
      const float* row = s + i * lds;
      batch vmax(neg_inf);
      size_t j = 0;
      for (; j + W <= n; j += W) vmax = fast_max(vmax, batch::load_unaligned(row + j));
      vmax.store_aligned(lanes);
      float mx = m[i];
      for (size_t t = 0; t < W; ++t) mx = lanes[t] > mx ? lanes[t] : mx;
      for (; j < n; ++j) mx = row[j] > mx ? row[j] : mx;
      if (mx == neg_inf) {
        bool nan = false;
        for (size_t t = 0; t < n; ++t) nan |= std::isnan(row[t]);
        if (nan) l[i] = std::numeric_limits<float>::quiet_NaN();
      }
      mnew[r] = mx;
    }
    // alpha = exp(m - m') for the MR rows in one vector exp (a libm exp per
    // row and chunk cost ~0.5 ns per score); 1 where m' = -inf.
    for (size_t t = 0; t < W; ++t)
      lanes[t] = t < rs && mnew[t] != neg_inf ? m[i0 + t] - mnew[t] : 0.0f;
    exp_nonpos(batch::load_aligned(lanes)).store_aligned(lanes);
    for (size_t r = 0; r < rs; ++r) alpha[i0 + r] = lanes[r];
    // Pass 2 over the MR rows together: p = exp(s - m'), row sums, p stored
    // packed. With 4-lane vectors and MR = 4 (the SIMD128 build) four rows'
    // vectors are transposed so that each store writes one key's MR values;
    // otherwise each row goes through `lanes` and is scattered.
    float* pp = p + i0 * n;  // this panel: n · MR floats
    float sums[MR];
    if constexpr (W == 4 && MR == 4) {
      batch acc[MR], vm[MR];
      for (size_t r = 0; r < MR; ++r) {
        acc[r] = batch(0.0f);
        vm[r] = batch(mnew[r]);
      }
      size_t j = 0;
      bool live = rs == MR;
      for (size_t r = 0; r < MR; ++r) live = live && mnew[r] != neg_inf;
      if (live) {  // the common case: four rows, each with a live score
        const float* row0 = s + i0 * lds;
        for (; j + 4 <= n; j += 4) {
          __m128 e[4];
          unroll4([&](size_t r) {
            const batch ev = exp_nonpos(batch::load_unaligned(row0 + r * lds + j) - vm[r]);
            acc[r] += ev;
            e[r] = ev;
          });
          _MM_TRANSPOSE4_PS(e[0], e[1], e[2], e[3]);
          for (size_t q = 0; q < 4; ++q) _mm_storeu_ps(pp + (j + q) * MR, e[q]);
        }
      } else {
        for (; j + 4 <= n; j += 4) {
          __m128 e[4];
          for (size_t r = 0; r < MR; ++r) {
            // Padding rows and all -inf rows have m' = -inf: give exp(-inf) = 0.
            const batch x = r < rs && mnew[r] != neg_inf ? batch::load_unaligned(s + (i0 + r) * lds + j) - vm[r] : batch(neg_inf);
            const batch ev = exp_nonpos(x);
            acc[r] += ev;
            e[r] = ev;
          }
          _MM_TRANSPOSE4_PS(e[0], e[1], e[2], e[3]);
          for (size_t q = 0; q < 4; ++q) _mm_storeu_ps(pp + (j + q) * MR, e[q]);
        }
      }
      for (size_t r = 0; r < MR; ++r) sums[r] = xsimd::hadd(acc[r]);
      for (; j < n; ++j)
        for (size_t r = 0; r < MR; ++r) {
          float ev = 0.0f;
          if (r < rs && mnew[r] != neg_inf) {
            for (size_t t = 0; t < W; ++t) lanes[t] = t == 0 ? s[(i0 + r) * lds + j] - mnew[r] : neg_inf;
            exp_nonpos(batch::load_aligned(lanes)).store_aligned(lanes);
            ev = lanes[0];
          }
          pp[j * MR + r] = ev;
          sums[r] += ev;
        }
    } else {
      for (size_t r = 0; r < MR; ++r) {
        sums[r] = 0.0f;
        const bool live = r < rs && mnew[r] != neg_inf;
        const float* row = s + (i0 + r) * lds;
        for (size_t j = 0; j < n; j += W) {
          for (size_t t = 0; t < W; ++t) lanes[t] = live && j + t < n ? row[j + t] - mnew[r] : neg_inf;
          exp_nonpos(batch::load_aligned(lanes)).store_aligned(lanes);
          for (size_t t = 0; t < W && j + t < n; ++t) {
            pp[(j + t) * MR + r] = lanes[t];
            sums[r] += lanes[t];
          }
        }
      }
    }
    for (size_t r = 0; r < rs; ++r) {
      const size_t i = i0 + r;
      if (mnew[r] == neg_inf) continue;  // l (possibly NaN) and m stay
      l[i] = l[i] * alpha[i] + sums[r];
      m[i] = mnew[r];
    }
  }
}

template <class Arch>
void softmax_finish_impl(size_t n, float* x, float m, float l) {
  using batch = xsimd::batch<float, Arch>;
  constexpr size_t W = batch::size;
  const float neg_inf = -std::numeric_limits<float>::infinity();
  if (m == neg_inf) {
    const float fill = std::isnan(l) ? std::numeric_limits<float>::quiet_NaN() : 0.0f;
    for (size_t j = 0; j < n; ++j) x[j] = fill;
    return;
  }
  const float inv = 1.0f / l;  // one rounding more than dividing, as f32_softmax_inplace
  const batch vm(m), vinv(inv);
  size_t j = 0;
  for (; j + W <= n; j += W) (exp_nonpos(batch::load_unaligned(x + j) - vm) * vinv).store_unaligned(x + j);
  if (j < n) {
    alignas(Arch::alignment()) float lanes[W];
    for (size_t t = 0; t < W; ++t) lanes[t] = j + t < n ? x[j + t] - m : neg_inf;
    (exp_nonpos(batch::load_aligned(lanes)) * vinv).store_aligned(lanes);
    for (size_t t = 0; j + t < n; ++t) x[j + t] = lanes[t];
  }
}

// log_softmax of one row in place (softmax.h f32_log_softmax): the maximum, Σ exp(x − max) by exp_nonpos with
// each lane's terms added in double, then x − lse in double rounded to float.
template <class Arch>
void log_softmax_impl(size_t n, float* x) {
  using batch = xsimd::batch<float, Arch>;
  constexpr size_t W = batch::size;
  const float neg_inf = -std::numeric_limits<float>::infinity();
  alignas(Arch::alignment()) float lanes[W];
  batch vmax(neg_inf);
  size_t j = 0;
  for (; j + W <= n; j += W) vmax = fast_max(vmax, batch::load_unaligned(x + j));
  vmax.store_aligned(lanes);
  float mx = neg_inf;
  for (size_t t = 0; t < W; ++t) mx = std::max(mx, lanes[t]);
  for (size_t t = j; t < n; ++t) mx = std::max(mx, x[t]);
  const batch vm(mx);
  double acc[W] = {};
  for (j = 0; j < n; j += W) {  // the tail through the same exp, padded with -inf (one copy of exp_nonpos)
    batch v;
    if (j + W <= n) {
      v = batch::load_unaligned(x + j) - vm;
    } else {
      for (size_t t = 0; t < W; ++t) lanes[t] = j + t < n ? x[j + t] - mx : neg_inf;
      v = batch::load_aligned(lanes);
    }
    exp_nonpos(v).store_aligned(lanes);
    for (size_t t = 0; t < W; ++t) acc[t] += lanes[t];
  }
  double sum = 0;
  for (size_t t = 0; t < W; ++t) sum += acc[t];
  const double lse = double(mx) + std::log(sum);
  for (j = 0; j < n; ++j) x[j] = float(double(x[j]) - lse);
}

}  // namespace

void f32_log_softmax(size_t n, float* x) { log_softmax_impl<xsimd::default_arch>(n, x); }

void f32_softmax_finish(size_t n, float* x, float m, float l) { softmax_finish_impl<xsimd::default_arch>(n, x, m, l); }

void f32_softmax_online(size_t rows, size_t n, const float* s, size_t lds, float* m, float* l, float* alpha,
                        float* p) {
  softmax_online_impl<xsimd::default_arch>(rows, n, s, lds, m, l, alpha, p);
}

}  // namespace aw::kernels
