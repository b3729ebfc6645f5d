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
#include <vector>

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

// Every object in v, at any depth, with no key twice: JSON.parse keeps a duplicate's last value and
// this reader its first, so a config.json that repeats a key would be read two ways (the JS face and the
// model would disagree). Refused, naming the object's path and the key.
Status UniqueKeys(const JsonValue& v, const std::string& root, const std::string& path) {
  if (v.is_object()) {
    std::unordered_set<std::string_view> keys;
    keys.reserve(v.members.size());
    for (const io::JsonMember& m : v.members)
      if (!keys.insert(m.key).second)
        return ArgError(root + path + ": expected unique keys, got " + QuoteJson(m.key) + " more than once");
    for (const io::JsonMember& m : v.members) {
      if (!m.value.is_object() && !m.value.is_array()) continue;
      AW_RETURN_IF_ERROR(UniqueKeys(m.value, root, path + KeyPath(m.key)));
    }
  } else if (v.is_array()) {
    for (size_t i = 0; i < v.items.size(); ++i) {
      if (!v.items[i].is_object() && !v.items[i].is_array()) continue;
      AW_RETURN_IF_ERROR(UniqueKeys(v.items[i], root, path + "[" + Num(int64_t(i)) + "]"));
    }
  }
  return Status::OK();
}

// root: "attnwasm.config" (a file's), "attnwasm.config.hf_config", "config" (a config.json passed to loadModel);
// path: "" (the root) or ".dModel", ".srcVocab[5]", ...
Status Fail(const std::string& root, const std::string& path, const std::string& expected, const std::string& got) {
  return ArgError(root + path + ": expected " + expected + ", got " + got);
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
  Config(const JsonValue& root, std::string name) : root_(root), name_(std::move(name)) {}

  const JsonValue* Get(const char* key) const { return root_.Find(key); }
  // The error of the key path `path` under this config's root.
  Status Fail(const std::string& path, const std::string& expected, const std::string& got) const {
    return ::aw::Fail(name_, path, expected, got);
  }

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
  std::string name_;
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
    return c.Fail(".langTokens", expect_langs, Describe(langs));
  }
  std::unordered_set<std::string_view> seen;
  for (const io::JsonMember& m : langs->members) {
    if (m.key.empty()) return c.Fail(".langTokens", "non-empty language names", "\"\"");
    if (!seen.insert(m.key).second) {
      return c.Fail(".langTokens", "unique language names", QuoteJson(m.key) + " more than once");
    }
    if (!IntIn(&m.value, 0, int64_t(tgt_size) - 1, &unused)) {
      return c.Fail(".langTokens" + KeyPath(m.key),
                  "an integer in " + RangeStr(0, int64_t(tgt_size) - 1) + " (an index into tgtVocab)",
                  Describe(&m.value));
    }
  }
  AW_RETURN_IF_ERROR(c.OptionalBool("srcAddsEos"));
  if (const JsonValue* v = c.Get("sourceText")) {
    if (!(v->is_string() && (v->str == "english-numbers" || v->str == "words"))) {
      return c.Fail(".sourceText", "\"english-numbers\" or \"words\"", Describe(v));
    }
  }
  if (const JsonValue* d = c.Get("detokenize")) {
    if (!d->is_object()) return c.Fail(".detokenize", "an object of language name -> rule", Describe(d));
    for (const io::JsonMember& m : d->members) {
      const JsonValue& v = m.value;
      if (!(v.is_string() && (v.str == "hyphen-join" || v.str == "concat" || v.str == "space-join"))) {
        return c.Fail(".detokenize" + KeyPath(m.key), "\"hyphen-join\", \"concat\" or \"space-join\"", Describe(&v));
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
      return c.Fail(".labels", "an array of " + Num(classes) + " strings (numClasses)", Describe(labels));
    }
    for (size_t i = 0; i < labels->items.size(); ++i) {
      if (!labels->items[i].is_string()) {
        return c.Fail(".labels[" + Num(int64_t(i)) + "]", "a string", Describe(&labels->items[i]));
      }
    }
  }
  AW_RETURN_IF_ERROR(c.OptionalNumber("mean", /*positive=*/false));
  return c.OptionalNumber("std", /*positive=*/true);
}

