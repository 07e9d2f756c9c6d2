//===- Allocator.h - the caching device allocator ---------------*- C++ -*-===//
//
// cudaMalloc and cudaFree are slow and cudaFree synchronises the device, so
// freed blocks are cached and handed out again (best fit, at most twice the
// request) instead of being returned to the driver. This is safe because a
// context queues all its work on one stream: a block handed out again is
// only touched by work queued after the work that used it before.
//
// The cache is emptied when cudaMalloc fails (then cudaMalloc is tried
// again) and when the device memory held (in use and cached) would exceed
// the context's memory limit. The arena above accounts for the bytes
// handed out to the program (current, peak, the limit itself); this
// allocator counts the device memory it holds.
//
// While a CUDA graph is recorded, the blocks in use and those handed out
// belong to the recording (its pool): the graph's kernels may use any of
// them on every replay, so once given back they are handed out again only
// while recording, until the recording is dropped (`releasePool`).
//
// `DeviceWorkspace` is a kernel's device scratch (im2col columns,
// per-sample losses), drawn from the allocator and grown on demand.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_CUDA_ALLOCATOR_H
#define METART_SRC_CUDA_ALLOCATOR_H

#include <cstddef>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace metart::cuda {

/// Device memory of the current device, with a cache of freed blocks.
class CachingAllocator {
public:
  /// The granularity of block sizes (cudaMalloc aligns to 256 bytes).
  static constexpr size_t kGranularity = 512;

  /// `limitBytes` bounds the device memory held, cache included, where it
  /// can (0: no bound).
  explicit CachingAllocator(size_t limitBytes = 0) : limitBytes(limitBytes) {}
  /// Frees every block, cached or in use.
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator &) = delete;
  CachingAllocator &operator=(const CachingAllocator &) = delete;

  /// At least `bytes` bytes of device memory, 256-byte aligned, or null
  /// when the device has no more (`lastError` says why).
  void *allocate(size_t bytes);
  /// Returns a block of `allocate` to the cache; ignores other pointers.
  void deallocate(void *data);
  /// Frees every cached block (not those of the recording's pool).
  void releaseCache();

  /// The blocks in use and, from now on, those handed out belong to the
  /// pool; allocation reuses the pool's free blocks first. Nothing is freed
  /// to the driver while pooling (that would wait for the device).
  void beginPool();
  /// Stops adding blocks to the pool; those in it stay reserved.
  void endPool() { pooling = false; }
  /// Returns the pool's free blocks to the cache; its blocks in use go
  /// there when given back.
  void releasePool();

  /// What the allocator holds.
  struct Stats {
    size_t inUseBytes = 0, cachedBytes = 0;
    /// The most device memory held at once (in use plus cached).
    size_t peakHeldBytes = 0;
    /// How many blocks came from cudaMalloc.
    size_t deviceAllocations = 0;
  };
  const Stats &stats() const { return counts; }
  const std::string &lastError() const { return error; }

private:
  /// A block of `bytes` from `blocks` (the cache or the pool's free
  /// blocks), or null.
  void *reuse(std::multimap<size_t, void *> &blocks, size_t bytes);

  size_t limitBytes;
  std::multimap<size_t, void *> cached;
  bool pooling = false;
  /// The pool's blocks (in use or free) and its free ones by size.
  std::unordered_set<void *> pool;
  std::multimap<size_t, void *> poolFree;
  std::unordered_map<void *, size_t> inUse;
  Stats counts;
  std::string error;
};

/// A kernel's device scratch memory, kept between calls and grown on demand.
class DeviceWorkspace {
public:
  explicit DeviceWorkspace(CachingAllocator &allocator)
      : allocator(allocator) {}
  ~DeviceWorkspace();
  DeviceWorkspace(const DeviceWorkspace &) = delete;
  DeviceWorkspace &operator=(const DeviceWorkspace &) = delete;

  /// At least `bytes` bytes (their previous contents are lost), or null when
  /// the device has no more. Valid until the next `get`.
  void *get(size_t bytes);

private:
  CachingAllocator &allocator;
  void *data = nullptr;
  size_t capacity = 0;
};

} // namespace metart::cuda

#endif // METART_SRC_CUDA_ALLOCATOR_H
