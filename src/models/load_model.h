// A model file → the model family its "attnwasm.config" names, weights
// loaded: the native half of aw.loadModel / loadTranslator / loadClassifier.
//
//   "translator" → Translator (models/translator.h)
//   "vit"        → VitClassifier (models/vit_classifier.h)
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
// "vit" or "" (either). On success *out is the model and *kind its config's
// "model"; on error *out is null. Errors: kInvalidArgument for a missing or
// invalid config ("source: ..."), kStateDict / kDtype for tensors that do not
// fit.
Status LoadModel(const uint8_t* bytes, size_t size, const io::StFile& file, std::string_view expected_model,
                 std::unique_ptr<Module>* out, std::string* kind);

// The class name a kind's errors use ("Translator", "Classifier").
const char* ModelClassName(std::string_view kind);

}  // namespace aw
