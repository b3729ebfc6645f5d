// The image classifier's own config (a model file's attnwasm.config with "model": "vit"): its keys checked in a
// fixed order, then read into VitConfig. The labels are checked here and read by the JS face
// (bindings/classifier.js).
#include <string>

#include "core/limits.h"
#include "models/own_config.h"
#include "models/vit_classifier.h"

namespace aw {

using io::Describe;
using io::FieldReader;
using io::JsonValue;

Status ReadVitFile(const FieldReader& c, VitConfig* out) {
  int64_t image = 0, patch = 0, unused = 0, classes = 0;
  AW_RETURN_IF_ERROR(c.Int("imageSize", 1, kMaxImageSize, &image));
  AW_RETURN_IF_ERROR(c.Divisor("patchSize", "imageSize", image, &patch));
  AW_RETURN_IF_ERROR(c.Int("inChannels", 1, kMaxChannels, &unused));
  AW_RETURN_IF_ERROR(own::Width(c));
  AW_RETURN_IF_ERROR(c.Int("numLayers", 1, kMaxLayers, &unused));
  AW_RETURN_IF_ERROR(c.Int("dimFeedforward", 1, kMaxFeedforward, &unused));
  AW_RETURN_IF_ERROR(own::LayerOptions(c));
  AW_RETURN_IF_ERROR(c.Int("numClasses", 1, kMaxClasses, &classes));
  if (const JsonValue* labels = c.Get("labels")) {
    if (!labels->is_array() || labels->items.size() != size_t(classes))
      return c.Fail(".labels", "an array of " + std::to_string(classes) + " strings (numClasses)", Describe(labels));
    for (size_t i = 0; i < labels->items.size(); ++i)
      if (!labels->items[i].is_string()) return c.Fail(".labels[" + std::to_string(i) + "]", "a string", Describe(&labels->items[i]));
  }
  AW_RETURN_IF_ERROR(c.OptionalNumber("mean", /*positive=*/false));
  AW_RETURN_IF_ERROR(c.OptionalNumber("std", /*positive=*/true));
  const JsonValue& root = c.object();
  VitConfig v;
  v.layer = own::LayerOf(root);
  v.image_size = own::IntOf(root, "imageSize");
  v.patch_size = own::IntOf(root, "patchSize");
  v.in_channels = own::IntOf(root, "inChannels");
  v.num_layers = own::IntOf(root, "numLayers");
  v.num_classes = own::IntOf(root, "numClasses");
  v.mean = own::NumberOr(root, "mean", 0.0);
  v.std = own::NumberOr(root, "std", 1.0);
  *out = v;
  return Status::OK();
}

}  // namespace aw
