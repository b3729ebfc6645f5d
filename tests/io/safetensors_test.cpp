// Tests for src/io/safetensors.h. Files are built in memory (MakeFile): valid
// F32 / F16 / BF16 / F64 / integer / BOOL files with metadata and zero-size
// tensors, one test per validation rule checking the message, and a
// mutation test (flipped and truncated bytes) meant to run under ASan/UBSan.
#include "io/safetensors.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace aw::io {
namespace {

using Bytes = std::vector<uint8_t>;

// [u64 LE header length][header][data]
Bytes MakeFile(const std::string& header, const Bytes& data) {
  Bytes f(8 + header.size() + data.size());
  const uint64_t n = header.size();
  for (size_t i = 0; i < 8; ++i) f[i] = uint8_t(n >> (8 * i));
  std::copy(header.begin(), header.end(), f.begin() + 8);
  std::copy(data.begin(), data.end(), f.begin() + 8 + long(header.size()));
  return f;
}

// A header entry: "name":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}
std::string Entry(const std::string& name, const std::string& dtype, const std::string& shape,
                  uint64_t begin, uint64_t end) {
  return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape +
         ",\"data_offsets\":[" + std::to_string(begin) + "," + std::to_string(end) + "]}";
}

template <typename T>
void AppendLE(Bytes* b, T v) {
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof v);
  for (size_t i = 0; i < sizeof v; ++i) b->push_back(uint8_t(bits >> (8 * i)));
}

Status Parse(const Bytes& f, StFile* out) { return ParseSafetensors(f.data(), f.size(), out); }

StFile MustParse(const Bytes& f) {
  StFile out;
  const Status s = Parse(f, &out);
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

// Expects ParseSafetensors to fail with a message containing every part.
void ExpectError(const Bytes& f, const std::vector<std::string>& parts) {
  StFile out;
  out.data_start = 777;
  const Status s = Parse(f, &out);
  ASSERT_FALSE(s.ok()) << "accepted: " << std::string(f.begin(), f.end());
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(s.message().rfind("safetensors: ", 0), 0u) << s.message();
  for (const std::string& p : parts) {
    EXPECT_NE(s.message().find(p), std::string::npos)
        << "message: " << s.message() << "\nmissing: " << p;
  }
  EXPECT_TRUE(out.tensors.empty());  // *out is reset, not half-filled
  EXPECT_EQ(out.data_start, 0u);
}

// A file of one tensor "w" with the given JSON fields and `data_size` zero bytes.
void ExpectEntryError(const std::string& fields, size_t data_size,
                      const std::vector<std::string>& parts) {
  ExpectError(MakeFile("{\"w\":" + fields + "}", Bytes(data_size)), parts);
}

TEST(SafetensorsTest, ValidF32FileWithMetadata) {
  Bytes data;
  for (float v : {1.0f, -2.5f, 3.25f, 0.0f, 1e-3f, -7.0f}) AppendLE(&data, v);  // a (2, 3)
  for (float v : {42.0f, -0.0f}) AppendLE(&data, v);                            // b (2,)
  const std::string header = "{\"__metadata__\":{\"format\":\"pt\",\"note\":\"h\\u00e9\"}," +
                             Entry("b", "F32", "[2]", 24, 32) + "," +
                             Entry("a", "F32", "[2, 3]", 0, 24) + "}";
  const Bytes f = MakeFile(header, data);
  const StFile st = MustParse(f);
  ASSERT_EQ(st.tensors.size(), 2u);
  EXPECT_EQ(st.data_start, 8 + header.size());
  const StTensor& b = st.tensors[0];  // header order, not offset order
  const StTensor& a = st.tensors[1];
  EXPECT_EQ(b.name, "b");
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.dtype, StDType::kF32);
  EXPECT_EQ(a.shape, (Shape{2, 3}));
  EXPECT_EQ(b.shape, (Shape{2}));
  EXPECT_EQ(a.begin, st.data_start);  // absolute offsets
  EXPECT_EQ(a.end, st.data_start + 24);
  EXPECT_EQ(b.begin, st.data_start + 24);
  EXPECT_EQ(b.end, f.size());
  ASSERT_EQ(st.metadata.size(), 2u);
  EXPECT_EQ(st.metadata[0], (std::pair<std::string, std::string>("format", "pt")));
  EXPECT_EQ(st.metadata[1], (std::pair<std::string, std::string>("note", "h\xC3\xA9")));

  std::vector<float> out(6);
  ASSERT_TRUE(ReadAsF32(f.data(), f.size(), a, out.data()).ok());
  EXPECT_EQ(out, (std::vector<float>{1.0f, -2.5f, 3.25f, 0.0f, 1e-3f, -7.0f}));
  ASSERT_TRUE(ReadAsF32(f.data(), f.size(), b, out.data()).ok());
  EXPECT_EQ(out[0], 42.0f);
  EXPECT_TRUE(std::signbit(out[1]));
}

