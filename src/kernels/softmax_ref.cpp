// Scalar reference for f32_softmax_inplace (softmax.h): the oracle the xsimd
// version (softmax_simd.cpp) is tested against. Three plain passes over the
// row: max, exp + sum (in index order), divide. Not meant to be fast.
#include "kernels/softmax.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace aw::kernels {

void f32_softmax_inplace_ref(size_t n, float* x) {
  const float neg_inf = -std::numeric_limits<float>::infinity();
  // NaN-sticky max: once a NaN is seen it stays (x > NaN is false), so a row
  // like [-inf, NaN] does not take the all-masked branch below and yields NaN.
  float mx = neg_inf;
  for (size_t j = 0; j < n; ++j) {
    if (x[j] > mx || std::isnan(x[j])) mx = x[j];
  }
  if (mx == neg_inf) {
    // Every key masked: zeros, not NaN (see softmax.h).
    for (size_t j = 0; j < n; ++j) x[j] = 0.0f;
    return;
  }
  // mx is finite, +inf or NaN here. +inf: inf - inf = NaN poisons the sum,
  // so the whole row becomes NaN, as in torch.
  float sum = 0.0f;
  for (size_t j = 0; j < n; ++j) {
    x[j] = std::exp(x[j] - mx);
    sum += x[j];
  }
  for (size_t j = 0; j < n; ++j) x[j] = x[j] / sum;
}

void f32_softmax_online_ref(size_t rows, size_t n, const float* s, size_t lds, float* m, float* l, float* alpha,
                            float* p) {
  const float neg_inf = -std::numeric_limits<float>::infinity();
  constexpr size_t MR = kGemmMR;
  const size_t padded = (rows + MR - 1) / MR * MR;
  auto p_at = [&](size_t i, size_t j) -> float& { return p[(i / MR) * n * MR + j * MR + i % MR]; };
  for (size_t i = rows; i < padded; ++i)
    for (size_t j = 0; j < n; ++j) p_at(i, j) = 0.0f;
  for (size_t i = 0; i < rows; ++i) {
    const float* row = s + i * lds;
    float mx = m[i];
    bool nan = false;
    for (size_t j = 0; j < n; ++j) {
      if (row[j] > mx) mx = row[j];
      nan |= std::isnan(row[j]);
    }
    if (mx == neg_inf) {  // every score so far -inf (a NaN among them poisons l)
      for (size_t j = 0; j < n; ++j) p_at(i, j) = 0.0f;
      alpha[i] = 1.0f;
      if (nan) l[i] = std::numeric_limits<float>::quiet_NaN();
      continue;
    }
    alpha[i] = std::exp(m[i] - mx);  // exp(-inf) = 0 on the first block
    float sum = 0.0f;
    for (size_t j = 0; j < n; ++j) {
      p_at(i, j) = std::exp(row[j] - mx);
      sum += p_at(i, j);
    }
    l[i] = l[i] * alpha[i] + sum;
    m[i] = mx;
  }
}

void f32_softmax_finish_ref(size_t n, float* x, float m, float l) {
  if (m == -std::numeric_limits<float>::infinity()) {
    const float fill = std::isnan(l) ? std::numeric_limits<float>::quiet_NaN() : 0.0f;
    for (size_t j = 0; j < n; ++j) x[j] = fill;
    return;
  }
  for (size_t j = 0; j < n; ++j) x[j] = std::exp(x[j] - m) / l;
}

namespace {
// max + log Σ exp(x[j] − max), in double.
double LogSumExp(size_t n, const float* x) {
  double mx = -std::numeric_limits<double>::infinity();
  for (size_t j = 0; j < n; ++j) mx = std::max(mx, double(x[j]));
  double sum = 0;
  for (size_t j = 0; j < n; ++j) sum += std::exp(double(x[j]) - mx);
  return mx + std::log(sum);
}
}  // namespace

void f32_log_softmax_f64(size_t n, const float* x, double* out) {
  const double lse = LogSumExp(n, x);
  for (size_t j = 0; j < n; ++j) out[j] = double(x[j]) - lse;
}

void f32_log_softmax_ref(size_t n, float* x) {  // f32_log_softmax_f64's values, rounded in place
  const double lse = LogSumExp(n, x);
  for (size_t j = 0; j < n; ++j) x[j] = float(double(x[j]) - lse);
}

}  // namespace aw::kernels
