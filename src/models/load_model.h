// A model file → the model family its "attnwasm.config" names, weights
// loaded: the native half of aw.loadModel / loadTranslator / loadClassifier.
//
//   "translator" → Translator (models/translator.h)
//   "vit"        → VitClassifier (models/vit_classifier.h)
//   "causal_lm"  → CausalLm (models/causal_lm.h): the file's own config, or a
//                  Hugging Face checkpoint's config.json passed beside it
//
// The config is read by ParseModelConfig (io/model_config.h, fuzzed); the
// tensors fill the parameters straight from the file's bytes
// (io/load_params.h): every parameter must be in the file with its shape and
// every tensor of the file must be a parameter.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/module.h"
#include "io/safetensors.h"

namespace aw {

// file: ParseSafetensors of bytes[0, size). expected_model: "translator",
// "vit", "causal_lm" or "" (any). config_json: a config.json's text (then the
// model is a causal LM of that config, whatever the file's metadata says), or
// empty (the file's "attnwasm.config"). On success *out is the model and *kind
// its kind; on error *out is null. Errors: kInvalidArgument for a missing or
// invalid config ("source: ..." / "config.<key>: ..."), kStateDict / kDtype
// for tensors that do not fit.
Status LoadModel(const uint8_t* bytes, size_t size, const io::StFile& file, std::string_view expected_model,
                 std::string_view config_json, std::unique_ptr<Module>* out, std::string* kind);

// The class name a kind's errors use ("Translator", "Classifier", "CausalLM").
const char* ModelClassName(std::string_view kind);

// A loaded model's resolved config as a JSON object, what its JS face reads (the handle is the one source):
// a causal LM's vocabSize, maxPositions, eosTokenIds, attentionWindow, …; "{}" for the other kinds, whose JS
// faces read their vocabularies and labels from the file's attnwasm.config.
std::string ModelInfoJson(const Module& m, std::string_view kind);

}  // namespace aw