TEST(SafetensorsTest, UnalignedDataAndPaddedHeader) {
  // Header of odd length (data starts at an odd address) followed by the
  // space padding writers use for alignment.
  Bytes data;
  for (double v : {0.5, -1.25}) AppendLE(&data, v);
  const Bytes f = MakeFile("{" + Entry("x", "F64", "[2]", 0, 16) + "}   ", data);
  const StFile st = MustParse(f);
  ASSERT_EQ(st.tensors.size(), 1u);
  float out[2];
  ASSERT_TRUE(ReadAsF32(f.data(), f.size(), st.tensors[0], out).ok());
  EXPECT_EQ(out[0], 0.5f);
  EXPECT_EQ(out[1], -1.25f);
}

TEST(SafetensorsTest, F64RoundsToNearestFloat) {
  Bytes data;
  for (double v : {0.1, -1e300, 1e-50, 3.0}) AppendLE(&data, v);
  const Bytes f = MakeFile("{" + Entry("x", "F64", "[4]", 0, 32) + "}", data);
  const StFile st = MustParse(f);
  float out[4];
  ASSERT_TRUE(ReadAsF32(f.data(), f.size(), st.tensors[0], out).ok());
  EXPECT_EQ(out[0], 0.1f);
  EXPECT_EQ(out[1], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(out[2], 0.0f);
  EXPECT_EQ(out[3], 3.0f);
}

// Reads a file of one F16 or BF16 tensor holding `bits`.
std::vector<float> Read16(const char* dtype, const std::vector<uint16_t>& bits) {
  Bytes data;
  for (uint16_t b : bits) AppendLE(&data, b);
  const Bytes f = MakeFile(
      "{" + Entry("h", dtype, "[" + std::to_string(bits.size()) + "]", 0, data.size()) + "}", data);
  const StFile st = MustParse(f);
  std::vector<float> out(bits.size());
  EXPECT_EQ(st.tensors.size(), 1u);
  if (st.tensors.size() == 1) {
    const Status s = ReadAsF32(f.data(), f.size(), st.tensors[0], out.data());
    EXPECT_TRUE(s.ok()) << s.message();
  }
  return out;
}

uint32_t F32Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

TEST(SafetensorsTest, F16SpecificBitPatterns) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> v = Read16(
      "F16", {0x3C00, 0xC000, 0x7BFF, 0x0001, 0x03FF, 0x0400, 0x7C00, 0xFC00, 0x0000, 0x8000,
              0x3555, 0x8001, 0x7E00, 0xFE00, 0x7C01});
  EXPECT_EQ(v[0], 1.0f);
  EXPECT_EQ(v[1], -2.0f);
  EXPECT_EQ(v[2], 65504.0f);
  EXPECT_EQ(v[3], std::ldexp(1.0f, -24));         // smallest subnormal
  EXPECT_EQ(v[4], std::ldexp(1023.0f, -24));      // largest subnormal
  EXPECT_EQ(v[5], std::ldexp(1.0f, -14));         // smallest normal
  EXPECT_EQ(v[6], inf);
  EXPECT_EQ(v[7], -inf);
  EXPECT_EQ(F32Bits(v[8]), 0x00000000u);          // +0
  EXPECT_EQ(F32Bits(v[9]), 0x80000000u);          // -0
  EXPECT_EQ(v[10], 0.333251953125f);              // 0x3555 = 1365/4096
  EXPECT_EQ(v[11], -std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::isnan(v[12]));
  EXPECT_TRUE(std::isnan(v[13]));
  EXPECT_TRUE(std::signbit(v[13]));
  EXPECT_TRUE(std::isnan(v[14]));                 // signalling NaN stays NaN
  EXPECT_EQ(F32Bits(v[12]), 0x7FC00000u);         // payload kept
}

TEST(SafetensorsTest, F16AllBitPatternsMatchADoubleReference) {
  std::vector<uint16_t> all(65536);
  for (size_t i = 0; i < all.size(); ++i) all[i] = uint16_t(i);
  const std::vector<float> v = Read16("F16", all);
  for (uint32_t h = 0; h < 65536; ++h) {
    const int sign = (h >> 15) ? -1 : 1;
    const int exp = int((h >> 10) & 0x1F);
    const int mant = int(h & 0x3FF);
    if (exp == 31) {
      if (mant == 0) ASSERT_EQ(v[h], sign * std::numeric_limits<float>::infinity()) << h;
      else ASSERT_TRUE(std::isnan(v[h])) << h;
      continue;
    }
    const double ref = exp == 0 ? sign * std::ldexp(double(mant), -24)
                                : sign * std::ldexp(1.0 + mant / 1024.0, exp - 15);
    ASSERT_EQ(double(v[h]), ref) << "bits 0x" << std::hex << h;
    ASSERT_EQ(std::signbit(v[h]), sign < 0) << h;
  }
}

