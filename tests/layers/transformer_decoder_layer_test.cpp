// TransformerDecoderLayer (src/layers/transformer_decoder_layer.*), natively:
// its KV-cache step (ProjectMemory + Step on a KvCache, one position per call, what the
// translator decodes with) equals the full recomputation of the whole target
// with a causal self-attention (Run), position by position, for post- and
// pre-norm, one and two sequences, the cross-attention weights included.
//
// Elsewhere: its PyTorch goldens, errors and the threads tests through the JS
// API: tests/js/layers/transformer_decoder_layer.test.mjs; the translator's
// cache against its full path: tests/models/translator_test.cpp.
#include <gtest/gtest.h>

#include "layer_test_util.h"

#include <cmath>
#include <string>
#include <vector>

#include "core/rng.h"
#include "layers/transformer_decoder_layer.h"

namespace aw {
namespace {

TEST(TransformerDecoderLayer, StepsEqualTheFullRecomputation) {
  const int64_t E = 32, H = 4, T = 9, S = 7;
  for (bool norm_first : {false, true}) {
    TransformerLayerConfig cfg;
    cfg.d_model = E; cfg.nhead = H; cfg.dim_feedforward = 48; cfg.norm_first = norm_first;
    cfg.activation = Activation::kGelu;
    Rng rng(13);
    TransformerDecoderLayer layer;
    ASSERT_TRUE(layer.Init(cfg, rng).ok());
    const auto memory = Random(21, S * E);
    for (int64_t B : {1, 2}) {
      // Sequence b's target rows and memory are its own; memory is shared here (as in the translator).
      std::vector<std::vector<float>> tgt, full;
      for (int64_t b = 0; b < B; ++b) {
        tgt.push_back(Random(30 + uint64_t(b), T * E));
        full.push_back(tgt.back());
        DecoderLayerForward o;
        o.tgt_causal = true;
        ASSERT_TRUE(layer.Run(full.back().data(), {T, E}, TensorView{memory.data(), {S, E}}, o).ok());
      }
      KvCache cache;
      ASSERT_TRUE(cache.Init(1, size_t(B), size_t(T), size_t(E)).ok());
      TransformerDecoderLayer::CrossKv cross_kv;
      ASSERT_TRUE(layer.ProjectMemory(memory.data(), size_t(S), &cross_kv).ok());
      std::vector<float> x(size_t(B * E)), cross(size_t(B * H * S));
      for (int64_t t = 0; t < T; ++t) {
        for (int64_t b = 0; b < B; ++b)
          std::copy(tgt[size_t(b)].begin() + t * E, tgt[size_t(b)].begin() + (t + 1) * E, x.begin() + b * E);
        ASSERT_TRUE(layer.Step(x.data(), size_t(B), &cache, 0, cross_kv, cross.data()).ok());
        cache.len = size_t(t) + 1;
        // The same arithmetic on the same rows: masked keys only add exact zeros in the full path.
        for (int64_t b = 0; b < B; ++b)
          for (int64_t j = 0; j < E; ++j)
            ASSERT_NEAR(x[size_t(b * E + j)], full[size_t(b)][size_t(t * E + j)], 1e-6)
                << "norm_first " << norm_first << " B " << B << " t " << t << " b " << b << " j " << j;
        for (float w : cross) ASSERT_TRUE(std::isfinite(w) && w >= 0.0f && w <= 1.0f);
      }
    }
  }
}

}  // namespace
}  // namespace aw
