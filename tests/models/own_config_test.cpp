// Tests of a model file's own attnwasm.config as the registry reads it (models/families.h CheckFamilyConfig,
// models/own_config.h, translator_config.cpp, vit_config.cpp): the configs of the shipped models (copied verbatim
// from models/<kind>/<kind>.safetensors) and minimal ones are accepted; every rule is broken once and the exact
// message is checked.

#include <gtest/gtest.h>

#include "config_test_util.h"
#include "models/translator.h"
#include "models/vit_classifier.h"

#include <string>
#include <utility>
#include <vector>

namespace aw {
namespace {

// The "attnwasm.config" of models/vit/vit.safetensors.
constexpr char kVitConfig[] = R"json({"model": "vit", "imageSize": 28, "patchSize": 4, "inChannels": 1, "dModel": 96, "nhead": 4, "numLayers": 4, "dimFeedforward": 192, "activation": "gelu", "normFirst": true, "layerNormEps": 1e-06, "numClasses": 10, "labels": ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"], "inputScale": "pixel/255", "mean": 0.1307, "std": 0.3081})json";

// The "attnwasm.config" of models/translator/translator.safetensors.
constexpr char kTranslatorConfig[] = R"json({"model": "translator", "dModel": 64, "nhead": 4, "numEncoderLayers": 2, "numDecoderLayers": 2, "dimFeedforward": 128, "activation": "relu", "normFirst": true, "layerNormEps": 1e-05, "maxLen": 64, "embedScale": 8.0, "positionalEncoding": "sinusoidal: pe[pos, 2i] = sin(pos * exp(2i * -ln(10000)/d)), pe[pos, 2i+1] = cos(same), float32, added after scaling; no dropout", "srcVocab": ["<pad>", "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty", "-", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety", "hundred", "thousand"], "tgtVocab": ["<pad>", "<eos>", "<fr>", "<de>", "z\u00e9ro", "un", "deux", "trois", "quatre", "cinq", "six", "sept", "huit", "neuf", "dix", "onze", "douze", "treize", "quatorze", "quinze", "seize", "-", "vingt", "et", "trente", "quarante", "cinquante", "soixante", "vingts", "cent", "cents", "mille", "null", "eins", "zwei", "drei", "vier", "f\u00fcnf", "sechs", "sieben", "acht", "neun", "zehn", "elf", "zw\u00f6lf", "dreizehn", "vierzehn", "f\u00fcnfzehn", "sechzehn", "siebzehn", "achtzehn", "neunzehn", "zwanzig", "ein", "und", "drei\u00dfig", "vierzig", "f\u00fcnfzig", "sechzig", "siebzig", "achtzig", "neunzig", "hundert", "tausend"], "pad": 0, "eos": 1, "langTokens": {"fr": 2, "de": 3}, "srcAddsEos": false, "srcPad": 0, "maxSrcTokens": 11, "maxTgtTokens": 19, "languages": {"fr": "French", "de": "German"}, "detokenize": {"en": "hyphen-join", "fr": "hyphen-join", "de": "concat"}, "detokenizeRules": {"hyphen-join": "join tokens with single spaces, except no space before or after a '-' token", "concat": "join tokens with no separator (German morphemes -> one word)"}, "tokenize": {"en": "split on spaces, then split each word at '-' keeping '-' as its own token; source = English token ids, padded with pad (0); no BOS/EOS on the source"}, "decoding": "decoder input starts with langTokens[lang] (no BOS); greedy argmax until eos or maxTgtTokens + 1 steps; output = tokens between the language token and eos", "dtype": "F16", "params": 177984})json";

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
  ExpectInvalid(Json(kMinVit), "bert", "expected: a family's kind (\"translator\", \"vit\", \"causal_lm\", \"encoder\", \"modernbert\", \"vision\", \"clip\", \"seq2seq\", \"t5\" or \"whisper\") or \"\", got \"bert\"");
  // An encoder is never a file's own config.
  ExpectInvalid(Json(kMinVit), "encoder", "attnwasm.config: expected a \"encoder\" model, got \"vit\"");
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

// The families' readers (models/translator_config.cpp, vit_config.cpp) fill their config structs, torch's
// defaults for the absent options.
template <class C>
Status ReadFile(Status (*read)(const io::FieldReader&, C*), const std::string& text, C* out) {
  io::JsonValue root;
  AW_RETURN_IF_ERROR(io::ParseJson(text, &root));
  return read(io::FieldReader(root, "attnwasm.config"), out);
}

TEST(ModelConfigTest, ParseReadsTheFieldsWithTheirDefaults) {
  TranslatorConfig t;
  ASSERT_TRUE(ReadFile(&ReadTranslatorFile, Json(kMinTranslator), &t).ok());
  EXPECT_EQ(t.layer.d_model, 64);
  EXPECT_EQ(t.layer.nhead, 4);
  EXPECT_EQ(t.num_decoder_layers, 1);
  EXPECT_EQ(t.src_vocab, 4);
  EXPECT_EQ(t.tgt_vocab, 6);
  EXPECT_EQ(t.eos, 1);
  EXPECT_EQ(t.embed_scale, 1.0);
  EXPECT_EQ(t.layer.activation, Activation::kRelu);
  EXPECT_FALSE(t.layer.norm_first);
  EXPECT_EQ(t.layer.layer_norm_eps, 1e-5);
  VitConfig v;
  ASSERT_TRUE(ReadFile(&ReadVitFile, Json(Set(Set(kMinVit, "activation", "\"gelu\""), "std", "0.5")), &v).ok());
  EXPECT_EQ(v.patch_size, 4);
  EXPECT_EQ(v.num_classes, 3);
  EXPECT_EQ(v.layer.activation, Activation::kGelu);
  EXPECT_EQ(v.mean, 0.0);
  EXPECT_EQ(v.std, 0.5);
  const Family* family = nullptr;
  EXPECT_TRUE(CheckFamilyConfig(Json(kMinVit), true, "", &family).ok());
  EXPECT_EQ(std::string(family->kind), "vit");
  const Status bad = ValidateModelConfig(Json(kMinVit), "translator");
  EXPECT_EQ(bad.message(), "attnwasm.config: expected a \"translator\" model, got \"vit\"");
}

}  // namespace
}  // namespace aw
