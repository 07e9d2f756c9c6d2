//===- MemoryTest.cpp - scratch memory, buffers, copies, accounting -------===//

#include "metart/metart.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {

/// A test with a fresh CPU context, capped at `limit` bytes.
class Memory : public ::testing::Test {
protected:
  void create(size_t limit) {
    metart_context_destroy(context);
    metart_context_options options = {METART_BACKEND_CPU, 0, limit};
    ASSERT_EQ(metart_context_create(&options, &context), METART_OK);
  }
  void SetUp() override { create(0); }
  void TearDown() override { metart_context_destroy(context); }

  metart_memory_stats stats() const {
    metart_memory_stats s;
    metart_memory_stats_get(context, &s);
    return s;
  }

  metart_context *context = nullptr;
};

bool isAligned(const void *p) {
  return reinterpret_cast<uintptr_t>(p) % 64 == 0;
}

TEST_F(Memory, ScratchIsAlignedAndAccountedInAlignedUnits) {
  void *a = nullptr, *b = nullptr, *c = nullptr;
  ASSERT_EQ(metart_scratch_alloc(context, 10, &a), METART_OK);
  ASSERT_EQ(metart_scratch_alloc(context, 64, &b), METART_OK);
  ASSERT_EQ(metart_scratch_alloc(context, 0, &c), METART_OK);
  EXPECT_TRUE(isAligned(a) && isAligned(b) && isAligned(c));
  EXPECT_EQ(static_cast<char *>(b) - static_cast<char *>(a), 64);
  EXPECT_NE(b, c);
  EXPECT_EQ(stats().current_bytes, 192u);
  EXPECT_EQ(stats().scratch_peak_bytes, 192u);
  std::memset(a, 1, 10);
  std::memset(b, 2, 64);
}

TEST_F(Memory, ResetReleasesScratchAndKeepsThePeak) {
  void *p = nullptr;
  ASSERT_EQ(metart_scratch_alloc(context, 1000, &p), METART_OK);
  metart_scratch_reset(context);
  EXPECT_EQ(stats().current_bytes, 0u);
  EXPECT_EQ(stats().peak_bytes, 1024u);
  EXPECT_EQ(stats().scratch_peak_bytes, 1024u);
  void *q = nullptr;
  ASSERT_EQ(metart_scratch_alloc(context, 100, &q), METART_OK);
  EXPECT_EQ(q, p) << "the first chunk is reused after a reset";
  EXPECT_EQ(stats().current_bytes, 128u);
  EXPECT_EQ(stats().peak_bytes, 1024u);
}

TEST_F(Memory, ScratchGrowsOverSeveralChunksAndKeepsThemOnReset) {
  // 3 MiB in 1 MiB pieces needs more than the first 1 MiB chunk.
  std::vector<void *> blocks(3);
  for (void *&block : blocks) {
    ASSERT_EQ(metart_scratch_alloc(context, 1 << 20, &block), METART_OK);
    std::memset(block, 7, 1 << 20);
  }
  EXPECT_EQ(stats().current_bytes, 3u << 20);
  metart_scratch_reset(context);
  // The next iteration's blocks land where the last one's did: the same
  // memory, its pages already mapped, none given back and taken again.
  for (void *block : blocks) {
    void *again = nullptr;
    ASSERT_EQ(metart_scratch_alloc(context, 1 << 20, &again), METART_OK);
    EXPECT_EQ(again, block);
  }
  EXPECT_EQ(stats().scratch_peak_bytes, 3u << 20);
  // A request no kept chunk has room for gets a new chunk.
  void *big = nullptr;
  ASSERT_EQ(metart_scratch_alloc(context, 16 << 20, &big), METART_OK);
  std::memset(big, 1, 16 << 20);
  EXPECT_EQ(stats().current_bytes, 19u << 20);
}

TEST_F(Memory, BuffersAreAccountedUntilFreed) {
  void *a = nullptr, *b = nullptr, *s = nullptr;
  ASSERT_EQ(metart_buffer_alloc(context, 100, &a), METART_OK);
  ASSERT_EQ(metart_buffer_alloc(context, 200, &b), METART_OK);
  EXPECT_TRUE(isAligned(a) && isAligned(b));
  ASSERT_EQ(metart_scratch_alloc(context, 64, &s), METART_OK);
  EXPECT_EQ(stats().current_bytes, 128u + 256u + 64u);
  metart_scratch_reset(context);
  EXPECT_EQ(stats().current_bytes, 384u);
  metart_buffer_free(context, a);
  EXPECT_EQ(stats().current_bytes, 256u);
  EXPECT_EQ(stats().peak_bytes, 448u);
  EXPECT_EQ(stats().scratch_peak_bytes, 64u);
  metart_buffer_free(context, b);
  EXPECT_EQ(stats().current_bytes, 0u);
}