// rope_parameters (transformers 5.x; null or absent in 4.x files): for the default RoPE it holds
// rope_type ("default"; "type" in older saves), rope_theta and perhaps partial_rotary_factor (1 here).
// Any other key belongs to a scaled RoPE and is refused by name: never ignored. The base may also be
// the top-level rope_theta (4.x); both are read (RopeTheta), and two different bases are refused.
Status CheckRopeParameters(const Config& c) {
  const JsonValue* rp = c.Get("rope_parameters");
  if (!rp || rp->type == JsonType::kNull) return Status::OK();
  if (!rp->is_object()) return c.Fail(".rope_parameters", "null or an object", Describe(rp));
  for (const io::JsonMember& m : rp->members) {
    const std::string at = ".rope_parameters" + KeyPath(m.key);
    const JsonValue& v = m.value;
    if (m.key == "rope_type" || m.key == "type") {
      if (!(v.is_string() && v.str == "default")) return c.Fail(at, "\"default\" (scaled RoPE is not supported)", Describe(&v));
    } else if (m.key == "rope_theta") {
      if (!v.is_number() || !std::isfinite(v.number) || !(v.number > 0)) return c.Fail(at, "a finite number > 0", Describe(&v));
    } else if (m.key == "partial_rotary_factor") {
      if (!(v.is_number() && v.number == 1.0)) return c.Fail(at, "1 (RoPE on every dim)", Describe(&v));
    } else {
      return c.Fail(at, "no such key (the default RoPE has rope_type, rope_theta and partial_rotary_factor; "
                        "scaled RoPE is not supported)", Describe(&v));
    }
  }
  const JsonValue* top = c.Get("rope_theta");
  const JsonValue* inner = rp->Find("rope_theta");
  if (top && inner && top->is_number() && top->number != inner->number)
    return c.Fail(".rope_parameters.rope_theta", "the same base as rope_theta (" + Describe(top) + ") when both are given",
                  Describe(inner));
  return Status::OK();
}

// The RoPE base of a config CheckCausalLm accepted: rope_parameters.rope_theta (5.x), else rope_theta (4.x),
// else HF's default 10000.
double RopeTheta(const JsonValue& hf) {
  const JsonValue* rp = hf.Find("rope_parameters");
  if (const JsonValue* inner = rp && rp->is_object() ? rp->Find("rope_theta") : nullptr) return inner->number;
  const JsonValue* top = hf.Find("rope_theta");
  return top ? top->number : 10000.0;
}

// The special-token ids of config.json: bos_token_id and pad_token_id an id in [0, vocab_size) or null;
// eos_token_id also a list of them (Llama 3's [128001, 128008, 128009]). generate() stops at eos_token_id by
// default (bindings/causal_lm.js); the others are checked so that a wrong one is an error, not a surprise.
Status CheckTokenIds(const Config& c, int64_t vocab) {
  const std::string range = "an id in " + RangeStr(0, vocab - 1) + " (vocab_size " + Num(vocab) + ") or null";
  int64_t unused = 0;
  for (const char* key : {"bos_token_id", "eos_token_id", "pad_token_id"}) {
    const JsonValue* v = c.Get(key);
    if (!v || v->type == JsonType::kNull || IntIn(v, 0, vocab - 1, &unused)) continue;
    if (std::string(key) == "eos_token_id" && v->is_array()) {
      for (size_t i = 0; i < v->items.size(); ++i)
        if (!IntIn(&v->items[i], 0, vocab - 1, &unused))
          return c.Fail(".eos_token_id[" + Num(int64_t(i)) + "]", "an id in " + RangeStr(0, vocab - 1) +
                        " (vocab_size " + Num(vocab) + ")", Describe(&v->items[i]));
      continue;
    }
    return c.Fail(std::string(".") + key, std::string(key) == "eos_token_id" ? range + ", or a list of ids" : range,
                  Describe(v));
  }
  return Status::OK();
}

