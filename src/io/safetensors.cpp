// Safetensors reader: header validation (ParseSafetensors) and dtype
// conversion (ReadAsF32 / ReadAsI32). The format is described in safetensors.h.
#include "io/safetensors.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string_view>
#include <tuple>

#include "io/json.h"
#include "kernels/convert.h"

namespace aw::io {
namespace {

constexpr StDType kAllDTypes[] = {StDType::kF64, StDType::kF32, StDType::kF16, StDType::kBF16,
                                  StDType::kI64, StDType::kI32, StDType::kI16, StDType::kI8,
                                  StDType::kU8,  StDType::kBool};
constexpr char kKnownDTypes[] = "F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL";

// Little-endian loads from possibly unaligned bytes; the byte-assembly idiom
// compiles to a plain load on little-endian hosts (x86, wasm).
uint16_t LoadU16(const uint8_t* p) { return uint16_t(p[0] | (p[1] << 8)); }
uint32_t LoadU32(const uint8_t* p) {
  return uint32_t(p[0]) | (uint32_t(p[1]) << 8) | (uint32_t(p[2]) << 16) | (uint32_t(p[3]) << 24);
}
uint64_t LoadU64(const uint8_t* p) { return uint64_t(LoadU32(p)) | (uint64_t(LoadU32(p + 4)) << 32); }

Status Err(const std::string& m) { return ArgError("safetensors: " + m); }

// A name or key quoted for a message; hostile names may be huge.
std::string Quote(const std::string& s) {
  constexpr size_t kMax = 200;
  return "'" + (s.size() <= kMax ? s : s.substr(0, kMax) + "...") + "'";
}

Status TensorErr(const std::string& name, const std::string& m) {
  return Err("tensor " + Quote(name) + ": " + m);
}

// "number 1.5", "string 'x'", "array", ...
std::string Describe(const JsonValue& v) {
  if (v.is_number()) return "number " + v.str.substr(0, 40);
  if (v.is_string()) return "string " + Quote(v.str);
  return JsonTypeName(v.type);
}

std::string Range(uint64_t b, uint64_t e) {
  return "[" + std::to_string(b) + ", " + std::to_string(e) + ")";
}

bool DTypeFromName(const std::string& s, StDType* out) {
  for (StDType d : kAllDTypes) {
    if (s == StDTypeName(d)) {
      *out = d;
      return true;
    }
  }
  return false;
}

// One header entry "name": {...} -> t, with offsets relative to the data buffer.
Status ParseEntry(const JsonMember& m, uint64_t data_size, StTensor* t) {
  const std::string& name = m.key;
  t->name = name;
  if (!m.value.is_object()) {
    return TensorErr(name, "entry must be an object with dtype, shape and data_offsets, got " +
                               Describe(m.value));
  }
  const JsonValue* dtype = nullptr;
  const JsonValue* shape = nullptr;
  const JsonValue* offsets = nullptr;
  for (const JsonMember& f : m.value.members) {
    const JsonValue** slot = f.key == "dtype" ? &dtype
                             : f.key == "shape" ? &shape
                             : f.key == "data_offsets" ? &offsets
                             : nullptr;
    if (!slot) {
      return TensorErr(name, "unexpected field " + Quote(f.key) +
                                 " (expected exactly dtype, shape, data_offsets)");
    }
    if (*slot) return TensorErr(name, "duplicate field " + Quote(f.key));
    *slot = &f.value;
  }
  if (!dtype) return TensorErr(name, "missing field 'dtype'");
  if (!shape) return TensorErr(name, "missing field 'shape'");
  if (!offsets) return TensorErr(name, "missing field 'data_offsets'");

  if (!dtype->is_string()) return TensorErr(name, "dtype must be a string, got " + Describe(*dtype));
  if (!DTypeFromName(dtype->str, &t->dtype)) {
    return TensorErr(name, "unknown dtype " + Quote(dtype->str) + " (known: " + kKnownDTypes + ")");
  }

  if (!shape->is_array()) return TensorErr(name, "shape must be an array, got " + Describe(*shape));
  bool dim_too_large = false;
  for (size_t i = 0; i < shape->items.size(); ++i) {
    uint64_t d = 0;
    if (!shape->items[i].AsUint53(&d)) {
      return TensorErr(name, "shape[" + std::to_string(i) +
                                 "] must be a non-negative integer <= 2^53, got " +
                                 Describe(shape->items[i]));
    }
    t->shape.push_back(int64_t(d));
    dim_too_large |= d > uint64_t(kMaxElements);  // even when another dim is 0
  }
  const int64_t numel = NumelChecked(t->shape);
  if (numel < 0 || dim_too_large) {
    return TensorErr(name, "shape " + ShapeStr(t->shape) +
                               " is too large (limit: 2^29 elements and 2^29 per dimension)");
  }

  if (!offsets->is_array() || offsets->items.size() != 2) {
    return TensorErr(name, "data_offsets must be an array [begin, end], got " +
                               (offsets->is_array() ? "an array of " + std::to_string(offsets->items.size()) +
                                                          " elements"
                                                    : Describe(*offsets)));
  }
  for (size_t i = 0; i < 2; ++i) {
    uint64_t v = 0;
    if (!offsets->items[i].AsUint53(&v)) {
      return TensorErr(name, "data_offsets[" + std::to_string(i) +
                                 "] must be a non-negative integer <= 2^53, got " +
                                 Describe(offsets->items[i]));
    }
    (i == 0 ? t->begin : t->end) = v;
  }
  if (t->begin > t->end) {
    return TensorErr(name, "data_offsets " + Range(t->begin, t->end) + ": begin is after end");
  }
  if (t->end > data_size) {
    return TensorErr(name, "data_offsets " + Range(t->begin, t->end) +
                               " run past the end of the data buffer (" +
                               std::to_string(data_size) + " bytes)");
  }
  const uint64_t need = uint64_t(numel) * StDTypeSize(t->dtype);  // <= 2^32
  if (t->end - t->begin != need) {
    return TensorErr(name, "data_offsets " + Range(t->begin, t->end) + " hold " +
                               std::to_string(t->end - t->begin) + " bytes, but dtype " +
                               StDTypeName(t->dtype) + " and shape " + ShapeStr(t->shape) +
                               " need " + std::to_string(need));
  }
  return Status::OK();
}

// The first of the strings that occurs twice (sorted in place), or null.
const std::string_view* FirstRepeated(std::vector<std::string_view>* v) {
  std::sort(v->begin(), v->end());
  for (size_t i = 1; i < v->size(); ++i)
    if ((*v)[i] == (*v)[i - 1]) return &(*v)[i];
  return nullptr;
}

Status ParseMetadata(const JsonValue& v, std::vector<std::pair<std::string, std::string>>* out) {
  if (!v.is_object()) {
    return Err("__metadata__ must be an object of strings, got " + Describe(v));
  }
  for (const JsonMember& m : v.members) {
    if (!m.value.is_string()) {
      return Err("__metadata__ value of " + Quote(m.key) + " must be a string, got " +
                 Describe(m.value));
    }
    out->emplace_back(m.key, m.value.str);
  }
  std::vector<std::string_view> keys;
  for (const auto& kv : *out) keys.push_back(kv.first);
  if (const std::string_view* d = FirstRepeated(&keys)) return Err("duplicate __metadata__ key " + Quote(std::string(*d)));
  return Status::OK();
}

Status CheckUniqueNames(const std::vector<StTensor>& ts) {
  std::vector<std::string_view> names;
  for (const StTensor& t : ts) names.push_back(t.name);
  if (const std::string_view* d = FirstRepeated(&names)) return Err("duplicate tensor name " + Quote(std::string(*d)));
  return Status::OK();
}

// Sorted by (begin, end), the tensors must tile [0, data_size) exactly: each
// starts where the previous ends. Zero-size tensors thus sit at a boundary.
Status CheckLayout(const std::vector<StTensor>& ts, uint64_t data_size, uint64_t* end) {
  uint64_t covered = 0;  // [0, covered) is tiled so far
  const StTensor* prev = nullptr;
  for (size_t i : OrderByRange(ts)) {
    const StTensor& t = ts[i];
    if (t.begin < covered) {
      return Err("tensors " + Quote(prev->name) + " at " + Range(prev->begin, prev->end) + " and " +
                 Quote(t.name) + " at " + Range(t.begin, t.end) + " overlap");
    }
    if (t.begin > covered) {
      return Err("bytes " + Range(covered, t.begin) +
                 " of the data buffer are not covered by any tensor (a hole before tensor " +
                 Quote(t.name) + ")");
    }
    covered = t.end;
    prev = &t;
  }
  if (data_size != kStUnknownSize && covered != data_size) {
    return Err("bytes " + Range(covered, data_size) + " at the end of the data buffer (" +
               std::to_string(data_size) + " bytes) are not covered by any tensor");
  }
  *end = covered;
  return Status::OK();
}

// Re-checks t against the file and returns its element count.
Status CheckReadable(size_t size, const StTensor& t, const void* out, int64_t* numel) {
  *numel = NumelChecked(t.shape);
  if (*numel < 0) return TensorErr(t.name, "shape " + ShapeStr(t.shape) + " is too large");
  if (t.begin > t.end || t.end > size) {
    return TensorErr(t.name, "byte range " + Range(t.begin, t.end) + " is outside the file (" +
                                 std::to_string(size) + " bytes)");
  }
  if (t.end - t.begin != uint64_t(*numel) * StDTypeSize(t.dtype)) {
    return TensorErr(t.name, "byte range " + Range(t.begin, t.end) + " does not hold dtype " +
                                 StDTypeName(t.dtype) + " and shape " + ShapeStr(t.shape));
  }
  if (!out && *numel > 0) return TensorErr(t.name, "out is null");
  return Status::OK();
}

}  // namespace

const char* StDTypeName(StDType d) {
  switch (d) {
    case StDType::kF64: return "F64";
    case StDType::kF32: return "F32";
    case StDType::kF16: return "F16";
    case StDType::kBF16: return "BF16";
    case StDType::kI64: return "I64";
    case StDType::kI32: return "I32";
    case StDType::kI16: return "I16";
    case StDType::kI8: return "I8";
    case StDType::kU8: return "U8";
    case StDType::kBool: return "BOOL";
  }
  return "?";
}

size_t StDTypeSize(StDType d) {
  switch (d) {
    case StDType::kF64: case StDType::kI64: return 8;
    case StDType::kF32: case StDType::kI32: return 4;
    case StDType::kF16: case StDType::kBF16: case StDType::kI16: return 2;
    case StDType::kI8: case StDType::kU8: case StDType::kBool: return 1;
  }
  return 0;
}

Status SafetensorsHeaderLength(const uint8_t* first8, size_t size, uint64_t file_size, uint64_t* n) {
  if (size < 8) {
    return Err("file is " + std::to_string(size) + " bytes, shorter than the 8-byte header length");
  }
  *n = LoadU64(first8);
  if (*n > kStMaxHeaderBytes) {
    return Err("header length " + std::to_string(*n) + " is over the limit of " + std::to_string(kStMaxHeaderBytes) +
               " bytes");
  }
  if (file_size != kStUnknownSize && *n > file_size - 8) {
    return Err("header length " + std::to_string(*n) + " runs past the end of the file (" + std::to_string(file_size) +
               " bytes)");
  }
  return Status::OK();
}

Status ParseSafetensorsHeader(const uint8_t* head, size_t head_size, uint64_t file_size, StFile* out) {
  *out = StFile();
  if (!head && head_size > 0) return Err("bytes is null");
  uint64_t n = 0;
  AW_RETURN_IF_ERROR(SafetensorsHeaderLength(head, head_size, file_size, &n));
  if (n > head_size - 8) {
    return Err(file_size == kStUnknownSize || file_size > head_size
                   ? "the header (" + std::to_string(n) + " bytes) is not all in the " + std::to_string(head_size) +
                         " bytes given"
                   : "header length " + std::to_string(n) + " runs past the end of the file (" +
                         std::to_string(head_size) + " bytes)");
  }
  const std::string_view text(reinterpret_cast<const char*>(head + 8), size_t(n));
  // The reference implementation requires the '{' first (no leading spaces).
  if (text.empty() || text[0] != '{') return Err("header must be a JSON object starting with '{'");
  JsonValue root;
  const Status json = ParseJson(text, &root);
  if (!json.ok()) {
    std::string m = json.message();
    if (m.rfind("json: ", 0) == 0) m.erase(0, 6);
    return Err("header is not valid JSON: " + m + " of the header");
  }
  if (!root.is_object()) return Err("header must be a JSON object, got " + Describe(root));

  StFile file;
  file.data_start = 8 + n;
  // A stream's size is known only at its end: its tensors must still tile the data from 0 with no gap, and
  // where they end is the size the stream must have.
  const bool known = file_size != kStUnknownSize;
  const uint64_t data_size = known ? file_size - file.data_start : (uint64_t(1) << 62);
  bool seen_metadata = false;
  for (const JsonMember& m : root.members) {
    if (m.key == "__metadata__") {
      if (seen_metadata) return Err("duplicate __metadata__");
      seen_metadata = true;
      AW_RETURN_IF_ERROR(ParseMetadata(m.value, &file.metadata));
      continue;
    }
    file.tensors.emplace_back();
    AW_RETURN_IF_ERROR(ParseEntry(m, data_size, &file.tensors.back()));
  }
  AW_RETURN_IF_ERROR(CheckUniqueNames(file.tensors));
  uint64_t covered = 0;
  AW_RETURN_IF_ERROR(CheckLayout(file.tensors, known ? data_size : kStUnknownSize, &covered));
  file.data_size = covered;
  for (StTensor& t : file.tensors) {  // relative -> absolute
    t.begin += file.data_start;
    t.end += file.data_start;
  }
  *out = std::move(file);
  return Status::OK();
}

Status ParseSafetensors(const uint8_t* bytes, size_t size, StFile* out) {
  *out = StFile();
  if (!bytes && size > 0) return Err("bytes is null");
  return ParseSafetensorsHeader(bytes, size, size, out);
}

Status ReadAsF32(const uint8_t* bytes, size_t size, const StTensor& t, float* out) {
  int64_t numel = 0;
  AW_RETURN_IF_ERROR(CheckReadable(size, t, out, &numel));
  const uint8_t* p = bytes + t.begin;
  const size_t n = size_t(numel);
  switch (t.dtype) {
    case StDType::kF32: kernels::f32_from_f32_bytes(n, p, out); return Status::OK();
    case StDType::kF16: kernels::f32_from_f16_bytes(n, p, out); return Status::OK();
    case StDType::kBF16: kernels::f32_from_bf16_bytes(n, p, out); return Status::OK();
    case StDType::kF64: kernels::f32_from_f64_bytes(n, p, out); return Status::OK();
    default:
      return DtypeError("safetensors: tensor " + Quote(t.name) + " has dtype " +
                        StDTypeName(t.dtype) + "; ReadAsF32 reads F64, F32, F16 or BF16");
  }
}

Status ReadAsI32(const uint8_t* bytes, size_t size, const StTensor& t, int32_t* out) {
  int64_t numel = 0;
  AW_RETURN_IF_ERROR(CheckReadable(size, t, out, &numel));
  const uint8_t* p = bytes + t.begin;
  const size_t n = size_t(numel);
  switch (t.dtype) {
    case StDType::kI64:
      for (size_t i = 0; i < n; ++i) {
        const int64_t v = int64_t(LoadU64(p + 8 * i));
        if (v < INT32_MIN || v > INT32_MAX) {
          return TensorErr(t.name, "I64 value " + std::to_string(v) + " at index " +
                                       std::to_string(i) + " does not fit in int32");
        }
        out[i] = int32_t(v);
      }
      return Status::OK();
    case StDType::kI32:
      for (size_t i = 0; i < n; ++i) out[i] = int32_t(LoadU32(p + 4 * i));
      return Status::OK();
    case StDType::kI16:
      for (size_t i = 0; i < n; ++i) out[i] = int16_t(LoadU16(p + 2 * i));
      return Status::OK();
    case StDType::kI8:
      for (size_t i = 0; i < n; ++i) out[i] = int8_t(p[i]);
      return Status::OK();
    case StDType::kU8:
      for (size_t i = 0; i < n; ++i) out[i] = p[i];
      return Status::OK();
    case StDType::kBool:
      for (size_t i = 0; i < n; ++i) {
        if (p[i] > 1) {
          return TensorErr(t.name, "BOOL byte " + std::to_string(p[i]) + " at index " +
                                       std::to_string(i) + " is not 0 or 1");
        }
        out[i] = p[i];
      }
      return Status::OK();
    default:
      return DtypeError("safetensors: tensor " + Quote(t.name) + " has dtype " +
                        StDTypeName(t.dtype) +
                        "; ReadAsI32 reads I64, I32, I16, I8, U8 or BOOL");
  }
}

bool IsFloat(StDType d) {
  return d == StDType::kF64 || d == StDType::kF32 || d == StDType::kF16 || d == StDType::kBF16;
}

Status ReadSafetensors(const uint8_t* bytes, size_t size, StConverted* out) {
  *out = StConverted();
  AW_RETURN_IF_ERROR(ParseSafetensors(bytes, size, &out->file));
  const std::vector<StTensor>& ts = out->file.tensors;
  out->f32.resize(ts.size());
  out->i32.resize(ts.size());
  for (size_t i = 0; i < ts.size(); ++i) {
    const size_t n = size_t(NumelChecked(ts[i].shape));  // <= 2^29: checked by the parse
    if (IsFloat(ts[i].dtype)) {
      AW_RETURN_IF_ERROR(out->f32[i].Resize(n, ts[i].name.c_str()));
      AW_RETURN_IF_ERROR(ReadAsF32(bytes, size, ts[i], out->f32[i].data()));
    } else {
      AW_RETURN_IF_ERROR(out->i32[i].Resize(n, ts[i].name.c_str()));
      AW_RETURN_IF_ERROR(ReadAsI32(bytes, size, ts[i], out->i32[i].data()));
    }
  }
  return Status::OK();
}

std::vector<size_t> OrderByRange(const std::vector<StTensor>& ts) {
  std::vector<std::tuple<uint64_t, uint64_t, size_t>> keys;
  for (size_t i = 0; i < ts.size(); ++i) keys.emplace_back(ts[i].begin, ts[i].end, i);
  std::sort(keys.begin(), keys.end());
  std::vector<size_t> order;
  for (const auto& k : keys) order.push_back(std::get<2>(k));
  return order;
}

}  // namespace aw::io