TEST_F(Memory, FreeingAForeignPointerIsReportedAndIgnored) {
  int local = 0;
  metart_buffer_free(context, &local);
  EXPECT_STREQ(metart_context_last_error(context),
               "metart_buffer_free: the pointer is not a buffer of this "
               "context (ignored)");
  metart_buffer_free(context, nullptr);
}

TEST_F(Memory, TheLimitRefusesWithRequestedHeldAndAllowed) {
  create(1000);
  void *a = nullptr, *b = nullptr, *c = nullptr;
  ASSERT_EQ(metart_buffer_alloc(context, 500, &a), METART_OK);
  EXPECT_EQ(metart_scratch_alloc(context, 500, &b), METART_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(b, nullptr);
  EXPECT_STREQ(metart_context_last_error(context),
               "metart_scratch_alloc: requesting 512 bytes with 512 bytes "
               "held exceeds the memory limit of 1000 bytes");
  EXPECT_EQ(metart_buffer_alloc(context, 2000, &c), METART_ERROR_OUT_OF_MEMORY);
  EXPECT_STREQ(metart_context_last_error(context),
               "metart_buffer_alloc: requesting 2048 bytes with 512 bytes "
               "held exceeds the memory limit of 1000 bytes");
  // What fits still fits, and freeing makes room.
  ASSERT_EQ(metart_scratch_alloc(context, 400, &b), METART_OK);
  metart_buffer_free(context, a);
  ASSERT_EQ(metart_buffer_alloc(context, 500, &c), METART_OK);
  EXPECT_EQ(stats().peak_bytes, 960u);
}

TEST_F(Memory, AbsurdSizesAreOutOfMemory) {
  void *p = nullptr;
  EXPECT_EQ(metart_buffer_alloc(context, SIZE_MAX, &p),
            METART_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(metart_scratch_alloc(context, SIZE_MAX - 10, &p),
            METART_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(metart_scratch_alloc(context, 8, nullptr),
            METART_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(metart_context_last_error(context),
               "metart_scratch_alloc: out_data is null");
}

TEST_F(Memory, CopiesRoundTrip) {
  std::vector<double> host = {1, 2, 3, 4}, back(4);
  void *device = nullptr, *other = nullptr;
  ASSERT_EQ(metart_buffer_alloc(context, 32, &device), METART_OK);
  ASSERT_EQ(metart_scratch_alloc(context, 32, &other), METART_OK);
  ASSERT_EQ(metart_copy_to_device(context, device, host.data(), 32), METART_OK);
  ASSERT_EQ(metart_copy_device(context, other, device, 32), METART_OK);
  ASSERT_EQ(metart_copy_to_host(context, back.data(), other, 32), METART_OK);
  EXPECT_EQ(back, host);
  EXPECT_EQ(metart_copy_to_host(context, nullptr, other, 8),
            METART_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(metart_context_last_error(context),
               "metart_copy_to_host: copying 8 bytes with a null destination");
  EXPECT_EQ(metart_copy_to_host(context, nullptr, nullptr, 0), METART_OK);
}

TEST_F(Memory, AStartedCopyIsWaitedForByItsDestination) {
  std::vector<double> host = {1, 2, 3, 4}, back(4);
  void *source = nullptr, *destination = nullptr;
  ASSERT_EQ(metart_host_buffer_alloc(context, 32, &source), METART_OK);
  ASSERT_EQ(metart_scratch_alloc(context, 32, &destination), METART_OK);
  std::memcpy(source, host.data(), 32);
  ASSERT_EQ(metart_copy_device_start(context, destination, source, 32),
            METART_OK);
  // One copy per destination at a time.
  EXPECT_EQ(metart_copy_device_start(context, destination, source, 32),
            METART_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(metart_context_last_error(context),
               "metart_copy_device_start: a copy to this destination is "
               "already in flight (metart_copy_wait first)");
  ASSERT_EQ(metart_copy_wait(context, destination), METART_OK);
  ASSERT_EQ(metart_copy_to_host(context, back.data(), destination, 32),
            METART_OK);
  EXPECT_EQ(back, host);
  // Waiting for what was never started, or twice, is an error.
  EXPECT_EQ(metart_copy_wait(context, destination),
            METART_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(metart_context_last_error(context),
               "metart_copy_wait: no copy to this destination is in flight "
               "(metart_copy_device_start)");
  EXPECT_EQ(metart_copy_device_start(context, nullptr, source, 8),
            METART_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(metart_context_last_error(context),
               "metart_copy_device_start: copying 8 bytes with a null "
               "destination");
  // A step that failed between a start and its wait: the reset joins it.
  ASSERT_EQ(metart_copy_device_start(context, destination, source, 32),
            METART_OK);
  metart_scratch_reset(context);
  void *again = nullptr;
  ASSERT_EQ(metart_scratch_alloc(context, 32, &again), METART_OK);
  EXPECT_EQ(metart_copy_device_start(context, again, source, 32), METART_OK);
  EXPECT_EQ(metart_copy_wait(context, again), METART_OK);
}

} // namespace
