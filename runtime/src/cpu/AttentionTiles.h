//===- AttentionTiles.h - the tiles of the fused attention kernels -*- C++ -*-//
//
// The forward and both derivatives walk the same tiles: blocks of 64
// queries against tiles of 64 keys (scores of a block and a tile are one
// GEMM and one 64 x 64 buffer), causal attention stopping at the keys a
// block's last query sees.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_CPU_ATTENTIONTILES_H
#define METART_SRC_CPU_ATTENTIONTILES_H

#include "../KernelSizes.h"

#include <algorithm>
#include <cstdint>

namespace metart::cpu {

constexpr int64_t kQueryBlock = 64, kKeyTile = 64;

/// How many keys of the block query `i` sees: under the causal mask those
/// at or before its position, a prefix since key positions increase.
inline int64_t visibleKeys(const AttentionSizes &s, int64_t i) {
  if (!s.causal)
    return s.keys;
  int64_t position = s.queryPositions.at(i);
  const PositionRuns &k = s.keyPositions;
  int64_t firstRun = std::min(k.split, s.keys);
  int64_t seen = std::clamp<int64_t>(position - k.start[0] + 1, 0, firstRun);
  if (firstRun < s.keys)
    seen +=
        std::clamp<int64_t>(position - k.start[1] + 1, 0, s.keys - firstRun);
  return seen;
}

/// The keys query `first + i` of a block sees within the tile of `cols`
/// keys at `tile`.
inline int64_t seenInTile(const AttentionSizes &s, int64_t first, int64_t i,
                          int64_t tile, int64_t cols) {
  if (!s.causal)
    return cols;
  return std::clamp<int64_t>(visibleKeys(s, first + i) - tile, 0, cols);
}

/// The end of the keys a block of `rows` queries from `first` sees (its
/// last query sees the most).
inline int64_t keyEnd(const AttentionSizes &s, int64_t first, int64_t rows) {
  return rows > 0 ? visibleKeys(s, first + rows - 1) : 0;
}

} // namespace metart::cpu

#endif // METART_SRC_CPU_ATTENTIONTILES_H
