// The vision encoders on the encoder's layers (encoder.h): ViTModel, DeiTModel and Dinov2Model of transformers
// (modeling_vit.py, modeling_deit.py, modeling_dinov2.py) and their image-classification heads.
//
//   x = cat(cls_token[, distillation_token], patch_embeddings(pixel_values)) + position_embeddings
//       (DINOv2: the patch positions resized bicubically to the input's grid, as interpolate_pos_encoding)
//   per layer (pre-norm): x = x + [λ1 ·] attention(layernorm_before(x)); x = x + [λ2 ·] mlp(layernorm_after(x))
//       (DINOv2's mlp: fc2(gelu(fc1(x))), or with use_swiglu_ffn weights_out(silu(x1) · x2), x1 | x2 = weights_in(x))
//   last_hidden_state = layernorm(x); pooler_output = tanh(pooler.dense(x[:, 0])) (ViT, DeiT with a pooler),
//   x[:, 0] (DINOv2)
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "core/limits.h"
#include "core/rules.h"
#include "core/workspace.h"
#include "kernels/elementwise.h"
#include "models/encoder.h"

namespace aw {

Status Encoder::VisionFront::Init(const EncoderConfig& c, Rng& rng) {
  const int64_t E = c.hidden, g = c.image_size / c.patch_size;
  // CLIP's class_embedding (E) and position_embedding.weight (N + 1, E); SigLIP's (N, E) without a class token;
  // ViT's cls_token (1, 1, E), position_embeddings (1, N + 1, E).
  const bool tower = c.tower != Tower::kNone;
  if (c.extra_tokens > 0) AW_RETURN_IF_ERROR(AddParam("cls_token", tower ? Shape{E} : Shape{1, 1, E}, &cls));
  if (c.extra_tokens == 2) AW_RETURN_IF_ERROR(AddParam("distillation_token", {1, 1, E}, &dist));
  const int64_t N = g * g + c.extra_tokens;
  AW_RETURN_IF_ERROR(AddParam("position_embeddings", tower ? Shape{N, E} : Shape{1, N, E}, &pos));
  if (cls) rng.FillUniform(cls, E, 0.02);
  if (dist) rng.FillUniform(dist, E, 0.02);
  rng.FillUniform(pos, size_t(N) * size_t(E), 0.02);
  // CLIP's patch convolution has no bias; SigLIP's and ViT's have one.
  AW_RETURN_IF_ERROR(patch.Init(c.channels, E, c.patch_size, c.tower != Tower::kClipVision, false, rng));
  AddChild("patch_embeddings", &patch);
  return Status::OK();
}

// After the layers and the pooler (Encoder::Init): the final LayerNorm and the image head.
Status Encoder::InitVisionHead(const EncoderConfig& c, Rng& rng) {
  AW_RETURN_IF_ERROR(final_norm_.Init(c.hidden, c.eps, true, true));
  AddChild("layernorm", &final_norm_);
  if (c.head == EncoderHead::kImage) {
    // DINOv2's classifier reads cat(x[:, 0], mean(x[:, 1:])).
    AW_RETURN_IF_ERROR(classifier_.Init(c.dinov2 ? 2 * c.hidden : c.hidden, c.labels, true, rng));
    if (c.teacher) {
      AW_RETURN_IF_ERROR(distill_classifier_.Init(c.hidden, c.labels, true, rng));
      AddChild("cls_classifier", &classifier_);
      AddChild("distillation_classifier", &distill_classifier_);
    } else {
      AddChild("classifier", &classifier_);
    }
  }
  return Status::OK();
}

namespace {

// torch's cubic convolution weights (upsample_bicubic2d, A = −0.75) of the four taps around a fraction t.
void CubicWeights(double t, double w[4]) {
  const double A = -0.75;
  auto near = [&](double x) { return ((A + 2) * x - (A + 3)) * x * x + 1; };    // |x| ≤ 1
  auto far = [&](double x) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; };  // 1 < |x| < 2
  w[0] = far(t + 1);
  w[1] = near(t);
  w[2] = near(1 - t);
  w[3] = far(2 - t);
}

// F.interpolate(src (E, ih, iw), size=(oh, ow), mode="bicubic", align_corners=False) with src and dst as grids of
// rows of E (row (y, x) at (y·w + x)·E): the source coordinate (o + 0.5)·(in / out) − 0.5, taps clamped to the
// edge, as torch computes it.
void Bicubic(const float* src, size_t ih, size_t iw, size_t oh, size_t ow, size_t E, float* dst) {
  for (size_t oy = 0; oy < oh; ++oy) {
    const double ry = (double(oy) + 0.5) * (double(ih) / double(oh)) - 0.5, fy = std::floor(ry);
    double wy[4];
    CubicWeights(ry - fy, wy);
    for (size_t ox = 0; ox < ow; ++ox) {
      const double rx = (double(ox) + 0.5) * (double(iw) / double(ow)) - 0.5, fx = std::floor(rx);
      double wx[4];
      CubicWeights(rx - fx, wx);
      float* out = dst + (oy * ow + ox) * E;
      for (size_t e = 0; e < E; ++e) {
        double acc = 0.0;
        for (int i = 0; i < 4; ++i) {
          const int64_t y = std::clamp<int64_t>(int64_t(fy) - 1 + i, 0, int64_t(ih) - 1);
          double row = 0.0;
          for (int j = 0; j < 4; ++j) {
            const int64_t x = std::clamp<int64_t>(int64_t(fx) - 1 + j, 0, int64_t(iw) - 1);
            row += wx[j] * double(src[(size_t(y) * iw + size_t(x)) * E + e]);
          }
          acc += wy[i] * row;
        }
        out[e] = float(acc);
      }
    }
  }
}

}  // namespace

