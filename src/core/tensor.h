// Tensor views and shapes: the data model of attnwasm.
//
// Shape legend used in comments across src/ (PyTorch's names):
//   N  batch size            L  target (query) length    S  source (key) length
//   E  embedding dim         H  number of heads          hd head dim = E / H
//   kdim, vdim  key / value feature dims of MultiheadAttention
//   (…)  any number of leading batch dims (scaled_dot_product_attention)
//
// All tensors are dense, row-major (C order), float32 unless stated. A view
// does not own its data; outputs are owned by a Buffer (buffer.h).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace aw {

using Shape = std::vector<int64_t>;

// Largest element count of any single tensor: keeps byte sizes inside the
// 2 GiB wasm heap and every size computation far from int64 overflow.
constexpr int64_t kMaxElements = int64_t(1) << 29;

// The element types of tensors that cross the JS boundary (bindings/checks.js DTYPE): float32 data and
// masks, bool masks (one byte, 0/1), int32 token ids.
enum class DType : int { kF32 = 0, kBool = 1, kI32 = 2 };

struct TensorView {
  const float* data = nullptr;
  Shape shape;
};

// A mask is float32 (added to the scores) or bool (stored as one byte, 0/1).
// `data == nullptr` means "no mask".
struct MaskView {
  const void* data = nullptr;
  DType dtype = DType::kF32;
  Shape shape;
  bool present() const { return data != nullptr; }
};

// "(2, 7, 9)"
std::string ShapeStr(const Shape& s);
// Number of elements, or -1 if a dim is negative or the count exceeds kMaxElements.
int64_t NumelChecked(const Shape& s);
const char* DTypeName(DType d);

}  // namespace aw
