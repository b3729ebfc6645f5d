// Tests for src/ops/attention.h: the attention core (Attend) against its
// scalar twin (AttendRef) at awkward sizes — rows and keys below, at and above
// the micro-tile (4), the query block (16), the chunk (64) and the piece (64
// rows); head dims from 0 to 65; strided rows — for both ways through (online
// and exact weights, plain and averaged over heads), every mask kind, fully
// masked rows and chunks (skipped), keys past masked_keys, and NaN / inf
// inputs (no skipping, torch's propagation); causal masks with a diagonal
// offset (lower-right aligned, negative: rows with no key). Then: threads
// give bit-identical results; skipping saves work without changing the result.
#include "ops/attention.h"

#include <gtest/gtest.h>

#include "../kernel_test_util.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <chrono>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/parallel.h"

namespace aw {
namespace {

using test::kInf;
using test::kNaN;

enum class MaskKind { kNone, kCausal, kAdd, kAddBroadcast, kKeep, kKeyPadding, kAddAndKeyPadding };

std::string Name(MaskKind m) {
  switch (m) {
    case MaskKind::kNone: return "none";
    case MaskKind::kCausal: return "causal";
    case MaskKind::kAdd: return "add";
    case MaskKind::kAddBroadcast: return "add-broadcast";
    case MaskKind::kKeep: return "keep";
    case MaskKind::kKeyPadding: return "key-padding";
    case MaskKind::kAddAndKeyPadding: return "add+key-padding";
  }
  return "?";
}

// One call's data: groups × heads heads of (L, S, hd, hdv), rows padded so
// that every stride is larger than its row.
struct Problem {
  AttnShape sh;
  size_t groups = 1, heads = 1;
  std::vector<float> q, k, v, add, key_add;
  std::vector<uint8_t> keep;
  std::vector<float> out, w;

