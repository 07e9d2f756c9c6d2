//===- Hang.cu - device work that never ends, for tests -------------------===//

#include "Hang.h"
#include "Status.h"

namespace metart::cuda {

namespace {

__global__ void spin(const volatile int *flag) {
  // Volatile: each read goes to the host's memory, where the flag changes.
  while (*flag == 0) {
#if __CUDA_ARCH__ >= 700
    __nanosleep(10000);
#endif
  }
}

} // namespace

KernelStatus launchSpin(cudaStream_t stream, const volatile int *flag) {
  spin<<<1, 1, 0, stream>>>(flag);
  return checkLaunch("spin");
}

} // namespace metart::cuda
