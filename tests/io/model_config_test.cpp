// Tests for src/io/model_config.h: the configs of the shipped models
// (copied verbatim from models/<kind>/<kind>.safetensors) and minimal ones
// are accepted; every rule is broken once and the exact message is checked.
#include "io/model_config.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace aw {
namespace {

// The "attnwasm.config" of models/vit/vit.safetensors.
constexpr char kVitConfig[] = R"json({"model": "vit", "imageSize": 28, "patchSize": 4, "inChannels": 1, "dModel": 96, "nhead": 4, "numLayers": 4, "dimFeedforward": 192, "activation": "gelu", "normFirst": true, "layerNormEps": 1e-06, "numClasses": 10, "labels": ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"], "inputScale": "pixel/255", "mean": 0.1307, "std": 0.3081})json";

// The "attnwasm.config" of models/translator/translator.safetensors.
constexpr char kTranslatorConfig[] = R"json({"model": "translator", "dModel": 64, "nhead": 4, "numEncoderLayers": 2, "numDecoderLayers": 2, "dimFeedforward": 128, "activation": "relu", "normFirst": true, "layerNormEps": 1e-05, "maxLen": 64, "embedScale": 8.0, "positionalEncoding": "sinusoidal: pe[pos, 2i] = sin(pos * exp(2i * -ln(10000)/d)), pe[pos, 2i+1] = cos(same), float32, added after scaling; no dropout", "srcVocab": ["<pad>", "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty", "-", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety", "hundred", "thousand"], "tgtVocab": ["<pad>", "<eos>", "<fr>", "<de>", "z\u00e9ro", "un", "deux", "trois", "quatre", "cinq", "six", "sept", "huit", "neuf", "dix", "onze", "douze", "treize", "quatorze", "quinze", "seize", "-", "vingt", "et", "trente", "quarante", "cinquante", "soixante", "vingts", "cent", "cents", "mille", "null", "eins", "zwei", "drei", "vier", "f\u00fcnf", "sechs", "sieben", "acht", "neun", "zehn", "elf", "zw\u00f6lf", "dreizehn", "vierzehn", "f\u00fcnfzehn", "sechzehn", "siebzehn", "achtzehn", "neunzehn", "zwanzig", "ein", "und", "drei\u00dfig", "vierzig", "f\u00fcnfzig", "sechzig", "siebzig", "achtzig", "neunzig", "hundert", "tausend"], "pad": 0, "eos": 1, "langTokens": {"fr": 2, "de": 3}, "srcAddsEos": false, "srcPad": 0, "maxSrcTokens": 11, "maxTgtTokens": 19, "languages": {"fr": "French", "de": "German"}, "detokenize": {"en": "hyphen-join", "fr": "hyphen-join", "de": "concat"}, "detokenizeRules": {"hyphen-join": "join tokens with single spaces, except no space before or after a '-' token", "concat": "join tokens with no separator (German morphemes -> one word)"}, "tokenize": {"en": "split on spaces, then split each word at '-' keeping '-' as its own token; source = English token ids, padded with pad (0); no BOS/EOS on the source"}, "decoding": "decoder input starts with langTokens[lang] (no BOS); greedy argmax until eos or maxTgtTokens + 1 steps; output = tokens between the language token and eos", "dtype": "F16", "params": 177984})json";

// A config as (key, JSON literal) pairs, so a test can change one key.
using Members = std::vector<std::pair<std::string, std::string>>;

std::string Json(const Members& ms) {
  std::string out = "{";
  for (size_t i = 0; i < ms.size(); ++i) {
    out += (i ? ", \"" : "\"") + ms[i].first + "\": " + ms[i].second;
  }
  return out + "}";
}

// ms with `key` set to `literal` (replaced in place, or appended).
Members Set(Members ms, const std::string& key, const std::string& literal) {
  for (auto& m : ms) {
    if (m.first == key) {
      m.second = literal;
      return ms;
    }
  }
  ms.emplace_back(key, literal);
  return ms;
}

Members Without(Members ms, const std::string& key) {
  Members out;
  for (auto& m : ms)
    if (m.first != key) out.push_back(m);
  EXPECT_NE(out.size(), ms.size()) << "no key " << key;
  return out;
}

// Only the required keys.
const Members kMinTranslator = {
    {"model", "\"translator\""}, {"dModel", "64"}, {"nhead", "4"}, {"numEncoderLayers", "2"},
    {"numDecoderLayers", "1"}, {"dimFeedforward", "128"}, {"maxLen", "64"},
    {"srcVocab", "[\"<pad>\", \"one\", \"two\", \"three\"]"},
    {"tgtVocab", "[\"<pad>\", \"<eos>\", \"<fr>\", \"<de>\", \"un\", \"eins\"]"},
    {"pad", "0"}, {"eos", "1"}, {"langTokens", "{\"fr\": 2, \"de\": 3}"},
    {"maxSrcTokens", "11"}, {"maxTgtTokens", "19"}};

const Members kMinVit = {{"model", "\"vit\""},  {"imageSize", "28"}, {"patchSize", "4"},
                         {"inChannels", "1"},    {"dModel", "96"},    {"nhead", "4"},
                         {"numLayers", "4"},     {"dimFeedforward", "192"}, {"numClasses", "3"}};

void ExpectValid(const std::string& json, const std::string& kind) {
  const Status s = ValidateModelConfig(json, kind);
  EXPECT_TRUE(s.ok()) << "kind '" << kind << "': " << s.message() << "\nconfig: " << json;
}

void ExpectInvalid(const std::string& json, const std::string& kind, const std::string& message) {
  const Status s = ValidateModelConfig(json, kind);
  ASSERT_FALSE(s.ok()) << "accepted: " << json;
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(s.message(), message) << "config: " << json;
}

