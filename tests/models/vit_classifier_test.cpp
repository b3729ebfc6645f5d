// The VitClassifier family (src/models/vit_classifier.h) loaded from the
// shipped file: a softmax over the classes, the class token's attention as
// part of softmax rows, rollout equal to a plain double-precision matrix
// product, wrong image sizes refused. Torch parity: tests/js/models.test.mjs
// and tests/js/models_custom.test.mjs.
#include "models/vit_classifier.h"

#include <gtest/gtest.h>

#include <random>

#include "model_test_util.h"

namespace aw {
namespace {

TEST(VitClassifierTest, ClassifiesIntoASoftmaxWithAttentionMaps) {
  test::LoadedFile f;
  test::LoadFile("models/vit/vit.safetensors", &f);
  ASSERT_EQ(f.kind, "vit");
  auto* m = static_cast<VitClassifier*>(f.model.get());
  std::vector<float> image(784, 0.0f);
  for (int y = 6; y < 22; ++y) image[size_t(y * 28 + 14)] = 1.0f;  // a stroke: "1"
  ClassifyResult r;
  ASSERT_TRUE(m->Classify(image.data(), image.size(), &r).ok());
  double sum = 0;
  for (size_t k = 0; k < 10; ++k) sum += r.probabilities.data()[k];
  EXPECT_NEAR(sum, 1.0, 1e-6);
  EXPECT_EQ(r.index, 1) << "a vertical stroke is a one";
  const Shape want{4, 4, 49};
  ASSERT_EQ(r.attention_shape, want);
  for (size_t row = 0; row < 16; ++row) {
    double s = 0;
    for (size_t p = 0; p < 49; ++p) s += r.attention.data()[row * 49 + p];
    EXPECT_GT(s, 0.0);
    EXPECT_LE(s, 1.0 + 1e-5);
  }
  float max = 0;
  for (size_t p = 0; p < 49; ++p) max = std::max(max, r.rollout.data()[p]);
  EXPECT_EQ(max, 1.0f);

  const Status s = m->Classify(image.data(), 783, &r);
  EXPECT_EQ(s.code(), Code::kShape);
  EXPECT_EQ(s.message(), "image: expected 1×28×28 = 784 values, got 783");
  image[5] = NAN;  // a silent label for a broken image would be worse than an error
  EXPECT_EQ(m->Classify(image.data(), image.size(), &r).message(), "image: expected finite values, got NaN at index 5");
  image[5] = 0;
  ASSERT_TRUE(m->Classify(image.data(), image.size(), &r).ok());
}

TEST(VitClassifierTest, RolloutIsTheProductOfResidualAveragedMaps) {
  const size_t H = 3, T = 5, L = 3;
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> u(0.01f, 1.0f);
  std::vector<std::vector<float>> w(L, std::vector<float>(H * T * T));
  for (auto& layer : w)
    for (size_t r = 0; r < H * T; ++r) {  // softmax-like rows
      float s = 0;
      for (size_t j = 0; j < T; ++j) s += layer[r * T + j] = u(gen);
      for (size_t j = 0; j < T; ++j) layer[r * T + j] /= s;
    }
  // Reference: R = A_L … A_1 with A = 0.5·mean_h(W) + 0.5·I (rows already sum to 1).
  std::vector<double> R(T * T, 0.0);
  for (size_t i = 0; i < T; ++i) R[i * T + i] = 1;
  for (const auto& layer : w) {
    std::vector<double> A(T * T), N(T * T, 0.0);
    for (size_t i = 0; i < T; ++i)
      for (size_t j = 0; j < T; ++j) {
        double m = 0;
        for (size_t h = 0; h < H; ++h) m += layer[h * T * T + i * T + j];
        A[i * T + j] = 0.5 * m / H + (i == j ? 0.5 : 0);
      }
    for (size_t i = 0; i < T; ++i)
      for (size_t j = 0; j < T; ++j)
        for (size_t k = 0; k < T; ++k) N[i * T + j] += A[i * T + k] * R[k * T + j];
    R = N;
  }
  double max = 0;
  for (size_t j = 1; j < T; ++j) max = std::max(max, R[j]);
  std::vector<const float*> ptrs;
  for (const auto& layer : w) ptrs.push_back(layer.data());
  std::vector<float> out(T - 1);
  AttentionRollout(ptrs, H, T, out.data());
  for (size_t j = 1; j < T; ++j) EXPECT_NEAR(out[j - 1], R[j] / max, 1e-6) << j;
}

}  // namespace
}  // namespace aw
