// RoPE frequencies per rope_type (rope_scaling.h), each written as modeling_rope_utils.py writes it: Python
// floats (double) for the scalars, float32 for every tensor operation, a Python scalar meeting a float32
// tensor rounded to float32 first (torch's wrapped numbers), in the same order of operations.
#include "layers/rope_scaling.h"

#include <algorithm>
#include <cmath>

#include "core/parallel.h"

namespace aw {
namespace {

// base^(float32(2i) / dim), as `base ** (torch.arange(0, dim, 2).float() / dim)`: the exponent a float32
// division, the power of float32 operands correctly rounded to float32.
float PowF(float base, float e) { return float(std::pow(double(base), double(e))); }

float PowerOf(double base, size_t i, int64_t dim) { return PowF(float(base), float(2 * i) / float(dim)); }

void DefaultInv(double base, int64_t dim, float* inv) {
  for (size_t i = 0; i < size_t(dim / 2); ++i) inv[i] = 1.0f / PowerOf(base, i, dim);
}

double YarnMscale(double scale, double m) { return scale <= 1.0 ? 1.0 : 0.1 * m * std::log(scale) + 1.0; }

}  // namespace

void RopeFrequencies(const RopeSpec& s, int64_t dim, int64_t max_positions, int64_t n, float* inv,
                     float* attention_factor) {
  const size_t h = size_t(dim / 2);
  double af = 1.0;
  if (s.type == "linear") {
    DefaultInv(s.theta, dim, inv);
    for (size_t i = 0; i < h; ++i) inv[i] = inv[i] / float(s.factor);
  } else if (s.type == "dynamic") {
    // Past max_position_embeddings M: the base grown as HF grows it, every operation on float32 tensors (the
    // call's length n is a tensor there): base · ((factor · n / M) − (factor − 1))^(dim / (dim − 2)).
    if (n <= max_positions) {
      DefaultInv(s.theta, dim, inv);
    } else {
      const float grown = (float(s.factor) * float(n)) / float(max_positions) - float(s.factor - 1.0);
      const float power = PowF(grown, float(double(dim) / double(dim - 2)));
      const float base = float(s.theta) * power;
      for (size_t i = 0; i < h; ++i) inv[i] = 1.0f / PowF(base, float(2 * i) / float(dim));
    }
  } else if (s.type == "yarn") {
    const double omax = double(s.original_max > 0 ? s.original_max : max_positions);
    const double factor = s.factor;
    if (s.attention_factor) af = *s.attention_factor;
    else if (s.mscale && s.mscale_all_dim && *s.mscale != 0 && *s.mscale_all_dim != 0)
      af = YarnMscale(factor, *s.mscale) / YarnMscale(factor, *s.mscale_all_dim);
    else af = YarnMscale(factor, 1.0);
    auto correction_dim = [&](double rotations) {
      return (double(dim) * std::log(omax / (rotations * 2.0 * M_PI))) / (2.0 * std::log(s.theta));
    };
    double low = correction_dim(s.beta_fast), high = correction_dim(s.beta_slow);
    if (s.truncate) {
      low = std::floor(low);
      high = std::ceil(high);
    }
    low = std::max(low, 0.0);
    high = std::min(high, double(dim - 1));
    if (low == high) high += 0.001;  // HF's guard against a zero-width ramp
    const float flow = float(low), span = float(high - low);
    for (size_t i = 0; i < h; ++i) {
      const float pos = PowerOf(s.theta, i, dim);
      const float extrapolation = 1.0f / pos;
      const float interpolation = 1.0f / (float(factor) * pos);
      const float ramp = std::clamp((float(i) - flow) / span, 0.0f, 1.0f);
      const float extra = 1.0f - ramp;  // inv_freq_extrapolation_factor
      inv[i] = interpolation * (1.0f - extra) + extrapolation * extra;
    }
  } else if (s.type == "llama3") {
    // `scalar / tensor` is torch's reciprocal then a product: 2π / inv and original_max / wavelen round twice.
    DefaultInv(s.theta, dim, inv);
    const double old_len = double(s.original_max);
    const double low_wavelen = old_len / s.low_freq_factor, high_wavelen = old_len / s.high_freq_factor;
    const float factor = float(s.factor), lff = float(s.low_freq_factor);
    const float span = float(s.high_freq_factor - s.low_freq_factor);
    for (size_t i = 0; i < h; ++i) {
      const float wavelen = (1.0f / inv[i]) * float(2.0 * M_PI);
      const float scaled = wavelen > float(low_wavelen) ? inv[i] / factor : inv[i];  // inv_freq_llama
      const float smooth = ((1.0f / wavelen) * float(old_len) - lff) / span;
      const float smoothed = (1.0f - smooth) * scaled / factor + smooth * scaled;
      const bool medium = !(wavelen < float(high_wavelen)) && !(wavelen > float(low_wavelen));
      inv[i] = medium ? smoothed : scaled;
    }
  } else if (s.type == "longrope") {
    const double omax = double(s.original_max);
    const double factor = s.factor > 0 ? s.factor : double(max_positions) / omax;
    if (s.attention_factor) af = *s.attention_factor;
    else af = factor <= 1.0 ? 1.0 : std::sqrt(1.0 + std::log(factor) / std::log(omax));
    const std::vector<double>& ext = n > s.original_max ? s.long_factor : s.short_factor;
    for (size_t i = 0; i < h; ++i) inv[i] = 1.0f / (float(ext[i]) * PowerOf(s.theta, i, dim));
  } else {  // default
    DefaultInv(s.theta, dim, inv);
  }
  *attention_factor = float(af);
}

void RopeTable(size_t count, const int32_t* pos, int64_t dim, const float* inv, float attention_factor,
               float* table) {
  const size_t h = size_t(dim / 2), D = size_t(dim);
  const size_t grain = 512 / D + 1;  // a position costs dim/2 cos and sin in double: chunks of >= ~8 µs
  ParallelFor(count, grain, [&](size_t t0, size_t t1, int) {
    for (size_t t = t0; t < t1; ++t) {
      const float p = float(pos[t]);
      float* c = table + t * D;
      float* s = c + h;
      for (size_t i = 0; i < h; ++i) {
        const float angle = p * inv[i];  // one float32 product, as torch's matmul of K = 1
        c[i] = float(std::cos(double(angle)));
        s[i] = float(std::sin(double(angle)));
        if (attention_factor != 1.0f) {
          c[i] = c[i] * attention_factor;
          s[i] = s[i] * attention_factor;
        }
      }
    }
  });
}

}  // namespace aw