TEST(ModelConfigTest, ShippedConfigsAreValid) {
  ExpectValid(kVitConfig, "vit");
  ExpectValid(kVitConfig, "");
  ExpectValid(kTranslatorConfig, "translator");
  ExpectValid(kTranslatorConfig, "");
}

TEST(ModelConfigTest, ShippedConfigOfTheOtherKindIsRejected) {
  ExpectInvalid(kVitConfig, "translator", "attnwasm.config: expected a \"translator\" model, got \"vit\"");
  ExpectInvalid(kTranslatorConfig, "vit", "attnwasm.config: expected a \"vit\" model, got \"translator\"");
}

TEST(ModelConfigTest, MinimalConfigsAreValid) {
  ExpectValid(Json(kMinTranslator), "translator");
  ExpectValid(Json(kMinVit), "vit");
}

TEST(ModelConfigTest, OptionalKeysAcceptTheirValues) {
  Members t = kMinTranslator;
  t = Set(t, "activation", "\"gelu\"");
  t = Set(t, "normFirst", "false");
  t = Set(t, "layerNormEps", "1e-12");
  t = Set(t, "embedScale", "-0.5");
  t = Set(t, "srcPad", "3");
  t = Set(t, "srcAddsEos", "true");
  ExpectValid(Json(t), "translator");
  Members v = kMinVit;
  v = Set(v, "activation", "\"relu\"");
  v = Set(v, "labels", "[\"cat\", \"\", \"dog\"]");
  v = Set(v, "mean", "-1.5");
  v = Set(v, "std", "0.25");
  ExpectValid(Json(v), "vit");
}

TEST(ModelConfigTest, UnknownKeysAreIgnored) {
  Members t = Set(kMinTranslator, "futureKey", "{\"nested\": [1, null, {\"x\": true}]}");
  t = Set(t, "dtype", "12");  // documentation keys are not checked
  t = Set(t, "decoding", "null");
  ExpectValid(Json(t), "translator");
  ExpectValid(Json(Set(kMinVit, "inputScale", "[\"anything\"]")), "vit");
}

TEST(ModelConfigTest, IntegersMayBeWrittenWithAFractionOrExponent) {
  // JSON.parse reads all of these as the same Number.
  ExpectValid(Json(Set(kMinTranslator, "dModel", "64.0")), "translator");
  ExpectValid(Json(Set(kMinTranslator, "dModel", "6.4e1")), "translator");
  ExpectValid(Json(Set(kMinTranslator, "pad", "-0")), "translator");
  ExpectInvalid(Json(Set(kMinTranslator, "dModel", "64.5")), "translator",
                "attnwasm.config.dModel: expected an integer in [1, 4096], got 64.5");
}

TEST(ModelConfigTest, BoundaryValuesAreAccepted) {
  Members t = Set(kMinTranslator, "dModel", "4096");
  t = Set(t, "nhead", "4096");
  t = Set(t, "numEncoderLayers", "1000");
  t = Set(t, "numDecoderLayers", "1000");
  t = Set(t, "dimFeedforward", "65536");
  t = Set(t, "maxLen", "65536");
  t = Set(t, "maxSrcTokens", "65536");
  t = Set(t, "maxTgtTokens", "1");
  t = Set(t, "pad", "5");
  t = Set(t, "langTokens", "{\"fr\": 0, \"de\": 5}");
  ExpectValid(Json(t), "translator");
  Members v = Set(kMinVit, "imageSize", "4096");
  v = Set(v, "patchSize", "4096");
  v = Set(v, "inChannels", "16");
  v = Set(v, "dModel", "1");
  v = Set(v, "nhead", "1");
  v = Set(v, "numClasses", "100000");
  ExpectValid(Json(v), "vit");
}

TEST(ModelConfigTest, NotJsonOrNotAnObject) {
  ExpectInvalid("", "", "attnwasm.config: not valid JSON: unexpected end of input, expected a value at byte 0");
  ExpectInvalid("{\"model\": \"vit\",}", "vit",
                "attnwasm.config: not valid JSON: unexpected '}', expected '\"' (an object key) at byte 16");
  ExpectInvalid("{\"model\": \"vit\"} x", "vit",
                "attnwasm.config: not valid JSON: unexpected 'x' after the JSON value at byte 17");
  ExpectInvalid("[1, 2]", "", "attnwasm.config: expected a JSON object, got an array of 2 elements");
  ExpectInvalid("\"vit\"", "vit", "attnwasm.config: expected a JSON object, got \"vit\"");
  ExpectInvalid("null", "vit", "attnwasm.config: expected a JSON object, got null");
}

TEST(ModelConfigTest, ModelKind) {
  ExpectInvalid(Json(kMinTranslator), "vit", "attnwasm.config: expected a \"vit\" model, got \"translator\"");
  ExpectInvalid(Json(Without(kMinVit, "model")), "vit", "attnwasm.config: expected a \"vit\" model, got nothing");
  ExpectInvalid(Json(Set(kMinVit, "model", "7")), "vit", "attnwasm.config: expected a \"vit\" model, got 7");
  ExpectInvalid(Json(Set(kMinVit, "model", "\"VIT\"")), "", "attnwasm.config.model: expected \"translator\", \"vit\" or \"causal_lm\", got \"VIT\"");
  ExpectInvalid(Json(Without(kMinVit, "model")), "", "attnwasm.config.model: expected \"translator\", \"vit\" or \"causal_lm\", got nothing");
  ExpectInvalid(Json(kMinVit), "bert", "expectedModel: expected \"translator\", \"vit\", \"causal_lm\" or \"\", got \"bert\"");
}

TEST(ModelConfigTest, DuplicateKeys) {
  Members t = kMinTranslator;
  t.emplace_back("dModel", "64");
  ExpectInvalid(Json(t), "translator", "attnwasm.config: expected unique keys, got \"dModel\" more than once");
  Members v = kMinVit;
  v.emplace_back("note", "1");
  v.emplace_back("note", "2");  // even keys the validator otherwise ignores
  ExpectInvalid(Json(v), "vit", "attnwasm.config: expected unique keys, got \"note\" more than once");
}

