// The fields a model file's own config shares among its families (own_config.h).
#include "models/own_config.h"

#include <string>
#include <string_view>
#include <vector>

#include "core/limits.h"
#include "layers/activation.h"

namespace aw::own {

using io::Describe;
using io::FieldReader;
using io::JsonValue;

Status Width(const FieldReader& c) {
  int64_t d_model = 0, nhead = 0;
  AW_RETURN_IF_ERROR(c.Int("dModel", 1, kMaxModelWidth, &d_model));
  return c.Divisor("nhead", "dModel", d_model, &nhead);
}

Status LayerOptions(const FieldReader& c) {
  AW_RETURN_IF_ERROR(c.OptionalEnum("activation", {"relu", "gelu"}));
  AW_RETURN_IF_ERROR(c.OptionalBool("normFirst"));
  return c.OptionalNumber("layerNormEps", /*positive=*/true);
}

Status Vocab(const FieldReader& c, const char* key, size_t* size) {
  const JsonValue* v = c.Get(key);
  const std::string path = std::string(".") + key;
  if (!v || !v->is_array() || v->items.size() < 2 || v->items.size() > size_t(kMaxVocab))
    return c.Fail(path, "an array of 2 to " + std::to_string(kMaxVocab) + " non-empty unique strings", Describe(v));
  std::vector<std::string_view> strs;
  strs.reserve(v->items.size());
  for (size_t i = 0; i < v->items.size(); ++i) {
    const JsonValue& item = v->items[i];
    if (!item.is_string() || item.str.empty())
      return c.Fail(path + "[" + std::to_string(i) + "]", "a non-empty string", Describe(&item));
    strs.push_back(item.str);
  }
  size_t first = 0;
  if (const size_t i = io::FirstRepeat(strs, &first); i < strs.size())
    return c.Fail(path + "[" + std::to_string(i) + "]", std::string("a string not already in ") + key,
                  Describe(&v->items[i]) + " (also " + key + "[" + std::to_string(first) + "])");
  *size = v->items.size();
  return Status::OK();
}

int64_t IntOf(const JsonValue& root, const char* key) { return int64_t(root.Find(key)->number); }

double NumberOr(const JsonValue& root, const char* key, double def) {
  const JsonValue* v = root.Find(key);
  return v ? v->number : def;
}

size_t SizeOf(const JsonValue& root, const char* key) { return root.Find(key)->items.size(); }

TransformerLayerConfig LayerOf(const JsonValue& root) {
  TransformerLayerConfig l;
  l.d_model = IntOf(root, "dModel");
  l.nhead = IntOf(root, "nhead");
  l.dim_feedforward = IntOf(root, "dimFeedforward");
  l.dropout = 0.0;
  const JsonValue* act = root.Find("activation");
  ParseActivation(act ? act->str : "relu", &l.activation);  // checked: "relu" or "gelu"
  const JsonValue* norm_first = root.Find("normFirst");
  l.norm_first = norm_first && norm_first->boolean;
  l.layer_norm_eps = NumberOr(root, "layerNormEps", 1e-5);
  l.batch_first = true;
  l.bias = true;
  return l;
}

}  // namespace aw::own