void Encoder::VisionEmbeddings(const float* patches, size_t P, const float* patch_pos, float* x) const {
  const size_t E = size_t(cfg_.hidden), X = size_t(cfg_.extra_tokens);
  if (vision_.cls) std::memcpy(x, vision_.cls, E * sizeof(float));
  if (vision_.dist) std::memcpy(x + E, vision_.dist, E * sizeof(float));
  std::memcpy(x + X * E, patches, P * E * sizeof(float));
  kernels::f32_add(X * E, x, vision_.pos);  // the extra tokens' positions as stored
  kernels::f32_add(P * E, x + X * E, patch_pos);
}

Status Encoder::ForwardPixels(const float* pixels, const Shape& shape, bool interpolate, Buffer* hidden, Buffer* pooled,
                              Buffer* logits, Buffer* attention) {
  const int64_t p = cfg_.patch_size, S = cfg_.image_size;
  AW_RETURN_IF_ERROR(CheckShape("pixelValues", shape));
  if (shape.size() != 4 || shape[1] != cfg_.channels)
    return ShapeError("pixelValues: expected (batch, " + std::to_string(cfg_.channels) + ", height, width), got " +
                      ShapeStr(shape));
  const int64_t B = shape[0], H = shape[2], W = shape[3];
  if (B < 1) return ShapeError("pixelValues: expected at least one image, got " + ShapeStr(shape));
  if (!cfg_.dinov2 && !interpolate && (H != S || W != S))
    return ShapeError("pixelValues: expected images of " + std::to_string(S) + " × " + std::to_string(S) +
                      " pixels (config.image_size), got " + ShapeStr(shape) +
                      "; interpolatePosEncoding: true resizes the positions to another size");
  if (H < p || W < p)
    return ShapeError("pixelValues: expected height and width >= config.patch_size = " + std::to_string(p) + ", got " +
                      ShapeStr(shape));
  const int64_t gh = H / p, gw = W / p, T = cfg_.extra_tokens + gh * gw;
  if (T > kMaxPositions) return ShapeError("pixelValues: " + std::to_string(gh * gw) + " patches exceed the limit");
  for (int64_t i = 0, n = NumelChecked(shape); i < n; ++i)
    if (!std::isfinite(pixels[i]))
      return ArgError("pixelValues: expected finite values, got " + std::string(std::isnan(pixels[i]) ? "NaN" : "an infinity") +
                      " at index " + std::to_string(i));
  const size_t E = size_t(cfg_.hidden), C = size_t(cfg_.labels);
  if (NumelChecked({B, T, cfg_.hidden}) < 0) return ShapeError("lastHiddenState (B, T, hidden) exceeds 2^29 elements");
  AW_RETURN_IF_ERROR(hidden->Resize(size_t(B * T) * E, "lastHiddenState"));
  const bool pools = cfg_.pooler || cfg_.dinov2 || cfg_.tower != Tower::kNone;
  if (pools) AW_RETURN_IF_ERROR(pooled->Resize(size_t(B) * E, "poolerOutput"));
  const bool head = logits && cfg_.head == EncoderHead::kImage;
  if (head) AW_RETURN_IF_ERROR(logits->Resize(size_t(B) * C, "logits"));
  const size_t LH = size_t(cfg_.layers * cfg_.heads);
  if (attention) {
    if (NumelChecked({B, int64_t(LH), T, T}) < 0) return ShapeError("attentions (B, layers, heads, T, T) exceed 2^29 elements");
    AW_RETURN_IF_ERROR(attention->Resize(size_t(B) * LH * size_t(T * T), "attentions"));
  }
  // Pieces of whole images within the working-memory budget.
  const size_t per_image = size_t(T) * (8 * E + size_t(FfWidth(cfg_)) + 2) * sizeof(float);
  const size_t image = size_t(cfg_.channels * H * W), P = size_t(gh * gw), X = size_t(cfg_.extra_tokens);
  // The patches' positions: as stored at the stored grid, else resized to this grid once for every image.
  const size_t g = size_t(S / p);
  const bool resize = size_t(gh) != g || size_t(gw) != g;
  const size_t piece = WorkPieceEntries(size_t(B), per_image, resize ? P * E * sizeof(float) : 0);
  const float* patch_pos = vision_.pos + X * E;
  ScratchScope call_scope;
  if (resize) {
    float* resized = nullptr;
    AW_RETURN_IF_ERROR(call_scope.Take(P * E, "interpolated positions", &resized));
    Bicubic(vision_.pos + X * E, g, g, size_t(gh), size_t(gw), E, resized);
    patch_pos = resized;
  }
  for (size_t b0 = 0; b0 < size_t(B); b0 += piece) {
    const size_t nb = std::min(piece, size_t(B) - b0), rows = nb * size_t(T);
    Buffer patches;
    Shape ps;
    AW_RETURN_IF_ERROR(vision_.patch.Forward(TensorView{pixels + b0 * image, {int64_t(nb), cfg_.channels, H, W}},
                                             &patches, &ps));
    ScratchScope scope;
    size_t* starts = nullptr;
    size_t* lens = nullptr;
    AW_RETURN_IF_ERROR(scope.Take(nb, "image starts", &starts));
    AW_RETURN_IF_ERROR(scope.Take(nb, "image lengths", &lens));
    float* x = hidden->data() + b0 * size_t(T) * E;
    for (size_t s = 0; s < nb; ++s) {
      starts[s] = s * size_t(T);
      lens[s] = size_t(T);
      VisionEmbeddings(patches.data() + s * P * E, P, patch_pos, x + s * size_t(T) * E);
    }
    patches = Buffer();
    if (cfg_.tower == Tower::kClipVision) pre_norm_.Apply(rows, x, E, x, E);
    AW_RETURN_IF_ERROR(Layers(x, starts, lens, nb, nullptr, attention ? attention->data() + b0 * LH * size_t(T * T) : nullptr));
    if (cfg_.tower == Tower::kClipVision) {  // pooled = post_layernorm(x[:, 0]); last_hidden_state stays before it
      float* out = pooled->data() + b0 * E;
      for (size_t s = 0; s < nb; ++s) std::memcpy(out + s * E, x + s * size_t(T) * E, E * sizeof(float));
      final_norm_.Apply(nb, out, E, out, E);
      continue;
    }
    final_norm_.Apply(rows, x, E, x, E);
    if (cfg_.tower == Tower::kSiglipVision) {
      AW_RETURN_IF_ERROR(AttentionPool(x, nb, size_t(T), pooled->data() + b0 * E));
      continue;
    }
    float* first = nullptr;  // each image's class-token row
    AW_RETURN_IF_ERROR(scope.Take(nb * 2 * E, "class tokens", &first));
    for (size_t s = 0; s < nb; ++s) std::memcpy(first + s * E, x + s * size_t(T) * E, E * sizeof(float));
    if (cfg_.pooler) {
      float* out = pooled->data() + b0 * E;
      pooler_dense_.Apply(nb, first, E, out, E);
      for (size_t i = 0; i < nb * E; ++i) out[i] = std::tanh(out[i]);
    } else if (pools) {
      std::memcpy(pooled->data() + b0 * E, first, nb * E * sizeof(float));
    }
    if (!head) continue;
    float* out = logits->data() + b0 * C;
    if (cfg_.dinov2) {  // DINOv2: cat(x[:, 0], mean(x[:, 1:])) in float32, summed in token order
      for (size_t s = 0; s < nb; ++s) {
        float* in = first + s * 2 * E;
        const float* img = x + s * size_t(T) * E;
        std::memmove(in, img, E * sizeof(float));
        for (size_t e = 0; e < E; ++e) {
          float sum = 0.0f;
          for (size_t t = 1; t < size_t(T); ++t) sum += img[t * E + e];
          in[E + e] = sum / float(T - 1);
        }
      }
      classifier_.Apply(nb, first, 2 * E, out, C);
    } else {
      classifier_.Apply(nb, first, E, out, C);
    }
    if (cfg_.teacher) {  // (cls_classifier(x[:, 0]) + distillation_classifier(x[:, 1])) / 2
      float* second = first + nb * E;
      float* d = nullptr;
      AW_RETURN_IF_ERROR(scope.Take(nb * C, "distillation logits", &d));
      for (size_t s = 0; s < nb; ++s) std::memcpy(second + s * E, x + (s * size_t(T) + 1) * E, E * sizeof(float));
      distill_classifier_.Apply(nb, second, E, d, C);
      for (size_t i = 0; i < nb * C; ++i) out[i] = (out[i] + d[i]) / 2.0f;
    }
  }
  return Status::OK();
}

}  // namespace aw
