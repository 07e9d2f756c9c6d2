//===- Stream.h - the stream and timing events of a context -----*- C++ -*-===//
//
// A CUDA context of the runtime queues all its work (kernels, cuBLAS
// products, copies) on one non-blocking stream, so that work is ordered and
// memory that the caching allocator hands out again is never in use by an
// earlier kernel. Two events time the device work between `startTimer` and
// `stopTimer`.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_CUDA_STREAM_H
#define METART_SRC_CUDA_STREAM_H

#include "../Tensor.h"

#include <cuda_runtime_api.h>

namespace metart::cuda {

/// A CUDA stream with two timing events, on the current device.
class Stream {
public:
  Stream() = default;
  ~Stream();
  Stream(const Stream &) = delete;
  Stream &operator=(const Stream &) = delete;

  /// Creates the stream and its events on the current device.
  KernelStatus create();
  cudaStream_t get() const { return stream; }

  /// Waits for all work queued so far; reports the first asynchronous
  /// failure of that work.
  KernelStatus synchronize();

  /// Marks the start of a timed span of device work.
  KernelStatus startTimer();
  /// Waits for the work queued so far and sets `milliseconds` to the device
  /// time since `startTimer`.
  KernelStatus stopTimer(float &milliseconds);

private:
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
};

} // namespace metart::cuda

#endif // METART_SRC_CUDA_STREAM_H
