// ModelLoader (src/models/load_model.h), the streamed load behind aw.loadModel, on the golden checkpoints of
// tests/data/goldens/lm/models/:
//   - a file fed in chunks of any size (1 byte, 7, 1000, …) gives the model of the whole file, bit for bit;
//     a stream of unknown size too;
//   - weights kept as the file stores them (BF16, F16) give the bits of the same model widened to float32
//     (dtype 'f32'), through the GEMM (forward) and the GEMV (decoding steps), with 1–3 threads; they hold
//     about half the bytes;
//   - q8 and q4 hold about a quarter and an eighth and stay near the float model (their exactness against
//     the torch twin: tests/js/quantized.test.mjs);
//   - sharded checkpoints: two shards with their index load as the one file; an index that names a tensor
//     in a file not given or in the wrong one, a shard tensor the index does not list, a tensor in two
//     shards: refused by name;
//   - a truncated file, bytes out of order, more bytes than the header describes, an unknown dtype: errors
//     naming the file, the tensor or the option; the loader frees what it held.
#include "models/load_model.h"

#include "models/families.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "core/parallel.h"
#include "io/json.h"
#include "models/causal_lm.h"
#include "../kernel_test_util.h"
#include "model_test_util.h"

namespace aw {
namespace {

const std::string kDir = "tests/data/goldens/lm/models/";

std::string Text(const std::vector<uint8_t>& b) { return std::string(b.begin(), b.end()); }

struct Checkpoint {
  std::vector<uint8_t> bytes;
  io::StFile file;
  std::string config;
};

Checkpoint Read(const std::string& name) {
  Checkpoint c;
  c.bytes = test::ReadBytes(kDir + name + "/model.safetensors");
  EXPECT_TRUE(io::ParseSafetensors(c.bytes.data(), c.bytes.size(), &c.file).ok()) << name;
  c.config = Text(test::ReadBytes(kDir + name + "/config.json"));
  return c;
}

// Loads from the chunks of files (each fed in pieces of `chunk` bytes, the files interleaved), or an error.
Status LoadChunks(const std::vector<const std::vector<uint8_t>*>& files, const std::vector<std::string>& names,
                  const std::string& config, const std::string& index, size_t chunk, const std::string& dtype,
                  std::unique_ptr<Module>* out, bool unknown_size = false) {
  ModelLoader loader;
  std::vector<ModelLoader::File> heads;
  for (size_t f = 0; f < files.size(); ++f) {
    ModelLoader::File h;
    h.name = names[f];
    h.size = unknown_size ? io::kStUnknownSize : files[f]->size();
    // Only the header's bytes, as a stream gives them first.
    uint64_t n = 0;
    AW_RETURN_IF_ERROR(io::SafetensorsHeaderLength(files[f]->data(), files[f]->size(), h.size, &n));
    AW_RETURN_IF_ERROR(io::ParseSafetensorsHeader(files[f]->data(), size_t(8 + n), h.size, &h.header));
    heads.push_back(std::move(h));
  }
  AW_RETURN_IF_ERROR(loader.Begin("", config, std::move(heads), index, dtype));
  std::vector<size_t> at(files.size(), 0);
  for (bool more = true; more;) {
    more = false;
    for (size_t f = 0; f < files.size(); ++f) {
      if (at[f] >= files[f]->size()) continue;
      const size_t n = std::min(chunk, files[f]->size() - at[f]);
      AW_RETURN_IF_ERROR(loader.Feed(f, at[f], files[f]->data() + at[f], n));
      at[f] += n;
      more = true;
    }
  }
  const Family* family = nullptr;
  AW_RETURN_IF_ERROR(loader.Finish(out, &family));
  return std::string(family->kind) == "causal_lm" ? Status::OK() : ArgError("not the causal LM family: " + std::string(family->kind));
}

std::vector<float> Logits(Module* m, const std::vector<int32_t>& ids) {
  auto* lm = static_cast<CausalLm*>(m);
  Buffer logits;
  EXPECT_TRUE(lm->Forward(ids.data(), 1, int64_t(ids.size()), &logits).ok());
  return std::vector<float>(logits.data(), logits.data() + logits.size());
}

// Logits of each decoding step (one token at a time through the KV cache: the GEMV).
std::vector<float> StepLogits(Module* m, const std::vector<int32_t>& ids) {
  auto* lm = static_cast<CausalLm*>(m);
  const size_t V = size_t(lm->config().vocab);
  KvCache cache;
  EXPECT_TRUE(lm->Begin(1, ids.size(), &cache).ok());
  std::vector<float> out(ids.size() * V);
  for (size_t t = 0; t < ids.size(); ++t) EXPECT_TRUE(lm->Append(&cache, &ids[t], 1, 0, out.data() + t * V, nullptr).ok());
  return out;
}

const std::vector<int32_t> kIds = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5};

TEST(ModelLoader, ChunksOfAnySizeGiveTheWholeFilesModel) {
  const Checkpoint c = Read("qwen2_tied_gqa3_hd16_bf16");
  std::unique_ptr<Module> whole;
  ASSERT_TRUE(LoadChunks({&c.bytes}, {"model.safetensors"}, c.config, "", c.bytes.size(), "", &whole).ok());
  const std::vector<float> want = Logits(whole.get(), kIds);
  for (size_t chunk : {size_t(1), size_t(7), size_t(64), size_t(1000), size_t(4099)})
    for (bool unknown : {false, true}) {
      SCOPED_TRACE("chunk " + std::to_string(chunk) + (unknown ? " (a stream of unknown size)" : ""));
      std::unique_ptr<Module> m;
      const Status s = LoadChunks({&c.bytes}, {"model.safetensors"}, c.config, "", chunk, "", &m, unknown);
      ASSERT_TRUE(s.ok()) << s.message();
      EXPECT_TRUE(test::bit_identical(Logits(m.get(), kIds), want));
    }
}

// The core rule: BF16 and F16 weights kept as stored compute the bits of the float32 model.
TEST(ModelLoader, StoredHalfWeightsGiveTheBitsOfTheWidenedModel) {
  for (const char* name : {"qwen2_tied_gqa3_hd16_bf16", "llama_tied_gqa2_hd128_bf16", "qwen2_untied_gqa1_hd32_f16"}) {
    SCOPED_TRACE(name);
    const Checkpoint c = Read(name);
    std::unique_ptr<Module> stored, widened;
    const std::string config = std::string(name).find("llama_tied_gqa2") == 0 ? "" : c.config;  // a file with its own config
    ASSERT_TRUE(LoadChunks({&c.bytes}, {"m"}, config, "", 4096, "", &stored).ok());
    ASSERT_TRUE(LoadChunks({&c.bytes}, {"m"}, config, "", 4096, "f32", &widened).ok());
    EXPECT_LT(stored->ParamBytes() * 10, widened->ParamBytes() * 6) << stored->ParamBytes() << " vs " << widened->ParamBytes();
    for (int threads : {1, 2, 3}) {
      SetNumThreads(threads);
      EXPECT_TRUE(test::bit_identical(Logits(stored.get(), kIds), Logits(widened.get(), kIds))) << threads << " threads";
      EXPECT_TRUE(test::bit_identical(StepLogits(stored.get(), kIds), StepLogits(widened.get(), kIds))) << threads << " threads";
    }
    SetNumThreads(1);
  }
}

TEST(ModelLoader, QuantizedWeightsAreSmallAndNearTheFloatModel) {
  const Checkpoint c = Read("llama_untied_gqa2_hd8");
  std::unique_ptr<Module> f32, q8, q4;
  ASSERT_TRUE(LoadChunks({&c.bytes}, {"m"}, c.config, "", 1 << 20, "f32", &f32).ok());
  ASSERT_TRUE(LoadChunks({&c.bytes}, {"m"}, c.config, "", 1 << 20, "q8", &q8).ok());
  ASSERT_TRUE(LoadChunks({&c.bytes}, {"m"}, c.config, "", 1 << 20, "q4", &q4).ok());
  EXPECT_LT(q8->ParamBytes() * 3, f32->ParamBytes());
  EXPECT_LT(q4->ParamBytes() * 5, f32->ParamBytes());
  const std::vector<float> want = Logits(f32.get(), kIds), a = Logits(q8.get(), kIds), b = Logits(q4.get(), kIds);
  double d8 = 0, d4 = 0, scale = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    d8 = std::max(d8, double(std::fabs(a[i] - want[i])));
    d4 = std::max(d4, double(std::fabs(b[i] - want[i])));
    scale = std::max(scale, double(std::fabs(want[i])));
  }
  EXPECT_LT(d8, 0.05 * scale) << "q8";
  EXPECT_LT(d4, 0.5 * scale) << "q4";
  EXPECT_GT(d4, d8);
  // Decoding steps (the GEMV) give the GEMM's rows bit for bit, quantized too.
  const std::vector<float> steps = StepLogits(q8.get(), kIds);
  EXPECT_TRUE(test::bit_identical(steps, a));
}

