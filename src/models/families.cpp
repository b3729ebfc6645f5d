// The registry's table and lookups (families.h). A new family adds its row's line to Families().
#include "models/families.h"

#include <string_view>
#include <vector>

#include "io/json_fields.h"

namespace aw {

// The rows, each in its family's own file.
const Family& CausalLmFamily();
const Family& EncoderFamily();
const Family& TranslatorFamily();
const Family& VitFamily();
const Family& ModernBertFamily();
const Family& VisionFamily();
const Family& ClipFamily();
const Family& Seq2SeqFamily();
const Family& T5Family();
const Family& WhisperFamily();

FamilyTable Families() {
  static const Family* const all[] = {&TranslatorFamily(), &VitFamily(), &CausalLmFamily(), &EncoderFamily(),
                                      &ModernBertFamily(), &VisionFamily(),
                                      &ClipFamily(), &Seq2SeqFamily(), &T5Family(), &WhisperFamily()};
  return {all, sizeof(all) / sizeof(all[0])};
}

const Family* FamilyOfKind(std::string_view kind) {
  for (const Family* f : Families())
    if (kind == f->kind) return f;
  return nullptr;
}

namespace {

using io::Describe;
using io::JsonValue;

// "\"a\", \"b\" or \"c\""
std::string Quoted(const std::vector<std::string>& items) {
  std::string s;
  for (size_t i = 0; i < items.size(); ++i)
    s += std::string(i == 0 ? "" : i + 1 == items.size() ? " or " : ", ") + "\"" + items[i] + "\"";
  return s;
}

std::string TypesOf(const Family& f) {
  std::vector<std::string> t;
  for (const char* const* p = f.model_types; p && *p; ++p) t.push_back(*p);
  return Quoted(t);
}

bool Takes(const Family& f, const std::string& model_type) {
  for (const char* const* p = f.model_types; p && *p; ++p)
    if (model_type == *p) return true;
  return false;
}

// "a causal LM's (…) or an encoder's (…)": what config.json model_types the families take.
std::string ConfigFamilies(const Family* only) {
  std::string s;
  std::vector<const Family*> fs;
  for (const Family* f : Families())
    if (f->model_types && (!only || f == only)) fs.push_back(f);
  for (size_t i = 0; i < fs.size(); ++i)
    s += std::string(i == 0 ? "" : i + 1 == fs.size() ? " or " : ", ") + fs[i]->noun + "'s (" + TypesOf(*fs[i]) + ")";
  return s;
}

Status FindByModelType(const JsonValue& config, std::string_view expected, const std::string& root, const Family** out) {
  const JsonValue* mt = config.Find("model_type");
  const Family* want = expected.empty() ? nullptr : FamilyOfKind(expected);
  const Family* found = nullptr;
  if (mt && mt->is_string())
    for (const Family* f : Families())
      if (Takes(*f, mt->str)) found = f;
  if (found && (!want || found == want)) {
    *out = found;
    return Status::OK();
  }
  if (found)  // another family's config.json
    return ArgError(root + ".model_type: expected " + ConfigFamilies(want) + ", got " + Describe(mt) + ", " + found->noun +
                    ": load it with loadModel");
  std::string hint;
  if (mt && mt->is_string())
    for (const Family* f : Families())
      if ((!want || f == want) && f->type_hint)
        if (const char* h = f->type_hint(mt->str)) hint = std::string(" (") + h + ")";
  return io::FieldError(root, ".model_type", ConfigFamilies(want) + hint, Describe(mt));
}

Status FindByOwnModel(const JsonValue& config, std::string_view expected, const std::string& root, const Family** out) {
  if (!config.is_object()) return io::FieldError(root, "", "a JSON object", Describe(&config));
  std::vector<std::string_view> keys;
  for (const io::JsonMember& m : config.members) keys.push_back(m.key);
  size_t first = 0;
  if (const size_t i = io::FirstRepeat(keys, &first); i < keys.size())
    return io::FieldError(root, "", "unique keys", io::QuoteJson(config.members[i].key) + " more than once");
  const JsonValue* model = config.Find("model");
  for (const Family* f : Families())
    if (f->own_model && model && model->is_string() && model->str == f->own_model &&
        (expected.empty() || expected == f->kind)) {
      *out = f;
      return Status::OK();
    }
  if (!expected.empty()) return io::FieldError(root, "", "a \"" + std::string(expected) + "\" model", Describe(model));
  std::vector<std::string> names;
  for (const Family* f : Families())
    if (f->own_model) names.push_back(f->own_model);
  return io::FieldError(root, ".model", Quoted(names), Describe(model));
}

}  // namespace

Status FindFamily(const JsonValue& config, bool own, std::string_view expected, const std::string& root,
                  const Family** out) {
  *out = nullptr;
  if (!expected.empty() && !FamilyOfKind(expected)) {
    std::vector<std::string> kinds;
    for (const Family* f : Families()) kinds.push_back(f->kind);
    return ArgError("expected: a family's kind (" + Quoted(kinds) + ") or \"\", got " + io::QuoteJson(std::string(expected)));
  }
  return own ? FindByOwnModel(config, expected, root, out) : FindByModelType(config, expected, root, out);
}

Status CheckConfigKind(std::string_view expected, bool with_config) {
  const Family* want = expected.empty() ? nullptr : FamilyOfKind(expected);
  if (!want) return Status::OK();
  if (with_config && !want->model_types) {
    std::vector<std::string> nouns;
    for (const Family* f : Families())
      if (f->model_types) nouns.push_back(f->noun);
    std::string list;
    for (size_t i = 0; i < nouns.size(); ++i) list += (i == 0 ? "" : i + 1 == nouns.size() ? " or " : ", ") + nouns[i];
    return ArgError("config: only " + list + " is loaded with a config.json; this loader expects a \"" +
                    std::string(expected) + "\" model");
  }
  if (!with_config && !want->own_model)
    return ArgError(std::string("config: ") + want->noun + " is loaded with its Hugging Face config.json "
                    "(loadModel(weights, { config }) or its folder)");
  return Status::OK();
}

Status CheckOwnKeys(const JsonValue& config, const std::string& root) { return io::UniqueKeys(config, root); }

std::string FamilyInfoJson(const Module& m, const Family& f) {
  // weightBytes: in all; weightTypes: by how they are kept ({"bf16": …, "f32": …}, the types held only).
  const std::array<size_t, kWeightTypes> by = m.ParamBytesByType();
  size_t total = 0;
  std::string types;
  for (size_t t = 0; t < by.size(); ++t) {
    total += by[t];
    if (by[t]) types += std::string(types.empty() ? "" : ", ") + "\"" + WeightTypeName(WeightType(t)) + "\": " + std::to_string(by[t]);
  }
  const std::string own = f.info ? f.info(m) : std::string();
  return std::string("{\"kind\": \"") + f.kind + "\", " + (own.empty() ? "" : own + ", ") +
         "\"weightBytes\": " + std::to_string(total) + ", \"weightTypes\": {" + types + "}}";
}

std::string FamiliesJson() {
  std::string out = "[";
  for (const Family* f : Families()) {
    std::string types;
    for (const char* const* t = f->model_types; t && *t; ++t) types += std::string(types.empty() ? "\"" : ", \"") + *t + "\"";
    out += std::string(out.size() > 1 ? ", " : "") + "{\"kind\": \"" + f->kind + "\", \"className\": \"" + f->class_name +
           "\", \"noun\": \"" + f->noun + "\", \"modelTypes\": [" + types + "], \"ownModel\": " +
           (f->own_model ? "\"" + std::string(f->own_model) + "\"" : std::string("null")) + "}";
  }
  return out + "]";
}

Status CheckFamilyConfig(std::string_view text, bool own, std::string_view expected, const Family** family) {
  if (family) *family = nullptr;
  const std::string root = own ? "attnwasm.config" : "config";
  JsonValue json;
  if (own) {
    Status s = io::ParseJson(text, &json);
    if (!s.ok()) {
      std::string m = s.message();
      if (m.rfind("json: ", 0) == 0) m.erase(0, 6);
      return ArgError(root + ": not valid JSON: " + m);
    }
  } else {
    AW_RETURN_IF_ERROR(io::ParseObject(text, root, "a Hugging Face config.json", &json));
  }
  const Family* f = nullptr;
  AW_RETURN_IF_ERROR(FindFamily(json, own, expected, root, &f));
  if (family) *family = f;
  FamilyConfig c;
  c.json = &json;
  c.root = root;
  c.own = own;
  return f->build(c, nullptr);
}

}  // namespace aw
