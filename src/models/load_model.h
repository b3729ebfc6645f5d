// Loading a model from safetensors files: the native half of aw.loadModel, for every family alike. Which family
// a checkpoint is comes from the registry (models/families.h: a config.json's model_type, or the file's own
// attnwasm.config "model"); the family's row builds the model and names its tensors. Nothing here knows a family.
//
// ModelLoader takes the files' bytes in chunks, so a checkpoint of any size — one file over 2 GiB, or shards
// with their model.safetensors.index.json — loads with no copy of a file in memory: every weight is written
// straight into its final storage as its rows arrive, in the checkpoint's dtype or the one asked for
// (layers/packed_weight.h), and the load's peak is the weights, the caller's chunk and the working memory.
//
//   Begin   the config, every file's header (io/safetensors.h ParseSafetensorsHeader), a sharded checkpoint's
//           index, the weight type asked for: finds the family and builds the model, matches every tensor to a
//           parameter by the family's names (missing, unexpected, misshapen and integer tensors refused by name,
//           as Module::LoadParams words them), reserves every stored weight — all before a byte of data is read.
//   Feed    bytes [offset, offset + n) of file f: absolute offsets, each file's bytes in order with no gap
//           (files may interleave; the first feed may start at the data section, skipping the header); rows are
//           converted into their parameters as they complete.
//   Finish  every file whole and every tensor complete (else an error naming the file and the tensor), a tied
//           tensor equal to its source; hands the model and its family over.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/buffer.h"
#include "core/module.h"
#include "io/safetensors.h"
#include "models/family.h"

namespace aw {

class ModelLoader {
 public:
  struct File {
    std::string name;     // for messages: "model-00001-of-00002.safetensors", or "source"
    io::StFile header;    // ParseSafetensorsHeader of its first bytes
    uint64_t size = 0;    // its size, or io::kStUnknownSize (a stream: checked at Finish)
  };
  ModelLoader();
  ~ModelLoader();

  // expected: a family's kind ("causal_lm", "encoder", "translator", "vit") or "" (any). config_json: a Hugging
  // Face config.json's text, or "" (the first file's attnwasm.config). index_json: a sharded checkpoint's
  // model.safetensors.index.json ("" for one file): its weight_map must name, for every tensor, the file that
  // holds it. dtype: "" (every weight as stored), "f32", "bf16", "f16", "q8", "q4" or "q4a16" (the model's matrices:
  // its Linear weights and embedding tables; norms and biases stay float32).
  // Before Begin: give the model's float32 head its q8 copy for bounds, where its family has one (Family::bounded_head).
  void BoundedHead() { bounded_head_ = true; }
  Status Begin(std::string_view expected, std::string_view config_json, std::vector<File> files,
               std::string_view index_json, std::string_view dtype);
  Status Feed(size_t file, uint64_t offset, const uint8_t* bytes, size_t n);
  // The model (owned by the caller from now on) and its family's row.
  Status Finish(std::unique_ptr<Module>* out, const Family** family);

  // After Begin: bytes of the model's parameters (what aw.memory() reports as the weights).
  uint64_t weight_bytes() const;

  // A dry run of Begin (inspect's plan): the same checks and refusals, the model built but no weight reserved.
  // What the model would keep: bytes by weight type (as a loaded model's weightTypes), and its parameters
  // (the elements of every parameter it keeps).
  struct Plan {
    const Family* family = nullptr;
    std::array<size_t, kWeightTypes> bytes_by_type{};
    uint64_t parameters = 0;
  };
  Status PlanOnly(std::string_view expected, std::string_view config_json, std::vector<File> files,
                  std::string_view index_json, std::string_view dtype, Plan* out);

 private:
  struct State;
  std::unique_ptr<State> st_;
  bool bounded_head_ = false;
};

// A whole file in memory (file: ParseSafetensors of bytes[0, size)): Begin, one Feed, Finish. *kind: its
// family's kind. On error *out is null.
Status LoadModel(const uint8_t* bytes, size_t size, const io::StFile& file, std::string_view expected_model,
                 std::string_view config_json, std::unique_ptr<Module>* out, std::string* kind,
                 std::string_view dtype = "");

}  // namespace aw
