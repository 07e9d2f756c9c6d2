//===- AtomicFile.cpp - writing a file all at once ------------------------===//
//
// POSIX: write(2) in a loop (it may write less than asked, or be
// interrupted), fsync(2) before the rename so the new name never points at
// unwritten data, and an fsync of the directory after it so the rename
// itself survives a crash.
//
//===----------------------------------------------------------------------===//

#include "io/AtomicFile.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

using namespace metart::io;

/// Writes all `size` bytes at `data` to `fd`; false (with errno) on failure.
static bool writeAll(int fd, const void *data, size_t size) {
  const char *next = static_cast<const char *>(data);
  while (size > 0) {
    ssize_t written = ::write(fd, next, size);
    if (written < 0 && errno == EINTR)
      continue;
    if (written < 0)
      return false;
    if (written == 0) {
      errno = EIO;
      return false;
    }
    next += written;
    size -= static_cast<size_t>(written);
  }
  return true;
}

/// The directory that holds `path` ("." for a bare name).
static std::string directoryOf(const std::string &path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

/// Flushes the rename in `directory` to the disk. Best effort: some file
/// systems cannot sync a directory, and the new file is complete either way.
static void syncDirectory(const std::string &directory) {
  int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return;
  ::fsync(fd);
  ::close(fd);
}

bool metart::io::writeFileAtomically(const std::string &path,
                                     const std::vector<ByteRange> &pieces,
                                     std::string &error) {
  std::string temporary = path + ".tmp";
  int fd =
      ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) {
    error = "cannot create " + temporary + ": " + std::strerror(errno);
    return false;
  }
  // Closes `fd` unless it is closed, removes the temporary file and reports
  // that `what` failed with `code`.
  auto fail = [&](const char *what, int code, bool closed = false) {
    if (!closed)
      ::close(fd);
    ::unlink(temporary.c_str());
    error = std::string("cannot ") + what + " " + temporary + ": " +
            std::strerror(code);
    return false;
  };
  for (const ByteRange &piece : pieces)
    if (!writeAll(fd, piece.data, piece.size))
      return fail("write", errno);
  if (::fsync(fd) != 0)
    return fail("sync", errno);
  if (::close(fd) != 0)
    return fail("close", errno, /*closed=*/true);
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    error = "cannot rename " + temporary + " to " + path + ": " +
            std::strerror(errno);
    ::unlink(temporary.c_str());
    return false;
  }
  syncDirectory(directoryOf(path));
  return true;
}
