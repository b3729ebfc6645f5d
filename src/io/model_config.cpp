// ValidateModelConfig: parse with the strict JSON reader, then check the keys
// of one model kind in a fixed order, so the first problem is the one reported.
// Ranges are the runtime's limits (core/limits.h; model_config.h lists the keys).
#include "io/model_config.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "core/limits.h"
#include "io/json.h"

namespace aw {
namespace {

using io::JsonType;
using io::JsonValue;

constexpr char kRoot[] = "attnwasm.config";

std::string Num(int64_t v) { return std::to_string(v); }

// A string as a JSON literal for a message: quotes and control characters
// escaped, cut after kMax bytes (at a UTF-8 boundary) with "..." after it.
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
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(uint8_t(c)));
      out += buf;
    } else {
      out += c;
    }
  }
  out += '"';
  if (n < s.size()) out += "...";
  return out;
}

// What a message says was found: "nothing" (key absent), "null", "true",
// "-3" (the literal as written), "\"vit\"", "an array of 2 elements", ...
std::string Describe(const JsonValue* v) {
  if (!v) return "nothing";
  switch (v->type) {
    case JsonType::kNull: return "null";
    case JsonType::kBool: return v->boolean ? "true" : "false";
    case JsonType::kNumber: return v->str.size() <= 40 ? v->str : v->str.substr(0, 40) + "...";
    case JsonType::kString: return QuoteJson(v->str);
    case JsonType::kArray:
      return "an array of " + Num(int64_t(v->items.size())) +
             (v->items.size() == 1 ? " element" : " elements");
    case JsonType::kObject:
      return "an object with " + Num(int64_t(v->members.size())) +
             (v->members.size() == 1 ? " key" : " keys");
  }
  return "?";
}

// ".fr" for an identifier-like key, "[\"a b\"]" otherwise.
std::string KeyPath(const std::string& key) {
  bool ident = !key.empty() && !(key[0] >= '0' && key[0] <= '9');
  for (char c : key) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '$';
    ident = ident && ok;
  }
  return ident ? "." + key : "[" + QuoteJson(key) + "]";
}

// path: "" (the root) or ".dModel", ".srcVocab[5]", ...
Status Fail(const std::string& path, const std::string& expected, const std::string& got) {
  return ArgError(std::string(kRoot) + path + ": expected " + expected + ", got " + got);
}

std::string RangeStr(int64_t lo, int64_t hi) { return "[" + Num(lo) + ", " + Num(hi) + "]"; }

// True if v is a number with an integral value in [lo, hi]; then *out is it.
// (Range first: the cast is then exact and defined.)
bool IntIn(const JsonValue* v, int64_t lo, int64_t hi, int64_t* out) {
  if (!v || !v->is_number()) return false;
  const double d = v->number;
  if (!(d >= double(lo) && d <= double(hi)) || d != std::floor(d)) return false;
  *out = int64_t(d);
  return true;
}

// The top-level members, looked up by name. Keys were checked to be unique.
class Config {
 public:
  explicit Config(const JsonValue& root) : root_(root) {}

  const JsonValue* Get(const char* key) const { return root_.Find(key); }

  // Required integer in [lo, hi]; `note` is appended to the expectation.
  Status Int(const char* key, int64_t lo, int64_t hi, int64_t* out, const std::string& note = "") const {
    const JsonValue* v = Get(key);
    if (!IntIn(v, lo, hi, out)) {
      return Fail(std::string(".") + key, "an integer in " + RangeStr(lo, hi) + note, Describe(v));
    }
    return Status::OK();
  }

  // Required integer that divides `of` (named `of_name`).
  Status Divisor(const char* key, const char* of_name, int64_t of, int64_t* out) const {
    const JsonValue* v = Get(key);
    if (!IntIn(v, 1, of, out) || of % *out != 0) {
      return Fail(std::string(".") + key, "a divisor of " + std::string(of_name) + " (" + Num(of) + ")",
                  Describe(v));
    }
    return Status::OK();
  }

