//===- CudaGraphs.cpp - recording and replaying CUDA graphs ---------------===//
//
// A recording captures the context's stream (relaxed mode: the allocator
// may still call cudaMalloc) while the allocator hands out blocks from the
// recording's pool, so that the memory the graph's kernels use (any block
// in use when recording began, the workspace and the arena's scratch
// chunks among them, and any handed out while recording) stays theirs
// until the recording is dropped. Replaying launches the instantiated graph
// and, when it holds range checks, reads their findings back.
//
//===----------------------------------------------------------------------===//

#include "CudaBackend.h"

#include "Status.h"

#include <cstring>

namespace metart::cuda {

KernelStatus CudaBackend::beginRecording() {
  if (KernelStatus status = activate(); status.failed())
    return status;
  discardRecording();
  recording = std::make_unique<Recording>();
  recording->slots = static_cast<RangeSlot *>(
      allocator.allocate(Recording::kMaxChecks * sizeof(RangeSlot)));
  if (!recording->slots) {
    KernelStatus status{METART_ERROR_OUT_OF_MEMORY, allocator.lastError()};
    discardRecording();
    return status;
  }
  allocator.beginPool();
  KernelStatus status = checkCuda(
      cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeRelaxed),
      "cudaStreamBeginCapture");
  if (status.failed()) {
    discardRecording();
    return status;
  }
  recording->capturing = true;
  return status;
}

KernelStatus CudaBackend::endRecording() {
  if (!capturing())
    return {METART_ERROR_INVALID_ARGUMENT, "no CUDA graph is being recorded"};
  cudaGraph_t graph = nullptr;
  KernelStatus status = checkCuda(cudaStreamEndCapture(stream.get(), &graph),
                                  "cudaStreamEndCapture");
  recording->capturing = false;
  allocator.endPool();
  if (!status.failed())
    status = checkCuda(cudaGraphInstantiate(&recording->graph, graph, 0),
                       "cudaGraphInstantiate");
  if (graph)
    (void)cudaGraphDestroy(graph);
  if (status.failed())
    discardRecording();
  return status;
}

KernelStatus CudaBackend::replay() {
  if (!recording || !recording->graph)
    return {METART_ERROR_INVALID_ARGUMENT, "no CUDA graph was recorded"};
  if (KernelStatus status = activate(); status.failed())
    return status;
  KernelStatus status = checkCuda(
      cudaGraphLaunch(recording->graph, stream.get()), "cudaGraphLaunch");
  if (!status.failed() && graphLaunched)
    graphLaunched(stream.get());
  size_t checks = recording->checks.size();
  if (status.failed() || checks == 0)
    return status;
  std::vector<RangeSlot> findings(checks);
  status = checkCuda(cudaMemcpyAsync(findings.data(), recording->slots,
                                     checks * sizeof(RangeSlot),
                                     cudaMemcpyDeviceToHost, stream.get()),
                     "cudaMemcpyAsync (device to host)");
  if (!status.failed())
    status = stream.synchronize();
  if (status.failed())
    return status;
  for (size_t i = 0; i < checks; ++i)
    if (findings[i].position != ~0ull) {
      const Recording::Check &check = recording->checks[i];
      return {METART_ERROR_OUT_OF_RANGE,
              outOfRangeMessage(check.what, findings[i].value,
                                findings[i].position, check.bound) +
                  " (found replaying a CUDA graph)"};
    }
  return status;
}

void CudaBackend::discardRecording() {
  if (!recording)
    return;
  if (activate().failed())
    return;
  if (recording->capturing) {
    cudaGraph_t graph = nullptr;
    (void)cudaStreamEndCapture(stream.get(), &graph);
    if (graph)
      (void)cudaGraphDestroy(graph);
    allocator.endPool();
  }
  // A replay may still be running: its memory is freed after it.
  (void)stream.synchronize();
  if (recording->graph)
    (void)cudaGraphExecDestroy(recording->graph);
  for (void *snapshot : recording->pinned)
    (void)cudaFreeHost(snapshot);
  allocator.deallocate(recording->slots);
  allocator.releasePool();
  (void)cudaGetLastError();
  recording.reset();
}

KernelStatus CudaBackend::recordCopyFromHost(void *destination,
                                             const void *source, size_t bytes) {
  void *snapshot = nullptr;
  KernelStatus status = checkCuda(cudaMallocHost(&snapshot, bytes),
                                  "cudaMallocHost (a recorded copy's source)");
  if (status.failed())
    return status;
  std::memcpy(snapshot, source, bytes);
  recording->pinned.push_back(snapshot);
  return checkCuda(cudaMemcpyAsync(destination, snapshot, bytes,
                                   cudaMemcpyHostToDevice, stream.get()),
                   "cudaMemcpyAsync (host to device)");
}

} // namespace metart::cuda
