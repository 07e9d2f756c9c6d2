//===- SafetensorsTest.cpp - writing and reading safetensors files --------===//
//
// Round trips of every dtype (0-d, empty and dotted names included), the
// exact bytes of the layout the reference implementation writes, reading
// files laid out differently (misaligned, unsorted, with metadata), and the
// argument errors of the writer and of lookups.
//
//===----------------------------------------------------------------------===//

#include "TestFiles.h"

#include "metart/data.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

using metart::test::rawSafetensors;
using metart::test::readFile;
using metart::test::ScratchDirectory;
using metart::test::writeFile;

namespace {

/// Opens `path`, expecting success.
metart_safetensors *open(const std::string &path) {
  char error[512] = "unset";
  metart_safetensors *file = nullptr;
  EXPECT_EQ(metart_safetensors_open(path.c_str(), &file, error, sizeof(error)),
            METART_OK)
      << error;
  EXPECT_STREQ(error, "");
  return file;
}

/// Expects tensor `name` of `file` to have `dtype`, `shape` and the bytes of
/// `values`.
template <typename T>
void expectTensor(const metart_safetensors *file, const char *name,
                  int32_t dtype, const std::vector<int64_t> &shape,
                  const std::vector<T> &values) {
  SCOPED_TRACE(name);
  int32_t foundDtype = -1, rank = -1;
  const int64_t *foundShape = nullptr;
  const void *data = nullptr;
  ASSERT_EQ(metart_safetensors_find(file, name, &foundDtype, &rank, &foundShape,
                                    &data),
            METART_OK);
  EXPECT_EQ(foundDtype, dtype);
  ASSERT_EQ(rank, static_cast<int32_t>(shape.size()));
  EXPECT_EQ(std::vector<int64_t>(foundShape, foundShape + rank), shape);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(data) % sizeof(T), 0u)
      << "tensor data is aligned to its element size";
  if (!values.empty()) {
    EXPECT_EQ(std::memcmp(data, values.data(), values.size() * sizeof(T)), 0);
  }
}

TEST(Safetensors, RoundTripsEveryDtype) {
  ScratchDirectory dir;
  std::string path = dir.path("all.safetensors");
  std::vector<float> f32 = {1.5f, -2.25f, 3e-8f, 1e30f, 0.0f, -0.0f};
  std::vector<double> f64 = {3.141592653589793, -1e-300};
  std::vector<int32_t> i32 = {INT32_MIN, -1, 0, INT32_MAX};
  std::vector<int64_t> i64 = {INT64_MIN, INT64_MAX, 42};
  double scalar = 2.718281828459045;
  int64_t f32Shape[] = {2, 3}, f64Shape[] = {2}, i32Shape[] = {2, 1, 2},
          i64Shape[] = {3}, emptyShape[] = {4, 0};
  metart_named_tensor tensors[] = {
      {"fc1.weight", METART_F32, 2, f32Shape, f32.data()},
      {"fc1.bias", METART_F64, 1, f64Shape, f64.data()},
      {"layers.0.ids", METART_I32, 3, i32Shape, i32.data()},
      {"num_batches_tracked", METART_I64, 1, i64Shape, i64.data()},
      {"scale", METART_F64, 0, nullptr, &scalar},
      {"empty", METART_F32, 2, emptyShape, nullptr},
  };
  char error[256] = "unset";
  ASSERT_EQ(
      metart_safetensors_write(path.c_str(), tensors, 6, error, sizeof(error)),
      METART_OK)
      << error;
  EXPECT_STREQ(error, "");

  metart_safetensors *file = open(path);
  ASSERT_NE(file, nullptr);
  expectTensor(file, "fc1.weight", METART_F32, {2, 3}, f32);
  expectTensor(file, "fc1.bias", METART_F64, {2}, f64);
  expectTensor(file, "layers.0.ids", METART_I32, {2, 1, 2}, i32);
  expectTensor(file, "num_batches_tracked", METART_I64, {3}, i64);
  expectTensor(file, "scale", METART_F64, {}, std::vector<double>{scalar});
  expectTensor(file, "empty", METART_F32, {4, 0}, std::vector<float>{});
  metart_safetensors_close(file);
}

