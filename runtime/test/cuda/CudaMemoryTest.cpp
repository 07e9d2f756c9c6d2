//===- CudaMemoryTest.cpp - memory, copies and contexts of CUDA -----------===//
//
// The caching allocator (reuse, the cache emptied under the limit), the
// arena on device memory (accounting, peak, limit, scratch reset), copies
// between host and device and within the device (overlapping too), the
// stream's timer, and contexts on devices that do not exist. Every test
// skips without a CUDA device.
//
//===----------------------------------------------------------------------===//

#include "cuda/Allocator.h"
#include "cuda/Stream.h"
#include "metart/metart.h"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <string>
#include <vector>

namespace {

using metart::cuda::CachingAllocator;

class CudaMemory : public ::testing::Test {
protected:
  void SetUp() override {
    if (!metart_backend_available(METART_BACKEND_CUDA))
      GTEST_SKIP() << "no CUDA device";
  }

  /// A CUDA context on device 0 with `limit` bytes (0: none).
  metart_context *create(size_t limit) {
    metart_context_options options = {METART_BACKEND_CUDA, 0, limit};
    metart_context *context = nullptr;
    EXPECT_EQ(metart_context_create(&options, &context), METART_OK)
        << metart_context_last_error(nullptr);
    return context;
  }
};

TEST_F(CudaMemory, TheAllocatorReusesFreedBlocks) {
  CachingAllocator allocator;
  void *a = allocator.allocate(1 << 20);
  ASSERT_NE(a, nullptr) << allocator.lastError();
  allocator.deallocate(a);
  EXPECT_EQ(allocator.stats().cachedBytes, size_t(1) << 20);
  // The same size, and a somewhat smaller one, take the cached block.
  void *b = allocator.allocate((1 << 20) - 1000);
  EXPECT_EQ(b, a);
  EXPECT_EQ(allocator.stats().deviceAllocations, 1u);
  // A small request does not pin the large block.
  allocator.deallocate(b);
  void *c = allocator.allocate(100);
  ASSERT_NE(c, nullptr);
  EXPECT_NE(c, a);
  EXPECT_EQ(allocator.stats().inUseBytes, CachingAllocator::kGranularity);
  EXPECT_EQ(allocator.stats().deviceAllocations, 2u);
  allocator.releaseCache();
  EXPECT_EQ(allocator.stats().cachedBytes, 0u);
  EXPECT_EQ(allocator.stats().peakHeldBytes,
            (size_t(1) << 20) + CachingAllocator::kGranularity);
  allocator.deallocate(c);
}

TEST_F(CudaMemory, TheAllocatorEmptiesItsCacheUnderTheLimit) {
  size_t mib = size_t(1) << 20;
  CachingAllocator allocator(mib * 18 / 10);
  void *a = allocator.allocate(mib * 3 / 2);
  ASSERT_NE(a, nullptr);
  allocator.deallocate(a);
  // 1.5 MiB cached and 0.5 MiB more would hold 2 MiB, over the limit.
  void *b = allocator.allocate(mib / 2);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(allocator.stats().cachedBytes, 0u);
  EXPECT_EQ(allocator.stats().inUseBytes, mib / 2);
  allocator.deallocate(b);
}

TEST_F(CudaMemory, APoolKeepsItsBlocksAndFreesNothingUnderTheLimit) {
  size_t mib = size_t(1) << 20;
  CachingAllocator allocator(mib * 18 / 10);
  void *before = allocator.allocate(mib / 2);
  void *cached = allocator.allocate(mib);
  ASSERT_NE(before, nullptr);
  ASSERT_NE(cached, nullptr);
  allocator.deallocate(cached);
  allocator.beginPool();
  // 384 KiB cannot take the cached 1 MiB block, and freeing the cache
  // would wait for the device: over the limit, fail.
  EXPECT_EQ(allocator.allocate(mib * 3 / 8), nullptr);
  EXPECT_EQ(allocator.lastError(), "recording a CUDA graph needs 393216 "
                                   "more bytes than the memory limit leaves");
  // A block in use when pooling began goes to the pool, not the cache.
  allocator.deallocate(before);
  allocator.endPool();
  void *after = allocator.allocate(mib / 2);
  EXPECT_NE(after, before);
  allocator.deallocate(after);
  allocator.releasePool();
  void *again = allocator.allocate(mib / 2);
  EXPECT_TRUE(again == before || again == after);
  allocator.deallocate(again);
}

TEST_F(CudaMemory, BuffersAndScratchAreAccountedAndLimited) {
  metart_context *context = create(size_t(4) << 20);
  ASSERT_NE(context, nullptr);
  void *buffer = nullptr;
  ASSERT_EQ(metart_buffer_alloc(context, 1000, &buffer), METART_OK);
  // Scratch past one chunk: several chunks this iteration, one next.
  std::vector<void *> scratch(3);
  for (void *&s : scratch)
    ASSERT_EQ(metart_scratch_alloc(context, 700 << 10, &s), METART_OK)
        << metart_context_last_error(context);
  metart_memory_stats stats;
  metart_memory_stats_get(context, &stats);
  EXPECT_EQ(stats.current_bytes, 1024u + 3 * (700u << 10));
  EXPECT_EQ(stats.scratch_peak_bytes, 3 * (700u << 10));
  // The memory is the device's: a kernel writes it, a copy reads it back.
  int64_t shape[] = {700 << 8};
  metart_tensor t = {scratch[2], METART_F32, 1, shape};
  ASSERT_EQ(metart_fill(context, &t, 2.5), METART_OK);
  std::vector<float> host(700 << 8);
  ASSERT_EQ(metart_copy_to_host(context, host.data(), scratch[2],
                                host.size() * sizeof(float)),
            METART_OK);
  EXPECT_EQ(host.front(), 2.5f);
  EXPECT_EQ(host.back(), 2.5f);
  metart_scratch_reset(context);
  metart_memory_stats_get(context, &stats);
  EXPECT_EQ(stats.current_bytes, 1024u);
  EXPECT_EQ(stats.peak_bytes, 1024u + 3 * (700u << 10));
  for (void *&s : scratch)
    ASSERT_EQ(metart_scratch_alloc(context, 700 << 10, &s), METART_OK);
  // Past the limit: a clear error, nothing allocated.
  void *more = nullptr;
  EXPECT_EQ(metart_scratch_alloc(context, 2 << 20, &more),
            METART_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(more, nullptr);
  std::string error = metart_context_last_error(context);
  EXPECT_NE(error.find("exceeds the memory limit of 4194304 bytes"),
            std::string::npos)
      << error;
  metart_buffer_free(context, buffer);
  metart_context_destroy(context);
}

TEST_F(CudaMemory, CopiesBetweenHostAndDeviceAndWithinTheDevice) {
  metart_context *context = create(0);
  ASSERT_NE(context, nullptr);
  std::vector<int32_t> values(1000);
  std::iota(values.begin(), values.end(), 0);
  size_t bytes = values.size() * sizeof(int32_t);
  void *a = nullptr, *b = nullptr;
  ASSERT_EQ(metart_buffer_alloc(context, bytes, &a), METART_OK);
  ASSERT_EQ(metart_buffer_alloc(context, bytes, &b), METART_OK);
  ASSERT_EQ(metart_copy_to_device(context, a, values.data(), bytes), METART_OK);
  ASSERT_EQ(metart_copy_device(context, b, a, bytes), METART_OK);
  std::vector<int32_t> back(values.size());
  ASSERT_EQ(metart_copy_to_host(context, back.data(), b, bytes), METART_OK);
  EXPECT_EQ(back, values);
  // Overlapping copies within the device behave like memmove, both ways.
  auto *base = static_cast<char *>(a);
  std::vector<int32_t> expected = values;
  std::memmove(expected.data() + 3, expected.data(), 900 * sizeof(int32_t));
  std::memmove(expected.data(), expected.data() + 50, 700 * sizeof(int32_t));
  ASSERT_EQ(metart_copy_device(context, base + 3 * sizeof(int32_t), base,
                               900 * sizeof(int32_t)),
            METART_OK);
  ASSERT_EQ(metart_copy_device(context, base, base + 50 * sizeof(int32_t),
                               700 * sizeof(int32_t)),
            METART_OK);
  ASSERT_EQ(metart_copy_to_host(context, back.data(), a, bytes), METART_OK);
  EXPECT_EQ(back, expected);
  metart_buffer_free(context, a);
  metart_buffer_free(context, b);
  metart_context_destroy(context);
}

TEST_F(CudaMemory, TheStreamTimesDeviceWork) {
  metart::cuda::Stream stream;
  ASSERT_FALSE(stream.create().failed());
  ASSERT_FALSE(stream.startTimer().failed());
  float milliseconds = -1;
  metart::KernelStatus status = stream.stopTimer(milliseconds);
  ASSERT_FALSE(status.failed()) << status.message;
  EXPECT_GE(milliseconds, 0.0f);
}

TEST_F(CudaMemory, ContextsOnDevicesThatDoNotExistFail) {
  for (int32_t device : {-1, 999}) {
    metart_context_options options = {METART_BACKEND_CUDA, device, 0};
    metart_context *context = reinterpret_cast<metart_context *>(1);
    EXPECT_EQ(metart_context_create(&options, &context),
              METART_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(context, nullptr);
    std::string message = metart_context_last_error(nullptr);
    EXPECT_EQ(message.rfind("metart_context_create: CUDA device " +
                                std::to_string(device) + " does not exist",
                            0),
              0u)
        << message;
  }
}

} // namespace
