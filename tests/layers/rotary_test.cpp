// RotaryPositionalEmbeddings (src/layers/rotary.*) natively: theta bit for
// bit as torch computes it and the outputs of every RoPE golden
// (tests/data/goldens/lm/blocks/rope_*.safetensors, from
// tests/data/make_lm_goldens.py); the model family's entry points (FillTable +
// Rotate, RotateQK) equal Forward bit for bit; 1, 2 and 3 threads give the
// same bits; positions and shapes refused with messages naming the argument.
//
// Elsewhere: the goldens, errors and threads through the JS API:
// tests/js/layers/rotary.test.mjs; the rotation kernels: tests/kernels/rope_test.cpp.
#include "layers/rotary.h"

#include <gtest/gtest.h>

#include "../kernel_test_util.h"
#include "../models/model_test_util.h"
#include "layer_test_util.h"

#include <cmath>
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "core/workspace.h"
#include "io/json.h"
#include "io/safetensors.h"

namespace aw {
namespace {

struct Golden {
  std::string name;
  io::StConverted st;
  io::JsonValue spec;
  const Buffer* F32(const std::string& key) const {
    for (size_t i = 0; i < st.file.tensors.size(); ++i)
      if (st.file.tensors[i].name == key) return &st.f32[i];
    return nullptr;
  }
  const BufferT<int32_t>* I32(const std::string& key, Shape* shape) const {
    for (size_t i = 0; i < st.file.tensors.size(); ++i)
      if (st.file.tensors[i].name == key) {
        *shape = st.file.tensors[i].shape;
        return &st.i32[i];
      }
    return nullptr;
  }
  Shape ShapeOf(const std::string& key) const {
    for (const auto& t : st.file.tensors)
      if (t.name == key) return t.shape;
    return {};
  }
};

std::vector<Golden> RopeGoldens() {
  std::vector<Golden> out;
  const std::string dir = std::string(AW_SOURCE_DIR) + "/tests/data/goldens/lm/blocks";
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string f = e.path().filename().string();
    if (f.rfind("rope_", 0) == 0) names.push_back(f);
  }
  std::sort(names.begin(), names.end());
  for (const std::string& f : names) {
    Golden g;
    g.name = f;
    const std::vector<uint8_t> bytes = test::ReadBytes("tests/data/goldens/lm/blocks/" + f);
    EXPECT_TRUE(io::ReadSafetensors(bytes.data(), bytes.size(), &g.st).ok()) << f;
    for (const auto& kv : g.st.file.metadata)
      if (kv.first == "case") EXPECT_TRUE(io::ParseJson(kv.second, &g.spec).ok()) << f;
    out.push_back(std::move(g));
  }
  return out;
}

Status InitFrom(const Golden& g, RotaryPositionalEmbeddings* rope) {
  const io::JsonValue* o = g.spec.Find("options");
  return rope->Init(int64_t(g.spec.Find("args")->items[0].number), int64_t(o->Find("maxSeqLen")->number),
                    o->Find("base")->number, o->Find("interleaved")->boolean);
}

TEST(Rotary, ThetaAndOutputsOfEveryGolden) {
  const std::vector<Golden> goldens = RopeGoldens();
  ASSERT_GE(goldens.size(), 11u);
  double worst = 0;
  for (const Golden& g : goldens) {
    SCOPED_TRACE(g.name);
    RotaryPositionalEmbeddings rope;
    ASSERT_TRUE(InitFrom(g, &rope).ok());
    // theta: torch's float32 inv_freq, bit for bit.
    const Buffer* theta = g.F32("expected.theta");
    ASSERT_TRUE(theta && theta->size() == size_t(rope.dim() / 2));
    for (size_t i = 0; i < theta->size(); ++i) ASSERT_EQ(rope.theta()[i], theta->data()[i]) << "theta " << i;
    // The output within the golden's tolerance (1e-5 + 1e-5 |expected|).
    const Buffer* x = g.F32("input.x");
    const Buffer* want = g.F32("expected.output");
    Shape pos_shape;
    const BufferT<int32_t>* pos = g.I32("input.input_pos", &pos_shape);
    Buffer y;
    Shape ys;
    const Status s = rope.Forward({x->data(), g.ShapeOf("input.x")}, pos ? pos->data() : nullptr, pos_shape, &y, &ys);
    ASSERT_TRUE(s.ok()) << s.message();
    for (size_t i = 0; i < want->size(); ++i) {
      const double d = std::fabs(double(y.data()[i]) - want->data()[i]);
      worst = std::max(worst, d);
      ASSERT_LE(d, 1e-5 + 1e-5 * std::fabs(want->data()[i])) << "element " << i;
    }
  }
  std::printf("[  worst   ] RoPE goldens: max |got - torch| = %.3g\n", worst);
}

// A float64 angle is visibly wrong at large positions: the golden that
// catches it really does (one float32 ulp of the angle ~ 0.004 rad there).
TEST(Rotary, AngleIsAFloat32Product) {
  RotaryPositionalEmbeddings rope;
  ASSERT_TRUE(rope.Init(64, 65536, 10000, false).ok());
  const int32_t pos[] = {65000, 65535, 40001};
  std::vector<float> table(rope.TableFloats(3));
  rope.FillTable(3, pos, table.data());
  double worst64 = 0;
  for (size_t t = 0; t < 3; ++t)
    for (size_t i = 0; i < 32; ++i) {
      const float a32 = float(pos[t]) * rope.theta()[i];
      EXPECT_EQ(table[t * 64 + i], float(std::cos(double(a32))));
      EXPECT_EQ(table[t * 64 + 32 + i], float(std::sin(double(a32))));
      worst64 = std::max(worst64, std::fabs(std::cos(double(pos[t]) * double(rope.theta()[i])) - table[t * 64 + i]));
    }
  EXPECT_GT(worst64, 1e-4) << "a float64 angle would differ from torch's by this much";
}

TEST(Rotary, ModelEntryPointsEqualForward) {
  for (bool interleaved : {true, false}) {
    RotaryPositionalEmbeddings rope;
    ASSERT_TRUE(rope.Init(16, 512, 500000, interleaved).ok());
    const size_t T = 7, hq = 6, hk = 2, D = 16;
    const std::vector<int32_t> pos{3, 4, 5, 6, 7, 8, 9};
    const std::vector<float> q0 = Random(1, T * hq * D), k0 = Random(2, T * hk * D);
    // Forward on (1, T, H, D) with inputPos (T).
    Buffer fq, fk;
    Shape s;
    ASSERT_TRUE(rope.Forward({q0.data(), {1, int64_t(T), int64_t(hq), int64_t(D)}}, pos.data(), {int64_t(T)}, &fq, &s).ok());
    ASSERT_TRUE(rope.Forward({k0.data(), {1, int64_t(T), int64_t(hk), int64_t(D)}}, pos.data(), {int64_t(T)}, &fk, &s).ok());
    // RotateQK on rows with padding (ldq, ldk larger than the heads).
    const size_t ldq = hq * D + 5, ldk = hk * D + 3;
    std::vector<float> q(T * ldq, test::kSentinel), k(T * ldk, test::kSentinel);
    for (size_t t = 0; t < T; ++t) {
      std::copy(q0.begin() + t * hq * D, q0.begin() + (t + 1) * hq * D, q.begin() + t * ldq);
      std::copy(k0.begin() + t * hk * D, k0.begin() + (t + 1) * hk * D, k.begin() + t * ldk);
    }
    ASSERT_TRUE(rope.RotateQK("positions", T, pos.data(), q.data(), hq, ldq, k.data(), hk, ldk).ok());
    for (size_t t = 0; t < T; ++t) {
      EXPECT_TRUE(test::same_bits(hq * D, q.data() + t * ldq, fq.data() + t * hq * D)) << t;
      EXPECT_TRUE(test::same_bits(hk * D, k.data() + t * ldk, fk.data() + t * hk * D)) << t;
      for (size_t j = hq * D; j < ldq; ++j) EXPECT_EQ(q[t * ldq + j], test::kSentinel);
    }
  }
}

TEST(Rotary, ThreadsGiveBitIdenticalResults) {
  if (!ThreadsSupported()) GTEST_SKIP() << "single-thread build";
  RotaryPositionalEmbeddings rope;
  ASSERT_TRUE(rope.Init(64, 4096, 10000, true).ok());
  const Shape xs{3, 37, 5, 64};
  const std::vector<float> x = Random(3, NumelChecked(xs));
  std::vector<int32_t> pos(3 * 37);
  for (size_t i = 0; i < pos.size(); ++i) pos[i] = int32_t((i * 131) % 4096);
  for (bool per_batch : {false, true}) {
    const Shape ps = per_batch ? Shape{3, 37} : Shape{37};
    Buffer want;
    Shape s;
    ASSERT_TRUE(rope.Forward({x.data(), xs}, pos.data(), ps, &want, &s).ok());
    for (int threads : {2, 3}) {
      SetNumThreads(threads);
      Buffer got;
      ASSERT_TRUE(rope.Forward({x.data(), xs}, pos.data(), ps, &got, &s).ok());
      EXPECT_TRUE(test::bit_identical(got, want)) << threads << " threads, per_batch " << per_batch;
      SetNumThreads(1);
    }
  }
}

TEST(Rotary, PiecesOfTheBudgetChangeNothing) {
  // A budget that holds the tables of a few positions only: many pieces, the same bits.
  RotaryPositionalEmbeddings rope;
  ASSERT_TRUE(rope.Init(128, 100000, 10000, false).ok());
  const Shape xs{2, 700, 1, 128};
  const std::vector<float> x = Random(4, NumelChecked(xs));
  Buffer want, got;
  Shape s;
  ASSERT_TRUE(rope.Forward({x.data(), xs}, nullptr, {}, &want, &s).ok());
  const size_t saved = WorkBudget();
  ASSERT_TRUE(SetWorkBudget(kMinWorkBudgetBytes).ok());
  const Status st = rope.Forward({x.data(), xs}, nullptr, {}, &got, &s);
  ASSERT_TRUE(SetWorkBudget(int64_t(saved)).ok());
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_TRUE(test::bit_identical(got, want));
}

TEST(Rotary, ErrorsNameTheArgument) {
  RotaryPositionalEmbeddings rope;
  auto expect = [](const Status& s, Code code, const std::string& message) {
    EXPECT_EQ(s.code(), code) << s.message();
    EXPECT_EQ(s.message(), message);
  };
  expect(rope.Init(7, 16, 10000, true), Code::kInvalidArgument,
         "dim: expected an even number (RoPE rotates pairs of elements), got 7");
  expect(rope.Init(0, 16, 10000, true), Code::kOutOfRange, "dim: expected an integer in [1, 2147483647], got 0");
  expect(rope.Init(8, 0, 10000, true), Code::kOutOfRange, "maxSeqLen: expected an integer in [1, 2147483647], got 0");
  expect(rope.Init(8, 16, 0, true), Code::kOutOfRange, "base: expected a finite number > 0, got 0");
  expect(rope.Init(8, 16, 1e39, true), Code::kOutOfRange,
         "base: expected a number within float32's range (> 0, at most 3.4028234663852886e+38), got 1e+39");
  ASSERT_TRUE(rope.Init(8, 16, 10000, true).ok());
  const std::vector<float> x(2 * 5 * 3 * 8, 0.5f);
  Buffer y;
  Shape s;
  expect(rope.Forward({x.data(), {2, 5, 24}}, nullptr, {}, &y, &s), Code::kShape,
         "input: expected (B, S, H, dim) with dim = 8, got (2, 5, 24)");
  expect(rope.Forward({x.data(), {2, 5, 4, 6}}, nullptr, {}, &y, &s), Code::kShape,
         "input: expected (B, S, H, dim) with dim = 8, got (2, 5, 4, 6)");
  const std::vector<int32_t> pos{0, 1, 2, 3, 16, 5, 6, 7, 8, 9};
  expect(rope.Forward({x.data(), {2, 5, 3, 8}}, pos.data(), {2, 5}, &y, &s), Code::kOutOfRange,
         "inputPos: position 16 at index (0, 4) is out of range [0, maxSeqLen = 16)");
  const std::vector<int32_t> neg{0, 1, -1, 3, 4};
  expect(rope.Forward({x.data(), {2, 5, 3, 8}}, neg.data(), {5}, &y, &s), Code::kOutOfRange,
         "inputPos: position -1 at index (2) is out of range [0, maxSeqLen = 16)");
  expect(rope.Forward({x.data(), {2, 5, 3, 8}}, pos.data(), {10}, &y, &s), Code::kShape,
         "inputPos: expected (B, S) = (2, 5) or (S) = (5,), got (10,)");
  const std::vector<float> long_x(20 * 8, 0.0f);
  expect(rope.Forward({long_x.data(), {1, 20, 1, 8}}, nullptr, {}, &y, &s), Code::kOutOfRange,
         "input: S = 20 positions (0 … S-1 without inputPos) exceed maxSeqLen = 16");
  float q[8] = {};
  expect(rope.RotateQK("positionIds", 1, &pos[4], q, 1, 8, nullptr, 0, 0), Code::kOutOfRange,
         "positionIds: position 16 at index (0) is out of range [0, maxSeqLen = 16)");
}

}  // namespace
}  // namespace aw