// A Hugging Face config.json of a LlamaForCausalLM / Qwen2ForCausalLM (the
// causal LM family, models/causal_lm.h): what tools/causal_lm.py config_from_hf
// accepts, and the same refusals — anything the family cannot run exactly is
// named by its key. Keys not read are ignored, as HF's modelling code ignores
// them (architectures, torch_dtype, bos/eos ids, initializer_range, ...).
Status CheckCausalLm(const Config& c) {
  const JsonValue* mt = c.Get("model_type");
  const bool llama = mt && mt->is_string() && mt->str == "llama", qwen2 = mt && mt->is_string() && mt->str == "qwen2";
  if (!llama && !qwen2) return c.Fail(".model_type", "\"llama\" or \"qwen2\"", Describe(mt));
  if (const JsonValue* a = c.Get("hidden_act"); a && !(a->is_string() && a->str == "silu"))
    return c.Fail(".hidden_act", "\"silu\"", Describe(a));
  auto default_rope = [](const JsonValue* v, const char* key_a, const char* key_b) {
    if (!v || v->type == JsonType::kNull) return true;
    if (!v->is_object()) return false;
    for (const io::JsonMember& m : v->members) {
      if (m.key != key_a && m.key != key_b) return false;
      if (!(m.value.is_string() && m.value.str == "default")) return false;
    }
    return true;
  };
  if (!default_rope(c.Get("rope_scaling"), "rope_type", "type"))
    return c.Fail(".rope_scaling", "null or {\"rope_type\": \"default\"} (scaled RoPE is not supported)",
                  Describe(c.Get("rope_scaling")));
  AW_RETURN_IF_ERROR(CheckRopeParameters(c));
  if (const JsonValue* f = c.Get("partial_rotary_factor"); f && !(f->is_number() && f->number == 1.0))
    return c.Fail(".partial_rotary_factor", "1 (RoPE on every dim)", Describe(f));
  if (const JsonValue* tp = c.Get("pretraining_tp"); tp && !(tp->is_number() && tp->number == 1.0))
    return c.Fail(".pretraining_tp", "1", Describe(tp));
  if (const JsonValue* w = c.Get("use_sliding_window"); w && !(w->type == JsonType::kBool && !w->boolean))
    return c.Fail(".use_sliding_window", "false (sliding-window attention is not supported)", Describe(w));
  if (const JsonValue* lt = c.Get("layer_types"); lt && lt->is_array())
    for (size_t i = 0; i < lt->items.size(); ++i)
      if (!(lt->items[i].is_string() && lt->items[i].str == "full_attention"))
        return c.Fail(".layer_types[" + Num(int64_t(i)) + "]", "\"full_attention\"", Describe(&lt->items[i]));
  int64_t E = 0, H = 0, Hkv = 0, D = 0, unused = 0;
  AW_RETURN_IF_ERROR(c.Int("vocab_size", 1, kMaxVocab, &unused));
  AW_RETURN_IF_ERROR(c.Int("hidden_size", 1, 4 * kMaxModelWidth, &E));
  AW_RETURN_IF_ERROR(c.Int("intermediate_size", 1, kMaxFeedforward, &unused));
  AW_RETURN_IF_ERROR(c.Int("num_hidden_layers", 1, kMaxLayers, &unused));
  AW_RETURN_IF_ERROR(c.Int("num_attention_heads", 1, E, &H));
  if (c.Get("num_key_value_heads") && c.Get("num_key_value_heads")->type != JsonType::kNull)
    AW_RETURN_IF_ERROR(c.Divisor("num_key_value_heads", "num_attention_heads", H, &Hkv));
  const JsonValue* hd = c.Get("head_dim");
  if (hd && hd->type != JsonType::kNull) {
    AW_RETURN_IF_ERROR(c.Int("head_dim", 2, 1024, &D));
    if (D % 2) return c.Fail(".head_dim", "an even number (RoPE pairs)", Describe(hd));
  } else if (E % H != 0 || (E / H) % 2 != 0) {
    return c.Fail(".head_dim", "a number, or hidden_size / num_attention_heads an even integer (" + Num(E) + " / " +
                                   Num(H) + ")", "nothing");
  }
  AW_RETURN_IF_ERROR(c.OptionalNumber("rms_norm_eps", /*positive=*/true));
  AW_RETURN_IF_ERROR(c.OptionalNumber("rope_theta", /*positive=*/true));
  if (c.Get("max_position_embeddings")) AW_RETURN_IF_ERROR(c.Int("max_position_embeddings", 1, 16 * kMaxSequence, &unused));
  AW_RETURN_IF_ERROR(c.OptionalBool("tie_word_embeddings"));
  AW_RETURN_IF_ERROR(c.OptionalBool("attention_bias"));
  AW_RETURN_IF_ERROR(c.OptionalBool("mlp_bias"));
  return CheckTokenIds(c, int64_t(c.Get("vocab_size")->number));
}