struct Case {
  Members config;
  const char* message;
};

void ExpectCases(const std::vector<Case>& cases, const std::string& kind) {
  for (const Case& c : cases) {
    SCOPED_TRACE(c.message);
    ExpectInvalid(Json(c.config), kind, c.message);
  }
}

TEST(ModelConfigTest, TranslatorHyperParameters) {
  const Members& t = kMinTranslator;
  ExpectCases({
      {Set(t, "dModel", "-3"), "attnwasm.config.dModel: expected an integer in [1, 4096], got -3"},
      {Set(t, "dModel", "0"), "attnwasm.config.dModel: expected an integer in [1, 4096], got 0"},
      {Set(t, "dModel", "4097"), "attnwasm.config.dModel: expected an integer in [1, 4096], got 4097"},
      {Set(t, "dModel", "\"64\""), "attnwasm.config.dModel: expected an integer in [1, 4096], got \"64\""},
      {Set(t, "dModel", "1e300"), "attnwasm.config.dModel: expected an integer in [1, 4096], got 1e300"},
      {Without(t, "dModel"), "attnwasm.config.dModel: expected an integer in [1, 4096], got nothing"},
      {Set(t, "nhead", "5"), "attnwasm.config.nhead: expected a divisor of dModel (64), got 5"},
      {Set(t, "nhead", "128"), "attnwasm.config.nhead: expected a divisor of dModel (64), got 128"},
      {Set(t, "nhead", "0"), "attnwasm.config.nhead: expected a divisor of dModel (64), got 0"},
      {Set(t, "nhead", "true"), "attnwasm.config.nhead: expected a divisor of dModel (64), got true"},
      {Set(t, "numEncoderLayers", "0"), "attnwasm.config.numEncoderLayers: expected an integer in [1, 1000], got 0"},
      {Set(t, "numEncoderLayers", "1001"), "attnwasm.config.numEncoderLayers: expected an integer in [1, 1000], got 1001"},
      {Without(t, "numDecoderLayers"), "attnwasm.config.numDecoderLayers: expected an integer in [1, 1000], got nothing"},
      {Set(t, "numDecoderLayers", "1.5"), "attnwasm.config.numDecoderLayers: expected an integer in [1, 1000], got 1.5"},
      {Set(t, "dimFeedforward", "65537"), "attnwasm.config.dimFeedforward: expected an integer in [1, 65536], got 65537"},
      {Set(t, "activation", "\"tanh\""), "attnwasm.config.activation: expected \"relu\" or \"gelu\", got \"tanh\""},
      {Set(t, "activation", "null"), "attnwasm.config.activation: expected \"relu\" or \"gelu\", got null"},
      {Set(t, "normFirst", "1"), "attnwasm.config.normFirst: expected a boolean, got 1"},
      {Set(t, "normFirst", "\"true\""), "attnwasm.config.normFirst: expected a boolean, got \"true\""},
      {Set(t, "layerNormEps", "0"), "attnwasm.config.layerNormEps: expected a finite number > 0, got 0"},
      {Set(t, "layerNormEps", "-1e-5"), "attnwasm.config.layerNormEps: expected a finite number > 0, got -1e-5"},
      {Set(t, "layerNormEps", "[1e-5]"), "attnwasm.config.layerNormEps: expected a finite number > 0, got an array of 1 element"},
      {Set(t, "maxLen", "0"), "attnwasm.config.maxLen: expected an integer in [1, 65536], got 0"},
      {Without(t, "maxLen"), "attnwasm.config.maxLen: expected an integer in [1, 65536], got nothing"},
      {Set(t, "embedScale", "\"8\""), "attnwasm.config.embedScale: expected a finite number, got \"8\""},
      {Set(t, "srcAddsEos", "0"), "attnwasm.config.srcAddsEos: expected a boolean, got 0"},
      {Set(t, "maxSrcTokens", "65"), "attnwasm.config.maxSrcTokens: expected an integer in [1, 64] (at most maxLen), got 65"},
      {Set(t, "maxSrcTokens", "0"), "attnwasm.config.maxSrcTokens: expected an integer in [1, 64] (at most maxLen), got 0"},
      {Without(t, "maxTgtTokens"), "attnwasm.config.maxTgtTokens: expected an integer in [1, 64] (at most maxLen), got nothing"},
  }, "translator");
}

TEST(ModelConfigTest, TranslatorVocabularies) {
  const Members& t = kMinTranslator;
  ExpectCases({
      {Without(t, "srcVocab"), "attnwasm.config.srcVocab: expected an array of 2 to 1000000 non-empty unique strings, got nothing"},
      {Set(t, "srcVocab", "[\"<pad>\"]"), "attnwasm.config.srcVocab: expected an array of 2 to 1000000 non-empty unique strings, got an array of 1 element"},
      {Set(t, "srcVocab", "{\"0\": \"<pad>\"}"), "attnwasm.config.srcVocab: expected an array of 2 to 1000000 non-empty unique strings, got an object with 1 key"},
      {Set(t, "srcVocab", "[\"a\", \"b\", \"c\", \"d\", \"e\", 12]"), "attnwasm.config.srcVocab[5]: expected a non-empty string, got 12"},
      {Set(t, "srcVocab", "[\"a\", \"\"]"), "attnwasm.config.srcVocab[1]: expected a non-empty string, got \"\""},
      {Set(t, "srcVocab", "[\"a\", null]"), "attnwasm.config.srcVocab[1]: expected a non-empty string, got null"},
      {Set(t, "srcVocab", "[\"a\", \"b\", \"a\"]"), "attnwasm.config.srcVocab[2]: expected a string not already in srcVocab, got \"a\" (also srcVocab[0])"},
      {Set(t, "tgtVocab", "[\"<pad>\", \"<eos>\", \"x\\ny\", \"x\\ny\"]"), "attnwasm.config.tgtVocab[3]: expected a string not already in tgtVocab, got \"x\\u000ay\" (also tgtVocab[2])"},
      {Set(t, "tgtVocab", "\"<pad> <eos>\""), "attnwasm.config.tgtVocab: expected an array of 2 to 1000000 non-empty unique strings, got \"<pad> <eos>\""},
      {Set(t, "pad", "6"), "attnwasm.config.pad: expected an integer in [0, 5] (an index into tgtVocab), got 6"},
      {Set(t, "pad", "-1"), "attnwasm.config.pad: expected an integer in [0, 5] (an index into tgtVocab), got -1"},
      {Without(t, "eos"), "attnwasm.config.eos: expected an integer in [0, 5] (an index into tgtVocab), got nothing"},
      {Set(t, "eos", "\"<eos>\""), "attnwasm.config.eos: expected an integer in [0, 5] (an index into tgtVocab), got \"<eos>\""},
      {Set(t, "srcPad", "4"), "attnwasm.config.srcPad: expected an integer in [0, 3] (an index into srcVocab), got 4"},
  }, "translator");
}

