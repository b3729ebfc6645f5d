// KvCache: the keys and values a decoder keeps between steps, one type for
// every family that decodes (the translator's TransformerDecoderLayer steps,
// the causal LMs). Per layer, keys and values of `batch` sequences:
//   k[l], v[l]   (batch, capacity, width) row-major, width = kv_heads · head_dim
// positions 0 … len − 1 filled, the same count for every sequence. Not the
// workspace's (core/workspace.h): it is decoding state that lives across calls.
// Owner: whoever began the decoding (a Translator::Decode call's state, the JS
// generator's handle); freed with it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/buffer.h"
#include "core/status.h"

namespace aw {

struct KvCache {
  size_t batch = 0, capacity = 0, width = 0, len = 0;
  std::vector<Buffer> k, v;  // per layer
  // The ids of the cached positions (batch, capacity), kept by a causal LM whose family may recompute the whole
  // sequence (Phi-3's longrope, when the sequence passes original_max_position_embeddings); else empty.
  std::vector<int32_t> ids;

  // Sizes the cache for `layers` layers of `batch` sequences of up to `capacity` positions; len = 0.
  // `what` names it in the out-of-memory message.
  Status Init(size_t layers, size_t batch, size_t capacity, size_t width, const char* what = "KV cache");
  // One sequence's rows apart (the row stride between sequences).
  size_t seq_stride() const { return capacity * width; }
  // Row `pos` of sequence b in layer l.
  float* keys(size_t l, size_t b, size_t pos) { return k[l].data() + (b * capacity + pos) * width; }
  float* values(size_t l, size_t b, size_t pos) { return v[l].data() + (b * capacity + pos) * width; }
  // Sequence b continues the history of sequence parents[b] (beam search): the first len rows of every
  // layer, for b < n. Scratch from the workspace.
  Status Reorder(const int32_t* parents, size_t n);
};

}  // namespace aw