// A file's tensors written into two shards (a safetensors writer for the test), with an index.
struct Shards {
  std::vector<uint8_t> a, b;
  std::string index;
};

std::vector<uint8_t> WriteFile(const Checkpoint& c, const std::vector<const io::StTensor*>& ts) {
  std::string header = "{";
  uint64_t off = 0;
  for (size_t i = 0; i < ts.size(); ++i) {
    std::string shape = "[";
    for (size_t d = 0; d < ts[i]->shape.size(); ++d) shape += (d ? "," : "") + std::to_string(ts[i]->shape[d]);
    shape += "]";
    const uint64_t n = ts[i]->end - ts[i]->begin;
    header += (i ? "," : "") + std::string("\"") + ts[i]->name + "\":{\"dtype\":\"" + io::StDTypeName(ts[i]->dtype) +
              "\",\"shape\":" + shape + ",\"data_offsets\":[" + std::to_string(off) + "," + std::to_string(off + n) + "]}";
    off += n;
  }
  header += "}";
  std::vector<uint8_t> out(8);
  const uint64_t len = header.size();
  std::memcpy(out.data(), &len, 8);
  out.insert(out.end(), header.begin(), header.end());
  for (const io::StTensor* t : ts) out.insert(out.end(), c.bytes.begin() + long(t->begin), c.bytes.begin() + long(t->end));
  return out;
}

