// Every size limit of the API and of model files, once: the layers, the model
// families and the model-config reader (io/model_config.cpp) all check
// against these, through core/rules.h (docs/reliability.md, "Limits"). They are sanity
// bounds, not what memory allows: a model inside them can still be too large
// for the heap, which is then ERR_OUT_OF_MEMORY.
// (Elsewhere: kMaxElements, one tensor's elements, in core/tensor.h;
// kMaxThreads in core/parallel.h; the working-memory budget's range in
// core/workspace.h.)
#pragma once
#include <cstdint>

namespace aw {

constexpr int64_t kMaxLayers = 1000;          // layers of a stack, a Transformer or a model (API and files)
constexpr int64_t kMaxSequence = 65536;       // positions a model file's family runs (its maxLen)
constexpr int64_t kMaxBeams = 16;             // beam search width (beamSize)
constexpr int64_t kMaxModelWidth = 4096;      // a model file's dModel
constexpr int64_t kMaxFeedforward = 65536;    // a model file's dimFeedforward
constexpr int64_t kMaxVocab = 1'000'000;      // a model file's vocabulary
constexpr int64_t kMaxImageSize = 4096;       // a model file's image side; a PatchEmbedding's patch side
constexpr int64_t kMaxChannels = 16;          // a model file's image channels
constexpr int64_t kMaxClasses = 100'000;      // a model file's classes
// The causal LM family (config.json): wider models, longer contexts.
constexpr int64_t kMaxLmWidth = 4 * kMaxModelWidth;     // hidden_size
constexpr int64_t kMaxHeadDim = 1024;                   // head_dim
constexpr int64_t kMaxPositions = 16 * kMaxSequence;    // max_position_embeddings
constexpr int64_t kMaxAttentionWindow = 2147483647;     // attentionWindow (a file's, generate()'s): any int32

}  // namespace aw
