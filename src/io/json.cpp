// Strict JSON reader: a recursive-descent parser whose recursion is bounded by
// max_depth. See json.h for what is accepted.
#include "io/json.h"

#include <cmath>

#include "core/parse_double.h"
#include "core/rules.h"

namespace aw::io {

const JsonValue* JsonValue::Find(std::string_view key) const {
  for (const JsonMember& m : members) {
    if (m.key == key) return &m.value;
  }
  return nullptr;
}

bool JsonValue::AsUint53(uint64_t* out) const {
  // 2^53 = 9007199254740992 has 16 digits; JSON forbids leading zeros.
  if (type != JsonType::kNumber || str.empty() || str.size() > 16) return false;
  uint64_t v = 0;
  for (char c : str) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + uint64_t(c - '0');
  }
  if (v > (uint64_t(1) << 53)) return false;
  *out = v;
  return true;
}

const char* JsonTypeName(JsonType t) {
  switch (t) {
    case JsonType::kNull: return "null";
    case JsonType::kBool: return "boolean";
    case JsonType::kNumber: return "number";
    case JsonType::kString: return "string";
    case JsonType::kArray: return "array";
    case JsonType::kObject: return "object";
  }
  return "?";
}

namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(char(cp));
  } else if (cp < 0x800) {
    out->push_back(char(0xC0 | (cp >> 6)));
    out->push_back(char(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(char(0xE0 | (cp >> 12)));
    out->push_back(char(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(char(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(char(0xF0 | (cp >> 18)));
    out->push_back(char(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(char(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(char(0x80 | (cp & 0x3F)));
  }
}

class Parser {
 public:
  Parser(std::string_view text, int max_depth) : s_(text), max_depth_(max_depth) {}

  Status ParseDocument(JsonValue* out) {
    SkipWhitespace();
    AW_RETURN_IF_ERROR(ParseValue(out, 0));
    SkipWhitespace();
    if (pos_ != s_.size()) return Error("unexpected " + Describe(pos_) + " after the JSON value");
    return Status::OK();
  }

 private:
  // `depth` = number of arrays/objects enclosing this value.
  Status ParseValue(JsonValue* out, int depth) {
    if (pos_ >= s_.size()) return Error("unexpected end of input, expected a value");
    switch (s_[pos_]) {
      case '{': return ParseObject(out, depth + 1);
      case '[': return ParseArray(out, depth + 1);
      case '"':
        out->type = JsonType::kString;
        return ParseString(&out->str);
      case 't': return ParseLiteral("true", JsonType::kBool, true, out);
      case 'f': return ParseLiteral("false", JsonType::kBool, false, out);
      case 'n': return ParseLiteral("null", JsonType::kNull, false, out);
      default:
        if (s_[pos_] == '-' || IsDigit(s_[pos_])) return ParseNumber(out);
        return Error("unexpected " + Describe(pos_) + ", expected a value");
    }
  }

  Status ParseObject(JsonValue* out, int depth) {
    if (depth > max_depth_) return Error("nesting deeper than " + std::to_string(max_depth_));
    out->type = JsonType::kObject;
    ++pos_;  // '{'
    SkipWhitespace();
    if (Consume('}')) return Status::OK();
    while (true) {
      if (pos_ >= s_.size() || s_[pos_] != '"') return Expected("'\"' (an object key)");
      out->members.emplace_back();
      JsonMember& m = out->members.back();
      AW_RETURN_IF_ERROR(ParseString(&m.key));
      SkipWhitespace();
      if (!Consume(':')) return Expected("':' after an object key");
      SkipWhitespace();
      AW_RETURN_IF_ERROR(ParseValue(&m.value, depth));
      SkipWhitespace();
      if (Consume('}')) return Status::OK();
      if (!Consume(',')) return Expected("',' or '}' in an object");
      SkipWhitespace();
    }
  }

  Status ParseArray(JsonValue* out, int depth) {
    if (depth > max_depth_) return Error("nesting deeper than " + std::to_string(max_depth_));
    out->type = JsonType::kArray;
    ++pos_;  // '['
    SkipWhitespace();
    if (Consume(']')) return Status::OK();
    while (true) {
      out->items.emplace_back();
      AW_RETURN_IF_ERROR(ParseValue(&out->items.back(), depth));
      SkipWhitespace();
      if (Consume(']')) return Status::OK();
      if (!Consume(',')) return Expected("',' or ']' in an array");
      SkipWhitespace();
    }
  }

  Status ParseLiteral(std::string_view word, JsonType type, bool value, JsonValue* out) {
    if (s_.substr(pos_, word.size()) != word) {
      return Error("unexpected " + Describe(pos_) + ", expected a value");
    }
    pos_ += word.size();
    out->type = type;
    out->boolean = value;
    return Status::OK();
  }

  // number = [ "-" ] ( "0" / [1-9] *DIGIT ) [ "." 1*DIGIT ] [ ("e"/"E") ["+"/"-"] 1*DIGIT ]
  Status ParseNumber(JsonValue* out) {
    const size_t start = pos_;
    Consume('-');
    if (Consume('0')) {
      // no further digits: leading zeros are not JSON
    } else if (pos_ < s_.size() && IsDigit(s_[pos_])) {
      while (pos_ < s_.size() && IsDigit(s_[pos_])) ++pos_;
    } else {
      return Error("invalid number: expected a digit");
    }
    if (Consume('.')) {
      if (pos_ >= s_.size() || !IsDigit(s_[pos_])) return Error("invalid number: expected a digit after '.'");
      while (pos_ < s_.size() && IsDigit(s_[pos_])) ++pos_;
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      if (!Consume('+')) Consume('-');
      if (pos_ >= s_.size() || !IsDigit(s_[pos_])) return Error("invalid number: expected a digit in the exponent");
      while (pos_ < s_.size() && IsDigit(s_[pos_])) ++pos_;
    }
    out->type = JsonType::kNumber;
    out->str.assign(s_.data() + start, pos_ - start);
    out->number = ParseDouble(out->str);
    if (std::isinf(out->number)) {
      pos_ = start;
      return Error("number " + out->str.substr(0, 32) + " is out of the double range");
    }
    return Status::OK();
  }

  // At '"'. Decodes escapes, validates UTF-8, appends to *out.
  Status ParseString(std::string* out) {
    ++pos_;  // opening quote
    while (true) {
      if (pos_ >= s_.size()) return Error("unterminated string");
      const uint8_t c = uint8_t(s_[pos_]);
      if (c == '"') {
        ++pos_;
        return Status::OK();
      }
      if (c == '\\') {
        AW_RETURN_IF_ERROR(ParseEscape(out));
      } else if (c < 0x20) {
        return Error("control character " + Hex(c) + " in a string (must be escaped)");
      } else if (c < 0x80) {
        out->push_back(char(c));
        ++pos_;
      } else {
        AW_RETURN_IF_ERROR(ParseUtf8Sequence(out));
      }
    }
  }

  // At '\\'.
  Status ParseEscape(std::string* out) {
    const size_t start = pos_;
    ++pos_;
    if (pos_ >= s_.size()) return Error("unterminated string");
    const char e = s_[pos_++];
    switch (e) {
      case '"': out->push_back('"'); return Status::OK();
      case '\\': out->push_back('\\'); return Status::OK();
      case '/': out->push_back('/'); return Status::OK();
      case 'b': out->push_back('\b'); return Status::OK();
      case 'f': out->push_back('\f'); return Status::OK();
      case 'n': out->push_back('\n'); return Status::OK();
      case 'r': out->push_back('\r'); return Status::OK();
      case 't': out->push_back('\t'); return Status::OK();
      case 'u': break;
      default:
        pos_ = start;
        return Error("invalid escape sequence '\\" + Printable(e) + "'");
    }
    uint32_t cp = 0;
    AW_RETURN_IF_ERROR(ParseHex4(&cp));
    if (cp >= 0xDC00 && cp <= 0xDFFF) {
      pos_ = start;
      return Error("unpaired low surrogate \\u" + Hex4(cp));
    }
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      uint32_t low = 0;
      if (s_.substr(pos_, 2) != "\\u") {
        pos_ = start;
        return Error("high surrogate \\u" + Hex4(cp) + " not followed by a \\u low surrogate");
      }
      pos_ += 2;
      AW_RETURN_IF_ERROR(ParseHex4(&low));
      if (low < 0xDC00 || low > 0xDFFF) {
        pos_ = start;
        return Error("high surrogate \\u" + Hex4(cp) + " followed by \\u" + Hex4(low) +
                     ", not a low surrogate");
      }
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    AppendUtf8(cp, out);
    return Status::OK();
  }

  Status ParseHex4(uint32_t* cp) {
    if (s_.size() - pos_ < 4) return Error("unterminated \\u escape");
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      const int h = HexValue(s_[pos_]);
      if (h < 0) return Error("invalid hex digit " + Describe(pos_) + " in a \\u escape");
      v = v * 16 + uint32_t(h);
      ++pos_;
    }
    *cp = v;
    return Status::OK();
  }

  // At a byte >= 0x80. Well-formed sequences per RFC 3629 / Unicode table 3-7:
  // no overlong forms, no UTF-16 surrogates (ED A0..BF), nothing above U+10FFFF.
  Status ParseUtf8Sequence(std::string* out) {
    const uint8_t b0 = uint8_t(s_[pos_]);
    size_t len = 0;
    uint8_t lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (b0 >= 0xC2 && b0 <= 0xDF) {
      len = 2;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
      len = 3;
      if (b0 == 0xE0) lo = 0xA0;  // overlong
      if (b0 == 0xED) hi = 0x9F;  // surrogates
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
      len = 4;
      if (b0 == 0xF0) lo = 0x90;  // overlong
      if (b0 == 0xF4) hi = 0x8F;  // > U+10FFFF
    } else {
      return Error("invalid UTF-8 lead byte " + Hex(b0));
    }
    if (s_.size() - pos_ < len) return Error("truncated UTF-8 sequence");
    for (size_t i = 1; i < len; ++i) {
      const uint8_t b = uint8_t(s_[pos_ + i]);
      const uint8_t min = i == 1 ? lo : 0x80, max = i == 1 ? hi : 0xBF;
      if (b < min || b > max) {
        return Error("invalid UTF-8 sequence (byte " + Hex(b) + " after lead byte " + Hex(b0) + ")");
      }
    }
    out->append(s_.data() + pos_, len);
    pos_ += len;
    return Status::OK();
  }

  void SkipWhitespace() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) {
      ++pos_;
    }
  }

  bool Consume(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  Status Expected(const std::string& what) const {
    if (pos_ >= s_.size()) return Error("unexpected end of input, expected " + what);
    return Error("unexpected " + Describe(pos_) + ", expected " + what);
  }

  Status Error(const std::string& what) const {
    return ArgError("json: " + what + " at byte " + std::to_string(pos_));
  }

  // "'x'" for printable ASCII, "byte 0xNN" otherwise.
  std::string Describe(size_t at) const {
    const uint8_t c = uint8_t(s_[at]);
    if (c >= 0x20 && c < 0x7F) return "'" + Printable(char(c)) + "'";
    return "byte " + Hex(c);
  }
  static std::string Printable(char c) {
    return uint8_t(c) >= 0x20 && uint8_t(c) < 0x7F ? std::string(1, c) : Hex(uint8_t(c));
  }
  static std::string Hex(uint8_t c) { return "0x" + HexStr(c, 2, true); }
  static std::string Hex4(uint32_t v) { return HexStr(v & 0xFFFF, 4, true); }

  std::string_view s_;
  size_t pos_ = 0;
  int max_depth_;
};

}  // namespace

Status ParseJson(std::string_view text, JsonValue* out, int max_depth) {
  *out = JsonValue();
  return Parser(text, max_depth).ParseDocument(out);
}

}  // namespace aw::io
