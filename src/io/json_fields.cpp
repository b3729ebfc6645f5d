#include "io/json_fields.h"

#include <cmath>
#include <algorithm>
#include <limits>
#include <cstdint>

#include "core/rules.h"

namespace aw::io {
namespace {
std::string Num(int64_t v) { return std::to_string(v); }
}  // namespace

std::string QuoteJson(const std::string& s) {
  constexpr size_t kMax = 60;
  size_t n = s.size();
  if (n > kMax) {
    n = kMax;
    while (n > 0 && (uint8_t(s[n]) & 0xC0) == 0x80) --n;  // do not split a sequence
  }
  std::string out = "\"";
  for (size_t i = 0; i < n; ++i) {
    const char c = s[i];
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (uint8_t(c) < 0x20) {
      out += "\\u" + HexStr(uint8_t(c), 4, false);
    } else {
      out += c;
    }
  }
  out += '"';
  if (n < s.size()) out += "...";
  return out;
}

std::string Describe(const JsonValue* v) {
  if (!v) return "nothing";
  switch (v->type) {
    case JsonType::kNull: return "null";
    case JsonType::kBool: return v->boolean ? "true" : "false";
    case JsonType::kNumber: return v->str.size() <= 40 ? v->str : v->str.substr(0, 40) + "...";
    case JsonType::kString: return QuoteJson(v->str);
    case JsonType::kArray:
      return "an array of " + Num(int64_t(v->items.size())) + (v->items.size() == 1 ? " element" : " elements");
    case JsonType::kObject:
      return "an object with " + Num(int64_t(v->members.size())) + (v->members.size() == 1 ? " key" : " keys");
  }
  return "?";
}

std::string KeyPath(const std::string& key) {
  bool ident = !key.empty() && !(key[0] >= '0' && key[0] <= '9');
  for (char c : key) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$';
    ident = ident && ok;
  }
  return ident ? "." + key : "[" + QuoteJson(key) + "]";
}

std::string RangeStr(int64_t lo, int64_t hi) { return "[" + Num(lo) + ", " + Num(hi) + "]"; }

Status FieldError(const std::string& root, const std::string& path, const std::string& expected,
                  const std::string& got) {
  return ArgError(root + path + ": expected " + expected + ", got " + got);
}

// Range first: the cast is then exact and defined.
bool IntIn(const JsonValue* v, int64_t lo, int64_t hi, int64_t* out) {
  if (!v || !v->is_number()) return false;
  const double d = v->number;
  if (!(d >= double(lo) && d <= double(hi)) || d != std::floor(d)) return false;
  *out = int64_t(d);
  return true;
}

int64_t IntOr(const JsonValue* v, int64_t absent) {
  if (!v || v->type == JsonType::kNull) return absent;
  int64_t out = 0;
  constexpr int64_t kExact = int64_t(1) << 53;
  return IntIn(v, -kExact, kExact, &out) ? out : kUnreadInt;
}

double NumberOr(const JsonValue* v, double def) {
  if (!v) return def;
  return v->is_number() ? v->number : std::numeric_limits<double>::quiet_NaN();
}

size_t FirstRepeat(const std::vector<std::string_view>& items, size_t* first) {
  std::vector<uint32_t> order(items.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = uint32_t(i);
  // By string, then by index: each run of equal strings is in input order, its second member the run's first repeat.
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return items[a] < items[b] || (items[a] == items[b] && a < b); });
  size_t best = items.size();
  for (size_t k = 1; k < order.size(); ++k)
    if (items[order[k]] == items[order[k - 1]] && order[k] < best) {
      best = order[k];
      *first = order[k - 1];
    }
  return best;
}

Status UniqueKeys(const JsonValue& v, const std::string& root, const std::string& path) {
  if (v.is_object()) {
    std::vector<std::string_view> keys;
    keys.reserve(v.members.size());
    for (const JsonMember& m : v.members) keys.push_back(m.key);
    size_t first = 0;
    if (const size_t i = FirstRepeat(keys, &first); i < keys.size())
      return ArgError(root + path + ": expected unique keys, got " + QuoteJson(v.members[i].key) + " more than once");
    for (const JsonMember& m : v.members)
      if (m.value.is_object() || m.value.is_array()) AW_RETURN_IF_ERROR(UniqueKeys(m.value, root, path + KeyPath(m.key)));
  } else if (v.is_array()) {
    for (size_t i = 0; i < v.items.size(); ++i)
      if (v.items[i].is_object() || v.items[i].is_array())
        AW_RETURN_IF_ERROR(UniqueKeys(v.items[i], root, path + "[" + Num(int64_t(i)) + "]"));
  }
  return Status::OK();
}

Status ParseObject(std::string_view text, const std::string& root, const std::string& what, JsonValue* out) {
  const Status json = ParseJson(text, out);
  if (!json.ok()) {
    std::string m = json.message();
    if (m.rfind("json: ", 0) == 0) m.erase(0, 6);
    return ArgError(root + ": not valid JSON: " + m);
  }
  if (!out->is_object()) return FieldError(root, "", "a JSON object (" + what + ")", Describe(out));
  return UniqueKeys(*out, root);
}

