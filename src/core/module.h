// Module: a tree of named float parameters with torch's state_dict keys.
//
// Like torch.nn.Module: a module registers its own parameters and its child
// modules; the full key of a parameter is the dotted path ("layers.0.linear1.
// weight"), listed own-parameters-first then children in registration order,
// as torch's state_dict(). LoadStateDict is implemented once here for every
// layer. Parameter data is owned by the module that registered it and stays
// at the same address for the module's lifetime (forward passes read it in
// place; nothing is copied per call).
#pragma once
#include <array>
#include <functional>
#include <string>
#include <vector>

#include "core/buffer.h"
#include "core/status.h"
#include "core/tensor.h"

namespace aw {

struct ParamSpec {
  std::string name;  // exact torch state_dict key
  Shape shape;
};

// How a stored parameter keeps its values (layers/packed_weight.h): float32, the 16-bit floats of a
// checkpoint, or quantized to 8 or 4 bits (kernels/qgemm.h). kQ4 and kQ4A16 hold the same bytes and differ in
// their products' activations: int8 per group of 32 (kernels::q4_gemm_a8) or int16 per row (kernels::q_gemm).
enum class WeightType { kF32, kBF16, kF16, kQ8, kQ4, kQ4A16 };
constexpr size_t kWeightTypes = 6;
// "f32", "bf16", "f16", "q8", "q4", "q4a16"
const char* WeightTypeName(WeightType t);

// A parameter whose only copy is not a float array: a weight matrix (rows, cols) kept in its kernels' layout
// and in its stored or quantized type (layers/packed_weight.h). Its storage is allocated when a loader knows
// the type (Reserve); rows go in and come out as floats. Owner: the module that registered it.
class ParamStore {
 public:
  virtual ~ParamStore() = default;
  virtual size_t rows() const = 0;
  virtual size_t cols() const = 0;
  virtual bool reserved() const = 0;
  virtual Status Reserve(WeightType t) = 0;
  virtual size_t bytes() const = 0;                            // held (0 before Reserve)
  virtual size_t BytesFor(WeightType t) const = 0;             // what Reserve(t) would hold (inspect's plan)
  virtual WeightType type() const = 0;                         // after Reserve
  virtual void PutRow(size_t r, const float* row) = 0;        // after Reserve
  // Rows r0 … r0 + count − 1 (ldw floats apart) at once: what count PutRow calls write (a store may write whole
  // panels faster).
  virtual void PutRows(size_t r0, size_t count, const float* rows, size_t ldw) {
    for (size_t i = 0; i < count; ++i) PutRow(r0 + i, rows + i * ldw);
  }
  // Rows r0 … r0 + count − 1 as the little-endian 16-bit patterns of type t (a BF16 or F16 file's rows, ld bytes
  // apart, kept as stored), without a pass through float32; false (nothing written) where the store does not
  // hold type t.
  virtual bool PutRowsBits(size_t r0, size_t count, const uint8_t* bits, size_t ld, WeightType t) {
    (void)r0; (void)count; (void)bits; (void)ld; (void)t;
    return false;
  }
  virtual void GetRow(size_t r, float* row) const = 0;         // after Reserve
};

// A parameter as a loader writes it: float data, or a store (exactly one is set).
struct ParamSlot {
  std::string name;  // full key
  Shape shape;
  float* data = nullptr;
  ParamStore* store = nullptr;
};

struct NamedTensor {
  std::string name;
  TensorView tensor;
};

// One incoming parameter for Module::LoadParams: its key, its shape, and a
// function that writes its numel floats into the parameter (a memcpy from a
// view; a dtype conversion straight out of a file's bytes).
struct ParamSource {
  std::string name;
  Shape shape;
  std::function<Status(float* dst)> fill;
};

class Module {
 public:
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // Every parameter, full keys, in torch's state_dict order.
  std::vector<ParamSpec> Params() const;
  // Parameter data by full key (numel of its shape floats), or null (unknown, or a stored parameter).
  const float* Param(const std::string& name) const;
  // Every parameter as a loader writes it, in state_dict order.
  std::vector<ParamSlot> Slots();
  // A stored parameter by full key, or null.
  ParamStore* Store(const std::string& name);

