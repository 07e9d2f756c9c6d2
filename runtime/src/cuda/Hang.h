//===- Hang.h - device work that never ends, for tests ----------*- C++ -*-===//
//
// --hang-rank on a device: a kernel queued on the stream before a
// collective spins until a flag in mapped host memory is set, so that the
// collective cannot complete and the watchdog sees it pending (the host
// is free meanwhile, as a rank whose peer is lost would be).
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_CUDA_HANG_H
#define METART_SRC_CUDA_HANG_H

#include "../Tensor.h"

#include <cuda_runtime_api.h>

namespace metart::cuda {

/// Queues on `stream` one thread that spins until `*flag` (device address
/// of mapped host memory) is not zero.
KernelStatus launchSpin(cudaStream_t stream, const volatile int *flag);

} // namespace metart::cuda

#endif // METART_SRC_CUDA_HANG_H
