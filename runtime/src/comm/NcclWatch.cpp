//===- NcclWatch.cpp - the watchdog's view of NCCL's collectives ----------===//
//
// Both the caller (after each collective) and the watchdog's thread reap
// completed events under one lock, so the pending list stays as short as
// the work in flight even when no thread watches (a timeout of 0).
//
//===----------------------------------------------------------------------===//

#include "NcclWatch.h"
#include "../cuda/Hang.h"
#include "Stats.h"

#include <chrono>

using namespace metart;
using namespace metart::comm;

static int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

NcclWatch::NcclWatch(std::function<void()> abortComms)
    : abortComms(std::move(abortComms)) {}

NcclWatch::~NcclWatch() {
  for (const Pending &p : pending)
    cudaEventDestroy(p.event);
  for (cudaEvent_t event : pool)
    cudaEventDestroy(event);
  if (flag) {
    *flag = 1;
    cudaFreeHost(const_cast<int *>(flag));
  }
}

void NcclWatch::reap() {
  size_t kept = 0;
  for (const Pending &p : pending) {
    // Any answer but "not ready" ends the wait: an error is the stream's
    // to report.
    if (cudaEventQuery(p.event) == cudaErrorNotReady)
      pending[kept++] = p;
    else
      pool.push_back(p.event);
  }
  pending.resize(kept);
}

void NcclWatch::queued(const char *what, int mask, cudaStream_t stream) {
  std::lock_guard<std::mutex> guard(lock);
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  unsigned long long id = 0;
  if (cudaStreamGetCaptureInfo(stream, &status, &id) == cudaSuccess &&
      status == cudaStreamCaptureStatusActive) {
    if (id != captureId) {
      captured.clear();
      captureId = id;
    }
    std::string name = std::string(what) + " over " + axesName(mask);
    if (captured.find(name) == std::string::npos)
      captured += (captured.empty() ? "" : ", ") + name;
    return;
  }
  reap();
  if (pool.empty()) {
    cudaEvent_t event = nullptr;
    if (cudaEventCreateWithFlags(&event, cudaEventDisableTiming) !=
        cudaSuccess) {
      (void)cudaGetLastError();
      return;
    }
    pool.push_back(event);
  }
  cudaEvent_t event = pool.back();
  if (cudaEventRecord(event, stream) != cudaSuccess) {
    (void)cudaGetLastError();
    return;
  }
  pool.pop_back();
  pending.push_back({event, what, mask, watchdog::iteration(), nowNs()});
}

void NcclWatch::launchedGraph(cudaStream_t stream) {
  {
    std::lock_guard<std::mutex> guard(lock);
    if (captured.empty())
      return;
  }
  queued(nullptr, 0, stream);
}

KernelStatus NcclWatch::hang(cudaStream_t stream) {
  if (!flag) {
    void *host = nullptr;
    if (cudaHostAlloc(&host, sizeof(int), cudaHostAllocMapped) != cudaSuccess ||
        cudaHostGetDevicePointer(reinterpret_cast<void **>(&deviceFlag), host,
                                 0) != cudaSuccess) {
      cudaError_t error = cudaGetLastError();
      if (host)
        cudaFreeHost(host);
      return {METART_ERROR_BACKEND,
              std::string("mapping the hang's flag failed: ") +
                  cudaGetErrorString(error)};
    }
    flag = static_cast<volatile int *>(host);
  }
  *flag = 0;
  return cuda::launchSpin(stream, deviceFlag);
}

std::string NcclWatch::describe(const Pending &p) const {
  std::string iteration = p.iteration > 0
                              ? "meta-iteration " + std::to_string(p.iteration)
                              : std::string("a meta-iteration");
  if (!p.what)
    return "the CUDA graph of " + iteration + " (NCCL " + captured + ")";
  std::string text =
      std::string("NCCL ") + p.what + " over " + axesName(p.mask);
  if (p.iteration > 0)
    text += " in " + iteration;
  return text;
}

std::string NcclWatch::overdue(int64_t timeoutMs) {
  std::lock_guard<std::mutex> guard(lock);
  reap();
  int64_t now = nowNs();
  for (const Pending &p : pending)
    if ((now - p.since) / 1000000 > timeoutMs)
      return describe(p);
  return {};
}

void NcclWatch::abort() {
  // The spin first: the aborted collectives behind it must be able to run
  // to their abort.
  if (flag)
    *flag = 1;
  if (abortComms)
    abortComms();
}

size_t NcclWatch::pendingCount() {
  std::lock_guard<std::mutex> guard(lock);
  reap();
  return pending.size();
}