TEST(Safetensors, WritesTheReferenceLayout) {
  // Tensors sorted by decreasing element size, then by name; the header
  // padded with spaces to a multiple of 8; the data in the same order.
  ScratchDirectory dir;
  std::string path = dir.path("layout.safetensors");
  float a[] = {1.0f};
  int64_t b[] = {7};
  int64_t shape[] = {1};
  metart_named_tensor tensors[] = {{"a", METART_F32, 1, shape, a},
                                   {"b", METART_I64, 1, shape, b}};
  ASSERT_EQ(metart_safetensors_write(path.c_str(), tensors, 2, nullptr, 0),
            METART_OK);
  std::string header =
      "{\"b\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[0,8]},"
      "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[8,12]}}";
  header.resize((header.size() + 7) / 8 * 8, ' ');
  std::string data(reinterpret_cast<const char *>(b), 8);
  data.append(reinterpret_cast<const char *>(a), 4);
  EXPECT_EQ(readFile(path), rawSafetensors(header, data));
}

TEST(Safetensors, WritesNoTensors) {
  ScratchDirectory dir;
  std::string path = dir.path("none.safetensors");
  ASSERT_EQ(metart_safetensors_write(path.c_str(), nullptr, 0, nullptr, 0),
            METART_OK);
  EXPECT_EQ(readFile(path), rawSafetensors("{}      "));
  metart_safetensors *file = open(path);
  EXPECT_EQ(
      metart_safetensors_find(file, "x", nullptr, nullptr, nullptr, nullptr),
      METART_ERROR_INVALID_ARGUMENT);
  metart_safetensors_close(file);
}

TEST(Safetensors, EscapesNames) {
  ScratchDirectory dir;
  std::string path = dir.path("names.safetensors");
  const char *names[] = {"quote\"d", "back\\slash", "new\nline",       "tab\t",
                         "\x01",     "caf\xc3\xa9", "\xf0\x9f\x99\x82"};
  float value = 1.0f;
  std::vector<metart_named_tensor> tensors;
  for (const char *name : names)
    tensors.push_back({name, METART_F32, 0, nullptr, &value});
  ASSERT_EQ(metart_safetensors_write(path.c_str(), tensors.data(),
                                     static_cast<int64_t>(tensors.size()),
                                     nullptr, 0),
            METART_OK);
  EXPECT_NE(readFile(path).find("\\u0001"), std::string::npos);
  metart_safetensors *file = open(path);
  for (const char *name : names)
    expectTensor(file, name, METART_F32, {}, std::vector<float>{value});
  metart_safetensors_close(file);
}

TEST(Safetensors, ReadsOtherLayouts) {
  // Unsorted keys, metadata first, offsets out of key order, a header whose
  // length leaves the data misaligned, escapes and whitespace in the JSON.
  ScratchDirectory dir;
  std::string path = dir.path("other.safetensors");
  double d[] = {0.5, -4.0};
  int32_t i[] = {3, -3, 9};
  std::string data(reinterpret_cast<const char *>(i), sizeof(i));
  data.append(reinterpret_cast<const char *>(d), sizeof(d));
  std::string header = "{\"__metadata__\": {\"format\": \"pt\"},\n"
                       " \"z\\u002ed\": {\"shape\": [2], \"dtype\": \"F64\", "
                       "\"data_offsets\": [12, 28], \"extra\": null},\n"
                       " \"a\": {\"dtype\": \"I32\", \"shape\": [3, 1], "
                       "\"data_offsets\": [0, 12]}}";
  while (header.size() % 8 != 1)
    header += ' '; // both tensors misaligned in the file
  writeFile(path, rawSafetensors(header, data));
  metart_safetensors *file = open(path);
  ASSERT_NE(file, nullptr);
  expectTensor(file, "z.d", METART_F64, {2}, std::vector<double>(d, d + 2));
  expectTensor(file, "a", METART_I32, {3, 1}, std::vector<int32_t>(i, i + 3));
  EXPECT_EQ(metart_safetensors_find(file, "__metadata__", nullptr, nullptr,
                                    nullptr, nullptr),
            METART_ERROR_INVALID_ARGUMENT);
  metart_safetensors_close(file);
}