TEST(SafetensorsTest, BF16WidensExactly) {
  const std::vector<float> v =
      Read16("BF16", {0x3F80, 0xC000, 0x4049, 0x7F80, 0xFF80, 0x7FC0, 0x0001, 0x8000, 0x7F7F});
  EXPECT_EQ(v[0], 1.0f);
  EXPECT_EQ(v[1], -2.0f);
  EXPECT_EQ(v[2], 3.140625f);
  EXPECT_EQ(v[3], std::numeric_limits<float>::infinity());
  EXPECT_EQ(v[4], -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(v[5]));
  EXPECT_EQ(F32Bits(v[6]), 0x00010000u);  // a float32 subnormal
  EXPECT_EQ(F32Bits(v[7]), 0x80000000u);
  EXPECT_EQ(F32Bits(v[8]), 0x7F7F0000u);
}

TEST(SafetensorsTest, IntegerAndBoolTensors) {
  Bytes data;
  for (int64_t v : {int64_t(0), int64_t(-1), int64_t(INT32_MAX), int64_t(INT32_MIN), int64_t(7)})
    AppendLE(&data, v);                                                   // [0, 40)
  for (int32_t v : {-5, 100000}) AppendLE(&data, v);                      // [40, 48)
  for (int16_t v : {int16_t(-300), int16_t(300)}) AppendLE(&data, v);    // [48, 52)
  for (int8_t v : {int8_t(-128), int8_t(127)}) AppendLE(&data, v);       // [52, 54)
  for (uint8_t v : {uint8_t(255), uint8_t(0)}) AppendLE(&data, v);       // [54, 56)
  for (uint8_t v : {uint8_t(1), uint8_t(0), uint8_t(1)}) AppendLE(&data, v);  // [56, 59)
  const Bytes f = MakeFile("{" + Entry("ids", "I64", "[5]", 0, 40) + "," +
                               Entry("i32", "I32", "[2]", 40, 48) + "," +
                               Entry("i16", "I16", "[2]", 48, 52) + "," +
                               Entry("i8", "I8", "[2]", 52, 54) + "," +
                               Entry("u8", "U8", "[2]", 54, 56) + "," +
                               Entry("mask", "BOOL", "[1, 3]", 56, 59) + "}",
                           data);
  const StFile st = MustParse(f);
  ASSERT_EQ(st.tensors.size(), 6u);
  const std::vector<std::vector<int32_t>> want = {
      {0, -1, INT32_MAX, INT32_MIN, 7}, {-5, 100000}, {-300, 300}, {-128, 127}, {255, 0}, {1, 0, 1}};
  const StDType dtypes[] = {StDType::kI64, StDType::kI32, StDType::kI16,
                            StDType::kI8,  StDType::kU8,  StDType::kBool};
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(st.tensors[i].dtype, dtypes[i]);
    std::vector<int32_t> out(want[i].size());
    const Status s = ReadAsI32(f.data(), f.size(), st.tensors[i], out.data());
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(out, want[i]) << st.tensors[i].name;
  }
  // The wrong reader for the dtype.
  float fo[5];
  Status s = ReadAsF32(f.data(), f.size(), st.tensors[0], fo);
  EXPECT_EQ(s.code(), Code::kDtype);
  EXPECT_NE(s.message().find("'ids' has dtype I64"), std::string::npos) << s.message();
}

TEST(SafetensorsTest, I64OutsideInt32IsAnErrorNamingTheTensor) {
  for (int64_t bad : {int64_t(INT32_MAX) + 1, int64_t(INT32_MIN) - 1, INT64_MIN}) {
    Bytes data;
    AppendLE(&data, int64_t(3));
    AppendLE(&data, bad);
    const Bytes f = MakeFile("{" + Entry("token_ids", "I64", "[2]", 0, 16) + "}", data);
    const StFile st = MustParse(f);
    int32_t out[2];
    const Status s = ReadAsI32(f.data(), f.size(), st.tensors[0], out);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("tensor 'token_ids'"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find(std::to_string(bad)), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("index 1"), std::string::npos) << s.message();
  }
}

TEST(SafetensorsTest, BoolBytesMustBe0Or1) {
  const Bytes f = MakeFile("{" + Entry("m", "BOOL", "[3]", 0, 3) + "}", Bytes{0, 1, 2});
  const StFile st = MustParse(f);
  int32_t out[3];
  const Status s = ReadAsI32(f.data(), f.size(), st.tensors[0], out);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("tensor 'm': BOOL byte 2 at index 2"), std::string::npos) << s.message();
  // And a float tensor given to ReadAsI32.
  const Bytes g = MakeFile("{" + Entry("w", "F32", "[1]", 0, 4) + "}", Bytes(4));
  const StFile sg = MustParse(g);
  const Status d = ReadAsI32(g.data(), g.size(), sg.tensors[0], out);
  EXPECT_EQ(d.code(), Code::kDtype);
  EXPECT_NE(d.message().find("'w' has dtype F32"), std::string::npos) << d.message();
}

