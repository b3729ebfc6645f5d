// Replays every file of tests/fuzz/corpus/<target>/ through the fuzz targets'
// one-input functions (fuzz_targets.h) in the normal native build, so inputs
// that once crashed (crash-*) stay fixed without clang or libFuzzer. Files
// named valid-* must also be accepted: they are the seeds that reach past
// validation. Under tools/sanitize.sh this runs with ASan/UBSan.
#include "fuzz_targets.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#ifndef AW_FUZZ_CORPUS_DIR
#error "AW_FUZZ_CORPUS_DIR must name tests/fuzz/corpus (set by CMakeLists.txt)"
#endif

namespace aw::fuzz {
namespace {

namespace fs = std::filesystem;

std::vector<uint8_t> ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Replays corpus/<target>; returns how many files it read.
size_t Replay(const std::string& target, Outcome (*one_input)(const uint8_t*, size_t)) {
  const fs::path dir = fs::path(AW_FUZZ_CORPUS_DIR) / target;
  EXPECT_TRUE(fs::is_directory(dir)) << dir;
  if (!fs::is_directory(dir)) return 0;
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::directory_iterator(dir))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const fs::path& p : files) {
    const std::vector<uint8_t> bytes = ReadFile(p);
    // data() of an empty vector may be null; libFuzzer never passes null.
    const uint8_t empty = 0;
    const Outcome o = one_input(bytes.empty() ? &empty : bytes.data(), bytes.size());
    EXPECT_EQ(o.violation, "") << p;
    if (p.filename().string().rfind("valid-", 0) == 0) EXPECT_TRUE(o.accepted) << p << " was refused";
  }
  return files.size();
}

TEST(FuzzCorpusTest, Safetensors) { EXPECT_GE(Replay("safetensors", SafetensorsOneInput), 5u); }

TEST(FuzzCorpusTest, ModelConfig) { EXPECT_GE(Replay("model_config", ModelConfigOneInput), 4u); }

TEST(FuzzCorpusTest, Attention) { EXPECT_GE(Replay("attention", AttentionOneInput), 5u); }

TEST(FuzzCorpusTest, HugeShapesAreRefusedBeforeTheirDataIsRead) {
  // op 0 (SDPA), flags 0, scale 0, query (INT64_MAX, 4) backed by one float,
  // key (3, 4), value (3, 4): validation must refuse it.
  const uint8_t sdpa[] = {0, 0x00, 0, 2, 0xF7, 4, 2, 3, 4, 2, 3, 4, 0};
  const Outcome a = AttentionOneInput(sdpa, sizeof sdpa);
  EXPECT_FALSE(a.accepted);
  EXPECT_EQ(a.violation, "");
  // The same call with query (2, 4) runs.
  const uint8_t ok[] = {0, 0x00, 0, 2, 2, 4, 2, 3, 4, 2, 3, 4, 0};
  const Outcome b = AttentionOneInput(ok, sizeof ok);
  EXPECT_TRUE(b.accepted);
  EXPECT_EQ(b.violation, "");
}

TEST(FuzzCorpusTest, SafetensorsTruncatedDataIsRefused) {
  const std::string header = "{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
  std::vector<uint8_t> file(8 + header.size() + 4);
  file[0] = uint8_t(header.size());
  std::copy(header.begin(), header.end(), file.begin() + 8);
  const Outcome st = SafetensorsOneInput(file.data(), file.size());
  EXPECT_FALSE(st.accepted);
  EXPECT_EQ(st.violation, "");
  file.resize(file.size() + 4);  // now the 8 data bytes are there
  EXPECT_TRUE(SafetensorsOneInput(file.data(), file.size()).accepted);
}

// The result checks the attention target relies on must themselves be able to fail.
TEST(FuzzCorpusTest, ResultChecksDetectBadResults) {
  Buffer b;
  ASSERT_TRUE(b.Resize(4, "test").ok());
  const float good[4] = {0.25f, 0.75f, 0.0f, 0.0f};
  std::copy(good, good + 4, b.data());
  EXPECT_TRUE(detail::RowsAreDistributions(b, 2, /*allow_zero=*/true));
  EXPECT_FALSE(detail::RowsAreDistributions(b, 2, /*allow_zero=*/false));  // row 1 is all zeros
  b.data()[1] = 0.5f;                                                       // row 0 sums to 0.75
  EXPECT_FALSE(detail::RowsAreDistributions(b, 2, true));
  EXPECT_TRUE(detail::AllFinite(b));
  b.data()[3] = NAN;
  EXPECT_FALSE(detail::AllFinite(b));
  EXPECT_TRUE(detail::SizeMatches(b, {2, 2}));
  EXPECT_FALSE(detail::SizeMatches(b, {2, 3}));
  EXPECT_FALSE(detail::AcceptableError(Status(Code::kStateDict, "x")));
  EXPECT_FALSE(detail::AcceptableError(Status(Code::kShape, "")));
  EXPECT_TRUE(detail::AcceptableError(ShapeError("query: ...")));
}

}  // namespace
}  // namespace aw::fuzz
