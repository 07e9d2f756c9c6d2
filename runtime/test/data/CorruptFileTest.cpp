//===- CorruptFileTest.cpp - what opening a corrupt file reports ----------===//
//
// Every way a safetensors file can be wrong gets METART_ERROR_IO (or
// METART_ERROR_UNSUPPORTED for a dtype metart lacks) and a message naming
// the file and the problem; truncating or flipping the bytes of a valid
// file anywhere never crashes the reader.
//
//===----------------------------------------------------------------------===//

#include "TestFiles.h"

#include "metart/data.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

using metart::test::rawSafetensors;
using metart::test::readFile;
using metart::test::ScratchDirectory;
using metart::test::writeFile;

namespace {

class CorruptFile : public ::testing::Test {
protected:
  /// Writes `bytes` to the test's file and expects opening it to fail with
  /// `status` and "metart_safetensors_open: <path>: `problem`".
  void expectError(const std::string &bytes, const std::string &problem,
                   metart_status status = METART_ERROR_IO) {
    writeFile(path, bytes);
    expectOpenError(problem, status);
  }

  void expectOpenError(const std::string &problem,
                       metart_status status = METART_ERROR_IO) {
    char error[1024] = "";
    metart_safetensors *file = reinterpret_cast<metart_safetensors *>(1);
    EXPECT_EQ(
        metart_safetensors_open(path.c_str(), &file, error, sizeof(error)),
        status);
    EXPECT_EQ(file, nullptr);
    EXPECT_EQ(std::string(error),
              "metart_safetensors_open: " + path + ": " + problem);
  }

  /// A header of one tensor "t" with `info` as its entry.
  static std::string oneTensor(const std::string &info) {
    return "{\"t\":" + info + "}";
  }

