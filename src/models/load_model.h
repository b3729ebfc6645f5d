// Loading a model from safetensors files: the native half of aw.loadModel.
//
//   "translator" → Translator (models/translator.h)
//   "vit"        → VitClassifier (models/vit_classifier.h)
//   "causal_lm"  → CausalLm (models/causal_lm.h): a file's own config, or a
//                  Hugging Face checkpoint's config.json passed beside it
//
// ModelLoader takes the files' bytes in chunks, so a checkpoint of any size —
// one file over 2 GiB, or shards with their model.safetensors.index.json —
// loads with no copy of a file in memory: every weight is written straight
// into its final storage as its rows arrive, in the checkpoint's dtype or the
// one asked for (layers/packed_weight.h), and the load's peak is the weights,
// the caller's chunk and the working memory.
//
//   Begin   the config, every file's header (io/safetensors.h
//           ParseSafetensorsHeader), a sharded checkpoint's index, the weight
//           type asked for: builds the model and matches every tensor to a
//           parameter (missing, unexpected, misshapen and integer tensors
//           refused by name, as Module::LoadParams words them), reserves every
//           stored weight — all before a byte of data is read.
//   Feed    bytes [offset, offset + n) of file f: absolute offsets, each
//           file's bytes in order with no gap (files may interleave; the first
//           feed may start at the data section, skipping the header); rows are
//           converted into their parameters as they complete.
//   Finish  every file whole and every tensor complete (else an error naming
//           the file and the tensor), a tied lm_head equal to the embedding;
//           hands the model over.
// The config is read by ReadModelConfig / ReadCausalLmConfig (io/, fuzzed).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/buffer.h"
#include "core/module.h"
#include "io/safetensors.h"

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

  // expected: "translator", "vit", "causal_lm" or "" (any). config_json: a config.json's text (then a causal
  // LM), or "" (the first file's attnwasm.config). index_json: a sharded checkpoint's
  // model.safetensors.index.json ("" for one file): its weight_map must name, for every tensor, the file that
  // holds it. dtype: "" (every weight as stored), "f32", "bf16", "f16", "q8", "q4" or "q4a16" (the model's matrices:
  // its Linear weights and embedding tables; norms and biases stay float32).
  Status Begin(std::string_view expected, std::string_view config_json, std::vector<File> files,
               std::string_view index_json, std::string_view dtype);
  Status Feed(size_t file, uint64_t offset, const uint8_t* bytes, size_t n);
  Status Finish(std::unique_ptr<Module>* out, std::string* kind);

  // After Begin: bytes of the model's parameters (what aw.memory() reports as the weights).
  uint64_t weight_bytes() const;

 private:
  struct State;
  std::unique_ptr<State> st_;
};

// A whole file in memory (file: ParseSafetensors of bytes[0, size)): Begin, one Feed, Finish. On error *out
// is null.
Status LoadModel(const uint8_t* bytes, size_t size, const io::StFile& file, std::string_view expected_model,
                 std::string_view config_json, std::unique_ptr<Module>* out, std::string* kind,
                 std::string_view dtype = "");

// The class name a kind's errors use ("Translator", "Classifier", "CausalLM").
const char* ModelClassName(std::string_view kind);

// A loaded model's resolved config as a JSON object, what its JS face reads (the handle is the one source):
// a causal LM's vocabSize, maxPositions, eosTokenIds, attentionWindow, weightBytes, …; for the other kinds
// only weightBytes (their JS faces read their vocabularies and labels from the file's attnwasm.config).
std::string ModelInfoJson(const Module& m, std::string_view kind);

}  // namespace aw