TEST(ModelConfigTest, TranslatorLanguageTokens) {
  const Members& t = kMinTranslator;
  ExpectCases({
      {Without(t, "langTokens"), "attnwasm.config.langTokens: expected an object of language name -> tgtVocab index with at least one key, got nothing"},
      {Set(t, "langTokens", "{}"), "attnwasm.config.langTokens: expected an object of language name -> tgtVocab index with at least one key, got an object with 0 keys"},
      {Set(t, "langTokens", "[2, 3]"), "attnwasm.config.langTokens: expected an object of language name -> tgtVocab index with at least one key, got an array of 2 elements"},
      {Set(t, "langTokens", "{\"fr\": 6}"), "attnwasm.config.langTokens.fr: expected an integer in [0, 5] (an index into tgtVocab), got 6"},
      {Set(t, "langTokens", "{\"fr\": 2, \"de\": \"3\"}"), "attnwasm.config.langTokens.de: expected an integer in [0, 5] (an index into tgtVocab), got \"3\""},
      {Set(t, "langTokens", "{\"pt-BR\": 2.5}"), "attnwasm.config.langTokens[\"pt-BR\"]: expected an integer in [0, 5] (an index into tgtVocab), got 2.5"},
      {Set(t, "langTokens", "{\"fr\": 2, \"fr\": 3}"), "attnwasm.config.langTokens: expected unique language names, got \"fr\" more than once"},
      {Set(t, "langTokens", "{\"\": 2}"), "attnwasm.config.langTokens: expected non-empty language names, got \"\""},
  }, "translator");
}

TEST(ModelConfigTest, VitHyperParameters) {
  const Members& v = kMinVit;
  ExpectCases({
      {Set(v, "imageSize", "0"), "attnwasm.config.imageSize: expected an integer in [1, 4096], got 0"},
      {Without(v, "imageSize"), "attnwasm.config.imageSize: expected an integer in [1, 4096], got nothing"},
      {Set(v, "patchSize", "5"), "attnwasm.config.patchSize: expected a divisor of imageSize (28), got 5"},
      {Set(v, "patchSize", "56"), "attnwasm.config.patchSize: expected a divisor of imageSize (28), got 56"},
      {Set(v, "inChannels", "17"), "attnwasm.config.inChannels: expected an integer in [1, 16], got 17"},
      {Set(v, "inChannels", "0"), "attnwasm.config.inChannels: expected an integer in [1, 16], got 0"},
      {Set(v, "dModel", "5000"), "attnwasm.config.dModel: expected an integer in [1, 4096], got 5000"},
      {Set(v, "nhead", "5"), "attnwasm.config.nhead: expected a divisor of dModel (96), got 5"},
      {Without(v, "numLayers"), "attnwasm.config.numLayers: expected an integer in [1, 1000], got nothing"},
      {Set(v, "dimFeedforward", "-192"), "attnwasm.config.dimFeedforward: expected an integer in [1, 65536], got -192"},
      {Set(v, "activation", "\"GELU\""), "attnwasm.config.activation: expected \"relu\" or \"gelu\", got \"GELU\""},
      {Set(v, "normFirst", "null"), "attnwasm.config.normFirst: expected a boolean, got null"},
      {Set(v, "layerNormEps", "\"1e-6\""), "attnwasm.config.layerNormEps: expected a finite number > 0, got \"1e-6\""},
      {Set(v, "numClasses", "0"), "attnwasm.config.numClasses: expected an integer in [1, 100000], got 0"},
      {Set(v, "numClasses", "100001"), "attnwasm.config.numClasses: expected an integer in [1, 100000], got 100001"},
      {Set(v, "labels", "[\"a\", \"b\"]"), "attnwasm.config.labels: expected an array of 3 strings (numClasses), got an array of 2 elements"},
      {Set(v, "labels", "\"abc\""), "attnwasm.config.labels: expected an array of 3 strings (numClasses), got \"abc\""},
      {Set(v, "labels", "[\"a\", \"b\", 3]"), "attnwasm.config.labels[2]: expected a string, got 3"},
      {Set(v, "mean", "\"0.1\""), "attnwasm.config.mean: expected a finite number, got \"0.1\""},
      {Set(v, "std", "0"), "attnwasm.config.std: expected a finite number > 0, got 0"},
      {Set(v, "std", "-0.3"), "attnwasm.config.std: expected a finite number > 0, got -0.3"},
      {Set(v, "std", "false"), "attnwasm.config.std: expected a finite number > 0, got false"},
  }, "vit");
}

