//===- TestFiles.h - temporary files for the data tests ---------*- C++ -*-===//
//
// A fresh directory per test, removed afterwards, and whole-file reads and
// raw writes (for files the C API would refuse to write).
//
//===----------------------------------------------------------------------===//

#ifndef METART_TEST_DATA_TESTFILES_H
#define METART_TEST_DATA_TESTFILES_H

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace metart::test {

/// A directory made for one test under GoogleTest's temporary directory,
/// removed with its contents at the end.
class ScratchDirectory {
public:
  ScratchDirectory() {
    std::string pattern = ::testing::TempDir() + "metart-data-XXXXXX";
    if (!mkdtemp(pattern.data()))
      ADD_FAILURE() << "cannot create a directory from " << pattern;
    root = pattern;
  }
  ~ScratchDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(root, ignored);
  }
  ScratchDirectory(const ScratchDirectory &) = delete;
  ScratchDirectory &operator=(const ScratchDirectory &) = delete;

  /// The path of `name` in the directory.
  std::string path(const std::string &name) const {
    return (root / name).string();
  }

private:
  std::filesystem::path root;
};

/// The bytes of the file at `path` ("" when it cannot be read).
inline std::string readFile(const std::string &path) {
  std::ifstream stream(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(stream), {});
}

/// Writes `bytes` to `path`, replacing it.
inline void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream stream(path, std::ios::binary | std::ios::trunc);
  stream.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(stream.good()) << "cannot write " << path;
}

/// A safetensors file by hand: the 8-byte little-endian `headerLength`, the
/// `header` and the `data`.
inline std::string rawSafetensors(uint64_t headerLength,
                                  const std::string &header,
                                  const std::string &data = "") {
  std::string bytes;
  for (int i = 0; i < 8; ++i)
    bytes += static_cast<char>((headerLength >> (8 * i)) & 0xFF);
  return bytes + header + data;
}

/// The same with the header's own length.
inline std::string rawSafetensors(const std::string &header,
                                  const std::string &data = "") {
  return rawSafetensors(header.size(), header, data);
}

} // namespace metart::test

#endif // METART_TEST_DATA_TESTFILES_H