TEST(SafetensorsTest, ZeroSizeTensorsAndEmptyFiles) {
  Bytes data;
  AppendLE(&data, 1.0f);
  AppendLE(&data, 2.0f);
  const Bytes f = MakeFile("{" + Entry("empty0", "F32", "[0]", 0, 0) + "," +
                               Entry("a", "F32", "[1]", 0, 4) + "," +
                               Entry("mid", "I64", "[2, 0, 3]", 4, 4) + "," +
                               Entry("b", "F32", "[1]", 4, 8) + "," +
                               Entry("tail", "BF16", "[0]", 8, 8) + "}",
                           data);
  const StFile st = MustParse(f);
  ASSERT_EQ(st.tensors.size(), 5u);
  EXPECT_EQ(st.tensors[2].shape, (Shape{2, 0, 3}));
  EXPECT_EQ(ReadAsF32(f.data(), f.size(), st.tensors[0], nullptr).ok(), true);
  EXPECT_EQ(ReadAsI32(f.data(), f.size(), st.tensors[2], nullptr).ok(), true);
  // A scalar (shape []) holds one element.
  Bytes one;
  AppendLE(&one, 5.5f);
  const Bytes s = MakeFile("{" + Entry("scalar", "F32", "[]", 0, 4) + "}", one);
  const StFile ss = MustParse(s);
  float v = 0;
  ASSERT_TRUE(ReadAsF32(s.data(), s.size(), ss.tensors[0], &v).ok());
  EXPECT_EQ(v, 5.5f);
  // No tensors at all.
  EXPECT_TRUE(MustParse(MakeFile("{}", {})).tensors.empty());
  const StFile m = MustParse(MakeFile("{\"__metadata__\":{}}", {}));
  EXPECT_TRUE(m.tensors.empty());
  EXPECT_TRUE(m.metadata.empty());
}

TEST(SafetensorsTest, ReadRechecksTheTensorAgainstTheFile) {
  const Bytes f = MakeFile("{" + Entry("w", "F32", "[2]", 0, 8) + "}", Bytes(8));
  StTensor t = MustParse(f).tensors[0];
  float out[4];
  StTensor past = t;
  past.end += 4;
  past.shape = {3};
  Status s = ReadAsF32(f.data(), f.size(), past, out);
  EXPECT_NE(s.message().find("tensor 'w': byte range"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("outside the file"), std::string::npos) << s.message();
  StTensor wrong = t;
  wrong.shape = {3};
  s = ReadAsF32(f.data(), f.size(), wrong, out);
  EXPECT_NE(s.message().find("does not hold dtype F32 and shape (3,)"), std::string::npos)
      << s.message();
  s = ReadAsF32(f.data(), f.size(), t, nullptr);
  EXPECT_NE(s.message().find("out is null"), std::string::npos) << s.message();
  StTensor huge = t;
  huge.shape = {int64_t(1) << 30};
  EXPECT_FALSE(ReadAsI32(f.data(), f.size(), huge, nullptr).ok());
}

TEST(SafetensorsTest, DTypeNamesAndSizes) {
  const StDType all[] = {StDType::kF64, StDType::kF32, StDType::kF16, StDType::kBF16,
                         StDType::kI64, StDType::kI32, StDType::kI16, StDType::kI8,
                         StDType::kU8,  StDType::kBool};
  const char* names[] = {"F64", "F32", "F16", "BF16", "I64", "I32", "I16", "I8", "U8", "BOOL"};
  const size_t sizes[] = {8, 4, 2, 2, 8, 4, 2, 1, 1, 1};
  for (size_t i = 0; i < 10; ++i) {
    EXPECT_STREQ(StDTypeName(all[i]), names[i]);
    EXPECT_EQ(StDTypeSize(all[i]), sizes[i]);
  }
}

// ---- corrupt files: one rule per test --------------------------------------

TEST(SafetensorsTest, FileShorterThan8Bytes) {
  for (size_t n = 0; n < 8; ++n) {
    const Bytes f(n, 0);
    StFile out;
    const Status s = ParseSafetensors(n ? f.data() : nullptr, n, &out);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("file is " + std::to_string(n) +
                               " bytes, shorter than the 8-byte header length"),
              std::string::npos)
        << s.message();
  }
}

TEST(SafetensorsTest, HeaderLengthPastTheFile) {
  Bytes f = MakeFile("{}", {});
  f[0] = 3;  // claims 3 bytes, 2 present
  ExpectError(f, {"header length 3 runs past the end of the file (10 bytes)"});
  f = MakeFile("{}", {});
  f.resize(9);
  ExpectError(f, {"header length 2 runs past the end of the file (9 bytes)"});
}

