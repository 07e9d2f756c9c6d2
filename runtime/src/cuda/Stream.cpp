//===- Stream.cpp - the stream and timing events of a context -------------===//

#include "Stream.h"

#include "Status.h"

namespace metart::cuda {

Stream::~Stream() {
  // Destruction cannot report failures; the device is the owner's current.
  if (start)
    (void)cudaEventDestroy(start);
  if (stop)
    (void)cudaEventDestroy(stop);
  if (stream)
    (void)cudaStreamDestroy(stream);
}

KernelStatus Stream::create() {
  KernelStatus status =
      checkCuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
                "cudaStreamCreateWithFlags");
  if (!status.failed())
    status = checkCuda(cudaEventCreate(&start), "cudaEventCreate");
  if (!status.failed())
    status = checkCuda(cudaEventCreate(&stop), "cudaEventCreate");
  return status;
}

KernelStatus Stream::synchronize() {
  return checkCuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

KernelStatus Stream::startTimer() {
  return checkCuda(cudaEventRecord(start, stream), "cudaEventRecord");
}

KernelStatus Stream::stopTimer(float &milliseconds) {
  KernelStatus status =
      checkCuda(cudaEventRecord(stop, stream), "cudaEventRecord");
  if (!status.failed())
    status = checkCuda(cudaEventSynchronize(stop), "cudaEventSynchronize");
  if (!status.failed())
    status = checkCuda(cudaEventElapsedTime(&milliseconds, start, stop),
                       "cudaEventElapsedTime");
  return status;
}

} // namespace metart::cuda