TEST(ModelConfigTest, FirstProblemInKeyOrderIsReported) {
  // Several problems: dModel is checked before the vocabularies.
  Members t = Set(kMinTranslator, "srcVocab", "[]");
  t = Set(t, "dModel", "0");
  ExpectInvalid(Json(t), "translator", "attnwasm.config.dModel: expected an integer in [1, 4096], got 0");
}

TEST(ModelConfigTest, LongValuesAreShortenedInMessages) {
  const std::string word(100, 'w');
  ExpectInvalid(Json(Set(kMinTranslator, "activation", "\"" + word + "\"")), "translator",
                "attnwasm.config.activation: expected \"relu\" or \"gelu\", got \"" + std::string(60, 'w') + "\"...");
  // Cut at a UTF-8 boundary: 59 'x' then a 2-byte letter that would straddle byte 60.
  const std::string text = std::string(59, 'x') + "\xC3\xA9" + "tail";
  ExpectInvalid(Json(Set(kMinTranslator, "activation", "\"" + text + "\"")), "translator",
                "attnwasm.config.activation: expected \"relu\" or \"gelu\", got \"" + std::string(59, 'x') + "\"...");
  const std::string digits = "1" + std::string(60, '0');
  ExpectInvalid(Json(Set(kMinTranslator, "dModel", digits)), "translator",
                "attnwasm.config.dModel: expected an integer in [1, 4096], got " + digits.substr(0, 40) + "...");
}

TEST(ModelConfigTest, LargeVocabularyIsCheckedForDuplicates) {
  std::string vocab = "[";
  for (int i = 0; i < 50000; ++i) vocab += (i ? ",\"w" : "\"w") + std::to_string(i) + "\"";
  ExpectValid(Json(Set(kMinTranslator, "srcVocab", vocab + "]")), "translator");
  ExpectInvalid(Json(Set(kMinTranslator, "srcVocab", vocab + ",\"w31337\"]")), "translator",
                "attnwasm.config.srcVocab[50000]: expected a string not already in srcVocab, got \"w31337\" (also srcVocab[31337])");
}

TEST(ModelConfigTest, SourceTextAndDetokenizeRulesAreChecked) {
  ExpectValid(Json(Set(kMinTranslator, "sourceText", "\"words\"")), "translator");
  ExpectValid(Json(Set(kMinTranslator, "detokenize", "{\"fr\": \"space-join\", \"de\": \"concat\"}")), "translator");
  ExpectInvalid(Json(Set(kMinTranslator, "sourceText", "\"bytes\"")), "translator",
                "attnwasm.config.sourceText: expected \"english-numbers\" or \"words\", got \"bytes\"");
  ExpectInvalid(Json(Set(kMinTranslator, "detokenize", "{\"fr\": 3}")), "translator",
                "attnwasm.config.detokenize.fr: expected \"hyphen-join\", \"concat\" or \"space-join\", got 3");
}

TEST(ModelConfigTest, ParseReadsTheFieldsWithTheirDefaults) {
  ModelSpec t;
  ASSERT_TRUE(ParseModelConfig(Json(kMinTranslator), "translator", &t).ok());
  EXPECT_EQ(t.model, "translator");
  EXPECT_EQ(t.d_model, 64);
  EXPECT_EQ(t.nhead, 4);
  EXPECT_EQ(t.num_decoder_layers, 1);
  EXPECT_EQ(t.src_vocab, 4);
  EXPECT_EQ(t.tgt_vocab, 6);
  EXPECT_EQ(t.eos, 1);
  EXPECT_EQ(t.embed_scale, 1.0);
  EXPECT_EQ(t.activation, "relu");
  EXPECT_FALSE(t.norm_first);
  EXPECT_EQ(t.layer_norm_eps, 1e-5);
  ModelSpec v;
  ASSERT_TRUE(ParseModelConfig(Json(Set(Set(kMinVit, "activation", "\"gelu\""), "std", "0.5")), "", &v).ok());
  EXPECT_EQ(v.model, "vit");
  EXPECT_EQ(v.patch_size, 4);
  EXPECT_EQ(v.num_classes, 3);
  EXPECT_EQ(v.activation, "gelu");
  EXPECT_EQ(v.mean, 0.0);
  EXPECT_EQ(v.std, 0.5);
  const Status bad = ParseModelConfig(Json(kMinVit), "translator", &t);
  EXPECT_EQ(bad.message(), "attnwasm.config: expected a \"translator\" model, got \"vit\"");
}

// ---- causal LMs: a Hugging Face config.json (ParseCausalLmConfig) and a file's {"model": "causal_lm", …} ----

// The keys a Llama config.json needs (HF's defaults for the rest).
const Members kMinLlama = {{"model_type", "\"llama\""},      {"vocab_size", "98"},         {"hidden_size", "128"},
                           {"intermediate_size", "384"},      {"num_hidden_layers", "4"},   {"num_attention_heads", "4"}};

void ExpectHfInvalid(const Members& ms, const std::string& message) {
  CausalLmSpec spec;
  const Status s = ParseCausalLmConfig(Json(ms), &spec);
  ASSERT_FALSE(s.ok()) << "accepted: " << Json(ms);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(s.message(), message) << "config: " << Json(ms);
}