TEST(SafetensorsTest, HeaderLengthAbsurdlyLarge) {
  Bytes f = MakeFile("{}", {});
  for (int i = 0; i < 8; ++i) f[size_t(i)] = 0xFF;
  ExpectError(f, {"header length 18446744073709551615 is over the limit of 100000000 bytes"});
  f[7] = 0;
  f[6] = 0;
  f[5] = 0;
  f[4] = 0;
  f[3] = 0x10;  // 0x10FFFFFF > 100 MB
  ExpectError(f, {"is over the limit"});
}

TEST(SafetensorsTest, HeaderNotValidUtf8) {
  ExpectError(MakeFile("{\"w\xC0\x80\":1}", {}),
              {"header is not valid JSON", "UTF-8", "at byte 3 of the header"});
  ExpectError(MakeFile("{\"__metadata__\":{\"k\":\"\xED\xA0\x80\"}}", {}),
              {"not valid JSON", "UTF-8"});
  ExpectError(MakeFile("{\"__metadata__\":{\"k\":\"\\uD800\"}}", {}),
              {"not valid JSON", "surrogate"});
}

TEST(SafetensorsTest, HeaderMalformedJson) {
  ExpectError(MakeFile("{\"w\":", {}), {"not valid JSON", "end of input"});
  ExpectError(MakeFile("{\"a\":1,}", {}), {"not valid JSON", "at byte 7 of the header"});
  ExpectError(MakeFile("{}x", {}), {"not valid JSON", "after the JSON value"});
  ExpectError(MakeFile("{} {}", {}), {"not valid JSON"});
  ExpectError(MakeFile("", {}), {"header must be a JSON object starting with '{'"});
  ExpectError(MakeFile("[]", {}), {"header must be a JSON object"});
  ExpectError(MakeFile("\"{}\"", {}), {"header must be a JSON object"});
  ExpectError(MakeFile(" {}", {}), {"starting with '{'"});
  std::string deep = "{\"a\":" + std::string(100, '[') + std::string(100, ']') + "}";
  ExpectError(MakeFile(deep, {}), {"not valid JSON", "nesting deeper than 64"});
  ExpectError(MakeFile("{\"w\":{\"shape\":[1e400]}}", {}),
              {"not valid JSON", "out of the double range"});
}

TEST(SafetensorsTest, EntryNotAnObject) {
  ExpectError(MakeFile("{\"w\":[1,2]}", {}),
              {"tensor 'w': entry must be an object with dtype, shape and data_offsets, got array"});
  ExpectError(MakeFile("{\"w\":\"F32\"}", {}), {"tensor 'w'", "got string 'F32'"});
  ExpectError(MakeFile("{\"w\":null}", {}), {"tensor 'w'", "got null"});
}

TEST(SafetensorsTest, MissingFields) {
  ExpectEntryError(R"({"shape":[1],"data_offsets":[0,4]})", 4, {"tensor 'w': missing field 'dtype'"});
  ExpectEntryError(R"({"dtype":"F32","data_offsets":[0,4]})", 4, {"tensor 'w': missing field 'shape'"});
  ExpectEntryError(R"({"dtype":"F32","shape":[1]})", 4, {"tensor 'w': missing field 'data_offsets'"});
  ExpectEntryError("{}", 0, {"tensor 'w': missing field"});
}

TEST(SafetensorsTest, ExtraOrDuplicateFields) {
  ExpectEntryError(R"({"dtype":"F32","shape":[1],"data_offsets":[0,4],"offset":0})", 4,
                   {"tensor 'w': unexpected field 'offset'", "dtype, shape, data_offsets"});
  ExpectEntryError(R"({"dtype":"F32","dtype":"F32","shape":[1],"data_offsets":[0,4]})", 4,
                   {"tensor 'w': duplicate field 'dtype'"});
}

TEST(SafetensorsTest, UnknownDtype) {
  for (const char* d : {"U16", "F8_E4M3", "f32", "FLOAT", ""}) {
    ExpectEntryError("{\"dtype\":\"" + std::string(d) + "\",\"shape\":[1],\"data_offsets\":[0,1]}",
                     1,
                     {"tensor 'w': unknown dtype '" + std::string(d) + "'",
                      "(known: F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL)"});
  }
  ExpectEntryError(R"({"dtype":4,"shape":[1],"data_offsets":[0,4]})", 4,
                   {"tensor 'w': dtype must be a string, got number 4"});
}

