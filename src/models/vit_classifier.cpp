#include "models/vit_classifier.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "core/limits.h"
#include "core/rules.h"

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
  AW_RETURN_IF_ERROR(x_.Resize(want, "image"));
  const float mean = float(cfg_.mean), std = float(cfg_.std);
  for (size_t i = 0; i < want; ++i) {
    if (!std::isfinite(image[i]))
      return ArgError("image: expected finite values, got " + std::string(std::isnan(image[i]) ? "NaN" : "an infinity") +
                      " at index " + std::to_string(i));
    x_.data()[i] = (image[i] - mean) / std;
  }
  Shape ts;
  AW_RETURN_IF_ERROR(patch_.Forward(TensorView{x_.data(), {1, C, S, S}}, &tokens_, &ts));
  pos_.Run(tokens_.data(), ts);
  Shape es;
  AW_RETURN_IF_ERROR(encoder_.Forward(TensorView{tokens_.data(), ts}, EncoderLayerForward(), &enc_, &es, &weights_));
  const size_t D = size_t(cfg_.layer.d_model), K = size_t(cfg_.num_classes), T = size_t(es[1]), P = T - 1;
  const size_t L = weights_.size(), H = size_t(cfg_.layer.nhead);
  AW_RETURN_IF_ERROR(out->logits.Resize(K, "logits"));
  AW_RETURN_IF_ERROR(out->probabilities.Resize(K, "probabilities"));
  AW_RETURN_IF_ERROR(out->attention.Resize(L * H * P, "attention"));
  AW_RETURN_IF_ERROR(out->rollout.Resize(P, "rollout"));
  head_.Apply(1, enc_.data(), D, out->logits.data(), K);  // the class token's row
  const float* logits = out->logits.data();
  double max = -INFINITY, sum = 0;
  for (size_t k = 0; k < K; ++k) max = std::max(max, double(logits[k]));
  std::vector<double> e(K);
  for (size_t k = 0; k < K; ++k) sum += e[k] = std::exp(double(logits[k]) - max);
  out->index = 0;
  for (size_t k = 0; k < K; ++k) {
    out->probabilities.data()[k] = float(e[k] / sum);
    if (e[k] > e[size_t(out->index)]) out->index = int64_t(k);
  }
  std::vector<const float*> w;
  for (size_t l = 0; l < L; ++l) {
    w.push_back(weights_[l].data());  // (1, H, T, T): row 0 is the class token's attention
    for (size_t h = 0; h < H; ++h)
      std::memcpy(out->attention.data() + (l * H + h) * P, w.back() + h * T * T + 1, P * sizeof(float));
  }
  out->attention_shape = {int64_t(L), int64_t(H), int64_t(P)};
  AttentionRollout(w, H, T, out->rollout.data());
  return Status::OK();
}

void AttentionRollout(const std::vector<const float*>& weights, size_t H, size_t T, float* out) {
  std::vector<double> R, A(T * T), N(T * T);
  for (const float* w : weights) {
    std::fill(A.begin(), A.end(), 0.0);
    for (size_t h = 0; h < H; ++h)
      for (size_t i = 0; i < T * T; ++i) A[i] += double(w[h * T * T + i]) / double(H);
    for (size_t i = 0; i < T; ++i) {
      double s = 0;
      for (size_t j = 0; j < T; ++j) {
        A[i * T + j] = 0.5 * A[i * T + j] + (i == j ? 0.5 : 0.0);
        s += A[i * T + j];
      }
      for (size_t j = 0; j < T; ++j) A[i * T + j] /= s;
    }
    if (R.empty()) {
      R = A;
      continue;
    }
    std::fill(N.begin(), N.end(), 0.0);  // N = A · R
    for (size_t i = 0; i < T; ++i)
      for (size_t k = 0; k < T; ++k) {
        const double a = A[i * T + k];
        if (a != 0.0)
          for (size_t j = 0; j < T; ++j) N[i * T + j] += a * R[k * T + j];
      }
    R.swap(N);
  }
  double max = 0;
  for (size_t j = 1; j < T; ++j) max = std::max(max, R.empty() ? 0.0 : R[j]);
  for (size_t j = 1; j < T; ++j) out[j - 1] = max > 0 ? float(R[j] / max) : 0.0f;
}

}  // namespace aw