TEST(ModelConfigTest, CausalLmConfigJsonReadWithHuggingFaceDefaults) {
  CausalLmSpec l;
  ASSERT_TRUE(ParseCausalLmConfig(Json(kMinLlama), &l).ok());
  EXPECT_EQ(l.model_type, "llama");
  EXPECT_EQ(l.kv_heads, 4);        // num_key_value_heads absent: = num_attention_heads
  EXPECT_EQ(l.head_dim, 32);       // hidden_size / num_attention_heads
  EXPECT_EQ(l.rms_eps, 1e-6);
  EXPECT_EQ(l.rope_theta, 10000.0);
  EXPECT_EQ(l.max_positions, 2048);
  EXPECT_FALSE(l.tied || l.qkv_bias || l.o_bias || l.mlp_bias);
  Members b = Set(Set(kMinLlama, "attention_bias", "true"), "mlp_bias", "true");
  ASSERT_TRUE(ParseCausalLmConfig(Json(Set(Set(b, "num_key_value_heads", "2"), "head_dim", "64")), &l).ok());
  EXPECT_TRUE(l.qkv_bias && l.o_bias && l.mlp_bias);
  EXPECT_EQ(l.kv_heads, 2);
  EXPECT_EQ(l.head_dim, 64);
  // Qwen2: q, k, v biased always, o and the MLP never; 32768 positions by default.
  CausalLmSpec q;
  ASSERT_TRUE(ParseCausalLmConfig(Json(Set(Set(kMinLlama, "model_type", "\"qwen2\""), "tie_word_embeddings", "true")), &q).ok());
  EXPECT_TRUE(q.qkv_bias && !q.o_bias && !q.mlp_bias && q.tied);
  EXPECT_EQ(q.max_positions, 32768);
  // Keys it does not read are ignored; rope_scaling null or default is no scaling.
  ASSERT_TRUE(ParseCausalLmConfig(Json(Set(Set(kMinLlama, "architectures", "[\"LlamaForCausalLM\"]"), "rope_scaling",
                                           "{\"rope_type\": \"default\"}")), &l).ok());
}

TEST(ModelConfigTest, CausalLmConfigJsonRefusalsNameTheKey) {
  ExpectHfInvalid(Set(kMinLlama, "model_type", "\"mistral\""),
                  "config.model_type: expected \"llama\" or \"qwen2\", got \"mistral\"");
  ExpectHfInvalid(Set(kMinLlama, "hidden_act", "\"gelu\""), "config.hidden_act: expected \"silu\", got \"gelu\"");
  ExpectHfInvalid(Set(kMinLlama, "rope_scaling", "{\"rope_type\": \"linear\", \"factor\": 2.0}"),
                  "config.rope_scaling: expected null or {\"rope_type\": \"default\"} (scaled RoPE is not supported), "
                  "got an object with 2 keys");
  ExpectHfInvalid(Set(kMinLlama, "num_key_value_heads", "3"),
                  "config.num_key_value_heads: expected a divisor of num_attention_heads (4), got 3");
  ExpectHfInvalid(Set(kMinLlama, "head_dim", "33"), "config.head_dim: expected an even number (RoPE pairs), got 33");
  ExpectHfInvalid(Set(kMinLlama, "num_attention_heads", "3"),
                  "config.head_dim: expected a number, or hidden_size / num_attention_heads an even integer (128 / 3), "
                  "got nothing");
  ExpectHfInvalid(Set(Set(kMinLlama, "model_type", "\"qwen2\""), "use_sliding_window", "true"),
                  "config.use_sliding_window: expected false (sliding-window attention is not supported), got true");
  ExpectHfInvalid(Set(kMinLlama, "vocab_size", "0"), "config.vocab_size: expected an integer in [1, 1000000], got 0");
  ExpectHfInvalid(Without(kMinLlama, "hidden_size"), "config.hidden_size: expected an integer in [1, 16384], got nothing");
  ExpectHfInvalid(Set(kMinLlama, "tie_word_embeddings", "1"), "config.tie_word_embeddings: expected a boolean, got 1");
  CausalLmSpec spec;
  EXPECT_EQ(ParseCausalLmConfig("[1]", &spec).message(),
            "config: expected a JSON object (a Hugging Face config.json), got an array of 1 element");
  EXPECT_EQ(ParseCausalLmConfig("{", &spec).code(), Code::kInvalidArgument);
}

void ExpectHfOk(const Members& ms, CausalLmSpec* out = nullptr) {
  CausalLmSpec spec;
  const Status s = ParseCausalLmConfig(Json(ms), out ? out : &spec);
  EXPECT_TRUE(s.ok()) << Json(ms) << ": " << s.message();
}