TEST(SafetensorsTest, ShapeNotAnArrayOfNonNegativeIntegers) {
  auto with_shape = [](const std::string& shape) {
    return R"({"dtype":"U8","shape":)" + shape + R"(,"data_offsets":[0,1]})";
  };
  ExpectEntryError(with_shape("3"), 1, {"tensor 'w': shape must be an array, got number 3"});
  ExpectEntryError(with_shape("{}"), 1, {"shape must be an array, got object"});
  ExpectEntryError(with_shape("[-1]"), 1,
                   {"tensor 'w': shape[0] must be a non-negative integer <= 2^53, got number -1"});
  ExpectEntryError(with_shape("[1, 1.5]"), 1, {"shape[1]", "got number 1.5"});
  ExpectEntryError(with_shape("[1.0]"), 1, {"shape[0]", "got number 1.0"});
  ExpectEntryError(with_shape("[1e0]"), 1, {"shape[0]", "got number 1e0"});
  ExpectEntryError(with_shape("[\"1\"]"), 1, {"shape[0]", "got string '1'"});
  ExpectEntryError(with_shape("[true]"), 1, {"shape[0]", "got boolean"});
  ExpectEntryError(with_shape("[[1]]"), 1, {"shape[0]", "got array"});
  ExpectEntryError(with_shape("[9007199254740993]"), 1, {"shape[0]", "got number 9007199254740993"});
}

TEST(SafetensorsTest, ShapeNumelOverflow) {
  ExpectEntryError(R"({"dtype":"U8","shape":[65536,65536],"data_offsets":[0,1]})", 1,
                   {"tensor 'w': shape (65536, 65536) is too large", "2^29"});
  ExpectEntryError(
      R"({"dtype":"U8","shape":[9007199254740992,9007199254740992,9007199254740992],"data_offsets":[0,1]})",
      1, {"tensor 'w': shape", "is too large"});
  // Too large even though numel is 0.
  ExpectEntryError(R"({"dtype":"U8","shape":[0,9007199254740992],"data_offsets":[0,0]})", 0,
                   {"tensor 'w': shape (0, 9007199254740992) is too large"});
  // 2^29 elements exactly is accepted as far as the shape goes.
  ExpectEntryError(R"({"dtype":"U8","shape":[536870912],"data_offsets":[0,1]})", 1,
                   {"hold 1 bytes", "need 536870912"});
}

TEST(SafetensorsTest, DataOffsetsNotTwoIntegers) {
  auto with_offsets = [](const std::string& offsets) {
    return R"({"dtype":"U8","shape":[1],"data_offsets":)" + offsets + "}";
  };
  ExpectEntryError(with_offsets("0"), 1,
                   {"tensor 'w': data_offsets must be an array [begin, end], got number 0"});
  ExpectEntryError(with_offsets("[0]"), 1, {"data_offsets must be", "got an array of 1 elements"});
  ExpectEntryError(with_offsets("[0,1,2]"), 1, {"got an array of 3 elements"});
  ExpectEntryError(with_offsets("[-1,1]"), 1,
                   {"tensor 'w': data_offsets[0] must be a non-negative integer <= 2^53, got number -1"});
  ExpectEntryError(with_offsets("[0,1.5]"), 1, {"data_offsets[1]", "got number 1.5"});
  ExpectEntryError(with_offsets("[0,\"1\"]"), 1, {"data_offsets[1]", "got string '1'"});
  ExpectEntryError(with_offsets("[0,null]"), 1, {"data_offsets[1]", "got null"});
  ExpectEntryError(with_offsets("[0,9007199254740993]"), 1, {"data_offsets[1]"});
  ExpectEntryError(with_offsets("[0,18446744073709551617]"), 1, {"data_offsets[1]"});
}

TEST(SafetensorsTest, BeginAfterEnd) {
  ExpectEntryError(R"({"dtype":"U8","shape":[0],"data_offsets":[4,0]})", 4,
                   {"tensor 'w': data_offsets [4, 0): begin is after end"});
}

TEST(SafetensorsTest, EndPastTheDataBuffer) {
  ExpectEntryError(R"({"dtype":"F32","shape":[2],"data_offsets":[0,8]})", 7,
                   {"tensor 'w': data_offsets [0, 8) run past the end of the data buffer (7 bytes)"});
  ExpectEntryError(R"({"dtype":"F32","shape":[0],"data_offsets":[9007199254740992,9007199254740992]})",
                   0, {"tensor 'w'", "run past the end of the data buffer (0 bytes)"});
}

TEST(SafetensorsTest, ByteSizeDiffersFromNumelTimesDtypeSize) {
  ExpectEntryError(R"({"dtype":"F32","shape":[2],"data_offsets":[0,12]})", 12,
                   {"tensor 'w': data_offsets [0, 12) hold 12 bytes, but dtype F32 and shape (2,) need 8"});
  ExpectEntryError(R"({"dtype":"BF16","shape":[2,3],"data_offsets":[0,6]})", 6,
                   {"dtype BF16 and shape (2, 3) need 12"});
  ExpectEntryError(R"({"dtype":"I64","shape":[0],"data_offsets":[0,8]})", 8, {"need 0"});
}