bool FieldReader::Missing(std::string_view key) const {
  const JsonValue* v = Get(key);
  return !v || v->type == JsonType::kNull;
}

Status FieldReader::Int(const char* key, int64_t lo, int64_t hi, int64_t* out, const std::string& note) const {
  const JsonValue* v = Get(key);
  if (!IntIn(v, lo, hi, out)) return Fail(std::string(".") + key, "an integer in " + RangeStr(lo, hi) + note, Describe(v));
  return Status::OK();
}

Status FieldReader::Divisor(const char* key, const char* of_name, int64_t of, int64_t* out) const {
  const JsonValue* v = Get(key);
  if (!IntIn(v, 1, of, out) || of % *out != 0)
    return Fail(std::string(".") + key, "a divisor of " + std::string(of_name) + " (" + Num(of) + ")", Describe(v));
  return Status::OK();
}

Status FieldReader::OptionalIndex(const char* key, const char* list, size_t size) const {
  if (!Get(key)) return Status::OK();
  return Index(key, list, size);
}

Status FieldReader::Index(const char* key, const char* list, size_t size) const {
  int64_t unused = 0;
  return Int(key, 0, int64_t(size) - 1, &unused, std::string(" (an index into ") + list + ")");
}

Status FieldReader::OptionalBool(const char* key, bool* out) const {
  const JsonValue* v = Get(key);
  if (!v) return Status::OK();
  if (v->type != JsonType::kBool) return Fail(std::string(".") + key, "a boolean", Describe(v));
  if (out) *out = v->boolean;
  return Status::OK();
}

Status FieldReader::OptionalNumber(const char* key, bool positive, double* out) const {
  const JsonValue* v = Get(key);
  if (!v) return Status::OK();
  if (!v->is_number() || !std::isfinite(v->number) || (positive && !(v->number > 0)))
    return Fail(std::string(".") + key, positive ? "a finite number > 0" : "a finite number", Describe(v));
  if (out) *out = v->number;
  return Status::OK();
}

Status FieldReader::OptionalEnum(const char* key, std::initializer_list<const char*> allowed, std::string* out) const {
  const JsonValue* v = Get(key);
  if (!v) return Status::OK();
  std::string expected;
  size_t i = 0;
  for (const char* a : allowed) {
    if (v->is_string() && v->str == a) {
      if (out) *out = a;
      return Status::OK();
    }
    expected += (i == 0 ? "" : i + 1 == allowed.size() ? " or " : ", ") + std::string("\"") + a + "\"";
    ++i;
  }
  return Fail(std::string(".") + key, expected, Describe(v));
}

std::string ConfigRules::Field(std::string_view key) const {
  return src_ ? src_->root + "." + std::string(key) : std::string(key);
}

std::string ConfigRules::Got(const JsonValue* literal, double v) const {
  if (src_) return Describe(literal);
  return v == double(kUnreadInt) ? "nothing" : NumStr(v);
}

// The value at a dotted key path ("rope_parameters.rope_theta") of the source, or null.
const JsonValue* ConfigRules::Literal(std::string_view key) const {
  const JsonValue* v = src_ ? src_->object : nullptr;
  while (v && !key.empty()) {
    const size_t dot = key.find('.');
    v = v->Find(key.substr(0, dot));
    key = dot == std::string_view::npos ? std::string_view() : key.substr(dot + 1);
  }
  return v;
}

Status ConfigRules::Fail(std::string_view key, const std::string& expected, double v) const {
  const std::string m = Field(key) + ": expected " + expected + ", got " + Got(Literal(key), v);
  return src_ ? ArgError(m) : OutOfRangeError(m);
}

bool ConfigRules::IsList(std::string_view key) const {
  const JsonValue* v = Literal(key);
  return v && v->is_array();
}

bool ConfigRules::Has(std::string_view key) const {
  const JsonValue* v = Literal(key);
  return v && v->type != JsonType::kNull;
}

Status ConfigRules::FailItem(std::string_view key, size_t i, const std::string& expected, double v) const {
  const JsonValue* list = Literal(key);
  const JsonValue* item = list && list->is_array() && i < list->items.size() ? &list->items[i] : nullptr;
  const std::string m = Field(key) + "[" + Num(int64_t(i)) + "]: expected " + expected + ", got " + Got(item, v);
  return src_ ? ArgError(m) : OutOfRangeError(m);
}

Status ConfigRules::Int(std::string_view key, int64_t v, int64_t lo, int64_t hi, const std::string& note) const {
  if (v != kUnreadInt && v >= lo && v <= hi) return Status::OK();
  return Fail(key, "an integer in " + RangeStr(lo, hi) + note, double(v));
}

Status ConfigRules::Divisor(std::string_view key, int64_t v, const char* of_name, int64_t of) const {
  if (v != kUnreadInt && v >= 1 && v <= of && of % v == 0) return Status::OK();
  return Fail(key, "a divisor of " + std::string(of_name) + " (" + Num(of) + ")", double(v));
}

Status ConfigRules::Positive(std::string_view key, double v) const {
  if (std::isfinite(v) && v > 0) return Status::OK();
  return Fail(key, "a finite number > 0", v);
}

}  // namespace aw::io
