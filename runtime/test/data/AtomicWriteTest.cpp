//===- AtomicWriteTest.cpp - safetensors files are replaced atomically ----===//
//
// A write leaves no `.tmp` behind; a write that fails (no such directory, a
// temporary file that cannot be created, a rename that cannot happen, a
// directory without write permission) fails cleanly with METART_ERROR_IO
// and leaves an existing file as it was.
//
//===----------------------------------------------------------------------===//

#include "TestFiles.h"

#include "metart/data.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using metart::test::readFile;
using metart::test::ScratchDirectory;

namespace fs = std::filesystem;

namespace {

/// Writes one f32 tensor with `value` to `path`; returns the status and
/// the message in `error`.
metart_status writeValue(const std::string &path, float value,
                         std::string &error) {
  int64_t shape[] = {1};
  metart_named_tensor tensor = {"w", METART_F32, 1, shape, &value};
  char buffer[512] = "";
  metart_status status = metart_safetensors_write(path.c_str(), &tensor, 1,
                                                  buffer, sizeof(buffer));
  error = buffer;
  return status;
}

TEST(AtomicWrite, ReplacesTheFileAndLeavesNoTemporary) {
  ScratchDirectory dir;
  std::string path = dir.path("params.safetensors"), error;
  ASSERT_EQ(writeValue(path, 1.0f, error), METART_OK) << error;
  std::string first = readFile(path);
  ASSERT_EQ(writeValue(path, 2.0f, error), METART_OK) << error;
  EXPECT_NE(readFile(path), first);
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path("")),
                          fs::directory_iterator()),
            1);
}

TEST(AtomicWrite, MissingDirectoryFailsCleanly) {
  ScratchDirectory dir;
  std::string path = dir.path("missing/params.safetensors"), error;
  EXPECT_EQ(writeValue(path, 1.0f, error), METART_ERROR_IO);
  EXPECT_EQ(error, "metart_safetensors_write: cannot create " + path +
                       ".tmp: No such file or directory");
}

TEST(AtomicWrite, FailedCreateKeepsTheOldFile) {
  // A directory where the temporary file would go: it cannot be created,
  // even by root, and must not be removed.
  ScratchDirectory dir;
  std::string path = dir.path("params.safetensors"), error;
  ASSERT_EQ(writeValue(path, 1.0f, error), METART_OK) << error;
  std::string old = readFile(path);
  fs::create_directory(path + ".tmp");
  EXPECT_EQ(writeValue(path, 2.0f, error), METART_ERROR_IO);
  EXPECT_EQ(error, "metart_safetensors_write: cannot create " + path +
                       ".tmp: Is a directory");
  EXPECT_EQ(readFile(path), old);
  EXPECT_TRUE(fs::is_directory(path + ".tmp"));
}

TEST(AtomicWrite, FailedRenameRemovesTheTemporary) {
  // `path` is a non-empty directory: the temporary file is written, the
  // rename over `path` fails, and the temporary file goes away.
  ScratchDirectory dir;
  std::string path = dir.path("taken"), error;
  fs::create_directory(path);
  std::string inside = path + "/keep.safetensors";
  ASSERT_EQ(writeValue(inside, 1.0f, error), METART_OK) << error;
  EXPECT_EQ(writeValue(path, 2.0f, error), METART_ERROR_IO);
  EXPECT_EQ(error.rfind("metart_safetensors_write: cannot rename " + path +
                            ".tmp to " + path + ": ",
                        0),
            0u)
      << error;
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  EXPECT_TRUE(fs::exists(inside));
}

TEST(AtomicWrite, UnwritableDirectoryKeepsTheOldFile) {
  if (geteuid() == 0)
    GTEST_SKIP() << "root writes to read-only directories";
  ScratchDirectory dir;
  std::string path = dir.path("params.safetensors"), error;
  ASSERT_EQ(writeValue(path, 1.0f, error), METART_OK) << error;
  std::string old = readFile(path);
  ASSERT_EQ(chmod(dir.path("").c_str(), 0500), 0);
  EXPECT_EQ(writeValue(path, 2.0f, error), METART_ERROR_IO);
  EXPECT_EQ(error, "metart_safetensors_write: cannot create " + path +
                       ".tmp: Permission denied");
  chmod(dir.path("").c_str(), 0700);
  EXPECT_EQ(readFile(path), old);
}

} // namespace
