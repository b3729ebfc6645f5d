// Strict reader of the safetensors format (Hugging Face). It validates a file
// held in memory and converts tensors to float32 / int32; it never copies the
// file, never writes one, and never reads outside [bytes, bytes + size).
//
// The format, all integers little-endian:
//   bytes [0, 8)        N: uint64, length of the header
//   bytes [8, 8 + N)    header: UTF-8 JSON object, possibly padded with spaces
//                         { "<tensor name>": { "dtype": "F32",
//                                              "shape": [2, 3],
//                                              "data_offsets": [begin, end] },
//                           ...,
//                           "__metadata__": { "<key>": "<string>", ... } }   (optional)
//   bytes [8 + N, size) the data buffer. A tensor's bytes are
//                         [8 + N + begin, 8 + N + end): row-major, little-endian.
//
// Accepted only if: N <= 100 MB and fits in the file; every entry has exactly
// the three fields; dtype is one of StDType; shape and offsets are exact
// integers in [0, 2^53]; numel <= kMaxElements (2^29); end - begin is
// numel × element size; tensors do not overlap and, sorted by offset, cover
// the data buffer exactly (zero-size tensors sit at a boundary); names are
// unique. This is what the reference implementation (safetensors, Rust)
// enforces, plus unique names and metadata keys.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/buffer.h"
#include "core/status.h"
#include "core/tensor.h"

namespace aw::io {

// The dtypes this reader knows; the format's names are given by StDTypeName.
enum class StDType { kF64, kF32, kF16, kBF16, kI64, kI32, kI16, kI8, kU8, kBool };

struct StTensor {
  std::string name;
  StDType dtype = StDType::kF32;
  Shape shape;
  uint64_t begin = 0;  // absolute byte offsets in the file, end exclusive
  uint64_t end = 0;
};

struct StFile {
  std::vector<StTensor> tensors;  // in header order
  std::vector<std::pair<std::string, std::string>> metadata;  // "__metadata__", in header order
  uint64_t data_start = 0;  // 8 + N: absolute offset of the data buffer
  uint64_t data_size = 0;   // bytes of the data buffer (where the tensors end): the file is data_start + data_size
};

// Largest header accepted (the reference implementation's limit).
constexpr uint64_t kStMaxHeaderBytes = 100'000'000;

// A file size not known yet (a stream): ParseSafetensorsHeader then checks the layout from the header alone.
constexpr uint64_t kStUnknownSize = ~uint64_t(0);

// The header length N from a file's first 8 bytes (size: how many of them there are), checked against the
// limit and, when known, the file's size. For reading a file in pieces: its first 8 + N bytes are the header.
Status SafetensorsHeaderLength(const uint8_t* first8, size_t size, uint64_t file_size, uint64_t* n);

// Validates a file's header from its first bytes (head: at least 8 + N of them) and describes the file in
// *out, as ParseSafetensors does, without its data: a file of file_size bytes, or kStUnknownSize (a stream:
// the tensors must still tile the data from 0 without gaps; *out's data_size is where they end, which the
// reader of the stream checks at its end).
Status ParseSafetensorsHeader(const uint8_t* head, size_t head_size, uint64_t file_size, StFile* out);

// Validates the whole file (see the top of this file) and describes it in
// *out, owned by the caller (reset first; left empty on error). Errors are
// kInvalidArgument, start with "safetensors: " and name the tensor if any.
Status ParseSafetensors(const uint8_t* bytes, size_t size, StFile* out);

// Converts tensor `t` of a parsed file (same bytes, size) with dtype F64, F32,
// F16 or BF16 to float32 in out[0, numel), owned by the caller. F16 and BF16
// widen exactly (subnormals, ±inf, NaN included); F64 rounds to nearest.
// Other dtypes are a kDtype error; `t` is re-checked against `size`.
Status ReadAsF32(const uint8_t* bytes, size_t size, const StTensor& t, float* out);

// Converts tensor `t` with dtype I64, I32, I16, I8, U8 or BOOL to int32 in
// out[0, numel), owned by the caller. An I64 value outside int32, or a BOOL
// byte other than 0 / 1, is an error naming the tensor and the index.
Status ReadAsI32(const uint8_t* bytes, size_t size, const StTensor& t, int32_t* out);

// A whole file read: every tensor converted, in header order, float dtypes
// (IsFloat) to float32 in f32[i], the others to int32 in i32[i] (the other
// buffer of the pair stays empty). Owner: the caller.
struct StConverted {
  StFile file;
  std::vector<Buffer> f32;
  std::vector<BufferT<int32_t>> i32;
};

// ParseSafetensors, then ReadAsF32 / ReadAsI32 of every tensor into *out
// (reset first); the first error stops it.
Status ReadSafetensors(const uint8_t* bytes, size_t size, StConverted* out);

// F64, F32, F16 and BF16: the dtypes ReadAsF32 converts.
bool IsFloat(StDType d);

// The format's name: "F64", "F32", "F16", "BF16", "I64", "I32", "I16", "I8", "U8", "BOOL".
const char* StDTypeName(StDType d);
// Bytes per element: 8, 4, 2, 2, 8, 4, 2, 1, 1, 1.
size_t StDTypeSize(StDType d);

// The indices of ts in the order of their data: by (begin, end), ties by index.
std::vector<size_t> OrderByRange(const std::vector<StTensor>& ts);

}  // namespace aw::io