// A file's {"model": "causal_lm", "hf_config": {…}, "tokenizer": {…}, "attentionWindow": n}: the HF config, an
// optional character tokenizer (one string per id: the demo model's), and an optional attention window the
// model was trained with (generation's default).
Status CheckCausalLmFile(const Config& c) {
  const JsonValue* hf = c.Get("hf_config");
  if (!hf || !hf->is_object()) return c.Fail(".hf_config", "a Hugging Face config.json object", Describe(hf));
  AW_RETURN_IF_ERROR(CheckCausalLm(Config(*hf, std::string(kRoot) + ".hf_config")));
  int64_t unused = 0;
  const int64_t vocab = int64_t(hf->Find("vocab_size")->number);
  if (c.Get("attentionWindow")) AW_RETURN_IF_ERROR(c.Int("attentionWindow", 1, 16 * kMaxSequence, &unused));
  const JsonValue* tok = c.Get("tokenizer");
  if (!tok) return Status::OK();
  if (!tok->is_object()) return c.Fail(".tokenizer", "an object", Describe(tok));
  const Config t(*tok, std::string(kRoot) + ".tokenizer");
  const JsonValue* type = t.Get("type");
  if (!(type && type->is_string() && type->str == "chars")) return t.Fail(".type", "\"chars\"", Describe(type));
  // special: ids that are not characters (listed once each); every other id is one character, each once.
  std::vector<bool> special(size_t(vocab), false);
  if (const JsonValue* sp = t.Get("special")) {
    if (!sp->is_array()) return t.Fail(".special", "an array of ids", Describe(sp));
    for (size_t i = 0; i < sp->items.size(); ++i) {
      int64_t id = 0;
      if (!IntIn(&sp->items[i], 0, vocab - 1, &id) || special[size_t(id)])
        return t.Fail(".special[" + Num(int64_t(i)) + "]", "an id in " + RangeStr(0, vocab - 1) + ", listed once",
                      Describe(&sp->items[i]));
      special[size_t(id)] = true;
    }
  }
  const JsonValue* vocab_list = t.Get("vocab");
  if (!vocab_list || !vocab_list->is_array() || int64_t(vocab_list->items.size()) != vocab)
    return t.Fail(".vocab", "an array of vocab_size (" + Num(vocab) + ") strings", Describe(vocab_list));
  std::unordered_set<std::string_view> entries;
  for (size_t i = 0; i < vocab_list->items.size(); ++i) {
    const JsonValue& e = vocab_list->items[i];
    size_t chars = 0;  // code points of valid UTF-8 (the parser's output)
    for (const char ch : e.str) chars += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
    if (!e.is_string() || e.str.empty() || (!special[i] && chars != 1))
      return t.Fail(".vocab[" + Num(int64_t(i)) + "]",
                    special[i] ? "a non-empty string" : "one character (an id not in special)", Describe(&e));
    if (!entries.insert(e.str).second)
      return t.Fail(".vocab[" + Num(int64_t(i)) + "]", "an entry listed once", Describe(&e) + " again");
  }
  for (const char* key : {"bos", "eos"}) {
    const JsonValue* v = t.Get(key);
    if (!v || v->type == JsonType::kNull) continue;
    int64_t id = 0;
    if (!IntIn(v, 0, vocab - 1, &id) || !special[size_t(id)])
      return t.Fail(std::string(".") + key, "null or an id listed in special", Describe(v));
  }
  if (const JsonValue* u = t.Get("unknown"); u && !(u->is_string() && (u->str == "refuse" || u->str == "skip")))
    return t.Fail(".unknown", "\"refuse\" or \"skip\"", Describe(u));
  return Status::OK();
}

}  // namespace