  // Optional integer index into a list of `size` entries named `list`.
  Status OptionalIndex(const char* key, const char* list, size_t size) const {
    if (!Get(key)) return Status::OK();
    return Index(key, list, size);
  }
  Status Index(const char* key, const char* list, size_t size) const {
    int64_t unused = 0;
    return Int(key, 0, int64_t(size) - 1, &unused, std::string(" (an index into ") + list + ")");
  }

  Status OptionalBool(const char* key) const {
    const JsonValue* v = Get(key);
    if (v && v->type != JsonType::kBool) return Fail(std::string(".") + key, "a boolean", Describe(v));
    return Status::OK();
  }

  // Optional finite number; positive if `positive`.
  Status OptionalNumber(const char* key, bool positive) const {
    const JsonValue* v = Get(key);
    if (!v) return Status::OK();
    if (!v->is_number() || !std::isfinite(v->number) || (positive && !(v->number > 0))) {
      return Fail(std::string(".") + key, positive ? "a finite number > 0" : "a finite number",
                  Describe(v));
    }
    return Status::OK();
  }

  Status OptionalActivation() const {
    const JsonValue* v = Get("activation");
    if (v && !(v->is_string() && (v->str == "relu" || v->str == "gelu"))) {
      return Fail(".activation", "\"relu\" or \"gelu\"", Describe(v));
    }
    return Status::OK();
  }

  // The options both kinds share: activation, normFirst, layerNormEps.
  Status LayerOptions() const {
    AW_RETURN_IF_ERROR(OptionalActivation());
    AW_RETURN_IF_ERROR(OptionalBool("normFirst"));
    return OptionalNumber("layerNormEps", /*positive=*/true);
  }

  // dModel and nhead (a divisor of dModel).
  Status Width() const {
    int64_t d_model = 0, nhead = 0;
    AW_RETURN_IF_ERROR(Int("dModel", 1, kMaxModelWidth, &d_model));
    return Divisor("nhead", "dModel", d_model, &nhead);
  }

  // A vocabulary: 2 to kMaxVocab non-empty strings, no two equal.
  Status Vocab(const char* key, size_t* size) const {
    const JsonValue* v = Get(key);
    const std::string path = std::string(".") + key;
    if (!v || !v->is_array() || v->items.size() < 2 || v->items.size() > size_t(kMaxVocab)) {
      return Fail(path, "an array of 2 to " + Num(kMaxVocab) + " non-empty unique strings", Describe(v));
    }
    std::unordered_map<std::string_view, size_t> seen;
    seen.reserve(v->items.size());
    for (size_t i = 0; i < v->items.size(); ++i) {
      const JsonValue& item = v->items[i];
      const std::string at = path + "[" + Num(int64_t(i)) + "]";
      if (!item.is_string() || item.str.empty()) return Fail(at, "a non-empty string", Describe(&item));
      const auto ins = seen.emplace(item.str, i);
      if (!ins.second) {
        return Fail(at, std::string("a string not already in ") + key,
                    Describe(&item) + " (also " + key + "[" + Num(int64_t(ins.first->second)) + "])");
      }
    }
    *size = v->items.size();
    return Status::OK();
  }

 private:
  const JsonValue& root_;
};

