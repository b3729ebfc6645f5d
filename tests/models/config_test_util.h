// Helpers of the config readers' tests (own_config_test.cpp, causal_lm_config_test.cpp): a config as
// (key, JSON literal) pairs, so that a test can change one key, and the checks of a file's attnwasm.config as the
// registry makes them (models/families.h CheckFamilyConfig: the family by "model", then its reader and rules).
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "models/families.h"

namespace aw {

// A config as (key, JSON literal) pairs, so a test can change one key.
using Members = std::vector<std::pair<std::string, std::string>>;

inline std::string Json(const Members& ms) {
  std::string out = "{";
  for (size_t i = 0; i < ms.size(); ++i) {
    out += (i ? ", \"" : "\"") + ms[i].first + "\": " + ms[i].second;
  }
  return out + "}";
}

// ms with `key` set to `literal` (replaced in place, or appended).
inline Members Set(Members ms, const std::string& key, const std::string& literal) {
  for (auto& m : ms) {
    if (m.first == key) {
      m.second = literal;
      return ms;
    }
  }
  ms.emplace_back(key, literal);
  return ms;
}

inline Members Without(Members ms, const std::string& key) {
  Members out;
  for (auto& m : ms)
    if (m.first != key) out.push_back(m);
  EXPECT_NE(out.size(), ms.size()) << "no key " << key;
  return out;
}

// A model file's own attnwasm.config text, checked for a loader expecting `kind` ("" any).
inline Status ValidateModelConfig(const std::string& json, const std::string& kind) {
  return CheckFamilyConfig(json, /*own=*/true, kind);
}

// Only the required keys.
inline void ExpectValid(const std::string& json, const std::string& kind) {
  const Status s = ValidateModelConfig(json, kind);
  EXPECT_TRUE(s.ok()) << "kind '" << kind << "': " << s.message() << "\nconfig: " << json;
}

inline void ExpectInvalid(const std::string& json, const std::string& kind, const std::string& message) {
  const Status s = ValidateModelConfig(json, kind);
  ASSERT_FALSE(s.ok()) << "accepted: " << json;
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(s.message(), message) << "config: " << json;
}

}  // namespace aw
