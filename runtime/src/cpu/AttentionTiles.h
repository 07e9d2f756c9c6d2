//===- AttentionTiles.h - the tiles of the fused attention kernels -*- C++ -*-//
//
// The forward and both derivatives walk the same tiles: blocks of 64
// queries against tiles of 64 keys (scores of a block and a tile are one
// GEMM and one 64 x 64 buffer), causal attention stopping at a block's
// last query.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_CPU_ATTENTIONTILES_H
#define METART_SRC_CPU_ATTENTIONTILES_H

#include "../KernelSizes.h"

#include <algorithm>
#include <cstdint>

namespace metart::cpu {

constexpr int64_t kQueryBlock = 64, kKeyTile = 64;

/// The keys query `first + i` of a block sees within the tile of `cols`
/// keys at `tile`.
inline int64_t seenInTile(const AttentionSizes &s, int64_t first, int64_t i,
                          int64_t tile, int64_t cols) {
  if (!s.causal)
    return cols;
  return std::clamp<int64_t>(first + i + 1 - tile, 0, cols);
}

/// The end of the keys a block of `rows` queries from `first` sees.
inline int64_t keyEnd(const AttentionSizes &s, int64_t first, int64_t rows) {
  return s.causal ? std::min(s.keys, first + rows) : s.keys;
}

} // namespace metart::cpu

#endif // METART_SRC_CPU_ATTENTIONTILES_H
