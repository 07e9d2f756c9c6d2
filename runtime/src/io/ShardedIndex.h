//===- ShardedIndex.h - the index of a sharded checkpoint -------*- C++ -*-===//
//
// The index.json that commits a sharded checkpoint (train/ShardedCheckpoint
// .cpp): its files with their sizes and CRC-32s, each tensor's type, shape
// and pieces (element ranges of the flattened tensor, each in one file),
// the iteration, and the loss scale. Parsing checks everything a loader
// relies on before any file is opened: types and names, shapes whose
// element counts fit 64 bits, pieces inside their tensor, files that
// exist in the list and whose names stay in the checkpoint's directory.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_IO_SHARDEDINDEX_H
#define METART_SRC_IO_SHARDEDINDEX_H

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace metart::io {

struct ShardedIndex {
  struct File {
    std::string name;
    uint64_t bytes = 0;
    uint32_t crc32 = 0;
  };
  /// Elements [offset, offset + count) of the flattened tensor, stored in
  /// file `file` as a 1-d tensor named `<tensor>@<offset>`.
  struct Piece {
    int64_t file = 0, offset = 0, count = 0;
  };
  struct Tensor {
    std::string dtype;
    std::vector<int64_t> shape;
    int64_t elements = 1;
    std::vector<Piece> pieces;
  };

  int64_t iteration = 0;
  int64_t worldSize = 1;
  std::vector<File> files;
  std::map<std::string, Tensor> tensors;
  /// The loss scale and the healthy meta-iterations in a row, when saved.
  std::optional<std::pair<double, int64_t>> lossScale;
};

/// Parses and checks an index; on failure, nothing, and `error` says what
/// is wrong (the caller names the file).
std::optional<ShardedIndex> parseShardedIndex(std::string_view text,
                                              std::string &error);

} // namespace metart::io

#endif // METART_SRC_IO_SHARDEDINDEX_H
