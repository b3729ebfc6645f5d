// Strict validator of a model file's "attnwasm.config": the JSON string in the
// safetensors __metadata__ that describes the model (its hyper-parameters,
// vocabularies, labels, input normalisation). It checks; it does not build a
// config struct itself; ParseModelConfig reads the fields the native model
// families need (the JS layer reads vocabularies and labels once it is known good).
//
// Three kinds of model, selected by "model":
//   "translator"  dModel, nhead, numEncoderLayers, numDecoderLayers,
//                 dimFeedforward, maxLen, srcVocab, tgtVocab, pad, eos,
//                 langTokens, maxSrcTokens, maxTgtTokens (required);
//                 activation, normFirst, layerNormEps, embedScale, srcPad,
//                 srcAddsEos, sourceText ("english-numbers" — the default —
//                 or "words"), detokenize (language -> "hyphen-join",
//                 "concat" or "space-join") (optional)
//   "vit"         imageSize, patchSize, inChannels, dModel, nhead, numLayers,
//                 dimFeedforward, numClasses (required); activation, normFirst,
//                 layerNormEps, labels, mean, std (optional: the JS layer
//                 defaults labels to "0".."numClasses-1", mean to 0, std to 1)
//   "causal_lm"   hf_config (required: a Hugging Face config.json of a Llama or
//                 Qwen2 causal LM, io/causal_lm_config.h); tokenizer
//                 ({"type": "chars", "vocab": [one string per id], "bos",
//                 "eos"}) and attentionWindow (optional)
// Keys not listed (documentation strings such as "decoding", "tokenize",
// "dtype", "params", or anything newer) are accepted and ignored; no top-level
// key may repeat (JSON.parse would silently keep the last). Integers may be
// written as any JSON number with an integral value ("64" or "64.0"), as
// JSON.parse would read them.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"
#include "io/causal_lm_config.h"
#include "io/json.h"

namespace aw {

// A validated config, read into the fields the model families need (the
// optional keys take the defaults torch or the exporter use).
struct ModelSpec {
  std::string model;             // "translator" or "vit"
  // The Transformer layers (models/load_model.cpp makes their TransformerLayerConfig: reading a file does not
  // depend on the layers).
  int64_t d_model = 0, nhead = 0, dim_feedforward = 0;
  std::string activation = "relu";  // "relu" or "gelu"
  bool norm_first = false;
  double layer_norm_eps = 1e-5;
  // "translator"
  int64_t num_encoder_layers = 0, num_decoder_layers = 0;
  int64_t src_vocab = 0, tgt_vocab = 0;  // vocabulary sizes
  int64_t max_len = 0, eos = 0;
  double embed_scale = 1.0;
  // "vit"
  int64_t image_size = 0, patch_size = 0, in_channels = 0, num_layers = 0, num_classes = 0;
  double mean = 0.0, std = 1.0;
  // "causal_lm": the HF config (hf_config) and the file's attentionWindow (io/causal_lm_config.h; its
  // ranges are CausalLm::Init's)
  CausalLmConfig lm;
};

// Reads a parsed "attnwasm.config" object into *out (expected_model as below). For a causal_lm file only the
// kinds, the types and the file's own fields are checked here: the HF config's ranges are CausalLm::Init's.
Status ReadModelConfig(const io::JsonValue& root, std::string_view expected_model, ModelSpec* out);

// Parses the text, then ReadModelConfig.
Status ParseModelConfig(std::string_view json_text, std::string_view expected_model, ModelSpec* out);

// Validates the "attnwasm.config" JSON text of a model file. expected_model is
// "translator", "vit" or "causal_lm" (or empty = accept any). On failure returns
// kInvalidArgument with a message of the form
//   attnwasm.config.<key path>: expected <what>, got <what was there>
// e.g. "attnwasm.config.dModel: expected an integer in [1, 4096], got -3"
//      "attnwasm.config.srcVocab[5]: expected a non-empty string, got 12"
//      "attnwasm.config: expected a \"translator\" model, got \"vit\""
//      "attnwasm.config: not valid JSON: <json parser message>"
// A key that is absent is reported as "got nothing". Nothing is retained from
// json_text after the call returns.
Status ValidateModelConfig(std::string_view json_text, std::string_view expected_model);

}  // namespace aw
