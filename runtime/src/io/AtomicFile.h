//===- AtomicFile.h - writing a file all at once ----------------*- C++ -*-===//
//
// Replaces a file so that readers and crashes see the old contents or the
// new ones, never a mix: the new contents go to `path`.tmp, are flushed to
// the disk and renamed over `path`.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_IO_ATOMICFILE_H
#define METART_SRC_IO_ATOMICFILE_H

#include <cstddef>
#include <string>
#include <vector>

namespace metart::io {

/// A piece of a file's contents.
struct ByteRange {
  const void *data;
  size_t size;
};

/// Writes the concatenation of `pieces` to `path` atomically (through
/// `path`.tmp, fsync and rename). On failure, removes the temporary file,
/// leaves `path` as it was, sets `error` (what failed and why) and returns
/// false.
bool writeFileAtomically(const std::string &path,
                         const std::vector<ByteRange> &pieces,
                         std::string &error);

} // namespace metart::io

#endif // METART_SRC_IO_ATOMICFILE_H
