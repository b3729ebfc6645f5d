#include "models/vit_classifier.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/limits.h"
#include "core/rules.h"
#include "kernels/gemm.h"
#include "core/workspace.h"
#include "kernels/softmax.h"

namespace aw {

Status VitClassifier::Init(const VitConfig& c, Rng& rng) {
  AW_RETURN_IF_ERROR(IntInRange("imageSize", c.image_size, 1, kMaxImageSize));
  AW_RETURN_IF_ERROR(IntInRange("patchSize", c.patch_size, 1, c.image_size));
  AW_RETURN_IF_ERROR(DivisibleBy("imageSize", c.image_size, "patchSize", c.patch_size));
  AW_RETURN_IF_ERROR(IntInRange("inChannels", c.in_channels, 1, kMaxChannels));
  AW_RETURN_IF_ERROR(IntInRange("numClasses", c.num_classes, 1, kMaxClasses));
  AW_RETURN_IF_ERROR(Finite("mean", c.mean));
  AW_RETURN_IF_ERROR(PositiveFinite("std", c.std));
  cfg_ = c;
  cfg_.layer.batch_first = true;
  const int64_t d = c.layer.d_model, g = c.image_size / c.patch_size;
  AW_RETURN_IF_ERROR(patch_.Init(c.in_channels, d, c.patch_size, true, true, rng));
  AW_RETURN_IF_ERROR(pos_.Init(g * g + 1, d, true, rng));
  AW_RETURN_IF_ERROR(encoder_.Init(cfg_.layer, c.num_layers, true, c.layer.layer_norm_eps, rng));
  AW_RETURN_IF_ERROR(head_.Init(d, c.num_classes, true, rng));
  AddChild("patch", &patch_);
  AddChild("pos", &pos_);
  AddChild("encoder", &encoder_);
  AddChild("head", &head_);
  return Status::OK();
}

Status VitClassifier::Classify(const float* image, size_t n, ClassifyResult* out) {
  const int64_t C = cfg_.in_channels, S = cfg_.image_size;
  const size_t want = size_t(C * S * S);
  if (n != want)
    return ShapeError("image: expected " + std::to_string(C) + "×" + std::to_string(S) + "×" + std::to_string(S) +
                      " = " + std::to_string(want) + " values, got " + std::to_string(n));
  // Scratch from the workspace (the normalised image); the layers' outputs are this call's own buffers.
  ScratchScope scope;
  float* x = nullptr;
  AW_RETURN_IF_ERROR(scope.Take(want, "image", &x));
  const float mean = float(cfg_.mean), std = float(cfg_.std);
  for (size_t i = 0; i < want; ++i) {
    if (!std::isfinite(image[i]))
      return ArgError("image: expected finite values, got " + std::string(std::isnan(image[i]) ? "NaN" : "an infinity") +
                      " at index " + std::to_string(i));
    x[i] = (image[i] - mean) / std;
  }
  Buffer tokens, enc;
  std::vector<Buffer> weights;  // per layer (1, H, T, T)
  Shape ts;
  AW_RETURN_IF_ERROR(patch_.Forward(TensorView{x, {1, C, S, S}}, &tokens, &ts));
  pos_.Run(tokens.data(), ts);
  Shape es;
  AW_RETURN_IF_ERROR(encoder_.Forward(TensorView{tokens.data(), ts}, EncoderLayerForward(), &enc, &es, &weights));
  const size_t D = size_t(cfg_.layer.d_model), K = size_t(cfg_.num_classes), T = size_t(es[1]), P = T - 1;
  const size_t L = weights.size(), H = size_t(cfg_.layer.nhead);
  AW_RETURN_IF_ERROR(out->logits.Resize(K, "logits"));
  AW_RETURN_IF_ERROR(out->probabilities.Resize(K, "probabilities"));
  AW_RETURN_IF_ERROR(out->attention.Resize(L * H * P, "attention"));
  AW_RETURN_IF_ERROR(out->rollout.Resize(P, "rollout"));
  head_.Apply(1, enc.data(), D, out->logits.data(), K);  // the class token's row
  // torch.softmax of the logits on the runtime's softmax kernels (the online pass for the maximum and the
  // sum, then the finish); the index is the first largest logit.
  float m = -std::numeric_limits<float>::infinity(), l = 0.0f, alpha = 0.0f, *packed = nullptr;
  AW_RETURN_IF_ERROR(scope.Take(kernels::kGemmMR * K, "softmax scratch", &packed));
  kernels::f32_softmax_online(1, K, out->logits.data(), K, &m, &l, &alpha, packed);
  std::copy(out->logits.data(), out->logits.data() + K, out->probabilities.data());
  kernels::f32_softmax_finish(K, out->probabilities.data(), m, l);
  out->index = 0;
  for (size_t k = 1; k < K; ++k)
    if (out->logits.data()[k] > out->logits.data()[size_t(out->index)]) out->index = int64_t(k);
  std::vector<const float*> w;
  for (size_t l = 0; l < L; ++l) {
    w.push_back(weights[l].data());  // (1, H, T, T): row 0 is the class token's attention
    for (size_t h = 0; h < H; ++h)
      std::memcpy(out->attention.data() + (l * H + h) * P, w.back() + h * T * T + 1, P * sizeof(float));
  }
  out->attention_shape = {int64_t(L), int64_t(H), int64_t(P)};
  AttentionRollout(w, H, T, out->rollout.data());
  return Status::OK();
}

void AttentionRollout(const std::vector<const float*>& weights, size_t H, size_t T, float* out) {
  if (weights.empty()) {
    for (size_t j = 1; j < T; ++j) out[j - 1] = 0.0f;
    return;
  }
  // R = A_L · … · A_1 in float32 (torch's rollout is float32 too), each
  // product on the GEMM kernels: R ← A · R with R packed as the right operand.
  std::vector<float> A(T * T), R(T * T), next(T * T), packed(kernels::f32_gemm_packed_floats(T, T));
  for (size_t l = 0; l < weights.size(); ++l) {
    const float* w = weights[l];
    for (size_t i = 0; i < T * T; ++i) {  // the mean over heads
      float s = 0.0f;
      for (size_t h = 0; h < H; ++h) s += w[h * T * T + i];
      A[i] = s / float(H);
    }
    for (size_t i = 0; i < T; ++i) {  // 0.5·A + 0.5·I, rows renormalised
      float* row = A.data() + i * T;
      float s = 0.0f;
      for (size_t j = 0; j < T; ++j) s += row[j] = 0.5f * row[j] + (i == j ? 0.5f : 0.0f);
      for (size_t j = 0; j < T; ++j) row[j] /= s;
    }
    if (l == 0) {
      R.swap(A);
      continue;
    }
    kernels::f32_gemm_pack_nn(T, T, R.data(), T, packed.data());
    kernels::f32_gemm_packed(T, T, T, next.data(), T, A.data(), T, packed.data(), nullptr, 1.0f);
    R.swap(next);
  }
  float max = 0.0f;
  for (size_t j = 1; j < T; ++j) max = std::max(max, R[j]);
  for (size_t j = 1; j < T; ++j) out[j - 1] = max > 0.0f ? R[j] / max : 0.0f;
}

}  // namespace aw
