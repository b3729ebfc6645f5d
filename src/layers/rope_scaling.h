// RoPE's frequencies as Hugging Face's modeling_rope_utils.py computes them for each rope_type, in float32
// as torch does (docs/families.md, "RoPE"): the inverse frequencies of the rotated dims and the factor the
// cos / sin tables are multiplied by (attention_factor; 1 but for yarn and longrope).
//
//   default    inv[i] = 1 / base^(float32(2i) / dim)                               (rotary.h's theta)
//   linear     inv / factor
//   dynamic    the default while the call's sequence length n <= max_position_embeddings M; past it the base
//              grown to base · ((factor · n / M) − (factor − 1))^(dim / (dim − 2)), in float32 (HF's tensors)
//   yarn       a blend of inv and inv / factor over a linear ramp between the correction dims of
//              beta_fast and beta_slow; attention_factor given, or 0.1 · ln(factor) + 1 (mscale forms)
//   llama3     low frequencies / factor, high ones kept, a smooth blend between (Llama 3.1 / 3.2)
//   longrope   1 / (ext[i] · base^(2i / dim)), ext the long factors when n > original_max_position_embeddings,
//              else the short ones; attention_factor given, or √(1 + ln(s) / ln(original max)), s = max / original
// n, the sequence length of a call: its last position + 1 (HF recomputes dynamic and longrope frequencies per
// forward call from it; a decoding step's n is the cache's length + 1).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace aw {

struct RopeSpec {
  std::string type = "default";     // default, linear, dynamic, yarn, llama3, longrope
  double theta = 10000.0;           // the base
  double factor = 1.0;              // linear, dynamic, yarn, llama3; longrope: the derived scale when absent
  double low_freq_factor = 1.0, high_freq_factor = 4.0;  // llama3
  int64_t original_max = 0;         // original_max_position_embeddings (llama3, yarn, longrope); 0: absent
  double beta_fast = 32.0, beta_slow = 1.0;               // yarn
  std::optional<double> attention_factor;                 // yarn, longrope: given, else derived
  std::optional<double> mscale, mscale_all_dim;           // yarn (DeepSeek-style configs)
  bool truncate = true;             // yarn: floor / ceil the correction range (transformers 5.x's option)
  std::vector<double> short_factor, long_factor;          // longrope: dim / 2 each
};

// The inverse frequencies (dim / 2 floats) and the tables' factor of spec for a call whose sequence length
// is n; max_positions: the config's max_position_embeddings. The spec is checked by the config's rules first.
void RopeFrequencies(const RopeSpec& spec, int64_t dim, int64_t max_positions, int64_t n, float* inv,
                     float* attention_factor);

// Table rows of positions pos[0, count): dim per position, cos (dim / 2) then sin (dim / 2), each multiplied
// by attention_factor (a float32 product, as HF's `emb.cos() * attention_scaling`). On the thread pool.
void RopeTable(size_t count, const int32_t* pos, int64_t dim, const float* inv, float attention_factor,
               float* table);

}  // namespace aw
