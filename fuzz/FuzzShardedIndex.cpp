//===- FuzzShardedIndex.cpp - libFuzzer target for checkpoint indexes -----===//
//
// Every input is parsed as the index.json of a sharded checkpoint
// (io::parseShardedIndex, which the resume path runs before opening any
// file). Besides the sanitizers' checks, the target asserts of an accepted
// index what the loader relies on: files with plain names, shapes whose
// element count is the product of the dimensions, pieces inside their
// tensor and naming a listed file, a finite positive loss scale; and a
// refused one has a message.
//
//===----------------------------------------------------------------------===//

#include "io/ShardedIndex.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

[[noreturn]] void fail(const char *what) {
  std::fprintf(stderr, "property violated: %s\n", what);
  std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string error;
  auto index = metart::io::parseShardedIndex(
      std::string_view(reinterpret_cast<const char *>(data), size), error);
  if (!index) {
    if (error.empty())
      fail("a refused index without a message");
    return 0;
  }
  if (index->files.empty() || index->worldSize < 1 || index->iteration < 0)
    fail("an accepted index without files, ranks or a valid iteration");
  for (const auto &file : index->files)
    if (file.name.empty() || file.name.find('/') != std::string::npos ||
        file.name == "." || file.name == "..")
      fail("a file name outside the checkpoint's directory");
  for (const auto &[name, tensor] : index->tensors) {
    __int128 elements = 1;
    for (int64_t dim : tensor.shape) {
      if (dim < 0)
        fail("a negative dimension");
      elements *= dim;
      if (elements > INT64_MAX)
        elements = INT64_MAX + static_cast<__int128>(1);
    }
    if (elements != tensor.elements)
      fail("an element count that is not the shape's product");
    for (const auto &piece : tensor.pieces) {
      if (piece.file < 0 ||
          piece.file >= static_cast<int64_t>(index->files.size()))
        fail("a piece in a file the index does not list");
      if (piece.offset < 0 || piece.count < 0 ||
          piece.offset > tensor.elements ||
          piece.count > tensor.elements - piece.offset)
        fail("a piece outside its tensor");
    }
  }
  if (index->lossScale &&
      !(index->lossScale->first > 0 && std::isfinite(index->lossScale->first) &&
        index->lossScale->second >= 0))
    fail("an invalid loss scale accepted");
  return 0;
}
