//===- NcclWatchTest.cpp - the watchdog's view of NCCL's collectives ------===//
//
// The bookkeeping of the NCCL watchdog on one device, with a communicator
// of one rank: a collective queued behind the spin of --hang-rank is
// overdue once the timeout has passed and names itself, aborting releases
// the spin and the stream completes; completed collectives are never
// overdue and their events go back to the pool; a graph launch is watched
// as one and names the collectives captured into it. The watchdog's thread
// and the process's end are tested by
// test/metac/distributed/comm-timeout-nccl.test. Every test skips without
// a CUDA device.
//
//===----------------------------------------------------------------------===//

#include "comm/NcclWatch.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <nccl.h>

#include <chrono>
#include <thread>

using metart::comm::NcclWatch;
namespace watchdog = metart::comm::watchdog;

namespace {

constexpr int kTask = 1, kData = 2;

class NcclWatchTest : public ::testing::Test {
protected:
  void SetUp() override {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0)
      GTEST_SKIP() << "no CUDA device";
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
              cudaSuccess);
    ASSERT_EQ(cudaMalloc(&buffer, 64 * sizeof(float)), cudaSuccess);
    ncclUniqueId id;
    ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
    ASSERT_EQ(ncclCommInitRank(&comm, 1, id, 0), ncclSuccess);
    watchdog::setIteration(3);
  }
  void TearDown() override {
    watchdog::setIteration(0);
    if (comm && !aborted)
      ncclCommDestroy(comm);
    if (buffer)
      cudaFree(buffer);
    if (stream)
      cudaStreamDestroy(stream);
  }

  ncclResult_t allReduce() {
    return ncclAllReduce(buffer, buffer, 64, ncclFloat32, ncclSum, comm,
                         stream);
  }
  void abortComm() {
    ncclCommAbort(comm);
    aborted = true;
  }
  static void sleepMs(int ms) {
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  }

  cudaStream_t stream = nullptr;
  float *buffer = nullptr;
  ncclComm_t comm = nullptr;
  bool aborted = false;
};

TEST_F(NcclWatchTest, ACollectiveBehindTheSpinIsOverdueUntilAborted) {
  NcclWatch watch([this] { abortComm(); });
  ASSERT_FALSE(watch.hang(stream).failed());
  ASSERT_EQ(allReduce(), ncclSuccess);
  watch.queued("all_reduce", kTask, stream);
  sleepMs(300);
  EXPECT_EQ(watch.overdue(10000), "");
  EXPECT_EQ(watch.overdue(100),
            "NCCL all_reduce over task in meta-iteration 3");
  EXPECT_EQ(watch.pendingCount(), 1u);
  // Aborting sets the spin's flag: the stream drains.
  watch.abort();
  EXPECT_TRUE(aborted);
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(watch.pendingCount(), 0u);
  EXPECT_EQ(watch.overdue(0), "");
}

TEST_F(NcclWatchTest, CompletedCollectivesAreNeverOverdue) {
  NcclWatch watch([this] { abortComm(); });
  watchdog::setIteration(0);
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ(allReduce(), ncclSuccess);
    watch.queued("all_reduce", kTask, stream);
  }
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  // The events are back in the pool: none pending, none overdue.
  EXPECT_EQ(watch.pendingCount(), 0u);
  sleepMs(20);
  EXPECT_EQ(watch.overdue(1), "");
  EXPECT_FALSE(aborted);
}

TEST_F(NcclWatchTest, AGraphLaunchIsWatchedAsOneAndNamesItsCollectives) {
  NcclWatch watch([this] { abortComm(); });
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal),
            cudaSuccess);
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(allReduce(), ncclSuccess);
    watch.queued("all_reduce", kTask, stream);
  }
  ASSERT_EQ(ncclAllGather(buffer, buffer + 32, 32, ncclFloat32, comm, stream),
            ncclSuccess);
  watch.queued("all_gather", kData, stream);
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  // Nothing captured is pending.
  EXPECT_EQ(watch.pendingCount(), 0u);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  cudaGraphDestroy(graph);

  // A healthy launch completes.
  ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
  watch.launchedGraph(stream);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(watch.pendingCount(), 0u);

  ASSERT_FALSE(watch.hang(stream).failed());
  ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
  watch.launchedGraph(stream);
  sleepMs(300);
  EXPECT_EQ(watch.overdue(100), "the CUDA graph of meta-iteration 3 (NCCL "
                                "all_reduce over task, all_gather over data)");
  watch.abort();
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(watch.overdue(0), "");
  cudaGraphExecDestroy(exec);
}

} // namespace
