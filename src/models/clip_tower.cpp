// The two-tower models' towers on the encoder's layers (encoder.h, Tower; clip_model.h): CLIP's and SigLIP's text
// transformers, and the parts of their vision transformers that ViT's do not have (vision_encoder.cpp runs the
// rest): CLIP's pre_layrnorm, SigLIP's attention-pooling head.
//
//   text:  x = token_embedding[ids] + position_embedding[0 … T−1]
//          per layer (pre-norm): x = x + attention(layer_norm1(x)) [causal for CLIP]; x = x + mlp(layer_norm2(x))
//          x = final_layer_norm(x); CLIP pools the end-of-text row, SigLIP head(x[:, -1])
#include <algorithm>
#include <cfloat>
#include <cstring>
#include <string>
#include <vector>

#include "core/limits.h"
#include "core/rules.h"
#include "core/workspace.h"
#include "models/encoder.h"

namespace aw {

Status Encoder::InitTowerFront(const EncoderConfig& c, Rng& rng) {
  if (c.vision) {
    AW_RETURN_IF_ERROR(vision_.Init(c, rng));
    AddChild("embeddings", &vision_);
    return Status::OK();
  }
  // CLIP's token_embedding and position_embedding, read as word_embeddings and position_embeddings.
  AW_RETURN_IF_ERROR(word_.Init(c.vocab, c.hidden, 0, false, rng));
  AW_RETURN_IF_ERROR(position_.Init(c.max_positions, c.hidden, 0, false, rng));
  embeddings_.Add("word_embeddings", &word_);
  embeddings_.Add("position_embeddings", &position_);
  AddChild("embeddings", &embeddings_);
  return Status::OK();
}

Status Encoder::PoolHead::Init(const EncoderConfig& c, Rng& rng) {
  const int64_t E = c.hidden;
  AW_RETURN_IF_ERROR(AddParam("probe", {1, 1, E}, &probe));
  rng.FillUniform(probe, size_t(E), 1.0);
  MhaConfig m;
  m.embed_dim = E;
  m.num_heads = c.heads;
  m.batch_first = true;
  AW_RETURN_IF_ERROR(attention.Init(m, rng));
  AW_RETURN_IF_ERROR(norm.Init(E, c.eps, true, true));
  AW_RETURN_IF_ERROR(fc1.Init(E, c.intermediate, true, rng));
  AW_RETURN_IF_ERROR(fc2.Init(c.intermediate, E, true, rng));
  mlp.Add("fc1", &fc1);
  mlp.Add("fc2", &fc2);
  AddChild("attention", &attention);
  AddChild("layernorm", &norm);
  AddChild("mlp", &mlp);
  return Status::OK();
}

// After the layers: CLIP's pre_layrnorm (applied before them, registered here), the final norm, SigLIP's heads.
Status Encoder::InitTowerHead(const EncoderConfig& c, Rng& rng) {
  AW_RETURN_IF_ERROR(final_norm_.Init(c.hidden, c.eps, true, true));
  switch (c.tower) {
    case Tower::kClipText:
      AddChild("final_layer_norm", &final_norm_);
      break;
    case Tower::kSiglipText:
      AddChild("final_layer_norm", &final_norm_);
      AW_RETURN_IF_ERROR(classifier_.Init(c.hidden, c.labels, true, rng));
      AddChild("head", &classifier_);
      break;
    case Tower::kClipVision:
      AW_RETURN_IF_ERROR(pre_norm_.Init(c.hidden, c.eps, true, true));
      AddChild("pre_layrnorm", &pre_norm_);
      AddChild("post_layernorm", &final_norm_);
      break;
    case Tower::kSiglipVision:
      AddChild("post_layernorm", &final_norm_);
      AW_RETURN_IF_ERROR(pool_head_.Init(c, rng));
      AddChild("head", &pool_head_);
      break;
    case Tower::kNone: break;
  }
  return Status::OK();
}

Status Encoder::AttentionPool(const float* x, size_t nb, size_t T, float* out) {
  const size_t E = size_t(cfg_.hidden), I = size_t(cfg_.intermediate);
  ScratchScope scope;
  float *probe = nullptr, *h = nullptr, *ff = nullptr;
  AW_RETURN_IF_ERROR(scope.Take(nb * E, "probes", &probe));
  AW_RETURN_IF_ERROR(scope.Take(nb * E, "pooled rows", &h));
  AW_RETURN_IF_ERROR(scope.Take(nb * I, "head rows", &ff));
  for (size_t b = 0; b < nb; ++b) std::memcpy(probe + b * E, pool_head_.probe, E * sizeof(float));
  const TensorView q{probe, {int64_t(nb), 1, int64_t(E)}}, kv{x, {int64_t(nb), int64_t(T), int64_t(E)}};
  MhaForwardOptions o;
  o.need_weights = false;
  AW_RETURN_IF_ERROR(pool_head_.attention.ForwardInto(q, kv, kv, o, out, nullptr));
  // out = h + fc2(act(fc1(layernorm(h)))), h the attention's output.
  pool_head_.norm.Apply(nb, out, E, h, E);
  pool_head_.fc1.Apply(nb, h, E, ff, I);
  Activate(cfg_.act, nb * I, ff);
  pool_head_.fc2.Apply(nb, ff, I, h, E);
  for (size_t i = 0; i < nb * E; ++i) out[i] = out[i] + h[i];
  return Status::OK();
}

Status Encoder::ForwardText(const int32_t* ids, const int32_t* mask, int64_t B, int64_t T, Buffer* pooled) {
  if (cfg_.tower != Tower::kClipText && cfg_.tower != Tower::kSiglipText)
    return ArgError("inputIds: this model has no text tower");
  AW_RETURN_IF_ERROR(IntInRange("inputIds.shape[0] (batch)", B, 1, kMaxElements));
  AW_RETURN_IF_ERROR(IntInRange("inputIds.shape[1] (tokens)", T, 1, cfg_.max_positions));
  AW_RETURN_IF_ERROR(word_.CheckIds(ids, B * T, "inputIds"));
  if (NumelChecked({B, T, cfg_.hidden}) < 0) return ShapeError("inputIds: (batch, tokens, hidden) exceeds 2^29 elements");
  const bool clip = cfg_.tower == Tower::kClipText;
  // The row each sequence pools: CLIP's end-of-text token (argmax(input_ids), the first maximum, in old configs; else
  // the first eos_token_id, 0 when there is none: argmax of all zeros), SigLIP's last.
  std::vector<size_t> at(static_cast<size_t>(B)), len(static_cast<size_t>(B), static_cast<size_t>(T));
  bool prefix = true;  // every mask a run of ones then zeros, each pooled row inside its run
  for (int64_t b = 0; b < B; ++b) {
    const int32_t* row = ids + b * T;
    size_t p = 0;
    if (!clip) {
      p = size_t(T - 1);
    } else if (cfg_.eos_argmax) {
      for (int64_t t = 1; t < T; ++t) p = row[t] > row[p] ? size_t(t) : p;
    } else {
      while (p < size_t(T) && row[p] != cfg_.eos_id) ++p;
      if (p == size_t(T)) p = 0;
    }
    at[size_t(b)] = p;
    if (!mask) continue;
    const int32_t* m = mask + b * T;
    int64_t ones = 0;
    for (int64_t t = 0; t < T; ++t) {
      if (m[t] != 0 && m[t] != 1)
        return ArgError("attentionMask: expected 0s and 1s, got " + std::to_string(m[t]) + " at index (" +
                        std::to_string(b) + ", " + std::to_string(t) + ")");
      ones += m[t];
    }
    for (int64_t t = 0; t < T; ++t) prefix = prefix && m[t] == (t < ones ? 1 : 0);
    len[size_t(b)] = size_t(ones);
    prefix = prefix && p < size_t(ones);
  }
  // Under CLIP's causal mask a right-padded row's real tokens never see its padding: each sequence runs at its own
  // length, the same numbers as the padded batch (transformers adds both masks). Otherwise (SigLIP, which pools the
  // last row, a mask of another form) the padded rows run with the padding mask added as transformers adds it.
  const bool trim = mask && clip && prefix;
  const bool add_mask = mask && !trim;
  const size_t E = size_t(cfg_.hidden), out_dim = clip ? E : size_t(cfg_.labels);
  AW_RETURN_IF_ERROR(pooled->Resize(size_t(B) * out_dim, "textEmbeds"));
  const size_t per_seq = size_t(T) * (7 * E + size_t(cfg_.intermediate) + 2) * sizeof(float);
  const size_t piece = WorkPieceEntries(size_t(B), per_seq);
  for (size_t b0 = 0; b0 < size_t(B); b0 += piece) {
    const size_t nb = std::min(piece, size_t(B) - b0);
    ScratchScope scope;
    size_t *starts = nullptr, *lens = nullptr;
    float *x = nullptr, *add = nullptr, *rows = nullptr;
    int32_t* pos = nullptr;
    AW_RETURN_IF_ERROR(scope.Take(nb, "sequence starts", &starts));
    AW_RETURN_IF_ERROR(scope.Take(nb, "sequence lengths", &lens));
    size_t total = 0;
    for (size_t s = 0; s < nb; ++s) {
      starts[s] = total;
      lens[s] = trim ? len[b0 + s] : size_t(T);
      total += lens[s];
    }
    AW_RETURN_IF_ERROR(scope.Take(total * E, "hidden rows", &x));
    AW_RETURN_IF_ERROR(scope.Take(total, "positions", &pos));
    AW_RETURN_IF_ERROR(scope.Take(nb * E, "pooled rows", &rows));
    if (add_mask) AW_RETURN_IF_ERROR(scope.Take(nb * size_t(T), "key masks", &add));
    for (size_t s = 0; s < nb; ++s) {
      const int32_t* row = ids + (b0 + s) * size_t(T);
      word_.Lookup(lens[s], row, x + starts[s] * E, E);
      for (size_t t = 0; t < lens[s]; ++t) pos[starts[s] + t] = int32_t(t);
      if (add_mask)  // HF's expanded mask: (1 − mask) · float32's lowest
        for (size_t t = 0; t < size_t(T); ++t) add[s * size_t(T) + t] = mask[(b0 + s) * size_t(T) + t] ? 0.0f : -FLT_MAX;
    }
    {  // + position_embedding, in HF's order (inputs_embeds + position_embeddings)
      ScratchScope row_scope;
      float* p = nullptr;
      AW_RETURN_IF_ERROR(row_scope.Take(E, "a position row", &p));
      for (size_t r = 0; r < total; ++r) {
        position_.Lookup(1, pos + r, p, E);
        float* xr = x + r * E;
        for (size_t j = 0; j < E; ++j) xr[j] = xr[j] + p[j];
      }
    }
    AW_RETURN_IF_ERROR(Layers(x, starts, lens, nb, add, nullptr));
    for (size_t s = 0; s < nb; ++s) std::memcpy(rows + s * E, x + (starts[s] + at[b0 + s]) * E, E * sizeof(float));
    float* out = pooled->data() + b0 * out_dim;
    if (clip) {
      final_norm_.Apply(nb, rows, E, out, E);
    } else {
      final_norm_.Apply(nb, rows, E, rows, E);
      classifier_.Apply(nb, rows, E, out, out_dim);
    }
  }
  return Status::OK();
}

}  // namespace aw
