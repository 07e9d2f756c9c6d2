//===- Safetensors.h - the safetensors file format --------------*- C++ -*-===//
//
// What the reader and the writer of safetensors files share: the format's
// element types and how they map to metart's, and the definition of the
// opaque `metart_safetensors` (an open, validated file held in memory).
//
// The format: an 8-byte little-endian header length N, N bytes of a UTF-8
// JSON object {name: {"dtype", "shape", "data_offsets": [begin, end]}} with
// an optional "__metadata__" object of strings, then the data section that
// the tensors' offsets cover contiguously from byte 0 to its end.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_IO_SAFETENSORS_H
#define METART_SRC_IO_SAFETENSORS_H

#include "metart/data.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace metart::io {

/// The key of the optional metadata object, which names no tensor.
inline constexpr std::string_view kMetadataKey = "__metadata__";

/// An element type of the format.
struct SafetensorsDtype {
  /// The name in headers: "F32", "BF16", ...
  const char *name;
  /// The metart_dtype it is, or -1 for the types metart does not have.
  int32_t metartDtype;
};

/// The format's element type named `name`, or null when it has none.
const SafetensorsDtype *findSafetensorsDtype(std::string_view name);

/// The header name of a metart element type, or null for an unknown value.
const char *safetensorsDtypeName(int32_t dtype);

/// Where a metart type comes in the reference implementation's order of
/// types (-1 when unknown): files list tensors by decreasing order.
int safetensorsDtypeOrder(int32_t dtype);

/// The size in bytes of one element of a metart type (0 when unknown).
size_t dtypeBytes(int32_t dtype);

/// The size in bytes of a tensor of `rank` dimensions `dims` (each in
/// [0, INT64_MAX]) of `elementSize`-byte elements, or nothing when the
/// product of the element size and the non-zero dimensions (the largest
/// stride in bytes) exceeds INT64_MAX, which reader and writer refuse.
template <typename Dim>
std::optional<uint64_t> tensorBytes(size_t elementSize, const Dim *dims,
                                    size_t rank) {
  uint64_t bytes = elementSize;
  bool empty = false;
  for (size_t i = 0; i < rank; ++i) {
    auto dim = static_cast<uint64_t>(dims[i]);
    if (dim == 0)
      empty = true;
    else if (bytes > INT64_MAX / dim)
      return std::nullopt;
    else
      bytes *= dim;
  }
  return empty ? 0 : bytes;
}

/// A tensor of an open file.
struct SafetensorsTensor {
  int32_t dtype;
  std::vector<int64_t> shape;
  /// In the file's contents, or in a copy when the file placed it at an
  /// address not aligned to its element size.
  const void *data;
};

/// Opens and validates the safetensors file at `path`. On failure returns
/// the status and sets `error` to "path: problem".
metart_status openSafetensors(const char *path,
                              std::unique_ptr<metart_safetensors> &out,
                              std::string &error);

} // namespace metart::io

/// An open safetensors file: all of its bytes, and its tensors by name.
struct metart_safetensors {
  /// The file's bytes, 8-byte aligned.
  std::unique_ptr<uint64_t[]> contents;
  /// Aligned copies of the tensors that the file left misaligned.
  std::vector<std::unique_ptr<uint64_t[]>> copies;
  std::map<std::string, metart::io::SafetensorsTensor, std::less<>> tensors;
};

#endif // METART_SRC_IO_SAFETENSORS_H
