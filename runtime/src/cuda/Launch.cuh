//===- Launch.cuh - launch geometry of the CUDA kernels ---------*- C++ -*-===//
//
// Kernels over n items use grid-stride loops with 64-bit indices, so that a
// launch of at most kMaxBlocks blocks covers any tensor; the launchers
// never launch an empty grid.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_CUDA_LAUNCH_CUH
#define METART_SRC_CUDA_LAUNCH_CUH

#include <algorithm>
#include <cstdint>

namespace metart::cuda {

/// Threads per block of the elementwise kernels.
inline constexpr int kThreads = 256;
/// The most blocks of a grid-stride launch (enough to fill any device).
inline constexpr int64_t kMaxBlocks = 65535;

/// The blocks of `threads` threads for a grid-stride loop over `count`
/// items (at least one block).
inline unsigned blocksFor(int64_t count, int threads = kThreads) {
  int64_t blocks = (count + threads - 1) / threads;
  return static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, kMaxBlocks));
}

/// The calling thread's first item in a grid-stride loop.
__device__ inline int64_t gridStart() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

/// The step of a grid-stride loop.
__device__ inline int64_t gridStride() {
  return static_cast<int64_t>(blockDim.x) * gridDim.x;
}

} // namespace metart::cuda

#endif // METART_SRC_CUDA_LAUNCH_CUH
