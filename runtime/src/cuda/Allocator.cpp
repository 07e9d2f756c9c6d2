//===- Allocator.cpp - the caching device allocator -----------------------===//

#include "Allocator.h"

#include "Status.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <limits>

namespace metart::cuda {

/// `bytes` rounded up to the granularity (at least one unit), or 0 when
/// that overflows.
static size_t roundUp(size_t bytes) {
  constexpr size_t unit = CachingAllocator::kGranularity;
  if (bytes > std::numeric_limits<size_t>::max() - unit)
    return 0;
  size_t rounded = (bytes + unit - 1) / unit * unit;
  return rounded ? rounded : unit;
}

CachingAllocator::~CachingAllocator() {
  releasePool();
  releaseCache();
  for (auto &[data, bytes] : inUse)
    (void)cudaFree(data);
}

void *CachingAllocator::reuse(std::multimap<size_t, void *> &blocks,
                              size_t bytes) {
  // Best fit, but never a block more than twice the request: a small
  // request must not pin a large block.
  auto it = blocks.lower_bound(bytes);
  if (it == blocks.end() || it->first / 2 > bytes)
    return nullptr;
  void *data = it->second;
  size_t size = it->first;
  inUse.emplace(data, size);
  blocks.erase(it);
  counts.cachedBytes -= size;
  counts.inUseBytes += size;
  return data;
}

void *CachingAllocator::allocate(size_t bytes) {
  size_t rounded = roundUp(bytes);
  if (rounded == 0) {
    error = "cannot allocate " + std::to_string(bytes) + " bytes";
    return nullptr;
  }
  if (pooling)
    if (void *data = reuse(poolFree, rounded))
      return data;
  if (void *data = reuse(cached, rounded)) {
    if (pooling)
      pool.insert(data);
    return data;
  }
  size_t held = counts.inUseBytes + counts.cachedBytes;
  if (limitBytes != 0 && held + rounded > limitBytes) {
    if (pooling) {
      error = "recording a CUDA graph needs " + std::to_string(rounded) +
              " more bytes than the memory limit leaves";
      return nullptr;
    }
    releaseCache();
  }
  void *data = nullptr;
  cudaError_t result = cudaMalloc(&data, rounded);
  if (result == cudaErrorMemoryAllocation && !pooling) {
    // The cache may hold what the driver is missing.
    (void)cudaGetLastError();
    releaseCache();
    result = cudaMalloc(&data, rounded);
  }
  if (result != cudaSuccess) {
    error =
        checkCuda(result, "cudaMalloc of " + std::to_string(rounded) + " bytes")
            .message;
    return nullptr;
  }
  try {
    inUse.emplace(data, rounded);
  } catch (...) {
    (void)cudaFree(data);
    throw;
  }
  if (pooling)
    pool.insert(data);
  counts.inUseBytes += rounded;
  counts.peakHeldBytes =
      std::max(counts.peakHeldBytes, counts.inUseBytes + counts.cachedBytes);
  ++counts.deviceAllocations;
  return data;
}

void CachingAllocator::deallocate(void *data) {
  auto it = inUse.find(data);
  if (it == inUse.end())
    return;
  size_t size = it->second;
  inUse.erase(it);
  counts.inUseBytes -= size;
  try {
    if (pooling)
      pool.insert(data);
    (pool.count(data) ? poolFree : cached).emplace(size, data);
    counts.cachedBytes += size;
  } catch (...) {
    // Without room to remember the block, give it back to the driver.
    (void)cudaFree(data);
  }
}

void CachingAllocator::releaseCache() {
  for (auto &[size, data] : cached)
    (void)cudaFree(data);
  cached.clear();
  counts.cachedBytes = 0;
}

void CachingAllocator::beginPool() {
  for (auto &[data, size] : inUse)
    pool.insert(data);
  pooling = true;
}

void CachingAllocator::releasePool() {
  cached.insert(poolFree.begin(), poolFree.end());
  poolFree.clear();
  pool.clear();
  pooling = false;
}

DeviceWorkspace::~DeviceWorkspace() { allocator.deallocate(data); }

void *DeviceWorkspace::get(size_t bytes) {
  if (data && bytes <= capacity)
    return data;
  // The old block goes back to the cache first, so that the new one may
  // reuse its memory.
  allocator.deallocate(data);
  capacity = 0;
  data = allocator.allocate(bytes);
  if (data)
    capacity = bytes;
  return data;
}

} // namespace metart::cuda
