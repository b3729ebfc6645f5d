// Reading the fields of a JSON config object (a model file's attnwasm.config,
// a Hugging Face config.json) with messages of one form:
//   <root><path>: expected <what>, got <what was there>
// e.g. "config.vocab_size: expected an integer in [1, 1000000], got 0",
//      "attnwasm.config.srcVocab[5]: expected a non-empty string, got 12".
// "got" is the value as written in the file (Describe): the literal of a
// number, a quoted string cut at 60 bytes, "nothing" for an absent key.
// Shared by the config readers (io/model_config.cpp, io/causal_lm_config.cpp)
// and the model families' Init, which check ranges against the literal the
// file had (ConfigSource).
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "io/json.h"

namespace aw::io {

// A string as a JSON literal for a message: quotes and control characters
// escaped, cut after 60 bytes (at a UTF-8 boundary) with "..." after it.
std::string QuoteJson(const std::string& s);
// What a message says was found: "nothing" (null pointer: the key is absent),
// "null", "true", "-3" (the literal as written), "\"vit\"", "an array of 2
// elements", "an object with 1 key".
std::string Describe(const JsonValue* v);
// ".fr" for an identifier-like key, "[\"a b\"]" otherwise.
std::string KeyPath(const std::string& key);
// "[lo, hi]"
std::string RangeStr(int64_t lo, int64_t hi);
// kInvalidArgument "<root><path>: expected <expected>, got <got>".
Status FieldError(const std::string& root, const std::string& path, const std::string& expected,
                  const std::string& got);

// True if v is a number with an integral value in [lo, hi]; then *out is it.
bool IntIn(const JsonValue* v, int64_t lo, int64_t hi, int64_t* out);

// Every object in v, at any depth, with no key twice: JSON.parse keeps a
// duplicate's last value and this reader its first, so a file that repeats a
// key would be read two ways (the JS face and the model would disagree).
// Refused naming the object's path and the key:
// "<root><path>: expected unique keys, got \"k\" more than once".
Status UniqueKeys(const JsonValue& v, const std::string& root, const std::string& path = "");

// An integer field as written, absent (or null) when v is null, or kUnreadInt (not an integer, beyond ±2^53): the
// config's rules then name it (ConfigRules).
int64_t IntOr(const JsonValue* v, int64_t absent);
// A number field as written (absent: def), NaN if it is not a number: the rules name it.
double NumberOr(const JsonValue* v, double def);

// The first string of `items` (in order) equal to an earlier one: its index, and the earlier one's in *first;
// items.size() when they are all different. One sort of indices (no hash table: the .wasm's size).
size_t FirstRepeat(const std::vector<std::string_view>& items, size_t* first);

// Parses text as a JSON object named `root` in messages ("config: not valid
// JSON: …", "config: expected a JSON object (<what>), got an array of 1
// element"), keys unique at every depth.
Status ParseObject(std::string_view text, const std::string& root, const std::string& what, JsonValue* out);

// The members of one JSON object, looked up by name, with its messages.
class FieldReader {
 public:
  FieldReader(const JsonValue& obj, std::string root) : obj_(obj), root_(std::move(root)) {}

  const JsonValue& object() const { return obj_; }
  const std::string& root() const { return root_; }
  const JsonValue* Get(std::string_view key) const { return obj_.Find(key); }
  // Absent or null.
  bool Missing(std::string_view key) const;
  // The error of `path` (".key", ".key[3]") under this object.
  Status Fail(const std::string& path, const std::string& expected, const std::string& got) const {
    return FieldError(root_, path, expected, got);
  }
  Status FailAt(std::string_view key, const std::string& expected) const {
    return Fail("." + std::string(key), expected, Describe(Get(key)));
  }

  // Required integer in [lo, hi]; `note` is appended to the expectation.
  Status Int(const char* key, int64_t lo, int64_t hi, int64_t* out, const std::string& note = "") const;
  // Required integer that divides `of` (named `of_name`).
  Status Divisor(const char* key, const char* of_name, int64_t of, int64_t* out) const;
  // Integer index into a list of `size` entries named `list` (optional: absent is fine).
  Status Index(const char* key, const char* list, size_t size) const;
  Status OptionalIndex(const char* key, const char* list, size_t size) const;
  // Optional boolean (absent: *out unchanged).
  Status OptionalBool(const char* key, bool* out = nullptr) const;
  // Optional finite number, positive if `positive` (absent: *out unchanged).
  Status OptionalNumber(const char* key, bool positive, double* out = nullptr) const;
  // Optional string among `allowed` ("\"a\" or \"b\"" in the message; absent: *out unchanged).
  Status OptionalEnum(const char* key, std::initializer_list<const char*> allowed, std::string* out = nullptr) const;

 private:
  const JsonValue& obj_;
  std::string root_;
};

// Where a config struct was read from, so that the model family's Init, the
// one home of its range rules, can word its errors as the reader would:
// "<root>.<key>: expected …, got <the literal the file had>". A family built
// in code has none: its errors name the field alone.
struct ConfigSource {
  const JsonValue* object = nullptr;  // the object the fields were read from
  std::string root;                   // its name: "config", "attnwasm.config.hf_config", …
};

// The range rules of a model family's Init, worded from its source: with one,
// kInvalidArgument "<root>.<key>: expected …, got <literal>" (a file's problem,
// as the reader words its own); without, kOutOfRange "<key>: expected …, got
// <value>" (core/rules.h's wording, for a family built in code). The reader
// stores a value it cannot read as an integer (a fraction, a string, an absent
// required key) as kUnreadInt, which every integer rule refuses, naming what
// the file had.
constexpr int64_t kUnreadInt = INT64_MIN;

class ConfigRules {
 public:
  explicit ConfigRules(const ConfigSource* src) : src_(src) {}
  // key in [lo, hi]; `note` is appended to the expectation.
  Status Int(std::string_view key, int64_t v, int64_t lo, int64_t hi, const std::string& note = "") const;
  // key divides `of` (named of_name).
  Status Divisor(std::string_view key, int64_t v, const char* of_name, int64_t of) const;
  // key a finite number > 0 (NaN: the reader could not read a number).
  Status Positive(std::string_view key, double v) const;
  // The general form: "<field>: expected <expected>, got <literal or value>".
  Status Fail(std::string_view key, const std::string& expected, double v) const;
  // As Fail, for an element of a list: "<field>[i]: …".
  Status FailItem(std::string_view key, size_t i, const std::string& expected, double v) const;
  // Whether the source wrote key as a list / at all, not null (false without a source).
  bool IsList(std::string_view key) const;
  bool Has(std::string_view key) const;

 private:
  std::string Field(std::string_view key) const;
  const JsonValue* Literal(std::string_view key) const;
  std::string Got(const JsonValue* literal, double v) const;
  const ConfigSource* src_;
};

}  // namespace aw::io