  ScratchDirectory dir;
  std::string path = dir.path("corrupt.safetensors");
};

TEST_F(CorruptFile, MissingFileAndDirectory) {
  expectOpenError("cannot open the file: No such file or directory");
  path = dir.path("");
  expectOpenError("not a regular file");
}

TEST_F(CorruptFile, TooShortForTheHeaderLength) {
  expectError("", "the file has 0 bytes, fewer than the 8 of the header "
                  "length");
  expectError(std::string("\x05\0\0\0\0", 5),
              "the file has 5 bytes, fewer than the 8 of "
              "the header length");
}

TEST_F(CorruptFile, HeaderLengthBeyondTheFile) {
  expectError(rawSafetensors(100, "{}"), "the header length 100 runs past "
                                         "the end of the file (2 bytes "
                                         "follow it)");
  expectError(rawSafetensors(UINT64_MAX, "{}"),
              "the header length 18446744073709551615 runs past the end of "
              "the file (2 bytes follow it)");
}

TEST_F(CorruptFile, HeaderIsNotJson) {
  // nlohmann-json's messages, with the byte where reading stopped.
  const std::string prefix = "the header is not valid JSON: ";
  expectError(rawSafetensors("garbage!"),
              prefix + "syntax error while parsing value - invalid literal; "
                       "last read: 'g' at byte 0");
  expectError(rawSafetensors(""),
              prefix + "syntax error while parsing value - unexpected end of "
                       "input; expected '[', '{', or a literal at byte 0");
  expectError(rawSafetensors("{\"t\":{}"),
              prefix + "syntax error while parsing object - unexpected end "
                       "of input; expected '}' at byte 7");
  expectError(rawSafetensors("{} x"),
              prefix + "syntax error while parsing value - invalid literal; "
                       "last read: '{} x'; expected end of input at byte 3");
  expectError(rawSafetensors("{\"a\xff\":1}"),
              prefix + "the text is not valid UTF-8");
  expectError(rawSafetensors("{\"\\ud800\":1}"),
              prefix + "syntax error while parsing object key - invalid "
                       "string: surrogate U+D800..U+DBFF must be followed by "
                       "U+DC00..U+DFFF; last read: '\"\\ud800\"'; expected "
                       "string literal at byte 8");
  expectError(rawSafetensors(std::string(100000, '[')),
              prefix + "arrays and objects nested deeper than 64");
  expectError(rawSafetensors("[]"),
              "the header is an array, not a JSON object");
  expectError(rawSafetensors(std::string("{\0}", 3)),
              prefix + "syntax error while parsing object key - unexpected "
                       "end of input; expected string literal at byte 1");
}

TEST_F(CorruptFile, MalformedTensorEntries) {
  expectError(rawSafetensors(oneTensor("3")),
              "tensor \"t\": the entry is a number, not an object");
  expectError(rawSafetensors(oneTensor("{\"shape\":[],\"data_offsets\":[0,4]}"),
                             "abcd"),
              "tensor \"t\": missing \"dtype\"");
  expectError(
      rawSafetensors(oneTensor("{\"dtype\":\"F32\",\"data_offsets\":[0,4]}"),
                     "abcd"),
      "tensor \"t\": missing \"shape\"");
  expectError(
      rawSafetensors(oneTensor("{\"dtype\":\"F32\",\"shape\":[]}"), "abcd"),
      "tensor \"t\": missing \"data_offsets\"");
  expectError(rawSafetensors(oneTensor("{\"dtype\":32,\"shape\":[],"
                                       "\"data_offsets\":[0,4]}"),
                             "abcd"),
              "tensor \"t\": \"dtype\" is a number, not a string");
  for (const char *shape : {"[-1]", "[1.5]", "[\"1\"]", "4", "[1e2]",
                            "[18446744073709551616]", "[9223372036854775808]"})
    expectError(rawSafetensors(oneTensor("{\"dtype\":\"F32\",\"shape\":" +
                                         std::string(shape) +
                                         ",\"data_offsets\":[0,4]}"),
                               "abcd"),
                "tensor \"t\": \"shape\" is not an array of non-negative "
                "64-bit integers");
  for (const char *offsets : {"[0]", "[0,4,4]", "[0,-4]", "{}"})
    expectError(rawSafetensors(oneTensor("{\"dtype\":\"F32\",\"shape\":[],"
                                         "\"data_offsets\":" +
                                         std::string(offsets) + "}"),
                               "abcd"),
                "tensor \"t\": \"data_offsets\" is not an array of two "
                "non-negative integers");
}

TEST_F(CorruptFile, UnknownAndUnsupportedDtypes) {
  expectError(rawSafetensors(oneTensor("{\"dtype\":\"Q7\",\"shape\":[],"
                                       "\"data_offsets\":[0,4]}"),
                             "abcd"),
              "tensor \"t\": unknown dtype \"Q7\"");
  expectError(rawSafetensors(oneTensor("{\"dtype\":\"BF16\",\"shape\":[2],"
                                       "\"data_offsets\":[0,4]}"),
                             "abcd"),
              "tensor \"t\": dtype BF16 is not supported (only F32, F64, I32 "
              "and I64 are)",
              METART_ERROR_UNSUPPORTED);
}

TEST_F(CorruptFile, OffsetsAndShapesDisagree) {
  auto f32 = [](const std::string &shape, const std::string &offsets) {
    return oneTensor("{\"dtype\":\"F32\",\"shape\":" + shape +
                     ",\"data_offsets\":" + offsets + "}");
  };
  expectError(rawSafetensors(f32("[2]", "[8,0]"), "abcdefgh"),
              "tensor \"t\": data_offsets [8, 0] end before they begin");
  expectError(rawSafetensors(f32("[2]", "[0,12]"), "abcdefgh"),
              "tensor \"t\": data_offsets [0, 12] run past the end of the "
              "data section (8 bytes)");
  expectError(rawSafetensors(f32("[3]", "[0,8]"), "abcdefghijklmnop"),
              "tensor \"t\": shape [3] of F32 needs 12 bytes but "
              "data_offsets [0, 8] hold 8");
  expectError(rawSafetensors(f32("[0,2305843009213693952]", "[0,0]")),
              "tensor \"t\": shape [0, 2305843009213693952] of F32 overflows "
              "64-bit sizes");
}

TEST_F(CorruptFile, TensorsOverlapOrLeaveGaps) {
  std::string a = "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":";
  std::string b = "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":";
  expectError(rawSafetensors("{" + a + "[0,8]}," + b + "[4,8]}}", "12345678"),
              "tensors \"a\" [0, 8) and \"b\" [4, 8) overlap");
  expectError(
      rawSafetensors("{" + a + "[4,12]}," + b + "[0,4]}}", "123456789abcdef"),
      "no tensor covers bytes [12, 15) of the data section");
  expectError(
      rawSafetensors("{" + a + "[8,16]}," + b + "[0,4]}}", "123456789abcdefg"),
      "no tensor covers bytes [4, 8) of the data section");
  expectError(rawSafetensors("{}", "x"),
              "no tensor covers bytes [0, 1) of the data section");
}

TEST_F(CorruptFile, DuplicatesAndMetadata) {
  std::string t = "\"t\":{\"dtype\":\"F32\",\"shape\":[],"
                  "\"data_offsets\":[0,4]}";
  expectError(rawSafetensors("{" + t + "," + t + "}", "abcd"),
              "tensor \"t\" appears twice in the header");
  expectError(rawSafetensors("{\"__metadata__\":[]}"),
              "\"__metadata__\" is an array, not an object of strings");
  expectError(rawSafetensors("{\"__metadata__\":{\"k\":1}}"),
              "\"__metadata__\" entry \"k\" is a number, not a string");
  expectError(rawSafetensors("{\"__metadata__\":{},\"__metadata__\":{}}"),
              "\"__metadata__\" appears twice in the header");
}

TEST_F(CorruptFile, TruncatedOrFlippedFilesNeverCrash) {
  float values[6] = {1, 2, 3, 4, 5, 6};
  int64_t ids[2] = {1, 2};
  int64_t shape[] = {2, 3}, idShape[] = {2};
  metart_named_tensor tensors[] = {
      {"fc1.weight", METART_F32, 2, shape, values},
      {"ids", METART_I64, 1, idShape, ids},
  };
  ASSERT_EQ(metart_safetensors_write(path.c_str(), tensors, 2, nullptr, 0),
            METART_OK);
  std::string valid = readFile(path);
  for (size_t size = 0; size < valid.size(); ++size) {
    writeFile(path, valid.substr(0, size));
    metart_safetensors *file = nullptr;
    char error[512];
    EXPECT_EQ(
        metart_safetensors_open(path.c_str(), &file, error, sizeof(error)),
        METART_ERROR_IO)
        << "truncated to " << size << " bytes";
    EXPECT_EQ(file, nullptr);
  }
  for (size_t at = 0; at < valid.size(); ++at) {
    for (int flip : {0x01, 0x20, 0x80, 0xFF}) {
      std::string bytes = valid;
      bytes[at] = static_cast<char>(bytes[at] ^ flip);
      writeFile(path, bytes);
      metart_safetensors *file = nullptr;
      char error[512] = "";
      metart_status status =
          metart_safetensors_open(path.c_str(), &file, error, sizeof(error));
      EXPECT_EQ(status == METART_OK, file != nullptr);
      EXPECT_EQ(status == METART_OK, error[0] == '\0') << error;
      metart_safetensors_close(file);
    }
  }
}

} // namespace
