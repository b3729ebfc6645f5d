// Tests for src/io/json.h: every value kind, escapes and surrogate pairs,
// UTF-8 validation at the boundaries of each sequence length, numbers and
// AsUint53, member order and duplicates, the depth limit, and one test per
// kind of error with the byte offset in the message; FirstRepeat (json_fields.h), the duplicate finder of
// the config readers.
#include "io/json.h"
#include "io/json_fields.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace aw::io {
namespace {

JsonValue MustParse(const std::string& text) {
  JsonValue v;
  const Status s = ParseJson(text, &v);
  EXPECT_TRUE(s.ok()) << "input: " << text << "\nerror: " << s.message();
  return v;
}

// Expects a parse error whose message contains every one of `parts`.
void ExpectError(const std::string& text, const std::vector<std::string>& parts) {
  JsonValue v;
  const Status s = ParseJson(text, &v);
  ASSERT_FALSE(s.ok()) << "accepted: " << text;
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(s.message().rfind("json: ", 0), 0u) << s.message();
  for (const std::string& p : parts) {
    EXPECT_NE(s.message().find(p), std::string::npos)
        << "input: " << text << "\nmessage: " << s.message() << "\nmissing: " << p;
  }
}

std::string Str(const std::string& json_string_literal) {
  return MustParse(json_string_literal).str;
}

TEST(JsonTest, Literals) {
  EXPECT_EQ(MustParse("null").type, JsonType::kNull);
  JsonValue t = MustParse("true"), f = MustParse(" false\n");
  EXPECT_EQ(t.type, JsonType::kBool);
  EXPECT_TRUE(t.boolean);
  EXPECT_EQ(f.type, JsonType::kBool);
  EXPECT_FALSE(f.boolean);
}

TEST(JsonTest, Numbers) {
  struct Case { const char* text; double value; };
  const Case cases[] = {{"0", 0.0},         {"-0", -0.0},          {"7", 7.0},
                        {"-12", -12.0},     {"1.5", 1.5},          {"1.5e3", 1500.0},
                        {"-12.25E-2", -0.1225}, {"2E+2", 200.0},   {"0.1", 0.1},
                        {"1e-400", 0.0},    {"1.7976931348623157e308", 1.7976931348623157e308},
                        {"123456789012345678901234567890", 123456789012345678901234567890.0}};
  for (const Case& c : cases) {
    JsonValue v = MustParse(c.text);
    EXPECT_EQ(v.type, JsonType::kNumber) << c.text;
    EXPECT_EQ(v.number, c.value) << c.text;
    EXPECT_EQ(v.str, c.text);  // the literal is kept as written
  }
  EXPECT_TRUE(std::signbit(MustParse("-0").number));
}

TEST(JsonTest, AsUint53AcceptsOnlyPlainIntegersUpTo2Pow53) {
  uint64_t u = 0;
  EXPECT_TRUE(MustParse("0").AsUint53(&u));
  EXPECT_EQ(u, 0u);
  EXPECT_TRUE(MustParse("123").AsUint53(&u));
  EXPECT_EQ(u, 123u);
  EXPECT_TRUE(MustParse("9007199254740992").AsUint53(&u));
  EXPECT_EQ(u, uint64_t(1) << 53);
  for (const char* bad : {"9007199254740993", "18446744073709551616", "-1", "-0", "1.5",
                          "1.0", "1e2", "1E0", "\"1\"", "true", "null", "[1]"}) {
    EXPECT_FALSE(MustParse(bad).AsUint53(&u)) << bad;
  }
}

TEST(JsonTest, Escapes) {
  EXPECT_EQ(Str(R"("a\"b\\c\/d\be\ff\ng\rh\ti")"), "a\"b\\c/d\be\ff\ng\rh\ti");
  EXPECT_EQ(Str(R"("\u0041\u00e9\u20AC")"), "A\xC3\xA9\xE2\x82\xAC");
  EXPECT_EQ(Str(R"("\uD83D\uDE00")"), "\xF0\x9F\x98\x80");  // U+1F600 via a surrogate pair
  EXPECT_EQ(Str(R"("\uDBFF\uDFFF")"), "\xF4\x8F\xBF\xBF");  // U+10FFFF
  const std::string nul = Str(R"("a\u0000b")");
  ASSERT_EQ(nul.size(), 3u);
  EXPECT_EQ(nul[1], '\0');
  EXPECT_EQ(Str(R"("")"), "");
}

TEST(JsonTest, RawUtf8AtSequenceBoundaries) {
  // U+007F, U+0080, U+07FF, U+0800, U+D7FF, U+E000, U+FFFF, U+10000, U+10FFFF.
  const char* ok[] = {"\x7F", "\xC2\x80", "\xDF\xBF", "\xE0\xA0\x80", "\xED\x9F\xBF",
                      "\xEE\x80\x80", "\xEF\xBF\xBF", "\xF0\x90\x80\x80", "\xF4\x8F\xBF\xBF"};
  for (const char* s : ok) EXPECT_EQ(Str("\"" + std::string(s) + "\""), s);
}

TEST(JsonTest, InvalidUtf8IsRejected) {
  struct Case { const char* bytes; const char* what; };
  const Case cases[] = {
      {"\x80", "lead byte 0x80"},             // lone continuation byte
      {"\xC0\x80", "lead byte 0xC0"},         // overlong NUL
      {"\xC1\xBF", "lead byte 0xC1"},         // overlong
      {"\xE0\x80\x80", "0x80 after lead byte 0xE0"},      // overlong 3-byte
      {"\xE0\x9F\xBF", "0x9F after lead byte 0xE0"},      // overlong 3-byte
      {"\xED\xA0\x80", "0xA0 after lead byte 0xED"},      // UTF-16 surrogate D800
      {"\xED\xBF\xBF", "0xBF after lead byte 0xED"},      // surrogate DFFF
      {"\xF0\x8F\xBF\xBF", "0x8F after lead byte 0xF0"},  // overlong 4-byte
      {"\xF4\x90\x80\x80", "0x90 after lead byte 0xF4"},  // above U+10FFFF
      {"\xF5\x80\x80\x80", "lead byte 0xF5"},
      {"\xFF", "lead byte 0xFF"},
      {"\xC3\x28", "0x28 after lead byte 0xC3"},          // missing continuation
      {"\xE2\x82\x28", "0x28 after lead byte 0xE2"},
  };
  for (const Case& c : cases) {
    ExpectError("\"" + std::string(c.bytes) + "\"", {"UTF-8", c.what, "at byte 1"});
  }
  ExpectError("\"\xE2\x82", {"truncated UTF-8"});
  ExpectError("\xC3\xA9", {"byte 0xC3", "at byte 0"});  // non-ASCII outside a string
}

TEST(JsonTest, SurrogateEscapesMustPair) {
  ExpectError(R"("\uD800")", {"high surrogate \\uD800 not followed", "at byte 1"});
  ExpectError(R"("\uD800x")", {"high surrogate"});
  ExpectError(R"("\uD800\n")", {"high surrogate"});
  ExpectError(R"("\uD800\u0041")", {"followed by \\u0041, not a low surrogate"});
  ExpectError(R"("\uD800\uD800")", {"not a low surrogate"});
  ExpectError(R"("ab\uDC00")", {"unpaired low surrogate \\uDC00", "at byte 3"});
  ExpectError(R"("\uDFFF\uD800")", {"unpaired low surrogate"});
}

TEST(JsonTest, StringErrors) {
  ExpectError("\"abc", {"unterminated string", "at byte 4"});
  ExpectError("\"a\nb\"", {"control character 0x0A", "at byte 2"});
  ExpectError(std::string("\"a\0b\"", 5), {"control character 0x00"});
  ExpectError(R"("\x")", {"invalid escape sequence '\\x'", "at byte 1"});
  ExpectError(R"("\')", {"invalid escape"});
  ExpectError(R"("\u12")", {"\\u escape"});
  ExpectError(R"("\u12G4")", {"invalid hex digit 'G'", "at byte 5"});
  ExpectError("\"\\", {"unterminated string"});
  ExpectError("'a'", {"unexpected '''", "expected a value"});
}

TEST(JsonTest, NumberErrors) {
  ExpectError("01", {"unexpected '1' after the JSON value", "at byte 1"});
  ExpectError("-", {"invalid number", "at byte 1"});
  ExpectError("-a", {"invalid number"});
  ExpectError("+1", {"unexpected '+'"});
  ExpectError(".5", {"unexpected '.'"});
  ExpectError("1.", {"digit after '.'", "at byte 2"});
  ExpectError("1.e3", {"digit after '.'"});
  ExpectError("1e", {"exponent"});
  ExpectError("1e+", {"exponent"});
  ExpectError("1e400", {"out of the double range", "at byte 0"});
  ExpectError("[0, -1e309]", {"out of the double range", "at byte 4"});
  ExpectError("NaN", {"unexpected 'N'"});
  ExpectError("Infinity", {"unexpected 'I'"});
  ExpectError("0x10", {"unexpected 'x'"});
}

TEST(JsonTest, ArraysAndObjects) {
  JsonValue v = MustParse(R"( { "b" : [1, "two", [true, null], {}] , "a":{"x":[]} } )");
  ASSERT_TRUE(v.is_object());
  ASSERT_EQ(v.members.size(), 2u);
  EXPECT_EQ(v.members[0].key, "b");  // order as written, not sorted
  EXPECT_EQ(v.members[1].key, "a");
  const JsonValue* b = v.Find("b");
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(b->is_array());
  ASSERT_EQ(b->items.size(), 4u);
  EXPECT_EQ(b->items[0].number, 1.0);
  EXPECT_EQ(b->items[1].str, "two");
  EXPECT_EQ(b->items[2].items.size(), 2u);
  EXPECT_TRUE(b->items[3].is_object());
  EXPECT_TRUE(v.Find("a")->Find("x")->is_array());
  EXPECT_EQ(v.Find("zzz"), nullptr);
  EXPECT_EQ(b->Find("b"), nullptr);  // not an object
  EXPECT_TRUE(MustParse("[]").is_array());
  EXPECT_TRUE(MustParse("{}").is_object());
  EXPECT_TRUE(MustParse("\t\r\n [ ] \t\r\n").is_array());
}

TEST(JsonTest, DuplicateKeysAreAllKept) {
  JsonValue v = MustParse(R"({"k": 1, "j": 2, "k": 3})");
  ASSERT_EQ(v.members.size(), 3u);
  EXPECT_EQ(v.members[0].key, "k");
  EXPECT_EQ(v.members[2].key, "k");
  EXPECT_EQ(v.members[2].value.number, 3.0);
  EXPECT_EQ(v.Find("k")->number, 1.0);  // Find returns the first
  // Keys are compared after unescaping: "\u006b" is "k".
  EXPECT_EQ(MustParse(R"({"k":1,"\u006b":2})").members[1].key, "k");
}

TEST(JsonTest, StructureErrors) {
  ExpectError("", {"unexpected end of input", "at byte 0"});
  ExpectError("   ", {"unexpected end of input", "at byte 3"});
  ExpectError("[1,]", {"unexpected ']', expected a value", "at byte 3"});
  ExpectError("[1 2]", {"expected ',' or ']'", "at byte 3"});
  ExpectError("[1", {"end of input", "',' or ']'"});
  ExpectError("{\"a\":1,}", {"unexpected '}', expected '\"'", "at byte 7"});
  ExpectError("{\"a\" 1}", {"expected ':'", "at byte 5"});
  ExpectError("{\"a\":}", {"expected a value", "at byte 5"});
  ExpectError("{a:1}", {"object key", "at byte 1"});
  ExpectError("{1:1}", {"object key"});
  ExpectError("{\"a\":1 \"b\":2}", {"',' or '}'", "at byte 7"});
  ExpectError("{\"a\":1", {"end of input"});
  ExpectError("tru", {"unexpected 't'"});
  ExpectError("nul", {"unexpected 'n'"});
  ExpectError("True", {"unexpected 'T'"});
  ExpectError("1 2", {"after the JSON value", "at byte 2"});
  ExpectError("{} x", {"after the JSON value", "at byte 3"});
  ExpectError("[]]", {"after the JSON value"});
  ExpectError("\xEF\xBB\xBF{}", {"byte 0xEF", "at byte 0"});  // BOM
  ExpectError("[1] // c", {"after the JSON value"});
  ExpectError("/* c */ 1", {"unexpected '/'"});
  ExpectError("\x0C" "1", {"byte 0x0C"});  // form feed is not JSON whitespace
  ExpectError(std::string("1\0", 2), {"byte 0x00", "at byte 1"});
}

TEST(JsonTest, DepthLimit) {
  auto nested = [](int depth, char open, char close) {
    return std::string(size_t(depth), open) + std::string(size_t(depth), close);
  };
  EXPECT_TRUE(MustParse(nested(kJsonMaxDepth, '[', ']')).is_array());
  ExpectError(nested(kJsonMaxDepth + 1, '[', ']'), {"nesting deeper than 64", "at byte 64"});
  std::string objects;
  for (int i = 0; i < kJsonMaxDepth; ++i) objects += "{\"a\":";
  objects += "1" + std::string(kJsonMaxDepth, '}');
  EXPECT_TRUE(MustParse(objects).is_object());
  ExpectError("[" + objects + "]", {"nesting deeper than 64"});
  // Far deeper than any stack could take if the recursion were unbounded.
  ExpectError(std::string(1000000, '['), {"nesting deeper than 64"});
  // A caller-chosen limit.
  JsonValue v;
  EXPECT_TRUE(ParseJson("[[1]]", &v, 2).ok());
  EXPECT_FALSE(ParseJson("[[[1]]]", &v, 2).ok());
  EXPECT_FALSE(ParseJson("[]", &v, 0).ok());
  EXPECT_TRUE(ParseJson("1", &v, 0).ok());
}

TEST(JsonTest, OutIsResetBeforeParsing) {
  JsonValue v = MustParse("[1, 2, 3]");
  ASSERT_TRUE(ParseJson("\"s\"", &v).ok());
  EXPECT_TRUE(v.is_string());
  EXPECT_TRUE(v.items.empty());
}

TEST(JsonTest, TypeNames) {
  EXPECT_STREQ(JsonTypeName(JsonType::kNull), "null");
  EXPECT_STREQ(JsonTypeName(JsonType::kBool), "boolean");
  EXPECT_STREQ(JsonTypeName(JsonType::kNumber), "number");
  EXPECT_STREQ(JsonTypeName(JsonType::kString), "string");
  EXPECT_STREQ(JsonTypeName(JsonType::kArray), "array");
  EXPECT_STREQ(JsonTypeName(JsonType::kObject), "object");
}

// Mutations of a valid document never crash (run under ASan/UBSan) and either
// parse or fail with a "json: " message.
TEST(JsonTest, MutatedInputNeverCrashes) {
  const std::string base =
      R"({"a": [1, -2.5e-3, true, false, null], "b\u00e9\uD83D\uDE00": {"c": "d\n\"é"}, "e": []})";
  const char replacements[] = {'\0', '"', '\\', '[', ']', '{', '}', ',', ':', 'u', 'e',
                               '-', '.', '0', '9', ' ', char(0x80), char(0xC3), char(0xED),
                               char(0xF4), char(0xFF)};
  size_t accepted = 0, variants = 0;
  auto check = [&](const std::string& text) {
    JsonValue v;
    const Status s = ParseJson(text, &v);
    ++variants;
    if (s.ok()) ++accepted;
    else ASSERT_EQ(s.message().rfind("json: ", 0), 0u) << s.message();
  };
  for (size_t i = 0; i <= base.size(); ++i) check(base.substr(0, i));
  for (size_t i = 0; i < base.size(); ++i) {
    for (char r : replacements) {
      std::string m = base;
      m[i] = r;
      check(m);
    }
  }
  std::mt19937 rng(12345);
  for (int k = 0; k < 3000; ++k) {
    std::string m = base;
    const int edits = 1 + int(rng() % 4);
    for (int e = 0; e < edits; ++e) m[rng() % m.size()] = char(rng() & 0xFF);
    check(m);
  }
  EXPECT_GT(variants, 4000u);
  EXPECT_GT(accepted, 0u);
}

// The first string equal to an earlier one, by position, against a quadratic scan; the earlier one is the first
// of its run (the readers' "also vocab[j]").
TEST(FirstRepeat, MatchesQuadraticScan) {
  const std::vector<std::vector<std::string_view>> cases = {
      {}, {"a"}, {"a", "b", "c"}, {"a", "a"}, {"b", "a", "b", "a"}, {"x", "y", "z", "y", "x", "y"},
      {"", "", "a"}, {"ab", "a", "abc", "a", "ab"}, {"c", "b", "a", "a", "b", "c"}, {"q", "p", "p", "p"}};
  for (const auto& items : cases) {
    size_t want = items.size(), want_first = 0;
    for (size_t i = 0; i < items.size() && want == items.size(); ++i)
      for (size_t j = 0; j < i; ++j)
        if (items[j] == items[i]) {
          want = i;
          want_first = j;
          break;
        }
    size_t first = 12345;
    EXPECT_EQ(FirstRepeat(items, &first), want) << items.size() << " items";
    if (want < items.size()) EXPECT_EQ(first, want_first);
  }
}

}  // namespace
}  // namespace aw::io
