// A model family as one unit: the row of the registry (models/families.h) that the loader (models/load_model.h)
// and the boundary read, instead of deciding "which family is this" each in its own way. A row holds the family's
// names, the configs it takes (config.json model_types, or its own files' attnwasm.config "model"), its config
// reader with the range rules (one file per family: <family>_config.cpp), its tensor-name map (renames, skips,
// the tied head), Build and its info JSON. A family's row is in its own file (<family>_family.cpp); adding a
// family is its files plus one line in families.cpp (docs/architecture.md, "How a family is added").
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/module.h"
#include "core/status.h"
#include "io/json.h"
#include "io/safetensors.h"

namespace aw {

// What a family builds from: the config object and what the checkpoint holds.
struct FamilyConfig {
  const io::JsonValue* json = nullptr;  // a Hugging Face config.json, or a model file's own attnwasm.config
  std::string root;                     // how messages name it: "config", "source: attnwasm.config"
  bool own = false;                     // json is a file's own attnwasm.config
  std::vector<const io::StTensor*> tensors;  // every tensor of every file, names as stored (a BERT's pooler is
                                             // the model's when the file has one)
};

// A tensor the model takes only as an exact copy of another (a tied lm_head), compared when the load ends.
struct TiedTensor {
  std::string name;     // "lm_head.weight"
  std::string source;   // "model.embed_tokens.weight"
  Shape shape;          // the shape it must have
  std::string message;  // the refusal (ERR_STATE_DICT) when it differs or has another shape
};

struct Family {
  const char* kind;        // "causal_lm", "encoder", "translator", "vit": info().kind, the JS registry's key
  const char* class_name;  // "CausalLM", "Embedder", "Translator", "Classifier": in messages
  const char* noun;        // "a causal LM", "an encoder", …: in prose
  // The configs it takes: the model_types of a Hugging Face config.json (null-terminated; null: none), and its
  // own files' attnwasm.config "model" (null: none).
  const char* const* model_types;
  const char* own_model;
  // A hint for a config.json model_type next to the family's that it does not take ("gemma3" is not
  // "gemma3_text"), or null; called with every refused model_type.
  const char* (*type_hint)(const std::string& model_type);
  // Reads the config with every rule of the family (types, kinds, ranges) and builds the model, its parameters
  // unset (the loader fills them). With out null, reads and checks only: nothing is allocated.
  Status (*build)(const FamilyConfig& c, std::unique_ptr<Module>* out);
  // A file's tensor name as the model's parameter name, in place (a task model's prefix, an older save's names);
  // false: a tensor the model does not use (a task head, a buffer), skipped as transformers skips it.
  bool (*param_name)(const Module& m, std::string* name);
  // The model's tied tensor into *out; false: none.
  bool (*tied)(const Module& m, TiedTensor* out);
  // The resolved config as JSON members, no braces ("\"vocabSize\": 77, …"): what the JS face reads.
  std::string (*info)(const Module& m);
  // Tensors that are none of the model's are refused with this prefix before the generic check names them
  // ("stateDict: unexpected key(s) for a classifier: "), or null.
  const char* unexpected_prefix;
  // Gives the model's float32 head a q8 copy to bound its logits (loadModel's boundedHead: greedy search's bounded pass), or
  // null: the family has no such head. Called after build, before the weights are reserved.
  void (*bounded_head)(Module& m);
};

}  // namespace aw