// The RoPE base from either generation of config.json: transformers 4.x writes rope_theta, 5.x only
// rope_parameters.rope_theta (issue 28: it was ignored, and every 5.x save of a model whose base is not
// 10 000 gave wrong logits). Both may be given when they agree.
TEST(ModelConfigTest, CausalLmRopeBaseFromEitherGeneration) {
  CausalLmSpec l;
  ExpectHfOk(Set(kMinLlama, "rope_theta", "500000.0"), &l);
  EXPECT_EQ(l.rope_theta, 500000.0);
  ExpectHfOk(Set(kMinLlama, "rope_parameters", R"({"rope_theta": 500000.0, "rope_type": "default"})"), &l);
  EXPECT_EQ(l.rope_theta, 500000.0);
  ExpectHfOk(Set(kMinLlama, "rope_parameters", R"({"type": "default", "rope_theta": 1e6, "partial_rotary_factor": 1.0})"), &l);
  EXPECT_EQ(l.rope_theta, 1e6);
  ExpectHfOk(Set(Set(kMinLlama, "rope_theta", "100000"), "rope_parameters", R"({"rope_type": "default", "rope_theta": 1e5})"), &l);
  EXPECT_EQ(l.rope_theta, 1e5);
  ExpectHfOk(Set(kMinLlama, "rope_parameters", R"({"rope_type": "default"})"), &l);
  EXPECT_EQ(l.rope_theta, 10000.0);
  ExpectHfOk(Set(kMinLlama, "rope_parameters", "null"), &l);
  EXPECT_EQ(l.rope_theta, 10000.0);
  ExpectHfInvalid(Set(Set(kMinLlama, "rope_theta", "10000.0"), "rope_parameters", R"({"rope_type": "default", "rope_theta": 500000.0})"),
                  "config.rope_parameters.rope_theta: expected the same base as rope_theta (10000.0) when both are given, "
                  "got 500000.0");
  ExpectHfInvalid(Set(kMinLlama, "rope_parameters", R"({"rope_type": "default", "rope_theta": 0})"),
                  "config.rope_parameters.rope_theta: expected a finite number > 0, got 0");
  ExpectHfInvalid(Set(kMinLlama, "rope_parameters", R"({"rope_type": "default", "rope_theta": -10000})"),
                  "config.rope_parameters.rope_theta: expected a finite number > 0, got -10000");
  ExpectHfInvalid(Set(kMinLlama, "rope_parameters", R"({"rope_type": "default", "rope_theta": "1e6"})"),
                  "config.rope_parameters.rope_theta: expected a finite number > 0, got \"1e6\"");
  ExpectHfInvalid(Set(kMinLlama, "rope_parameters", R"({"rope_type": "llama3", "rope_theta": 500000.0, "factor": 32.0})"),
                  "config.rope_parameters.rope_type: expected \"default\" (scaled RoPE is not supported), got \"llama3\"");
  ExpectHfInvalid(Set(kMinLlama, "rope_parameters", R"({"rope_theta": 500000.0, "factor": 8.0})"),
                  "config.rope_parameters.factor: expected no such key (the default RoPE has rope_type, rope_theta and "
                  "partial_rotary_factor; scaled RoPE is not supported), got 8.0");
  ExpectHfInvalid(Set(kMinLlama, "rope_parameters", R"({"rope_type": "default", "partial_rotary_factor": 0.5})"),
                  "config.rope_parameters.partial_rotary_factor: expected 1 (RoPE on every dim), got 0.5");
  ExpectHfInvalid(Set(kMinLlama, "rope_parameters", "\"default\""),
                  "config.rope_parameters: expected null or an object, got \"default\"");
  ExpectHfInvalid(Set(kMinLlama, "rope_theta", "0"), "config.rope_theta: expected a finite number > 0, got 0");
}

// bos/eos/pad ids: integers in [0, vocab_size) or null; eos_token_id also a list. Tested at both edges of the
// range (the last valid id and the first invalid one), and with what is not an id at all.
TEST(ModelConfigTest, CausalLmTokenIdsAreIdsOfTheVocabulary) {
  for (const char* key : {"bos_token_id", "eos_token_id", "pad_token_id"}) {
    SCOPED_TRACE(key);
    const std::string field = std::string("config.") + key + ": expected an id in [0, 97] (vocab_size 98) or null" +
                              (std::string(key) == "eos_token_id" ? ", or a list of ids" : "") + ", got ";
    ExpectHfOk(Set(kMinLlama, key, "null"));
    ExpectHfOk(Set(kMinLlama, key, "0"));
    ExpectHfOk(Set(kMinLlama, key, "97"));
    ExpectHfOk(Set(kMinLlama, key, "97.0"));
    ExpectHfInvalid(Set(kMinLlama, key, "98"), field + "98");
    ExpectHfInvalid(Set(kMinLlama, key, "-1"), field + "-1");
    ExpectHfInvalid(Set(kMinLlama, key, "\"two\""), field + "\"two\"");
    ExpectHfInvalid(Set(kMinLlama, key, "1.5"), field + "1.5");
    ExpectHfInvalid(Set(kMinLlama, key, "true"), field + "true");
    ExpectHfInvalid(Set(kMinLlama, key, "1e300"), field + "1e300");
  }
  ExpectHfOk(Set(kMinLlama, "eos_token_id", "[0, 97]"));
  ExpectHfOk(Set(kMinLlama, "eos_token_id", "[]"));
  ExpectHfInvalid(Set(kMinLlama, "eos_token_id", "[0, 98]"), "config.eos_token_id[1]: expected an id in [0, 97] (vocab_size 98), got 98");
  ExpectHfInvalid(Set(kMinLlama, "eos_token_id", "[\"two\"]"), "config.eos_token_id[0]: expected an id in [0, 97] (vocab_size 98), got \"two\"");
  ExpectHfInvalid(Set(kMinLlama, "bos_token_id", "[1]"),
                  "config.bos_token_id: expected an id in [0, 97] (vocab_size 98) or null, got an array of 1 element");
}

// A key given twice is read one way by JSON.parse (the last) and another by this reader (the first), so it is
// refused, at any depth (issue 28: vocab_size 256 then 100 gave 256-wide logits and a vocabSize of 100).
TEST(ModelConfigTest, DuplicateKeysAreRefusedAtAnyDepth) {
  ExpectHfInvalid(Set(kMinLlama, "vocab_size\": 256, \"vocab_size", "100"),
                  "config: expected unique keys, got \"vocab_size\" more than once");
  ExpectHfInvalid(Set(kMinLlama, "rope_parameters", R"({"rope_theta": 1e6, "rope_theta": 1e4})"),
                  "config.rope_parameters: expected unique keys, got \"rope_theta\" more than once");
  ExpectHfInvalid(Set(kMinLlama, "task_specific_params", R"({"a": [{"b": 1, "b": 2}]})"),
                  "config.task_specific_params.a[0]: expected unique keys, got \"b\" more than once");
  const std::string file = "{\"model\": \"causal_lm\", \"hf_config\": " + Json(Set(kMinLlama, "vocab_size\": 256, \"vocab_size", "100")) + "}";
  ExpectInvalid(file, "", "attnwasm.config.hf_config: expected unique keys, got \"vocab_size\" more than once");
}