  size_t nh() const { return groups * heads; }
  AttnHead Head(size_t g, size_t h) {
    const size_t i = g * heads + h;
    AttnHead a;
    a.q = q.data() + i * sh.L * sh.ldq;
    a.k = k.data() + i * sh.S * sh.ldk;
    a.v = v.data() + i * sh.S * sh.ldv;
    a.out = out.data() + i * sh.L * sh.ldo;
    if (sh.weights) a.weights = w.data() + (sh.average ? g : i) * sh.L * sh.ldw;
    const size_t mrows = sh.add_ld ? sh.L : 1;
    if (!add.empty()) a.add = add.data() + i * mrows * sh.S;
    if (!keep.empty()) a.keep = keep.data() + i * sh.L * sh.S;
    if (!key_add.empty()) a.key_add = key_add.data() + g * sh.S;
    return a;
  }
};

Problem Make(size_t L, size_t S, size_t hd, size_t hdv, MaskKind mk, bool weights, bool average, size_t heads,
             std::mt19937& rng, size_t masked_keys = SIZE_MAX) {
  Problem p;
  p.groups = 2;
  p.heads = heads;
  AttnShape& s = p.sh;
  s.L = L; s.S = S; s.hd = hd; s.hdv = hdv;
  s.ldq = hd + 3; s.ldk = hd + 1; s.ldv = hdv + 2; s.ldo = hdv + 5; s.ldw = S + 1;
  s.scale = hd ? 1.0f / std::sqrt(float(hd)) : 1.0f;
  s.masked_keys = std::min(masked_keys, S);
  s.weights = weights;
  s.average = average;
  std::uniform_real_distribution<float> u(-1.0f, 1.0f), u01(0.0f, 1.0f);
  auto fill = [&](std::vector<float>& x, size_t n) { x.resize(n); for (float& e : x) e = u(rng); };
  fill(p.q, p.nh() * L * s.ldq + 1);
  fill(p.k, p.nh() * S * s.ldk + 1);
  fill(p.v, p.nh() * S * s.ldv + 1);
  p.out.assign(p.nh() * L * s.ldo + 1, -7.0f);
  if (weights) p.w.assign((average ? p.groups : p.nh()) * L * s.ldw + 1, -7.0f);
  // Masks: random -inf / false, plus whole masked rows and whole masked
  // 64-key chunks, so both fully masked rows and skipped chunks occur.
  auto masked_row = [&](size_t i) { return i % 7 == 3; };
  auto masked_chunk = [&](size_t j) { return (j / kAttnChunk) % 3 == 1; };
  const bool addm = mk == MaskKind::kAdd || mk == MaskKind::kAddBroadcast || mk == MaskKind::kAddAndKeyPadding;
  if (addm) {
    s.add_ld = mk == MaskKind::kAddBroadcast ? 0 : S;
    const size_t rows = s.add_ld ? L : 1;
    p.add.resize(p.nh() * rows * S);
    for (size_t t = 0; t < p.add.size(); ++t) {
      const size_t i = t / S % rows, j = t % S;
      p.add[t] = masked_row(i) || masked_chunk(j) || u01(rng) < 0.2f ? -kInf : u(rng);
    }
  }
  if (mk == MaskKind::kKeep) {
    s.keep_ld = S;
    p.keep.resize(p.nh() * L * S);
    for (size_t t = 0; t < p.keep.size(); ++t) {
      const size_t i = t / S % L, j = t % S;
      p.keep[t] = !(masked_row(i) || masked_chunk(j) || u01(rng) < 0.2f);
    }
  }
  if (mk == MaskKind::kKeyPadding || mk == MaskKind::kAddAndKeyPadding) {
    p.key_add.resize(p.groups * S);
    for (size_t g = 0; g < p.groups; ++g)  // group g: its last (g + 1)·S/3 keys padded
      for (size_t j = 0; j < S; ++j) p.key_add[g * S + j] = j >= S - std::min(S, (g + 1) * S / 3) ? -kInf : 0.0f;
  }
  s.causal = mk == MaskKind::kCausal;
  return p;
}

// Attend and AttendRef on copies of p; outputs and weights compared.
::testing::AssertionResult Compare(Problem p, double* worst = nullptr) {
  Problem r = p;
  Status st = Attend(p.sh, p.groups, p.heads, [&](size_t g, size_t h) { return p.Head(g, h); });
  if (!st.ok()) return ::testing::AssertionFailure() << "Attend: " << st.message();
  AttendRef(r.sh, r.groups, r.heads, [&](size_t g, size_t h) { return r.Head(g, h); });
  size_t bad = 0;
  std::ostringstream msg;
  auto cmp = [&](const std::vector<float>& got, const std::vector<float>& want, const char* what) {
    for (size_t t = 0; t < got.size(); ++t) {
      const float g = got[t], x = want[t];
      bool ok;
      if (std::isnan(g) || std::isnan(x)) ok = std::isnan(g) && std::isnan(x);
      else if (std::isinf(g) || std::isinf(x)) ok = g == x;
      else {
        // Scores are dot products of up to 65 terms in [-1, 1] (scaled); the
        // online softmax rescales by up to ceil(S / 64) alphas; P·V sums up to
        // S terms of |v| <= 1: a few ulp of each, so 2e-6 + 2e-6 relative.
        const double err = std::fabs(double(g) - x);
        ok = err <= 2e-6 + 2e-6 * std::fabs(x);
        if (worst) *worst = std::max(*worst, err);
      }
      if (!ok && bad++ < 6) msg << "\n  " << what << "[" << t << "] core " << g << " ref " << x;
    }
  };
  cmp(p.out, r.out, "out");
  cmp(p.w, r.w, "weights");
  if (bad) return ::testing::AssertionFailure() << bad << " elements differ" << msg.str();
  return ::testing::AssertionSuccess();
}

std::string Describe(size_t L, size_t S, size_t hd, size_t hdv, MaskKind mk, bool weights, bool average) {
  std::ostringstream o;
  o << "L=" << L << " S=" << S << " hd=" << hd << " hdv=" << hdv << " mask=" << Name(mk)
    << (weights ? average ? " weights-averaged" : " weights" : " online");
  return o.str();
}

const MaskKind kAllMasks[] = {MaskKind::kNone, MaskKind::kCausal, MaskKind::kAdd, MaskKind::kAddBroadcast,
                              MaskKind::kKeep, MaskKind::kKeyPadding, MaskKind::kAddAndKeyPadding};

TEST(Attention, MatchesReferenceAtAwkwardSizes) {
  std::mt19937 rng(1);
  double worst = 0;
  const size_t Ls[] = {1, 3, 4, 5, 15, 16, 17, 63, 64, 65, 130};
  const size_t Ss[] = {1, 7, 8, 9, 63, 64, 65, 129, 200};
  const size_t hds[] = {1, 3, 8, 12, 16, 33, 64};
  const size_t hdvs[] = {1, 5, 8, 16, 24, 65};
  size_t n = 0;
  for (size_t L : Ls)
    for (size_t S : Ss) {
      const size_t hd = hds[n % 7], hdv = hdvs[n % 6];
      const MaskKind mk = kAllMasks[n % 7];
      ++n;
      for (int way = 0; way < 3; ++way) {
        const bool weights = way > 0, average = way == 2;
        SCOPED_TRACE(Describe(L, S, hd, hdv, mk, weights, average));
        EXPECT_TRUE(Compare(Make(L, S, hd, hdv, mk, weights, average, average ? 3 : 2, rng), &worst));
        if (::testing::Test::HasFailure()) return;
      }
    }
  std::printf("[  worst   ] attention core vs reference: max |diff| = %.3g over %zu shapes\n", worst, n);
}

TEST(Attention, EveryMaskKindAtChunkBoundaries) {
  std::mt19937 rng(2);
  for (MaskKind mk : kAllMasks)
    for (size_t S : {64, 65, 128, 191})
      for (int way = 0; way < 2; ++way) {
        SCOPED_TRACE(Describe(70, S, 16, 16, mk, way == 1, false));
        EXPECT_TRUE(Compare(Make(70, S, 16, 16, mk, way == 1, false, 2, rng)));
      }
}

// Long head rows (hd + hdv > 256) go through the core in 64-row query
// blocks instead of 16-row ones; the same semantics.
TEST(Attention, LongHeadRows) {
  std::mt19937 rng(7);
  for (MaskKind mk : {MaskKind::kNone, MaskKind::kCausal, MaskKind::kAddAndKeyPadding})
    for (size_t L : {5, 64, 70})
      for (int way = 0; way < 3; ++way) {
        SCOPED_TRACE(Describe(L, 100, 130, 140, mk, way > 0, way == 2));
        EXPECT_TRUE(Compare(Make(L, 100, 130, 140, mk, way > 0, way == 2, 2, rng)));
      }
}

TEST(Attention, EmptyDims) {
  std::mt19937 rng(3);
  for (size_t S : {0, 5})
    for (size_t hd : {0, 4})
      for (size_t hdv : {0, 3})
        for (int way = 0; way < 2; ++way) {
          SCOPED_TRACE(Describe(9, S, hd, hdv, MaskKind::kNone, way == 1, false));
          EXPECT_TRUE(Compare(Make(9, S, hd, hdv, MaskKind::kNone, way == 1, false, 2, rng)));
        }
}

// MultiheadAttention's bias_k / zero attention: keys past masked_keys are
// never masked, also when every masked key of a row is.
TEST(Attention, KeysPastMaskedKeysAreNeverMasked) {
  std::mt19937 rng(4);
  for (MaskKind mk : {MaskKind::kAdd, MaskKind::kKeyPadding, MaskKind::kAddAndKeyPadding})
    for (size_t S : {3, 66, 130})
      for (int way = 0; way < 2; ++way) {
        SCOPED_TRACE(Describe(20, S, 8, 8, mk, way == 1, false) + " masked_keys=S-2");
        EXPECT_TRUE(Compare(Make(20, S, 8, 8, mk, way == 1, false, 2, rng, S - 2)));
      }
}

// NaN and inf in Q, K or V: no chunk is skipped, and the NaNs land where the
// plain math puts them (torch's semantics), masks or not.
TEST(Attention, NonFiniteInputsPropagateLikeThePlainMath) {
  std::mt19937 rng(5);
  for (MaskKind mk : {MaskKind::kNone, MaskKind::kCausal, MaskKind::kAdd, MaskKind::kKeep, MaskKind::kKeyPadding})
    for (int where = 0; where < 3; ++where)
      for (float bad : {kNaN, kInf, -kInf})
        for (int way = 0; way < 2; ++way) {
          Problem p = Make(40, 150, 8, 8, mk, way == 1, false, 2, rng);
          std::vector<float>& x = where == 0 ? p.q : where == 1 ? p.k : p.v;
          const size_t ld = where == 0 ? p.sh.ldq : where == 1 ? p.sh.ldk : p.sh.ldv;
          x[140 * ld + 3] = bad;  // row 140: a key in the third chunk (masked in "add"/"keep" rows of chunk 1 only)
          x[2 * ld + 1] = bad;    // and row 2
          SCOPED_TRACE(Describe(40, 150, 8, 8, mk, way == 1, false) + " bad value " + std::to_string(bad) +
                       " in " + "qkv"[where]);
          EXPECT_TRUE(Compare(p));
        }
}

// The direct path (AttnShape::direct: a decoding step's L <= kAttnDirectRows rows, K and V read in place):
// against the plain math with every mask kind, at key counts around the chunk and up to a Whisper window's 1500,
// head widths that fill no vector, causal offsets and sliding windows as decoding steps use them, NaN and inf in
// Q, K or V, rows that see no key (zeros); and asked for weights or for more rows, the packed path runs instead.
TEST(Attention, DirectPathForDecodingSteps) {
  std::mt19937 rng(12);
  double worst = 0;
  size_t n = 0;
  for (size_t L : {1, 2, 3, 4})
    for (size_t S : {1, 5, 63, 64, 65, 200, 1500})
      for (MaskKind mk : kAllMasks) {
        const size_t hd = (n % 3 == 0) ? 64 : (n % 3 == 1) ? 4 : 33, hdv = (n % 2) ? 64 : 5;
        Problem p = Make(L, S, hd, hdv, mk, false, false, 3, rng);
        p.sh.direct = true;
        SCOPED_TRACE(Describe(L, S, hd, hdv, mk, false, false) + " direct");
        EXPECT_TRUE(Compare(p, &worst));
        if (::testing::Test::HasFailure()) return;
        ++n;
      }
  for (size_t S : {9, 70, 300})
    for (int64_t off : {int64_t(S) - 1, int64_t(S) - 4, int64_t(-1), int64_t(-5), int64_t(2)})
      for (size_t window : {size_t(0), size_t(1), size_t(7), size_t(100)}) {
        Problem p = Make(4, S, 16, 8, n % 2 ? MaskKind::kKeyPadding : MaskKind::kCausal, false, false, 2, rng);
        p.sh.causal = true;
        p.sh.causal_offset = off;
        p.sh.window = window;
        p.sh.direct = true;
        SCOPED_TRACE("direct causal S " + std::to_string(S) + " offset " + std::to_string(off) + " window " + std::to_string(window));
        EXPECT_TRUE(Compare(p, &worst));
        ++n;
      }
  for (MaskKind mk : {MaskKind::kNone, MaskKind::kKeyPadding, MaskKind::kAdd, MaskKind::kKeep})
    for (int where = 0; where < 3; ++where)
      for (float bad : {kNaN, kInf, -kInf}) {
        Problem p = Make(2, 150, 8, 8, mk, false, false, 2, rng);
        p.sh.direct = true;
        std::vector<float>& x = where == 0 ? p.q : where == 1 ? p.k : p.v;
        const size_t ld = where == 0 ? p.sh.ldq : where == 1 ? p.sh.ldk : p.sh.ldv;
        x[(where == 0 ? 1 : 140) * ld + 3] = bad;  // a padded key (key-padding masks the last keys) or row 1
        SCOPED_TRACE(std::string("direct, a bad value in ") + "qkv"[where] + " mask " + Name(mk));
        EXPECT_TRUE(Compare(p));
        ++n;
      }
  // Weights, or more rows than kAttnDirectRows: the flag is a hint, the packed path answers.
  for (size_t L : {size_t(2), kAttnDirectRows + 1, size_t(40)}) {
    Problem p = Make(L, 100, 16, 16, MaskKind::kKeyPadding, L == 2, false, 2, rng);
    p.sh.direct = true;
    EXPECT_TRUE(Compare(p, &worst)) << "L " << L;
  }
  std::printf("[  worst   ] direct path vs reference: max |diff| = %.3g over %zu calls\n", worst, n);
}

// Causal with a diagonal offset: key j masked for query i when j > i + offset.
// torch's causal_lower_right(L, S) is offset S - L (negative for L > S: the
// first L - S rows see no key and give zeros), causal_upper_left offset 0;
// any offset, also past S or below -L, against the plain math, at chunk and
// block boundaries, in all three ways, with other masks on top.
TEST(Attention, CausalWithADiagonalOffset) {
  std::mt19937 rng(8);
  double worst = 0;
  size_t n = 0;
  const std::pair<size_t, size_t> LS[] = {{1, 9}, {3, 7}, {7, 3}, {6, 4}, {13, 33}, {16, 130}, {65, 64},
                                          {70, 200}, {130, 65}, {1, 1}, {64, 129}};
  for (auto [L, S] : LS) {
    const int64_t l = int64_t(L), s = int64_t(S);
    for (int64_t off : {s - l, int64_t(0), int64_t(-1), -l + 1, -l, -l - 5, int64_t(1), int64_t(63), s, s + 7,
                        s - l - 64, s - l + 65}) {
      for (int way = 0; way < 3; ++way) {
        const MaskKind mk = n % 3 == 0 ? MaskKind::kKeyPadding : MaskKind::kCausal;
        Problem p = Make(L, S, 16, 8, mk, way > 0, way == 2, way == 2 ? 3 : 2, rng);
        p.sh.causal = true;
        p.sh.causal_offset = off;
        SCOPED_TRACE(Describe(L, S, 16, 8, mk, way > 0, way == 2) + " causal offset " + std::to_string(off));
        EXPECT_TRUE(Compare(p, &worst));
        if (::testing::Test::HasFailure()) return;
        ++n;
      }
    }
  }
  // Rows that see no key are exactly zero (outputs and weights).
  Problem p = Make(6, 4, 8, 8, MaskKind::kCausal, true, false, 2, rng);
  p.sh.causal_offset = 4 - 6;
  ASSERT_TRUE(Attend(p.sh, p.groups, p.heads, [&](size_t g, size_t h) { return p.Head(g, h); }).ok());
  for (size_t hh = 0; hh < p.nh(); ++hh)
    for (size_t i = 0; i < 2; ++i) {
      for (size_t t = 0; t < 8; ++t) EXPECT_EQ(p.out[(hh * 6 + i) * p.sh.ldo + t], 0.0f) << hh << " " << i;
      for (size_t j = 0; j < 4; ++j) EXPECT_EQ(p.w[(hh * 6 + i) * p.sh.ldw + j], 0.0f) << hh << " " << i;
    }
  std::printf("[  worst   ] causal with offsets vs reference: max |diff| = %.3g over %zu calls\n", worst, n);
}

// A bidirectional band |i − j| < w (EmbeddingGemma's and ModernBERT's local layers, causal_lm_blocks.cpp): the
// causal window 2w − 1 with the diagonal moved w − 1 to the right, so that the last rows' ends pass S. Against the
// plain math, bands below, at and past the chunk (64) and wider than the sequence, in all three ways.
TEST(Attention, BidirectionalBandAsAMovedCausalWindow) {
  std::mt19937 rng(13);
  double worst = 0;
  for (auto [L, w] : {std::pair<size_t, size_t>{1, 1}, {7, 3}, {70, 5}, {130, 33}, {130, 64}, {200, 65}, {64, 100}})
    for (int way = 0; way < 3; ++way) {
      Problem p = Make(L, L, 16, 8, MaskKind::kCausal, way > 0, way == 2, way == 2 ? 3 : 2, rng);
      p.sh.causal = true;
      p.sh.causal_offset = int64_t(w) - 1;
      p.sh.window = 2 * w - 1;
      SCOPED_TRACE(Describe(L, L, 16, 8, MaskKind::kCausal, way > 0, way == 2) + " band " + std::to_string(w));
      EXPECT_TRUE(Compare(p, &worst));
      if (::testing::Test::HasFailure()) return;
    }
}

// A sliding window on the causal mask (Mistral's, Gemma's sliding layers, the demo model's attentionWindow):
// query row i sees keys [end − window, end), end = i + causal_offset + 1. Against the plain math at chunk and
// block boundaries, windows below, at and above the chunk (64), with the diagonal offsets a prefill and a
// decoding step use, in all three ways, with key padding on top in some; rows whose window is empty give zeros.
TEST(Attention, CausalWithASlidingWindow) {
  std::mt19937 rng(12);
  double worst = 0;
  size_t n = 0;
  const std::pair<size_t, size_t> LS[] = {{1, 1}, {1, 200}, {7, 7}, {13, 77}, {64, 64}, {65, 130}, {130, 130}, {3, 260}};
  for (auto [L, S] : LS)
    for (size_t window : {size_t(1), size_t(3), size_t(63), size_t(64), size_t(65), size_t(129), size_t(1000)})
      for (int way = 0; way < 3; ++way) {
        const MaskKind mk = n % 4 == 0 ? MaskKind::kKeyPadding : MaskKind::kCausal;
        Problem p = Make(L, S, 16, 8, mk, way > 0, way == 2, way == 2 ? 3 : 2, rng);
        p.sh.causal = true;
        p.sh.causal_offset = int64_t(S) - int64_t(L);
        p.sh.window = window;
        SCOPED_TRACE(Describe(L, S, 16, 8, mk, way > 0, way == 2) + " window " + std::to_string(window));
        EXPECT_TRUE(Compare(p, &worst));
        if (::testing::Test::HasFailure()) return;
        ++n;
      }
  // A decoding step far into a long context with a short window: only the window's chunks are read, so the
  // same step costs far less than without the window (a generous 3× bound against a noisy machine for a
  // ~30× difference in work; the best of 5 runs).
  Problem p = Make(1, 8192, 64, 64, MaskKind::kCausal, false, false, 8, rng);
  p.sh.causal_offset = 8191;
  p.sh.masked_unread = true;  // as the causal LM's steps run it
  auto best_ms = [&](size_t window) {
    p.sh.window = window;
    double best = 1e9;
    for (int r = 0; r < 5; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      EXPECT_TRUE(Attend(p.sh, p.groups, p.heads, [&](size_t g, size_t h) { return p.Head(g, h); }).ok());
      best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    return best;
  };
  const double all = best_ms(0), windowed = best_ms(128);
  EXPECT_LT(windowed * 3, all) << "window 128: " << windowed << " ms, no window: " << all << " ms";
  std::printf("[  worst   ] causal with a window vs reference: max |diff| = %.3g over %zu calls; a step over 8192 "
              "keys %.3f ms, with a window of 128 %.3f ms\n", worst, n, all, windowed);
}

// A bool mask of shape (L, 1) (keep_cs 0: one byte per query row, broadcast over the keys) against the
// same mask expanded to (L, S), in both polarities: keep_drops false (SDPA: a 0 byte masks; the row's keys
// are all masked, so it gives zeros) and true (MultiheadAttention: a nonzero byte masks). Bit-identical
// outputs and weights; rows the mask drops are exactly 0 and rows it keeps equal the unmasked attention, so a
// flipped polarity fails both ways.
TEST(Attention, BoolMaskOfOneColumnIsItsExpansionInBothPolarities) {
  std::mt19937 rng(11);
  const std::pair<size_t, size_t> LS[] = {{1, 1}, {5, 3}, {7, 70}, {65, 130}};
  for (auto [L, S] : LS)
    for (bool drops : {false, true})
      for (bool weights : {false, true}) {
        SCOPED_TRACE("L=" + std::to_string(L) + " S=" + std::to_string(S) + (drops ? " keep_drops" : " keep") +
                     (weights ? " weights" : " online"));
        Problem col = Make(L, S, 16, 8, MaskKind::kNone, weights, false, 2, rng);
        Problem full = col, none = col;
        std::vector<uint8_t> row(L);
        for (size_t i = 0; i < L; ++i) row[i] = uint8_t(i % 3 == 1 ? 0 : 1 + i % 2);  // nonzero bytes 1 and 2
        col.keep.assign(col.nh() * L * S, 0);  // Problem::Head steps L·S per head; column i·1 used
        full.keep.assign(full.nh() * L * S, 0);
        for (size_t hh = 0; hh < col.nh(); ++hh)
          for (size_t i = 0; i < L; ++i) {
            col.keep[hh * L * S + i] = row[i];
            for (size_t j = 0; j < S; ++j) full.keep[(hh * L + i) * S + j] = row[i];
          }
        col.sh.keep_ld = 1; col.sh.keep_cs = 0; col.sh.keep_drops = drops;
        full.sh.keep_ld = S; full.sh.keep_cs = 1; full.sh.keep_drops = drops;
        for (Problem* p : {&col, &full, &none})
          ASSERT_TRUE(Attend(p->sh, p->groups, p->heads, [&](size_t g, size_t h) { return p->Head(g, h); }).ok());
        EXPECT_TRUE(test::bit_identical(col.out, full.out));
        EXPECT_TRUE(test::bit_identical(col.w, full.w));
        for (size_t hh = 0; hh < col.nh(); ++hh)
          for (size_t i = 0; i < L; ++i) {
            const bool dropped = drops ? row[i] != 0 : row[i] == 0;
            for (size_t t = 0; t < 8; ++t) {
              const float got = col.out[(hh * L + i) * col.sh.ldo + t];
              if (dropped) EXPECT_EQ(got, 0.0f) << "head " << hh << " row " << i;
              else EXPECT_EQ(got, none.out[(hh * L + i) * none.sh.ldo + t]) << "head " << hh << " row " << i;
            }
          }
      }
}

// With an offset that leaves each row a few keys (a decoder's prefill of 64
// tokens after 0 cached ones, but written as 64 queries against 4096 keys
// upper-left aligned) the dead chunks are skipped: far less time than the
// same call with every key live (offset S - L). Generous bound (3x for a
// ~30x difference in work) against a noisy machine; the minimum of 5 runs.
TEST(Attention, OffsetDeadChunksAreSkipped) {
  std::mt19937 rng(9);
  Problem p = Make(64, 4096, 64, 64, MaskKind::kCausal, false, false, 2, rng);
  auto time = [&](int64_t off) {
    double best = 1e30;
    for (int rep = 0; rep < 5; ++rep) {
      p.sh.causal_offset = off;
      const auto t0 = std::chrono::steady_clock::now();
      EXPECT_TRUE(Attend(p.sh, p.groups, p.heads, [&](size_t g, size_t h) { return p.Head(g, h); }).ok());
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return best;
  };
  const double all = time(4096 - 64), few = time(0);
  std::printf("[  timing  ] 64 x 4096 keys: all live %.3f ms, upper-left %.3f ms (%.1fx)\n", all * 1e3, few * 1e3,
              all / few);
  EXPECT_GT(all / few, 3.0);
}

// Threads split the work into pieces that do not depend on the count: the
// results are bit-identical for 1, 2 and 3 threads.
TEST(Attention, ThreadsGiveBitIdenticalResults) {
  if (!ThreadsSupported()) GTEST_SKIP() << "single-thread build";
  std::mt19937 rng(6);
  for (int way = 0; way < 3; ++way) {
    Problem base = Make(200, 150, 16, 24, way == 0 ? MaskKind::kCausal : MaskKind::kAddAndKeyPadding, way > 0,
                        way == 2, 3, rng);
    if (way == 1) {  // lower-right causal (150 - 200: the first 50 rows see no key) on top of the masks
      base.sh.causal = true;
      base.sh.causal_offset = 150 - 200;
    }
    std::vector<float> out1, w1;
    for (int t : {1, 2, 3}) {
      SetNumThreads(t);
      Problem p = base;
      ASSERT_TRUE(Attend(p.sh, p.groups, p.heads, [&](size_t g, size_t h) { return p.Head(g, h); }).ok());
      if (t == 1) { out1 = p.out; w1 = p.w; continue; }
      EXPECT_TRUE(test::bit_identical(out1, p.out)) << t << " threads: out";
      EXPECT_TRUE(test::bit_identical(w1, p.w)) << t << " threads: weights";
    }
    SetNumThreads(1);
  }
}

}  // namespace
}  // namespace aw
