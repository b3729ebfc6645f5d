// A small strict JSON reader (RFC 8259) for safetensors headers, model configs
// and vocabularies. It builds a plain tree (JsonValue); it is not a writer and
// not a streaming parser.
//
// Strict: UTF-8 is validated (overlong forms, surrogates encoded in UTF-8 and
// code points above U+10FFFF are rejected), \uXXXX escapes must pair their
// surrogates, no BOM, no comments, no trailing commas, nothing but whitespace
// after the value, numbers beyond the double range are rejected. Nesting is
// limited (kJsonMaxDepth) so hostile input cannot exhaust the stack.
// Object members keep their order and duplicate keys are all kept: the caller
// decides whether a duplicate is an error.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace aw::io {

enum class JsonType { kNull, kBool, kNumber, kString, kArray, kObject };

struct JsonMember;

struct JsonValue {
  JsonType type = JsonType::kNull;
  bool boolean = false;          // kBool
  double number = 0.0;           // kNumber, correctly rounded to double
  std::string str;               // kString: the decoded UTF-8 text;
                                 // kNumber: the literal exactly as written
  std::vector<JsonValue> items;  // kArray, in order
  std::vector<JsonMember> members;  // kObject, in order, duplicates kept

  bool is_object() const { return type == JsonType::kObject; }
  bool is_array() const { return type == JsonType::kArray; }
  bool is_string() const { return type == JsonType::kString; }
  bool is_number() const { return type == JsonType::kNumber; }

  // First member named `key`, or null (also when this is not an object).
  // The pointer is into this value and lives as long as it is unmodified.
  const JsonValue* Find(std::string_view key) const;

  // True if this is a number written as a plain integer literal (digits only:
  // no sign, fraction or exponent) not above 2^53, the largest integer every
  // consumer (double, JS Number) holds exactly. Then *out is its value.
  bool AsUint53(uint64_t* out) const;
};

struct JsonMember {
  std::string key;
  JsonValue value;
};

// Largest nesting of arrays/objects accepted by default: "[[1]]" has depth 2.
constexpr int kJsonMaxDepth = 64;

// Parses `text` as one JSON value into *out (which the caller owns; it is
// reset first and left unspecified on error). Errors are kInvalidArgument with
// a message "json: <what> at byte <offset into text>".
Status ParseJson(std::string_view text, JsonValue* out, int max_depth = kJsonMaxDepth);

// "null", "boolean", "number", "string", "array", "object".
const char* JsonTypeName(JsonType t);

}  // namespace aw::io
