// Module's generic state_dict handling, through MultiheadAttention (which has
// own parameters and a child, out_proj).
#include "core/module.h"

#include <gtest/gtest.h>

#include <vector>

#include "layers/multihead_attention.h"

namespace aw {
namespace {

TEST(Module, KeysInTorchOrder) {
  MultiheadAttention m;
  Rng rng;
  MhaConfig c;
  c.embed_dim = 8; c.num_heads = 2; c.add_bias_kv = true;
  ASSERT_TRUE(m.Init(c, rng).ok());
  std::vector<std::string> names;
  for (const auto& p : m.Params()) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"in_proj_weight", "in_proj_bias", "bias_k", "bias_v",
                                             "out_proj.weight", "out_proj.bias"}));
}

TEST(Module, LoadStateDictIsAllOrNothingAndNamesProblems) {
  MultiheadAttention m;
  Rng rng;
  MhaConfig c;
  c.embed_dim = 4; c.num_heads = 1;
  ASSERT_TRUE(m.Init(c, rng).ok());
  std::vector<float> w(48, 1.0f), b(12, 2.0f), ow(16, 3.0f), ob(4, 4.0f), bad(5, 9.0f);
  const float before = m.Param("in_proj_weight")[0];
  Status s = m.LoadStateDict({{"in_proj_weight", {w.data(), {12, 4}}},
                              {"in_proj_bias", {bad.data(), {5}}},
                              {"extra", {bad.data(), {5}}}},
                             "MultiheadAttention");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kStateDict);
  EXPECT_NE(s.message().find("missing key(s): \"out_proj.weight\", \"out_proj.bias\""), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("unexpected key(s): \"extra\""), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("size mismatch for in_proj_bias: expected shape (12,)"), std::string::npos) << s.message();
  EXPECT_EQ(m.Param("in_proj_weight")[0], before);  // nothing changed

  s = m.LoadStateDict({{"in_proj_weight", {w.data(), {12, 4}}},
                       {"in_proj_bias", {b.data(), {12}}},
                       {"out_proj.weight", {ow.data(), {4, 4}}},
                       {"out_proj.bias", {ob.data(), {4}}}},
                      "MultiheadAttention");
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(m.Param("in_proj_weight")[47], 1.0f);
  EXPECT_EQ(m.Param("out_proj.bias")[3], 4.0f);
}

}  // namespace
}  // namespace aw
