//===- Arena.h - the memory of a runtime context ----------------*- C++ -*-===//
//
// A context's memory comes in two kinds: scratch memory, bump-allocated from
// chunks and released all at once (once per meta-iteration), and persistent
// buffers (parameters, optimizer state) that live until freed. Every block
// is 64-byte aligned. The arena accounts for the bytes handed out (sizes
// rounded up to the alignment): current, peak, and scratch peak, and
// refuses an allocation that would take the bytes held past the context's
// limit. The raw memory comes from the backend's device allocator.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_ARENA_H
#define METART_SRC_ARENA_H

#include "metart/metart.h"

#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

namespace metart {

/// The raw memory of a device, as the arena sees it.
class DeviceAllocator {
public:
  virtual ~DeviceAllocator();
  /// `bytes` (a non-zero multiple of Arena::kAlignment) of device memory
  /// aligned to Arena::kAlignment, or null when the device has no more.
  virtual void *allocate(size_t bytes) = 0;
  /// Returns memory that `allocate` gave.
  virtual void deallocate(void *data) = 0;
};

/// Scratch and persistent memory of one context, with accounting.
class Arena {
public:
  /// The alignment of every block, and the granularity of sizes.
  static constexpr size_t kAlignment = 64;

  /// An arena drawing from `allocator`; `limitBytes` caps the bytes held
  /// (0: no cap).
  Arena(DeviceAllocator &allocator, size_t limitBytes);
  ~Arena();
  Arena(const Arena &) = delete;
  Arena &operator=(const Arena &) = delete;

  /// Scratch memory valid until the next `resetScratch`. On failure returns
  /// METART_ERROR_OUT_OF_MEMORY and sets `error` to why.
  metart_status allocateScratch(size_t bytes, void **out, std::string &error);
  /// Gives back one scratch block of `bytes` (as allocated) before the
  /// reset: a later scratch allocation of the same rounded size reuses it.
  /// The bytes stay counted: they are still taken from the device.
  void freeScratch(void *data, size_t bytes);
  /// Releases every scratch block at once. The chunks stay, to be bumped
  /// through again in the same order.
  void resetScratch();

  /// A persistent buffer, valid until `freeBuffer`. On failure as
  /// `allocateScratch`.
  metart_status allocateBuffer(size_t bytes, void **out, std::string &error);
  /// Frees a buffer of this arena; false when `data` is not one.
  bool freeBuffer(void *data);

  metart_memory_stats stats() const;

private:
  /// A block of device memory that scratch allocations bump through.
  struct Chunk {
    char *data;
    size_t capacity;
    size_t used;
  };

  /// Checks that `bytes` (already rounded) more fit under the limit, and
  /// otherwise says so in `error`.
  bool fitsLimit(size_t bytes, std::string &error) const;
  /// Raises the peak to the bytes held now.
  void notePeak();
  /// Frees every chunk.
  void releaseChunks();

  DeviceAllocator &allocator;
  size_t limitBytes;
  std::vector<Chunk> chunks;
  /// The chunk that scratch allocations bump through now; those before it
  /// had no room for a later request.
  size_t currentChunk = 0;
  std::unordered_map<void *, size_t> buffers;
  /// Scratch blocks given back before the reset, by rounded size.
  std::unordered_map<size_t, std::vector<void *>> freeScratchBlocks;
  size_t scratchBytes = 0;
  size_t bufferBytes = 0;
  size_t peakBytes = 0;
  size_t scratchPeakBytes = 0;
};

} // namespace metart

#endif // METART_SRC_ARENA_H
