// Helpers shared by the layer tests (tests/layers/) and tests/io/load_params_test.cpp:
// random inputs from the runtime's own generator, and a parameter's values.
// Include as "../layers/layer_test_util.h" (or "layer_test_util.h" here).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/module.h"
#include "core/rng.h"

namespace aw {

// n floats U(-1, 1) from Rng(seed).
inline std::vector<float> Random(uint64_t seed, int64_t n) {
  Rng rng(seed);
  std::vector<float> out(static_cast<size_t>(n));
  rng.FillUniform(out.data(), n, 1.0);
  return out;
}

// The values of a module's parameter `name` (empty if it has none of that name).
inline std::vector<float> ParamValues(const Module& m, const std::string& name) {
  for (const auto& p : m.Params())
    if (p.name == name) return std::vector<float>(m.Param(name), m.Param(name) + NumelChecked(p.shape));
  return {};
}

}  // namespace aw
