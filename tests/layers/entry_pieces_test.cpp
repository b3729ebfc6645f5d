// Batches in pieces (src/layers/entry_pieces.h, core/workspace.h): with a
// working-memory budget too small for the whole batch, MultiheadAttention, the
// encoder and decoder layers, the stacks and nn.Transformer run in pieces of
// whole batch entries and give the same outputs bit for bit as with the
// default budget, for both layouts (batch-first: slices; sequence-first:
// gathered), every kind of mask, and 1 to 3 threads; their scratch stays
// within the budget (plus a small slack: block tails, alignment).
//
// The workspace itself: tests/core/workspace_test.cpp. The same through the
// JS API, with the heap's peak: tests/js/memory.test.mjs.
#include <gtest/gtest.h>

#include "../kernel_test_util.h"
#include "layer_test_util.h"

#include <functional>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "core/rng.h"
#include "core/workspace.h"
#include "layers/multihead_attention.h"
#include "layers/transformer.h"

namespace aw {
namespace {

constexpr int64_t kSmallBudget = int64_t(128) << 10;  // small enough to force pieces below
constexpr size_t kSlack = size_t(64) << 10;           // block tails and alignment

struct BudgetGuard {
  ~BudgetGuard() {
    EXPECT_TRUE(SetWorkBudget(int64_t(kDefaultWorkBudgetBytes)).ok());
    SetNumThreads(1);
  }
};

// Runs `run` (which fills *out) with the default budget, then with the small
// one on 1, 2 and 3 threads: bitwise equal outputs, scratch within the small
// budget, and more scratch than that needed without pieces (so the case
// really is cut into pieces).
void ExpectSameInPieces(const std::string& what, const std::function<Status(std::vector<float>*)>& run) {
  BudgetGuard guard;
  std::vector<float> want;
  ResetWorkspacePeak();
  ASSERT_TRUE(run(&want).ok()) << what;
  const size_t whole = GetWorkspaceStats().peak;
  ASSERT_GT(whole, size_t(kSmallBudget) + kSlack) << what << ": too small to need pieces";
  ASSERT_TRUE(SetWorkBudget(kSmallBudget).ok());
  for (int t : {1, 2, 3}) {
    if (t > 1 && !ThreadsSupported()) break;
    SetNumThreads(t);
    std::vector<float> got;
    ResetWorkspacePeak();
    ASSERT_TRUE(run(&got).ok()) << what;
    EXPECT_LE(GetWorkspaceStats().peak, size_t(kSmallBudget) + kSlack) << what << ", " << t << " threads";
    EXPECT_TRUE(test::bit_identical(want, got)) << what << ", " << t << " threads";
    EXPECT_LE(GetWorkspaceStats().held, kKeepScratchBytes) << what << ": scratch kept after the call";
  }
}

std::vector<float> Out(const Buffer& b) { return std::vector<float>(b.data(), b.data() + b.size()); }

struct MhaCase {
  bool batch_first, cross, bias_kv, bool_masks, mask3, weights, average;
};

TEST(EntryPieces, MultiheadAttention) {
  const int64_t E = 64, H = 4, N = 13, L = 37, S = 29;
  const MhaCase cases[] = {
      {true, false, false, false, false, false, false},  // self-attention, fused projection, slices
      {false, false, false, true, true, true, false},    // sequence-first (gathered), bool 3-D mask, per-head weights
      {false, true, false, false, false, true, true},    // cross-attention (key = value tensor), averaged weights
      {true, true, true, true, false, false, false},     // bias_k / bias_v appended, bool masks
  };
  for (const MhaCase& c : cases) {
    MhaConfig cfg;
    cfg.embed_dim = E; cfg.num_heads = H; cfg.batch_first = c.batch_first; cfg.add_bias_kv = c.bias_kv;
    Rng rng(5);
    MultiheadAttention mha;
    ASSERT_TRUE(mha.Init(cfg, rng).ok());
    const int64_t Sk = c.cross ? S : L;
    const Shape qs = c.batch_first ? Shape{N, L, E} : Shape{L, N, E};
    const Shape ks = c.batch_first ? Shape{N, Sk, E} : Shape{Sk, N, E};
    const auto q = Random(1, N * L * E), kv = Random(2, N * Sk * E);
    const TensorView tq{q.data(), qs}, tk{c.cross ? kv.data() : q.data(), c.cross ? ks : qs};
    std::vector<float> am_f = Random(3, N * H * L * Sk);
    std::vector<uint8_t> am_b(size_t(N * H * L * Sk)), kpm_b(size_t(N * Sk));
    for (size_t i = 0; i < am_b.size(); ++i) am_b[i] = uint8_t(i % 7 == 3);
    for (size_t i = 0; i < kpm_b.size(); ++i) kpm_b[i] = uint8_t(i % Sk >= Sk - 3);
    std::vector<float> kpm_f(kpm_b.size());
    for (size_t i = 0; i < kpm_f.size(); ++i) kpm_f[i] = kpm_b[i] ? -1e4f : 0.25f;
    MhaForwardOptions o;
    const Shape ams = c.mask3 ? Shape{N * H, L, Sk} : Shape{L, Sk};
    o.attn_mask = c.bool_masks ? MaskView{am_b.data(), DType::kBool, ams} : MaskView{am_f.data(), DType::kF32, ams};
    o.key_padding_mask = c.bool_masks ? MaskView{kpm_b.data(), DType::kBool, {N, Sk}}
                                      : MaskView{kpm_f.data(), DType::kF32, {N, Sk}};
    o.need_weights = c.weights;
    o.average_attn_weights = c.average;
    const std::string name = std::string(c.batch_first ? "batch-first" : "sequence-first") + (c.cross ? " cross" : " self") +
                             (c.bias_kv ? " bias_kv" : "") + (c.bool_masks ? " bool masks" : " float masks");
    ExpectSameInPieces("MultiheadAttention " + name, [&](std::vector<float>* out) {
      MhaResult r;
      AW_RETURN_IF_ERROR(mha.Forward(tq, tk, tk, o, &r));
      *out = Out(r.output);
      out->insert(out->end(), r.weights.data(), r.weights.data() + r.weights.size());
      return Status::OK();
    });
  }
}

TransformerLayerConfig LayerCfg(bool batch_first, bool norm_first) {
  TransformerLayerConfig c;
  c.d_model = 48; c.nhead = 3; c.dim_feedforward = 96; c.batch_first = batch_first; c.norm_first = norm_first;
  c.activation = Activation::kGelu;
  return c;
}

TEST(EntryPieces, EncoderLayerAndStack) {
  const int64_t N = 11, L = 41, E = 48, H = 3;
  for (bool bf : {true, false}) {
    for (bool pre : {false, true}) {
      Rng rng(7);
      TransformerEncoderLayer layer;
      ASSERT_TRUE(layer.Init(LayerCfg(bf, pre), rng).ok());
      TransformerEncoder stack;
      ASSERT_TRUE(stack.Init(LayerCfg(bf, pre), 2, true, 1e-5, rng).ok());
      const Shape xs = bf ? Shape{N, L, E} : Shape{L, N, E};
      const auto x = Random(8, N * L * E);
      std::vector<float> mask(size_t(N * H * L * L));
      for (size_t i = 0; i < mask.size(); ++i) mask[i] = (i % L) > (i / L) % L ? -INFINITY : 0.0f;  // causal per head
      std::vector<uint8_t> kpm(size_t(N * L));
      for (size_t i = 0; i < kpm.size(); ++i) kpm[i] = uint8_t(i % L == L - 1);
      EncoderLayerForward o;
      o.src_mask = MaskView{mask.data(), DType::kF32, {N * H, L, L}};
      o.src_key_padding_mask = MaskView{kpm.data(), DType::kBool, {N, L}};
      const std::string name = std::string(bf ? "batch-first" : "sequence-first") + (pre ? " pre-norm" : " post-norm");
      ExpectSameInPieces("TransformerEncoderLayer " + name, [&](std::vector<float>* out) {
        Buffer y;
        Shape ys;
        AW_RETURN_IF_ERROR(layer.Forward({x.data(), xs}, o, &y, &ys));
        *out = Out(y);
        return Status::OK();
      });
      ExpectSameInPieces("TransformerEncoder with attention maps " + name, [&](std::vector<float>* out) {
        Buffer y;
        Shape ys, ws;
        std::vector<Buffer> w;
        AW_RETURN_IF_ERROR(stack.Forward({x.data(), xs}, o, &y, &ys, &w, &ws));
        *out = Out(y);
        for (const Buffer& b : w) out->insert(out->end(), b.data(), b.data() + b.size());
        return Status::OK();
      });
    }
  }
}

TEST(EntryPieces, DecoderLayerAndTransformer) {
  const int64_t N = 9, T = 23, S = 31, E = 48;
  for (bool bf : {true, false}) {
    Rng rng(9);
    TransformerDecoderLayer layer;
    ASSERT_TRUE(layer.Init(LayerCfg(bf, bf), rng).ok());
    Transformer tf;
    ASSERT_TRUE(tf.Init(LayerCfg(bf, !bf), 2, 2, rng).ok());
    const Shape ts = bf ? Shape{N, T, E} : Shape{T, N, E}, ss = bf ? Shape{N, S, E} : Shape{S, N, E};
    const auto tgt = Random(10, N * T * E), mem = Random(11, N * S * E);
    std::vector<float> causal(size_t(T * T));
    for (int64_t i = 0; i < T; ++i)
      for (int64_t j = 0; j < T; ++j) causal[size_t(i * T + j)] = j > i ? -INFINITY : 0.0f;
    std::vector<uint8_t> mkpm(size_t(N * S));
    for (size_t i = 0; i < mkpm.size(); ++i) mkpm[i] = uint8_t(i % S < size_t(i / S % 4));
    DecoderLayerForward d;
    d.tgt_mask = MaskView{causal.data(), DType::kF32, {T, T}};
    d.tgt_is_causal = true;
    d.memory_key_padding_mask = MaskView{mkpm.data(), DType::kBool, {N, S}};
    const std::string name = bf ? "batch-first" : "sequence-first";
    ExpectSameInPieces("TransformerDecoderLayer " + name, [&](std::vector<float>* out) {
      Buffer y;
      Shape ys;
      AW_RETURN_IF_ERROR(layer.Forward({tgt.data(), ts}, {mem.data(), ss}, d, &y, &ys));
      *out = Out(y);
      return Status::OK();
    });
    TransformerForward f;
    f.decoder = d;
    f.encoder.src_key_padding_mask = d.memory_key_padding_mask;
    ExpectSameInPieces("Transformer " + name, [&](std::vector<float>* out) {
      Buffer y;
      Shape ys;
      AW_RETURN_IF_ERROR(tf.Forward({mem.data(), ss}, {tgt.data(), ts}, f, &y, &ys));
      *out = Out(y);
      return Status::OK();
    });
  }
}

}  // namespace
}  // namespace aw
