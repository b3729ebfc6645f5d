// The registry of model families: one row each (family.h; the rows in the families' own files), and the two
// decisions made from it, once: which family a checkpoint's config is, and what a message lists as taken. Nothing
// else asks "which family is this": the loader (load_model.h) and the boundary receive the row.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "io/json.h"
#include "models/family.h"

namespace aw {

// Every family, in the order messages list them: a fixed table (for (const Family* f : Families())).
struct FamilyTable {
  const Family* const* first;
  size_t count;
  const Family* const* begin() const { return first; }
  const Family* const* end() const { return first + count; }
};
FamilyTable Families();

// Whether a tensor name ends with `tail` (the rows' name maps: "pooler.dense.weight", "LayerNorm.gamma").
inline bool EndsWith(const std::string& s, std::string_view tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}
// The family of a kind ("causal_lm", …), or null.
const Family* FamilyOfKind(std::string_view kind);

// The family a config names, for a loader that expects the kind `expected` ("": any):
//   a Hugging Face config.json (own false): by its model_type;
//   a model file's own attnwasm.config (own true): an object with unique keys, by its "model".
// `root` names the config in messages ("config", "source: attnwasm.config"). A config of no family, or of
// another than expected, is ERR_INVALID_ARGUMENT naming the field and what each family takes.
Status FindFamily(const io::JsonValue& config, bool own, std::string_view expected, const std::string& root,
                  const Family** out);

// What a loader expecting `expected` may be given: a config.json (with_config), or only a file whose own config
// names its family. ERR_INVALID_ARGUMENT when the expected family takes no such config ("" takes both).
Status CheckConfigKind(std::string_view expected, bool with_config);

// A model file's own config, once its family read it: no key twice at any depth (io::UniqueKeys), named from
// `root`. Its families' Build calls it after their own checks, whose messages come first.
Status CheckOwnKeys(const io::JsonValue& config, const std::string& root);

// The resolved config of a model built by `f` as a JSON object: { "kind", the family's info, "weightBytes",
// "weightTypes" }, what a loaded model's JS face reads (the handle is the one source).
std::string FamilyInfoJson(const Module& m, const Family& f);

// Every family's names and configs as JSON: [{ "kind", "className", "noun", "modelTypes": [...], "ownModel" }]
// (what bindings/native_constants.js is generated to hold: tests/js/native_constants.test.mjs compares the two).
std::string FamiliesJson();

// Reads and checks a config as the loader would, building nothing (tests, fuzzing, inspect): FindFamily, then the
// family's Build with no model. *family (optional) is set when a family was found.
Status CheckFamilyConfig(std::string_view text, bool own, std::string_view expected, const Family** family = nullptr);

}  // namespace aw