Status CheckTranslator(const Config& c) {
  int64_t unused = 0, max_len = 0;
  AW_RETURN_IF_ERROR(c.Width());
  AW_RETURN_IF_ERROR(c.Int("numEncoderLayers", 1, kMaxLayers, &unused));
  AW_RETURN_IF_ERROR(c.Int("numDecoderLayers", 1, kMaxLayers, &unused));
  AW_RETURN_IF_ERROR(c.Int("dimFeedforward", 1, kMaxFeedforward, &unused));
  AW_RETURN_IF_ERROR(c.LayerOptions());
  AW_RETURN_IF_ERROR(c.Int("maxLen", 1, kMaxSequence, &max_len));
  AW_RETURN_IF_ERROR(c.OptionalNumber("embedScale", /*positive=*/false));
  size_t src_size = 0, tgt_size = 0;
  AW_RETURN_IF_ERROR(c.Vocab("srcVocab", &src_size));
  AW_RETURN_IF_ERROR(c.Vocab("tgtVocab", &tgt_size));
  AW_RETURN_IF_ERROR(c.Index("pad", "tgtVocab", tgt_size));
  AW_RETURN_IF_ERROR(c.Index("eos", "tgtVocab", tgt_size));
  AW_RETURN_IF_ERROR(c.OptionalIndex("srcPad", "srcVocab", src_size));

  const JsonValue* langs = c.Get("langTokens");
  const std::string expect_langs = "an object of language name -> tgtVocab index with at least one key";
  if (!langs || !langs->is_object() || langs->members.empty()) {
    return Fail(".langTokens", expect_langs, Describe(langs));
  }
  std::unordered_set<std::string_view> seen;
  for (const io::JsonMember& m : langs->members) {
    if (m.key.empty()) return Fail(".langTokens", "non-empty language names", "\"\"");
    if (!seen.insert(m.key).second) {
      return Fail(".langTokens", "unique language names", QuoteJson(m.key) + " more than once");
    }
    if (!IntIn(&m.value, 0, int64_t(tgt_size) - 1, &unused)) {
      return Fail(".langTokens" + KeyPath(m.key),
                  "an integer in " + RangeStr(0, int64_t(tgt_size) - 1) + " (an index into tgtVocab)",
                  Describe(&m.value));
    }
  }
  AW_RETURN_IF_ERROR(c.OptionalBool("srcAddsEos"));
  if (const JsonValue* v = c.Get("sourceText")) {
    if (!(v->is_string() && (v->str == "english-numbers" || v->str == "words"))) {
      return Fail(".sourceText", "\"english-numbers\" or \"words\"", Describe(v));
    }
  }
  if (const JsonValue* d = c.Get("detokenize")) {
    if (!d->is_object()) return Fail(".detokenize", "an object of language name -> rule", Describe(d));
    for (const io::JsonMember& m : d->members) {
      const JsonValue& v = m.value;
      if (!(v.is_string() && (v.str == "hyphen-join" || v.str == "concat" || v.str == "space-join"))) {
        return Fail(".detokenize" + KeyPath(m.key), "\"hyphen-join\", \"concat\" or \"space-join\"", Describe(&v));
      }
    }
  }
  AW_RETURN_IF_ERROR(c.Int("maxSrcTokens", 1, max_len, &unused, " (at most maxLen)"));
  return c.Int("maxTgtTokens", 1, max_len, &unused, " (at most maxLen)");
}

Status CheckVit(const Config& c) {
  int64_t image = 0, patch = 0, unused = 0, classes = 0;
  AW_RETURN_IF_ERROR(c.Int("imageSize", 1, kMaxImageSize, &image));
  AW_RETURN_IF_ERROR(c.Divisor("patchSize", "imageSize", image, &patch));
  AW_RETURN_IF_ERROR(c.Int("inChannels", 1, kMaxChannels, &unused));
  AW_RETURN_IF_ERROR(c.Width());
  AW_RETURN_IF_ERROR(c.Int("numLayers", 1, kMaxLayers, &unused));
  AW_RETURN_IF_ERROR(c.Int("dimFeedforward", 1, kMaxFeedforward, &unused));
  AW_RETURN_IF_ERROR(c.LayerOptions());
  AW_RETURN_IF_ERROR(c.Int("numClasses", 1, kMaxClasses, &classes));
  if (const JsonValue* labels = c.Get("labels")) {
    if (!labels->is_array() || labels->items.size() != size_t(classes)) {
      return Fail(".labels", "an array of " + Num(classes) + " strings (numClasses)", Describe(labels));
    }
    for (size_t i = 0; i < labels->items.size(); ++i) {
      if (!labels->items[i].is_string()) {
        return Fail(".labels[" + Num(int64_t(i)) + "]", "a string", Describe(&labels->items[i]));
      }
    }
  }
  AW_RETURN_IF_ERROR(c.OptionalNumber("mean", /*positive=*/false));
  return c.OptionalNumber("std", /*positive=*/true);
}

}  // namespace

