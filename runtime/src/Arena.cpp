//===- Arena.cpp - the memory of a runtime context ------------------------===//

#include "Arena.h"

#include <algorithm>
#include <limits>

namespace metart {

DeviceAllocator::~DeviceAllocator() = default;

/// The smallest scratch chunk: small allocations share a chunk.
static constexpr size_t kMinChunkBytes = size_t(1) << 20;

/// `bytes` rounded up to the alignment (at least one alignment unit), or 0
/// when that overflows.
static size_t roundUp(size_t bytes) {
  if (bytes > std::numeric_limits<size_t>::max() - Arena::kAlignment)
    return 0;
  size_t rounded =
      (bytes + Arena::kAlignment - 1) / Arena::kAlignment * Arena::kAlignment;
  return rounded ? rounded : Arena::kAlignment;
}

Arena::Arena(DeviceAllocator &allocator, size_t limitBytes)
    : allocator(allocator), limitBytes(limitBytes) {}

Arena::~Arena() {
  releaseChunks();
  for (auto &[data, bytes] : buffers)
    allocator.deallocate(data);
}

bool Arena::fitsLimit(size_t bytes, std::string &error) const {
  size_t held = scratchBytes + bufferBytes;
  if (limitBytes == 0 || (bytes <= limitBytes && held <= limitBytes - bytes))
    return true;
  error = "requesting " + std::to_string(bytes) + " bytes with " +
          std::to_string(held) + " bytes held exceeds the memory limit of " +
          std::to_string(limitBytes) + " bytes";
  return false;
}

void Arena::notePeak() {
  peakBytes = std::max(peakBytes, scratchBytes + bufferBytes);
}

metart_status Arena::allocateScratch(size_t bytes, void **out,
                                     std::string &error) {
  size_t rounded = roundUp(bytes);
  if (rounded == 0) {
    error = "cannot allocate " + std::to_string(bytes) + " bytes";
    return METART_ERROR_OUT_OF_MEMORY;
  }
  // A block of this size given back earlier in the iteration is reused:
  // it is already counted.
  auto reusable = freeScratchBlocks.find(rounded);
  if (reusable != freeScratchBlocks.end() && !reusable->second.empty()) {
    *out = reusable->second.back();
    reusable->second.pop_back();
    return METART_OK;
  }
  if (!fitsLimit(rounded, error))
    return METART_ERROR_OUT_OF_MEMORY;
  // The chunks of earlier iterations are bumped through in order: a
  // program allocates the same sequence every iteration, so its blocks land
  // where they did before, on pages already mapped (giving a chunk back and
  // taking a bigger one would fault every page in again: 640 MB per rank
  // and iteration for the transformer's data=8 plan).
  while (currentChunk < chunks.size() &&
         chunks[currentChunk].capacity - chunks[currentChunk].used < rounded)
    ++currentChunk;
  if (currentChunk == chunks.size()) {
    size_t capacity = std::max(rounded, kMinChunkBytes);
    if (!chunks.empty())
      capacity = std::max(capacity, 2 * chunks.back().capacity);
    void *data = allocator.allocate(capacity);
    if (!data && capacity != rounded) {
      capacity = rounded;
      data = allocator.allocate(capacity);
    }
    if (!data) {
      error = "the device could not allocate " + std::to_string(capacity) +
              " bytes (" + std::to_string(scratchBytes + bufferBytes) +
              " bytes held)";
      return METART_ERROR_OUT_OF_MEMORY;
    }
    try {
      chunks.push_back({static_cast<char *>(data), capacity, 0});
    } catch (...) {
      allocator.deallocate(data);
      throw;
    }
  }
  Chunk &chunk = chunks[currentChunk];
  *out = chunk.data + chunk.used;
  chunk.used += rounded;
  scratchBytes += rounded;
  scratchPeakBytes = std::max(scratchPeakBytes, scratchBytes);
  notePeak();
  return METART_OK;
}

void Arena::releaseChunks() {
  for (Chunk &chunk : chunks)
    allocator.deallocate(chunk.data);
  chunks.clear();
}

void Arena::freeScratch(void *data, size_t bytes) {
  size_t rounded = roundUp(bytes);
  if (data && rounded)
    freeScratchBlocks[rounded].push_back(data);
}

void Arena::resetScratch() {
  freeScratchBlocks.clear();
  for (Chunk &chunk : chunks)
    chunk.used = 0;
  currentChunk = 0;
  scratchBytes = 0;
}

metart_status Arena::allocateBuffer(size_t bytes, void **out,
                                    std::string &error) {
  size_t rounded = roundUp(bytes);
  if (rounded == 0) {
    error = "cannot allocate " + std::to_string(bytes) + " bytes";
    return METART_ERROR_OUT_OF_MEMORY;
  }
  if (!fitsLimit(rounded, error))
    return METART_ERROR_OUT_OF_MEMORY;
  void *data = allocator.allocate(rounded);
  if (!data) {
    error = "the device could not allocate " + std::to_string(rounded) +
            " bytes (" + std::to_string(scratchBytes + bufferBytes) +
            " bytes held)";
    return METART_ERROR_OUT_OF_MEMORY;
  }
  try {
    buffers.emplace(data, rounded);
  } catch (...) {
    allocator.deallocate(data);
    throw;
  }
  bufferBytes += rounded;
  notePeak();
  *out = data;
  return METART_OK;
}

bool Arena::freeBuffer(void *data) {
  auto it = buffers.find(data);
  if (it == buffers.end())
    return false;
  bufferBytes -= it->second;
  buffers.erase(it);
  allocator.deallocate(data);
  return true;
}

metart_memory_stats Arena::stats() const {
  metart_memory_stats stats{};
  stats.current_bytes = scratchBytes + bufferBytes;
  stats.peak_bytes = peakBytes;
  stats.scratch_peak_bytes = scratchPeakBytes;
  return stats;
}

} // namespace metart