Shards Split(const Checkpoint& c) {
  std::vector<const io::StTensor*> first, second;
  std::string map;
  for (size_t i = 0; i < c.file.tensors.size(); ++i) {
    const io::StTensor& t = c.file.tensors[i];
    (i % 2 ? second : first).push_back(&t);
    map += (i ? "," : "") + std::string("\"") + t.name + "\":\"model-0000" + (i % 2 ? "2" : "1") + "-of-00002.safetensors\"";
  }
  return {WriteFile(c, first), WriteFile(c, second), "{\"metadata\":{\"total_size\":0},\"weight_map\":{" + map + "}}"};
}

TEST(ModelLoader, ShardsWithTheirIndexLoadAsTheOneFile) {
  const Checkpoint c = Read("llama_untied_gqa2_hd8");
  std::unique_ptr<Module> whole, sharded;
  ASSERT_TRUE(LoadChunks({&c.bytes}, {"m"}, c.config, "", 1 << 20, "", &whole).ok());
  const Shards s = Split(c);
  const std::vector<std::string> names = {"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"};
  const Status st = LoadChunks({&s.a, &s.b}, names, c.config, s.index, 333, "", &sharded);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_TRUE(test::bit_identical(Logits(sharded.get(), kIds), Logits(whole.get(), kIds)));

  std::unique_ptr<Module> m;
  // A shard not given.
  Status e = LoadChunks({&s.a}, {names[0]}, c.config, s.index, 333, "", &m);
  EXPECT_EQ(e.message().find("index: weight_map names tensor"), 0u) << e.message();
  EXPECT_NE(e.message().find("model-00002-of-00002.safetensors, a file that was not given"), std::string::npos) << e.message();
  // The index naming the wrong shard for a tensor.
  std::string wrong = s.index;
  const size_t at = wrong.find("-00002-of-00002");
  wrong.replace(at, 15, "-00001-of-00002");
  e = LoadChunks({&s.a, &s.b}, names, c.config, wrong, 333, "", &m);
  EXPECT_NE(e.message().find("which does not hold it (model-00002-of-00002.safetensors does)"), std::string::npos) << e.message();
  // A tensor the index does not list.
  const std::string first_key = c.file.tensors[0].name;
  std::string unlisted = s.index;
  const size_t k = unlisted.find("\"" + first_key + "\"");
  const size_t comma = unlisted.find(',', k);
  unlisted.erase(k, comma - k + 1);
  e = LoadChunks({&s.a, &s.b}, names, c.config, unlisted, 333, "", &m);
  EXPECT_EQ(e.message(), "index: " + names[0] + " holds tensor '" + first_key + "', which weight_map does not list");
  // A tensor in two shards.
  e = LoadChunks({&s.a, &s.a}, {names[0], names[1]}, c.config, "", 333, "", &m);
  EXPECT_NE(e.message().find("is in two files"), std::string::npos) << e.message();
}