// Every range the config reader applies, at its edges: the last valid value passes, the first invalid one is
// refused naming the key (a hand-made mutation run found range checks whose tests only used far-off values).
TEST(ModelConfigTest, CausalLmConfigRangesAtTheirEdges) {
  const Members base = Set(kMinLlama, "head_dim", "32");  // so that hidden_size and the heads vary alone
  struct Edge { const char* key; const char* ok; const char* bad; const char* expected; };
  const Edge edges[] = {
      {"vocab_size", "1", "0", "an integer in [1, 1000000]"},
      {"vocab_size", "1000000", "1000001", "an integer in [1, 1000000]"},
      {"hidden_size", "1", "0", "an integer in [1, 16384]"},
      {"hidden_size", "16384", "16385", "an integer in [1, 16384]"},
      {"intermediate_size", "1", "0", "an integer in [1, 65536]"},
      {"intermediate_size", "65536", "65537", "an integer in [1, 65536]"},
      {"num_hidden_layers", "1", "0", "an integer in [1, 1000]"},
      {"num_hidden_layers", "1000", "1001", "an integer in [1, 1000]"},
      {"num_attention_heads", "1", "0", "an integer in [1, 128]"},
      {"num_attention_heads", "128", "129", "an integer in [1, 128]"},
      {"num_key_value_heads", "4", "5", "a divisor of num_attention_heads (4)"},
      {"num_key_value_heads", "1", "0", "a divisor of num_attention_heads (4)"},
      {"head_dim", "2", "1", "an integer in [2, 1024]"},
      {"head_dim", "1024", "1025", "an integer in [2, 1024]"},
      {"head_dim", "1024", "1026", "an integer in [2, 1024]"},
      {"max_position_embeddings", "1", "0", "an integer in [1, 1048576]"},
      {"max_position_embeddings", "1048576", "1048577", "an integer in [1, 1048576]"},
      {"rms_norm_eps", "1e-300", "0", "a finite number > 0"},
      {"rope_theta", "1e-300", "0", "a finite number > 0"},
  };
  for (const Edge& e : edges) {
    SCOPED_TRACE(std::string(e.key) + " " + e.ok + " / " + e.bad);
    // num_attention_heads may not exceed hidden_size: one head for the smallest width.
    const Members b = std::string(e.key) == "hidden_size" ? Set(base, "num_attention_heads", "1") : base;
    ExpectHfOk(Set(b, e.key, e.ok));
    ExpectHfInvalid(Set(b, e.key, e.bad), std::string("config.") + e.key + ": expected " + e.expected + ", got " + e.bad);
  }
}

// A file's config: the HF config under hf_config, an optional "chars" tokenizer and attention window.
std::string LmFile(const std::string& tokenizer, const std::string& window = "") {
  return "{\"model\": \"causal_lm\", \"hf_config\": " +
         Json(Set(Set(kMinLlama, "vocab_size", "4"), "tie_word_embeddings", "true")) +
         (tokenizer.empty() ? "" : ", \"tokenizer\": " + tokenizer) + (window.empty() ? "" : ", \"attentionWindow\": " + window) +
         "}";
}

TEST(ModelConfigTest, CausalLmFileConfig) {
  const std::string tok = R"({"type": "chars", "vocab": ["<eos>", "a", "b", "\u00e9"], "special": [0], "bos": 0, "eos": 0, "unknown": "refuse"})";
  ExpectValid(LmFile(""), "causal_lm");
  ExpectValid(LmFile(tok, "128"), "");
  ModelSpec s;
  ASSERT_TRUE(ParseModelConfig(LmFile(tok, "128"), "causal_lm", &s).ok());
  EXPECT_EQ(s.model, "causal_lm");
  EXPECT_EQ(s.attention_window, 128);
  EXPECT_EQ(s.lm.vocab, 4);
  EXPECT_TRUE(s.lm.tied);
  ExpectInvalid(LmFile(tok), "vit", "attnwasm.config: expected a \"vit\" model, got \"causal_lm\"");
  ExpectInvalid("{\"model\": \"causal_lm\"}", "", "attnwasm.config.hf_config: expected a Hugging Face config.json object, got nothing");
  ExpectInvalid(LmFile("", "0"), "", "attnwasm.config.attentionWindow: expected an integer in [1, 1048576], got 0");
  ExpectInvalid("{\"model\": \"causal_lm\", \"hf_config\": " + Json(Set(kMinLlama, "hidden_act", "\"relu\"")) + "}", "",
                "attnwasm.config.hf_config.hidden_act: expected \"silu\", got \"relu\"");
  ExpectInvalid(LmFile(R"({"type": "bpe"})"), "", "attnwasm.config.tokenizer.type: expected \"chars\", got \"bpe\"");
  ExpectInvalid(LmFile(R"({"type": "chars", "vocab": ["a", "b"]})"), "",
                "attnwasm.config.tokenizer.vocab: expected an array of vocab_size (4) strings, got an array of 2 elements");
  ExpectInvalid(LmFile(R"({"type": "chars", "vocab": ["<eos>", "a", "b", "c"]})"), "",
                "attnwasm.config.tokenizer.vocab[0]: expected one character (an id not in special), got \"<eos>\"");
  ExpectInvalid(LmFile(R"({"type": "chars", "vocab": ["x", "a", "b", "a"]})"), "",
                "attnwasm.config.tokenizer.vocab[3]: expected an entry listed once, got \"a\" again");
  ExpectInvalid(LmFile(R"({"type": "chars", "vocab": ["<eos>", "a", "b", "c"], "special": [0, 4]})"), "",
                "attnwasm.config.tokenizer.special[1]: expected an id in [0, 3], listed once, got 4");
  ExpectInvalid(LmFile(R"({"type": "chars", "vocab": ["<eos>", "a", "b", "c"], "special": [0], "eos": 1})"), "",
                "attnwasm.config.tokenizer.eos: expected null or an id listed in special, got 1");
  ExpectInvalid(LmFile(R"({"type": "chars", "vocab": ["<eos>", "a", "b", "c"], "special": [0], "unknown": "drop"})"), "",
                "attnwasm.config.tokenizer.unknown: expected \"refuse\" or \"skip\", got \"drop\"");
}

}  // namespace
}  // namespace aw
