// The Translator family (src/models/translator.h) loaded from the shipped
// file by LoadModel: KV-cache greedy decoding equals argmax over the full
// recomputation, the beam search at width 1 equals greedy, a wider beam ends
// in eos, cross-attention rows are softmax rows, decode options out of range
// are refused by name. Torch parity of these numbers: tests/js/models.test.mjs
// (reference dump) and tests/js/models_custom.test.mjs (exported models).
#include "models/translator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "model_test_util.h"

namespace aw {
namespace {

class TranslatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::LoadFile("models/translator/translator.safetensors", &f_);
    ASSERT_EQ(f_.kind, "translator");
    t_ = static_cast<Translator*>(f_.model.get());
  }
  // English words → source ids: split at spaces, '-' its own token.
  std::vector<int32_t> Source(const std::string& text) {
    std::vector<int32_t> ids;
    const io::JsonValue* vocab = f_.config.Find("srcVocab");
    std::string spaced;
    for (char c : text) spaced += c == '-' ? std::string(" - ") : std::string(1, c);
    std::istringstream in(spaced);
    for (std::string w; in >> w;) {
      size_t i = 0;
      while (i < vocab->items.size() && vocab->items[i].str != w) ++i;
      EXPECT_LT(i, vocab->items.size()) << w;
      ids.push_back(int32_t(i));
    }
    return ids;
  }
  int32_t Lang(const char* lang) { return int32_t(f_.config.Find("langTokens")->Find(lang)->number); }

  test::LoadedFile f_;
  Translator* t_ = nullptr;
};

TEST_F(TranslatorTest, GreedyEqualsArgmaxOfFullRecomputation) {
  for (const char* text : {"three hundred seventy-one", "eighty thousand one", "seventy-seven"}) {
    const std::vector<int32_t> src = Source(text);
    DecodeOptions o;
    o.first_token = Lang("fr");
    o.max_length = 40;
    DecodeResult r;
    ASSERT_TRUE(t_->Decode(src.data(), src.size(), o, &r).ok());
    ASSERT_FALSE(r.ids.empty());
    EXPECT_EQ(r.ids.back(), t_->config().eos) << text;
    std::vector<int32_t> tgt{o.first_token};
    const size_t V = size_t(t_->config().tgt_vocab);
    for (size_t step = 0; step < r.ids.size(); ++step) {
      Buffer logits;
      ASSERT_TRUE(t_->ForwardFull(src.data(), src.size(), tgt.data(), tgt.size(), &logits).ok());
      const float* row = logits.data() + (tgt.size() - 1) * V;
      size_t best = 0;
      for (size_t j = 1; j < V; ++j) if (row[j] > row[best]) best = j;
      EXPECT_EQ(int32_t(best), r.ids[step]) << text << " step " << step;
      tgt.push_back(int32_t(best));
    }
    ASSERT_EQ(r.step_ms.size(), r.ids.size());
    EXPECT_LE(r.score, 0.0);
  }
}

TEST_F(TranslatorTest, BeamOfOneEqualsGreedyAndWiderBeamsFinish) {
  const std::vector<int32_t> src = Source("six hundred eighty-one thousand two hundred four");
  DecodeOptions o;
  o.first_token = Lang("de");
  o.max_length = 40;
  DecodeResult greedy, beam1, beam4;
  ASSERT_TRUE(t_->Decode(src.data(), src.size(), o, &greedy).ok());
  o.beam_search = true;
  ASSERT_TRUE(t_->Decode(src.data(), src.size(), o, &beam1).ok());
  EXPECT_EQ(beam1.ids, greedy.ids);
  EXPECT_NEAR(beam1.score, greedy.score, 1e-9);
  o.beam_size = 4;
  ASSERT_TRUE(t_->Decode(src.data(), src.size(), o, &beam4).ok());
  EXPECT_EQ(beam4.ids.back(), t_->config().eos);
  EXPECT_GE(beam4.score / std::pow(double(beam4.ids.size()), 1.0) + 1e-9,
            greedy.score / std::pow(double(greedy.ids.size()), 1.0))
      << "the beam keeps the greedy hypothesis unless a better one finishes";
}

TEST_F(TranslatorTest, CrossAttentionRowsAreSoftmaxRows) {
  const std::vector<int32_t> src = Source("nine hundred ninety-nine");
  DecodeOptions o;
  o.first_token = Lang("fr");
  o.max_length = 20;
  o.beam_size = 3;
  DecodeResult r;
  ASSERT_TRUE(t_->Decode(src.data(), src.size(), o, &r).ok());
  const Shape want{t_->config().num_decoder_layers, t_->config().layer.nhead, int64_t(r.ids.size()), int64_t(src.size())};
  ASSERT_EQ(r.cross_shape, want);
  const size_t S = src.size(), rows = r.cross.size() / S;
  for (size_t i = 0; i < rows; ++i) {
    double s = 0;
    for (size_t j = 0; j < S; ++j) s += r.cross.data()[i * S + j];
    EXPECT_NEAR(s, 1.0, 1e-5) << "row " << i;
  }
}

TEST_F(TranslatorTest, DecodeOptionsOutOfRangeAreRefusedByName) {
  const std::vector<int32_t> src = Source("forty-two");
  DecodeResult r;
  auto refused = [&](DecodeOptions o, const char* name) {
    const Status s = t_->Decode(src.data(), src.size(), o, &r);
    EXPECT_EQ(s.code(), Code::kOutOfRange) << name;
    EXPECT_EQ(s.message().rfind(name, 0), 0u) << s.message();
  };
  DecodeOptions o;
  o.first_token = Lang("fr");
  o.max_length = 0;
  refused(o, "maxLength: expected an integer in [1, 63]");
  o.max_length = t_->config().max_len;
  refused(o, "maxLength");
  o.max_length = 5;
  o.beam_size = 17;
  refused(o, "beamSize: expected an integer in [1, 16], got 17");
  o.beam_size = 2;
  o.length_penalty = NAN;
  refused(o, "lengthPenalty");
  o.length_penalty = 1;
  o.first_token = int32_t(t_->config().tgt_vocab);
  refused(o, "firstToken");
  o.first_token = Lang("fr");
  o.max_length = INT64_MAX;
  refused(o, "maxLength: expected an integer in [1, 63] (maxLen - 1), got 9223372036854775807");
  o.max_length = 5;
  const int32_t bad[] = {0, 9999};
  const Status s = t_->Decode(bad, 2, o, &r);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("9999"), std::string::npos) << s.message();
  ASSERT_TRUE(t_->Decode(src.data(), src.size(), o, &r).ok()) << "the model keeps working";
}

TEST(LoadModelTest, RefusesAFileWithoutConfigOrOfTheOtherKind) {
  test::LoadedFile f;
  f.bytes = test::ReadBytes("models/vit/vit.safetensors");
  ASSERT_TRUE(io::ParseSafetensors(f.bytes.data(), f.bytes.size(), &f.file).ok());
  std::unique_ptr<Module> m;
  std::string kind;
  Status s = LoadModel(f.bytes.data(), f.bytes.size(), f.file, "translator", "", &m, &kind);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "source: attnwasm.config: expected a \"translator\" model, got \"vit\"");
  EXPECT_EQ(m, nullptr);
  f.file.metadata.clear();
  s = LoadModel(f.bytes.data(), f.bytes.size(), f.file, "", "", &m, &kind);
  EXPECT_NE(s.message().find("no \"attnwasm.config\""), std::string::npos) << s.message();
}

}  // namespace
}  // namespace aw