TEST(SafetensorsTest, OverlappingTensors) {
  ExpectError(MakeFile("{" + Entry("a", "F32", "[2]", 0, 8) + "," + Entry("b", "F32", "[2]", 4, 12) +
                           "}",
                       Bytes(12)),
              {"tensors 'a' at [0, 8) and 'b' at [4, 12) overlap"});
  // The same range twice.
  ExpectError(MakeFile("{" + Entry("a", "F32", "[1]", 0, 4) + "," + Entry("b", "I32", "[1]", 0, 4) +
                           "}",
                       Bytes(4)),
              {"'a' at [0, 4) and 'b' at [0, 4) overlap"});
  // A zero-size tensor inside another one (the reference implementation rejects it too).
  ExpectError(MakeFile("{" + Entry("a", "F32", "[2]", 0, 8) + "," + Entry("z", "F32", "[0]", 4, 4) +
                           "}",
                       Bytes(8)),
              {"'a' at [0, 8) and 'z' at [4, 4) overlap"});
}

TEST(SafetensorsTest, HolesInTheDataBuffer) {
  ExpectError(MakeFile("{" + Entry("a", "F32", "[1]", 0, 4) + "," + Entry("b", "F32", "[1]", 8, 12) +
                           "}",
                       Bytes(12)),
              {"bytes [4, 8) of the data buffer are not covered by any tensor",
               "hole before tensor 'b'"});
  ExpectError(MakeFile("{" + Entry("b", "F32", "[1]", 4, 8) + "}", Bytes(8)),
              {"bytes [0, 4) of the data buffer", "hole before tensor 'b'"});
}

TEST(SafetensorsTest, TrailingBytesNotCoveredByAnyTensor) {
  ExpectError(MakeFile("{" + Entry("a", "F32", "[1]", 0, 4) + "}", Bytes(6)),
              {"bytes [4, 6) at the end of the data buffer (6 bytes) are not covered by any tensor"});
  ExpectError(MakeFile("{}", Bytes(3)), {"bytes [0, 3) at the end of the data buffer"});
  ExpectError(MakeFile("{\"__metadata__\":{\"a\":\"b\"}}", Bytes(1)), {"not covered"});
}

TEST(SafetensorsTest, DuplicateTensorNames) {
  ExpectError(MakeFile("{" + Entry("w", "F32", "[1]", 0, 4) + "," + Entry("v", "F32", "[1]", 4, 8) +
                           "," + Entry("w", "F32", "[1]", 8, 12) + "}",
                       Bytes(12)),
              {"duplicate tensor name 'w'"});
  // Equal after unescaping.
  ExpectError(MakeFile("{" + Entry("w", "F32", "[1]", 0, 4) + "," +
                           Entry("\\u0077", "F32", "[1]", 4, 8) + "}",
                       Bytes(8)),
              {"duplicate tensor name 'w'"});
}

TEST(SafetensorsTest, MetadataNotAnObjectOfStrings) {
  ExpectError(MakeFile("{\"__metadata__\":[\"a\"]}", {}),
              {"__metadata__ must be an object of strings, got array"});
  ExpectError(MakeFile("{\"__metadata__\":\"x\"}", {}), {"__metadata__ must be an object", "got string"});
  ExpectError(MakeFile("{\"__metadata__\":{\"step\":3}}", {}),
              {"__metadata__ value of 'step' must be a string, got number 3"});
  ExpectError(MakeFile("{\"__metadata__\":{\"a\":{\"b\":\"c\"}}}", {}),
              {"__metadata__ value of 'a' must be a string, got object"});
  ExpectError(MakeFile("{\"__metadata__\":{\"a\":\"1\",\"a\":\"2\"}}", {}),
              {"duplicate __metadata__ key 'a'"});
  ExpectError(MakeFile("{\"__metadata__\":{},\"__metadata__\":{}}", {}), {"duplicate __metadata__"});
}

TEST(SafetensorsTest, LongNamesAreShortenedInMessages) {
  const std::string name(5000, 'n');
  const Status s = [&] {
    StFile out;
    const Bytes f = MakeFile("{\"" + name + "\":3}", {});
    return ParseSafetensors(f.data(), f.size(), &out);
  }();
  ASSERT_FALSE(s.ok());
  EXPECT_LT(s.message().size(), 400u) << s.message();
  EXPECT_NE(s.message().find("nnn...'"), std::string::npos) << s.message();
}

// ---- robustness ------------------------------------------------------------

