// Loading the shipped model files in native tests (tests/models/).
#pragma once
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "io/json.h"
#include "io/safetensors.h"
#include "models/load_model.h"

namespace aw::test {

inline std::vector<uint8_t> ReadBytes(const std::string& rel) {
  std::ifstream f(std::string(AW_SOURCE_DIR) + "/" + rel, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// A model file with its parsed header and config; the bytes outlive the model.
struct LoadedFile {
  std::vector<uint8_t> bytes;
  io::StFile file;
  io::JsonValue config;
  std::unique_ptr<Module> model;
  std::string kind;
};

inline void LoadFile(const std::string& rel, LoadedFile* out) {
  out->bytes = ReadBytes(rel);
  ASSERT_FALSE(out->bytes.empty()) << rel;
  ASSERT_TRUE(io::ParseSafetensors(out->bytes.data(), out->bytes.size(), &out->file).ok());
  for (const auto& kv : out->file.metadata)
    if (kv.first == "attnwasm.config") ASSERT_TRUE(io::ParseJson(kv.second, &out->config).ok());
  const Status s = LoadModel(out->bytes.data(), out->bytes.size(), out->file, "", "", &out->model, &out->kind);
  ASSERT_TRUE(s.ok()) << s.message();
}

}  // namespace aw::test