Status ValidateModelConfig(std::string_view json_text, std::string_view expected_model) {
  if (!expected_model.empty() && expected_model != "translator" && expected_model != "vit") {
    return ArgError("expectedModel: expected \"translator\", \"vit\" or \"\", got " +
                    QuoteJson(std::string(expected_model)));
  }
  JsonValue root;
  const Status json = io::ParseJson(json_text, &root);
  if (!json.ok()) {
    std::string m = json.message();
    if (m.rfind("json: ", 0) == 0) m.erase(0, 6);
    return ArgError(std::string(kRoot) + ": not valid JSON: " + m);
  }
  if (!root.is_object()) return Fail("", "a JSON object", Describe(&root));
  std::unordered_set<std::string_view> keys;
  for (const io::JsonMember& m : root.members) {
    if (!keys.insert(m.key).second) return Fail("", "unique keys", QuoteJson(m.key) + " more than once");
  }

  const JsonValue* model = root.Find("model");
  const bool is_translator = model && model->is_string() && model->str == "translator";
  const bool is_vit = model && model->is_string() && model->str == "vit";
  if (!expected_model.empty()) {
    if (model && model->is_string() && model->str == expected_model) {
      // the kind asked for
    } else {
      return Fail("", "a \"" + std::string(expected_model) + "\" model", Describe(model));
    }
  } else if (!is_translator && !is_vit) {
    return Fail(".model", "\"translator\" or \"vit\"", Describe(model));
  }
  const Config c(root);
  return is_translator ? CheckTranslator(c) : CheckVit(c);
}

namespace {

// Readers for a config ValidateModelConfig accepted: every required key is
// there with the right type, so these only pick the value or the default.
int64_t IntOf(const JsonValue& root, const char* key) { return int64_t(root.Find(key)->number); }
double NumberOr(const JsonValue& root, const char* key, double def) {
  const JsonValue* v = root.Find(key);
  return v ? v->number : def;
}
size_t SizeOf(const JsonValue& root, const char* key) { return root.Find(key)->items.size(); }

}  // namespace

Status ParseModelConfig(std::string_view json_text, std::string_view expected_model, ModelSpec* out) {
  AW_RETURN_IF_ERROR(ValidateModelConfig(json_text, expected_model));
  JsonValue root;
  AW_RETURN_IF_ERROR(io::ParseJson(json_text, &root));
  ModelSpec s;
  s.model = root.Find("model")->str;
  s.d_model = IntOf(root, "dModel");
  s.nhead = IntOf(root, "nhead");
  s.dim_feedforward = IntOf(root, "dimFeedforward");
  const JsonValue* act = root.Find("activation");
  s.activation = act ? act->str : "relu";
  const JsonValue* norm_first = root.Find("normFirst");
  s.norm_first = norm_first && norm_first->boolean;
  s.layer_norm_eps = NumberOr(root, "layerNormEps", 1e-5);
  if (s.model == "translator") {
    s.num_encoder_layers = IntOf(root, "numEncoderLayers");
    s.num_decoder_layers = IntOf(root, "numDecoderLayers");
    s.src_vocab = int64_t(SizeOf(root, "srcVocab"));
    s.tgt_vocab = int64_t(SizeOf(root, "tgtVocab"));
    s.max_len = IntOf(root, "maxLen");
    s.eos = IntOf(root, "eos");
    s.embed_scale = NumberOr(root, "embedScale", 1.0);
  } else {
    s.image_size = IntOf(root, "imageSize");
    s.patch_size = IntOf(root, "patchSize");
    s.in_channels = IntOf(root, "inChannels");
    s.num_layers = IntOf(root, "numLayers");
    s.num_classes = IntOf(root, "numClasses");
    s.mean = NumberOr(root, "mean", 0.0);
    s.std = NumberOr(root, "std", 1.0);
  }
  *out = std::move(s);
  return Status::OK();
}

}  // namespace aw
