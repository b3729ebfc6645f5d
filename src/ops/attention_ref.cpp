// AttendRef (attention.h): the scalar twin of the attention core, the plain
// math one head and one query row at a time, for the tests to hold Attend
// against. Not meant to be fast.
//   scores[j] = scale · Σ_p q[p]·k[j][p]   (float, p in order; scale on the
//               query, as Attend packs it)
//   masks (keys < masked_keys): causal (j > i + causal_offset) → -inf, the window (j <= i + causal_offset −
//   window) → -inf, add,
//   keep == 0 → -inf, key_add
//   P = f32_softmax_inplace_ref(scores)      O = Σ_j P[j]·v[j]   (j in order)
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/softmax.h"
#include "ops/attention.h"

namespace aw {

void AttendRef(const AttnShape& sh, size_t groups, size_t heads, AttnHeadFn head_of, const void* ctx) {
  const float neg_inf = -std::numeric_limits<float>::infinity();
  std::vector<float> p(sh.S);
  for (size_t g = 0; g < groups; ++g) {
    for (size_t hh = 0; hh < heads; ++hh) {
      const AttnHead h = head_of(ctx, g, hh);
      for (size_t i = 0; i < sh.L; ++i) {
        for (size_t j = 0; j < sh.S; ++j) {
          float sum = 0.0f;
          for (size_t t = 0; t < sh.hd; ++t) sum += (sh.scale * h.q[i * sh.ldq + t]) * h.k[j * sh.ldk + t];
          if (j < sh.masked_keys) {
            if (sh.causal && int64_t(j) > int64_t(i) + sh.causal_offset) sum = neg_inf;
            if (sh.causal && sh.window && int64_t(j) + int64_t(sh.window) <= int64_t(i) + sh.causal_offset) sum = neg_inf;
            if (h.add) sum += h.add[i * sh.add_ld + j];
            if (h.keep && h.keep[i * sh.keep_ld + j] == 0) sum = neg_inf;
            if (h.key_add) sum += h.key_add[j];
          }
          p[j] = sum;
        }
        kernels::f32_softmax_inplace_ref(sh.S, p.data());
        if (sh.weights) {
          float* w = h.weights + i * sh.ldw;
          for (size_t j = 0; j < sh.S; ++j) {
            if (!sh.average) w[j] = p[j];
            else if (hh == 0) w[j] = p[j];
            else w[j] += p[j];
            if (sh.average && hh + 1 == heads) w[j] /= float(heads);
          }
        }
        if (h.out) {
          for (size_t t = 0; t < sh.hdv; ++t) {
            float sum = 0.0f;
            for (size_t j = 0; j < sh.S; ++j) sum += p[j] * h.v[j * sh.ldv + t];
            h.out[i * sh.ldo + t] = sum;
          }
        }
      }
    }
  }
}

}  // namespace aw