TEST(Safetensors, WriterChecksItsArguments) {
  ScratchDirectory dir;
  std::string path = dir.path("bad.safetensors");
  float values[2] = {};
  int64_t shape[] = {2}, negative[] = {-2}, huge[] = {0, INT64_MAX / 2};
  auto expectError = [&](std::vector<metart_named_tensor> tensors,
                         const std::string &message) {
    char error[256] = "unset";
    EXPECT_EQ(metart_safetensors_write(path.c_str(), tensors.data(),
                                       static_cast<int64_t>(tensors.size()),
                                       error, sizeof(error)),
              METART_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(std::string(error), "metart_safetensors_write: " + message);
  };
  metart_named_tensor ok = {"w", METART_F32, 1, shape, values};
  auto with = [&](auto change) {
    metart_named_tensor t = ok;
    change(t);
    return std::vector<metart_named_tensor>{ok, t};
  };
  expectError(with([](auto &t) { t.name = nullptr; }),
              "tensor 1 has a null name");
  expectError(with([](auto &t) { t.name = ""; }),
              "tensor 1 (\"\") has an empty name");
  expectError(with([](auto &) {}),
              "tensor 1 (\"w\") has the name of an earlier tensor");
  expectError(
      with([](auto &t) { t.name = "__metadata__"; }),
      "tensor 1 (\"__metadata__\"): the name is reserved for the file's "
      "metadata");
  expectError(with([](auto &t) { t.name = "bad\xff"; }),
              "tensor 1 (\"bad\xff\"): the name is not valid UTF-8");
  expectError(with([](auto &t) {
                t.name = "v";
                t.dtype = 9;
              }),
              "tensor 1 (\"v\") has unknown dtype 9");
  expectError(with([](auto &t) {
                t.name = "v";
                t.rank = -1;
              }),
              "tensor 1 (\"v\") has rank -1");
  expectError(with([](auto &t) {
                t.name = "v";
                t.shape = nullptr;
              }),
              "tensor 1 (\"v\") has rank 1 and a null shape");
  expectError(with([&](auto &t) {
                t.name = "v";
                t.shape = negative;
              }),
              "tensor 1 (\"v\") has negative dimension -2");
  expectError(with([&](auto &t) {
                t.name = "v";
                t.rank = 2;
                t.shape = huge;
              }),
              "tensor 1 (\"v\") overflows 64-bit sizes");
  expectError(with([](auto &t) {
                t.name = "v";
                t.data = nullptr;
              }),
              "tensor 1 (\"v\") has null data");

  char error[256];
  EXPECT_EQ(
      metart_safetensors_write(path.c_str(), nullptr, 1, error, sizeof(error)),
      METART_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(error, "metart_safetensors_write: tensors is null");
  EXPECT_EQ(
      metart_safetensors_write(path.c_str(), &ok, -1, error, sizeof(error)),
      METART_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(error, "metart_safetensors_write: count is negative");
  EXPECT_EQ(metart_safetensors_write(nullptr, &ok, 1, error, sizeof(error)),
            METART_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(error, "metart_safetensors_write: path is null");
  EXPECT_TRUE(readFile(path).empty()) << "no file after failed writes";
}

TEST(Safetensors, ErrorsAreTruncatedToTheBuffer) {
  char error[8];
  std::memset(error, 'x', sizeof(error));
  EXPECT_EQ(metart_safetensors_write(nullptr, nullptr, 0, error, 5),
            METART_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(error, "meta");
  EXPECT_EQ(error[5], 'x') << "nothing written past error_size";
}

TEST(Safetensors, OpenAndFindCheckTheirArguments) {
  char error[128];
  metart_safetensors *file = reinterpret_cast<metart_safetensors *>(1);
  EXPECT_EQ(metart_safetensors_open(nullptr, &file, error, sizeof(error)),
            METART_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(error, "metart_safetensors_open: path is null");
  EXPECT_EQ(file, nullptr);
  EXPECT_EQ(metart_safetensors_open("x", nullptr, error, sizeof(error)),
            METART_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(error, "metart_safetensors_open: out_file is null");
  EXPECT_EQ(
      metart_safetensors_find(nullptr, "x", nullptr, nullptr, nullptr, nullptr),
      METART_ERROR_INVALID_ARGUMENT);
  metart_safetensors_close(nullptr);
}

} // namespace