// Every flipped / replaced / truncated variant of a valid file either parses
// (and then every tensor reads without leaving the buffer) or fails with a
// "safetensors: " message. Meant to run under ASan + UBSan.
TEST(SafetensorsTest, MutatedFilesNeverCrash) {
  Bytes data;
  for (float v : {1.0f, 2.0f, 3.0f, 4.0f}) AppendLE(&data, v);
  for (uint16_t v : {uint16_t(0x3C00), uint16_t(0x7C00)}) AppendLE(&data, v);
  for (int64_t v : {int64_t(-3), int64_t(9)}) AppendLE(&data, v);
  data.push_back(1);
  const Bytes base = MakeFile("{\"__metadata__\":{\"format\":\"pt\"}," +
                                  Entry("w", "F32", "[2,2]", 0, 16) + "," +
                                  Entry("h", "F16", "[2]", 16, 20) + "," +
                                  Entry("ids", "I64", "[2]", 20, 36) + "," +
                                  Entry("m", "BOOL", "[1]", 36, 37) + "," +
                                  Entry("e", "F32", "[0]", 37, 37) + "}",
                              data);
  ASSERT_EQ(MustParse(base).tensors.size(), 5u);

  size_t variants = 0, accepted = 0;
  auto check = [&](const Bytes& f) {
    ++variants;
    StFile st;
    // A copy of exactly the right size, so ASan sees any read past its end.
    std::vector<uint8_t> exact(f);
    const Status s = ParseSafetensors(exact.empty() ? nullptr : exact.data(), exact.size(), &st);
    if (!s.ok()) {
      ASSERT_EQ(s.message().rfind("safetensors: ", 0), 0u) << s.message();
      return;
    }
    ++accepted;
    uint64_t covered = 0;
    for (const StTensor& t : st.tensors) {
      ASSERT_LE(t.begin, t.end);
      ASSERT_LE(t.end, exact.size());
      ASSERT_GE(t.begin, st.data_start);
      covered += t.end - t.begin;
      const int64_t n = NumelChecked(t.shape);
      ASSERT_GE(n, 0);
      std::vector<float> fo(size_t(n) + 1);
      std::vector<int32_t> io(size_t(n) + 1);
      const Status a = ReadAsF32(exact.data(), exact.size(), t, fo.data());
      const Status b = ReadAsI32(exact.data(), exact.size(), t, io.data());
      ASSERT_TRUE(a.ok() || b.ok() || t.dtype == StDType::kBool || t.dtype == StDType::kI64)
          << t.name << ": " << a.message() << " / " << b.message();
    }
    ASSERT_EQ(covered, exact.size() - st.data_start);  // fully indexed
  };

  for (size_t n = 0; n <= base.size(); ++n) check(Bytes(base.begin(), base.begin() + long(n)));
  const uint8_t replacements[] = {0x00, 0x01, 0x80, 0xFF, '"', '{', '}', '[', ']', ',',
                                  ':', '0', '9', '-', '.', 'e', ' ', '\\', 0xC3};
  for (size_t i = 0; i < base.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      Bytes f = base;
      f[i] ^= uint8_t(1u << bit);
      check(f);
    }
    for (uint8_t r : replacements) {
      Bytes f = base;
      f[i] = r;
      check(f);
    }
  }
  std::mt19937 rng(2024);
  for (int k = 0; k < 3000; ++k) {
    Bytes f = base;
    const int edits = 1 + int(rng() % 4);
    for (int e = 0; e < edits; ++e) f[rng() % f.size()] = uint8_t(rng());
    if (rng() % 4 == 0) f.resize(rng() % f.size());
    check(f);
  }
  EXPECT_GT(variants, 3000u);
  EXPECT_GT(accepted, 10u);  // e.g. a changed float value or metadata letter
}

// ReadSafetensors (aw.loadSafetensors): every tensor converted to float32 or
// int32; a conversion error names the tensor.
TEST(ReadSafetensors, ConvertsEveryTensor) {
  // "h": F16 [1.0, -2.0]; "b": BOOL [1, 0, 1]
  const Bytes f = MakeFile(
      R"({"h":{"dtype":"F16","shape":[2],"data_offsets":[0,4]},"b":{"dtype":"BOOL","shape":[3],"data_offsets":[4,7]},)"
      R"("__metadata__":{"k":"v"}})",
      {0x00, 0x3C, 0x00, 0xC0, 1, 0, 1});
  StConverted st;
  ASSERT_TRUE(ReadSafetensors(f.data(), f.size(), &st).ok());
  ASSERT_EQ(st.file.tensors.size(), 2u);
  EXPECT_TRUE(IsFloat(st.file.tensors[0].dtype));
  EXPECT_FALSE(IsFloat(st.file.tensors[1].dtype));
  EXPECT_EQ(std::vector<float>(st.f32[0].data(), st.f32[0].data() + 2), (std::vector<float>{1.0f, -2.0f}));
  EXPECT_EQ(st.i32[0].size(), 0u);
  EXPECT_EQ(std::vector<int32_t>(st.i32[1].data(), st.i32[1].data() + 3), (std::vector<int32_t>{1, 0, 1}));
  EXPECT_EQ(st.file.metadata.size(), 1u);
  // A conversion error stops it (a BOOL byte other than 0 / 1), naming the tensor.
  const Bytes bad = MakeFile(R"({"b":{"dtype":"BOOL","shape":[2],"data_offsets":[0,2]}})", {1, 7});
  const Status s = ReadSafetensors(bad.data(), bad.size(), &st);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("'b'"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace aw::io
