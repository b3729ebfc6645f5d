// Parameters straight from a safetensors file: the tensors of a parsed file
// (io/safetensors.h) whose names start with `prefix` fill a module's
// parameters of the same names (prefix removed), converted from F32, F16,
// BF16 or F64 directly into the parameter buffers. No tensor is copied out
// first; the file's bytes are read once, where they are.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/module.h"
#include "core/status.h"
#include "io/safetensors.h"

namespace aw::io {

// Module::LoadParams's checks and messages (missing, unexpected, mis-shaped
// keys, all-or-nothing), plus: a matching tensor with an integer or bool
// dtype is a kDtype error naming it.
Status LoadParamsFromSafetensors(Module* m, const uint8_t* bytes, size_t size, const StFile& file,
                                 const std::string& prefix, const char* what);

}  // namespace aw::io
