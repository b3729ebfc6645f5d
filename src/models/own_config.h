// A model file's own config ("attnwasm.config" in its safetensors metadata: this repository's demo models, written
// by tools/export_safetensors.py): what its families share — the Transformer layer's fields (dModel, nhead,
// dimFeedforward, activation, normFirst, layerNormEps) and vocabularies (2 to kMaxVocab unique non-empty strings).
// Each family reads its own fields (models/translator_config.cpp, vit_config.cpp; causal_lm_config.cpp
// ReadCausalLmFile); models/families.cpp checks the object itself (unique keys, "model"). Messages as
// io/json_fields.h words them: "attnwasm.config.dModel: expected an integer in [1, 4096], got -3".
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/status.h"
#include "io/json_fields.h"
#include "layers/transformer_layer_config.h"

namespace aw::own {

// dModel and nhead (a divisor of dModel).
Status Width(const io::FieldReader& c);
// The options every Transformer layer has: activation ("relu", "gelu"), normFirst, layerNormEps.
Status LayerOptions(const io::FieldReader& c);
// A vocabulary at `key`; its size into *size.
Status Vocab(const io::FieldReader& c, const char* key, size_t* size);
// The layer's fields once Width, dimFeedforward and LayerOptions accepted them (torch's defaults for the absent
// options; batch_first set, dropout 0).
TransformerLayerConfig LayerOf(const io::JsonValue& root);
// Helpers for fields already checked: an integer, a number with a default, a list's length.
int64_t IntOf(const io::JsonValue& root, const char* key);
double NumberOr(const io::JsonValue& root, const char* key, double def);
size_t SizeOf(const io::JsonValue& root, const char* key);

}  // namespace aw::own
