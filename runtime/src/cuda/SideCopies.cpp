//===- SideCopies.cpp - copies that overlap the compute stream ------------===//

#include "SideCopies.h"

#include "Status.h"

namespace metart::cuda {

SideCopies::~SideCopies() {
  // Destruction cannot report failures.
  if (side)
    (void)cudaStreamSynchronize(side);
  for (auto &[destination, event] : inFlight)
    (void)cudaEventDestroy(event);
  for (cudaEvent_t event : spare)
    (void)cudaEventDestroy(event);
  if (side)
    (void)cudaStreamDestroy(side);
}

void SideCopies::synchronize() {
  if (side)
    (void)cudaStreamSynchronize(side);
}

KernelStatus SideCopies::takeEvent(cudaEvent_t &event) {
  if (!spare.empty()) {
    event = spare.back();
    spare.pop_back();
    return KernelStatus::ok();
  }
  return checkCuda(cudaEventCreateWithFlags(&event, cudaEventDisableTiming),
                   "cudaEventCreateWithFlags");
}

KernelStatus SideCopies::start(cudaStream_t compute, void *destination,
                               const void *source, size_t bytes) {
  if (!side)
    if (KernelStatus s =
            checkCuda(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking),
                      "cudaStreamCreateWithFlags");
        s.failed())
      return s;
  if (inFlight.count(destination))
    return {METART_ERROR_INVALID_ARGUMENT,
            "a copy to this destination is already in flight"};
  // The fork: a wait takes the event's last record at the time of the
  // call, so the event is free again at once.
  cudaEvent_t ready = nullptr;
  if (KernelStatus s = takeEvent(ready); s.failed())
    return s;
  KernelStatus s =
      checkCuda(cudaEventRecord(ready, compute), "cudaEventRecord");
  if (!s.failed())
    s = checkCuda(cudaStreamWaitEvent(side, ready, 0), "cudaStreamWaitEvent");
  spare.push_back(ready);
  if (s.failed())
    return s;
  // cudaMemcpyDefault: pinned host memory and device memory alike.
  if (KernelStatus c = checkCuda(
          cudaMemcpyAsync(destination, source, bytes, cudaMemcpyDefault, side),
          "cudaMemcpyAsync (prefetch)");
      c.failed())
    return c;
  cudaEvent_t done = nullptr;
  if (KernelStatus e = takeEvent(done); e.failed())
    return e;
  if (KernelStatus r =
          checkCuda(cudaEventRecord(done, side), "cudaEventRecord");
      r.failed()) {
    spare.push_back(done);
    return r;
  }
  inFlight[destination] = done;
  return KernelStatus::ok();
}

KernelStatus SideCopies::wait(cudaStream_t compute, void *destination) {
  auto it = inFlight.find(destination);
  if (it == inFlight.end())
    return KernelStatus::ok();
  cudaEvent_t done = it->second;
  inFlight.erase(it);
  spare.push_back(done);
  return checkCuda(cudaStreamWaitEvent(compute, done, 0),
                   "cudaStreamWaitEvent");
}

} // namespace metart::cuda
