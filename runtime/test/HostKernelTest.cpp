//===- HostKernelTest.cpp - running generated kernels ---------------------===//
//
// metart_run_host_kernel calls a kernel once per chunk, on the backend's
// threads, and checks what it is given; compiled code asks
// metart_context_is_host before choosing a kernel over the runtime's ops.
//
//===----------------------------------------------------------------------===//

#include "metart/metart.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

class HostKernel : public ::testing::Test {
protected:
  void SetUp() override {
    metart_context_options options = {METART_BACKEND_CPU, 0, 0};
    ASSERT_EQ(metart_context_create(&options, &context), METART_OK);
  }
  void TearDown() override { metart_context_destroy(context); }
  metart_context *context = nullptr;
};

/// Writes chunk + 1 into element `chunk` of its one argument.
void markChunk(void **arguments, int64_t chunk) {
  static_cast<int64_t *>(arguments[0])[chunk] = chunk + 1;
}

TEST_F(HostKernel, TheCpuBackendRunsOnTheHost) {
  EXPECT_EQ(metart_context_is_host(context), 1);
  EXPECT_EQ(metart_context_is_host(nullptr), 0);
}

TEST_F(HostKernel, EveryChunkRunsOnce) {
  for (int64_t chunks : {1, 2, 3, 64}) {
    std::vector<int64_t> marks(chunks, 0);
    void *arguments[] = {marks.data()};
    ASSERT_EQ(metart_run_host_kernel(context, markChunk, arguments, chunks),
              METART_OK);
    for (int64_t i = 0; i < chunks; ++i)
      EXPECT_EQ(marks[i], i + 1) << "chunk " << i << " of " << chunks;
  }
}

TEST_F(HostKernel, BadArgumentsAreErrors) {
  int64_t mark = 0;
  void *arguments[] = {&mark};
  EXPECT_EQ(metart_run_host_kernel(context, nullptr, arguments, 1),
            METART_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(metart_context_last_error(context)),
            "metart_run_host_kernel: the kernel is null");
  EXPECT_EQ(metart_run_host_kernel(context, markChunk, arguments, 0),
            METART_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(metart_context_last_error(context)),
            "metart_run_host_kernel: expects at least one chunk, got 0");
  EXPECT_EQ(mark, 0);
  EXPECT_EQ(metart_run_host_kernel(nullptr, markChunk, arguments, 1),
            METART_ERROR_INVALID_ARGUMENT);
}

} // namespace