TEST(ModelLoader, BrokenStreamsAndOptionsAreErrorsNamingTheFileOrTensor) {
  const Checkpoint c = Read("llama_untied_gqa2_hd8");
  std::vector<uint8_t> cut(c.bytes.begin(), c.bytes.end() - 100);
  std::unique_ptr<Module> m;
  // Truncated: the header describes more than arrived.
  Status e = LoadChunks({&cut}, {"model.safetensors"}, c.config, "", 4096, "", &m, /*unknown_size=*/true);
  EXPECT_EQ(e.message().find("source: model.safetensors is truncated: "), 0u) << e.message();
  EXPECT_NE(e.message().find("has "), std::string::npos) << e.message();
  EXPECT_FALSE(m);
  // The file's size disagrees with its header (known size: the header's own check).
  e = LoadChunks({&cut}, {"model.safetensors"}, c.config, "", 4096, "", &m);
  EXPECT_FALSE(e.ok());
  // Bytes out of order, and past the end.
  ModelLoader loader;
  std::vector<ModelLoader::File> heads(1);
  heads[0] = {"model.safetensors", c.file, c.bytes.size()};
  ASSERT_TRUE(loader.Begin("", c.config, std::move(heads), "", "").ok());
  ASSERT_TRUE(loader.Feed(0, 0, c.bytes.data(), 100).ok());
  e = loader.Feed(0, 200, c.bytes.data() + 200, 10);
  EXPECT_EQ(e.message(), "source: model.safetensors: bytes must arrive in order: expected offset 100, got 200");
  e = loader.Feed(0, 100, c.bytes.data(), c.bytes.size());
  EXPECT_NE(e.message().find("more than the"), std::string::npos) << e.message();
  // An unknown dtype, before anything is built.
  ModelLoader other;
  std::vector<ModelLoader::File> h2(1);
  h2[0] = {"m", c.file, c.bytes.size()};
  e = other.Begin("", c.config, std::move(h2), "", "q3");
  EXPECT_EQ(e.message(), "dtype: expected 'f32', 'bf16', 'f16', 'q8', 'q4' or 'q4a16' (or nothing: the weights as stored), got 'q3'");
}

// A weight that a 16-bit type cannot hold (a float32 1e6 made float16 would be inf, and every logit NaN) is an
// error naming the tensor, the value and the way out; bf16 and the quantized types hold it. The data may also
// be fed from the data section on, without the header's bytes (as the JS loader feeds it).
TEST(ModelLoader, ValuesATypeCannotHoldAreErrors) {
  Checkpoint c = Read("llama_untied_gqa2_hd8");
  const std::string name = "model.layers.0.mlp.up_proj.weight";
  const io::StTensor* t = nullptr;
  for (const io::StTensor& x : c.file.tensors)
    if (x.name == name) t = &x;
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->dtype, io::StDType::kF32);
  const float big = 1e6f;
  std::memcpy(c.bytes.data() + t->begin + 4 * 3, &big, 4);  // row 0, column 3
  std::unique_ptr<Module> m;
  Status e = LoadChunks({&c.bytes}, {"model.safetensors"}, c.config, "", 1 << 20, "f16", &m);
  EXPECT_EQ(e.message(), "dtype: 'f16' cannot hold " + name + "'s value 1000000 (row 0, column 3): its largest is 65504; "
                         "load with dtype 'f32' or 'bf16' (or as stored)");
  EXPECT_FALSE(m);
  for (const char* ok : {"bf16", "q8", "q4", "f32", ""})
    EXPECT_TRUE(LoadChunks({&c.bytes}, {"model.safetensors"}, c.config, "", 1 << 20, ok, &m).ok()) << ok;
  // bf16 holds every finite float32 but those that round up to inf: its way out names only f32.
  const float huge = 3.4e38f;
  std::memcpy(c.bytes.data() + t->begin + 4 * 3, &huge, 4);
  e = LoadChunks({&c.bytes}, {"model.safetensors"}, c.config, "", 1 << 20, "bf16", &m);
  EXPECT_EQ(e.message(), "dtype: 'bf16' cannot hold " + name + "'s value 3.3999999521443642e+38 (row 0, column 3): its largest is 3.39e38; "
                         "load with dtype 'f32' (or as stored)");
  std::memcpy(c.bytes.data() + t->begin + 4 * 3, &big, 4);
  // From the data section on.
  ModelLoader loader;
  std::vector<ModelLoader::File> heads(1);
  heads[0] = {"model.safetensors", c.file, c.bytes.size()};
  ASSERT_TRUE(loader.Begin("", c.config, std::move(heads), "", "").ok());
  const size_t start = size_t(c.file.data_start);
  ASSERT_TRUE(loader.Feed(0, start, c.bytes.data() + start, c.bytes.size() - start).ok());
  const Family* family = nullptr;
  EXPECT_TRUE(loader.Finish(&m, &family).ok());
  EXPECT_EQ(family, FamilyOfKind("causal_lm"));
}

}  // namespace
}  // namespace aw
