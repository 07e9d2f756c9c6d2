//===- ErrorBuffer.h - messages for callers' error buffers ------*- C++ -*-===//
//
// Functions of the C API that have no context to hold a message take an
// `error` buffer and its size; this copies a message into one.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_IO_ERRORBUFFER_H
#define METART_SRC_IO_ERRORBUFFER_H

#include <cstddef>
#include <cstring>
#include <string>

namespace metart::io {

/// Copies `message` into `error` (of `errorSize` bytes), truncated and
/// always NUL-terminated; does nothing when `error` is null or empty.
inline void writeError(const std::string &message, char *error,
                       size_t errorSize) {
  if (!error || errorSize == 0)
    return;
  size_t length = message.size() < errorSize ? message.size() : errorSize - 1;
  std::memcpy(error, message.data(), length);
  error[length] = '\0';
}

} // namespace metart::io

#endif // METART_SRC_IO_ERRORBUFFER_H