Status ValidateModelConfig(std::string_view json_text, std::string_view expected_model) {
  if (!expected_model.empty() && expected_model != "translator" && expected_model != "vit" &&
      expected_model != "causal_lm") {
    return ArgError("expectedModel: expected \"translator\", \"vit\", \"causal_lm\" or \"\", got " +
                    QuoteJson(std::string(expected_model)));
  }
  JsonValue root;
  const Status json = io::ParseJson(json_text, &root);
  if (!json.ok()) {
    std::string m = json.message();
    if (m.rfind("json: ", 0) == 0) m.erase(0, 6);
    return ArgError(std::string(kRoot) + ": not valid JSON: " + m);
  }
  if (!root.is_object()) return Fail(kRoot, "", "a JSON object", Describe(&root));
  std::unordered_set<std::string_view> keys;
  for (const io::JsonMember& m : root.members) {
    if (!keys.insert(m.key).second) return Fail(kRoot, "", "unique keys", QuoteJson(m.key) + " more than once");
  }

  const JsonValue* model = root.Find("model");
  const bool is_translator = model && model->is_string() && model->str == "translator";
  const bool is_vit = model && model->is_string() && model->str == "vit";
  const bool is_lm = model && model->is_string() && model->str == "causal_lm";
  if (!expected_model.empty()) {
    if (model && model->is_string() && model->str == expected_model) {
      // the kind asked for
    } else {
      return Fail(kRoot, "", "a \"" + std::string(expected_model) + "\" model", Describe(model));
    }
  } else if (!is_translator && !is_vit && !is_lm) {
    return Fail(kRoot, ".model", "\"translator\", \"vit\" or \"causal_lm\"", Describe(model));
  }
  const Config c(root, kRoot);
  AW_RETURN_IF_ERROR(is_translator ? CheckTranslator(c) : is_vit ? CheckVit(c) : CheckCausalLmFile(c));
  return UniqueKeys(root, kRoot, "");  // at every depth (the hf_config, the tokenizer, …): the kind's own
                                       // messages first (langTokens names its repeated language)

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
bool BoolOr(const JsonValue& root, const char* key, bool def) {
  const JsonValue* v = root.Find(key);
  return v && v->type == JsonType::kBool ? v->boolean : def;
}

// A config CheckCausalLm accepted, with HF's defaults for absent keys
// (LlamaConfig / Qwen2Config; tools/causal_lm.py _DEFAULTS).
void ReadCausalLm(const JsonValue& hf, CausalLmSpec* out) {
  CausalLmSpec s;
  s.model_type = hf.Find("model_type")->str;
  const bool qwen2 = s.model_type == "qwen2";
  s.vocab = IntOf(hf, "vocab_size");
  s.hidden = IntOf(hf, "hidden_size");
  s.intermediate = IntOf(hf, "intermediate_size");
  s.layers = IntOf(hf, "num_hidden_layers");
  s.heads = IntOf(hf, "num_attention_heads");
  const JsonValue* kv = hf.Find("num_key_value_heads");
  s.kv_heads = kv && kv->is_number() ? int64_t(kv->number) : s.heads;
  const JsonValue* hd = hf.Find("head_dim");
  s.head_dim = hd && hd->is_number() ? int64_t(hd->number) : s.hidden / s.heads;
  s.rms_eps = NumberOr(hf, "rms_norm_eps", 1e-6);
  s.rope_theta = RopeTheta(hf);
  s.max_positions = hf.Find("max_position_embeddings") ? IntOf(hf, "max_position_embeddings") : qwen2 ? 32768 : 2048;
  s.tied = BoolOr(hf, "tie_word_embeddings", false);
  const bool attention_bias = !qwen2 && BoolOr(hf, "attention_bias", false);
  s.qkv_bias = qwen2 || attention_bias;  // Qwen2: q, k, v always; Llama: all four with attention_bias
  s.o_bias = attention_bias;
  s.mlp_bias = !qwen2 && BoolOr(hf, "mlp_bias", false);
  *out = s;
}

}  // namespace

Status ParseCausalLmConfig(std::string_view json_text, CausalLmSpec* out) {
  JsonValue root;
  const Status json = io::ParseJson(json_text, &root);
  if (!json.ok()) {
    std::string m = json.message();
    if (m.rfind("json: ", 0) == 0) m.erase(0, 6);
    return ArgError("config: not valid JSON: " + m);
  }
  if (!root.is_object()) return Fail("config", "", "a JSON object (a Hugging Face config.json)", Describe(&root));
  AW_RETURN_IF_ERROR(UniqueKeys(root, "config", ""));
  AW_RETURN_IF_ERROR(CheckCausalLm(Config(root, "config")));
  ReadCausalLm(root, out);
  return Status::OK();
}

Status ParseModelConfig(std::string_view json_text, std::string_view expected_model, ModelSpec* out) {
  AW_RETURN_IF_ERROR(ValidateModelConfig(json_text, expected_model));
  JsonValue root;
  AW_RETURN_IF_ERROR(io::ParseJson(json_text, &root));
  ModelSpec s;
  s.model = root.Find("model")->str;
  if (s.model == "causal_lm") {
    ReadCausalLm(*root.Find("hf_config"), &s.lm);
    s.attention_window = root.Find("attentionWindow") ? IntOf(root, "attentionWindow") : 0;
    *out = std::move(s);
    return Status::OK();
  }
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