  // Replaces every parameter. All-or-nothing: on error nothing changes.
  // Rejects a shape the shape rule refuses (core/rules.h CheckShape, the
  // entry named stateDict['key']), then missing, unexpected, duplicate and
  // mis-shaped entries by name, in the words of torch's load_state_dict.
  // `what` names the module class.
  Status LoadStateDict(const std::vector<NamedTensor>& entries, const char* what);

  // LoadStateDict's checks and messages for parameters that come from any
  // source; each accepted entry's fill() writes straight into the parameter
  // (no staging copy). Nothing is written unless every key and shape is
  // right; a fill() that fails (not expected once the source was validated)
  // returns its error with the earlier parameters already replaced.
  Status LoadParams(const std::vector<ParamSource>& entries, const char* what);
  // LoadParams's checks alone, for a loader that writes the parameters itself (models/load_model.h): every
  // key present once with its shape, worded as LoadParams words them.
  Status CheckParams(const std::vector<ParamSpec>& entries, const char* what) const;
  // Runs OnParamsLoaded over the tree: after a loader wrote the parameters through Slots().
  void FinishLoad() { ParamsLoaded(); }
  // Bytes of every parameter (float and stored).
  size_t ParamBytes() const;
  // The same, by how they are kept: bytes[int(WeightType)] (float parameters count as kF32).
  std::array<size_t, kWeightTypes> ParamBytesByType() const;

  // Copies every parameter from a module of identical structure (torch's
  // deepcopy of a layer into a stack). Fails if the keys or shapes differ.
  Status CopyParamsFrom(const Module& other);

 protected:
  Module() = default;
  // Registers and allocates a parameter (contents unspecified until the
  // caller initialises it). `*data` receives its stable address.
  Status AddParam(const std::string& name, const Shape& shape, float** data);
  // Registers a stored parameter (rows, cols) = shape; the module owns `store`.
  Status AddStoredParam(const std::string& name, const Shape& shape, ParamStore* store);
  // Registers a child; the derived class owns it (member or unique_ptr).
  void AddChild(const std::string& name, Module* child);
  // Called on every module of the tree after LoadStateDict or CopyParamsFrom
  // replaced parameters: a layer that keeps a derived form of its weights
  // (packed GEMM panels, kernels/gemm.h) rebuilds it here, and at the end of
  // its Init. Cannot fail: such buffers are allocated in Init.
  virtual void OnParamsLoaded() {}

 private:
  void ParamsLoaded();  // OnParamsLoaded on this module, then its descendants'

  struct Ref {
    std::string name;
    const Shape* shape;
    Buffer* value;
    ParamStore* store;
  };
  void Collect(const std::string& prefix, std::vector<Ref>* out) const;

  struct OwnParam {
    std::string name;
    Shape shape;
    Buffer value;               // empty for a stored parameter
    ParamStore* store = nullptr;
  };
  std::vector<OwnParam> params_;
  std::vector<std::pair<std::string, Module*>> children_;
};

// A module of named children and no parameters of its own: the containers of torch's state_dict paths
// ("model", "self_attn", "layers" in Hugging Face's names). The children belong to the list's owner (members
// or unique_ptrs of the enclosing module); the list only names them.
class ModuleList : public Module {
 public:
  ModuleList() = default;
  // A child under `name`.
  void Add(const std::string& name, Module* child) { AddChild(name, child); }
  // The next child named by its index ("0", "1", …), as torch's nn.ModuleList names them.
  void Append(Module* child) { AddChild(std::to_string(count_++), child); }

 private:
  size_t count_ = 0;
};

}  // namespace aw
