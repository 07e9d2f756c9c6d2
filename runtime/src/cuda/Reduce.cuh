//===- Reduce.cuh - sums and maxima across threads --------------*- C++ -*-===//
//
// Warp and block reductions in double (the CPU backend accumulates in
// double too), and a kernel that reduces segments with one block each. A
// block has 32 threads (one warp, for short segments) or 256. The maximum
// ignores NaN, like `std::max(maximum, value)` from -inf on the CPU.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_CUDA_REDUCE_CUH
#define METART_SRC_CUDA_REDUCE_CUH

#include "Launch.cuh"

#include <cuda_runtime.h>

#include <cstdint>

namespace metart::cuda {

struct SumOp {
  __device__ double operator()(double a, double b) const { return a + b; }
};

/// The larger of `a` and `b`, ignoring NaN.
struct MaxOp {
  __device__ double operator()(double a, double b) const {
    return (a < b || a != a) ? b : a;
  }
};

/// `value` combined with `op` over the warp, returned to every lane.
template <typename Op> __device__ double warpReduce(double value, Op op) {
  for (int offset = 16; offset > 0; offset /= 2)
    value = op(value, __shfl_xor_sync(0xffffffffu, value, offset));
  return value;
}

/// `value` combined with `op` over the block of `Threads` threads (32 or a
/// multiple of 32), returned to every thread. Every thread must call it.
template <int Threads, typename Op>
__device__ double blockReduce(double value, Op op, double identity) {
  value = warpReduce(value, op);
  if constexpr (Threads > 32) {
    __shared__ double partial[Threads / 32];
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    __syncthreads(); // an earlier call may still read `partial`
    if (lane == 0)
      partial[warp] = value;
    __syncthreads();
    value = warpReduce(lane < Threads / 32 ? partial[lane] : identity, op);
  }
  return value;
}

/// For each segment s < `segments`: `finish(s, sum)` with `sum` the sum in
/// double of `term(s, i)` for i < `length`; one block per segment.
template <int Threads, typename Term, typename Finish>
__global__ void __launch_bounds__(Threads)
    segmentSumKernel(int64_t segments, int64_t length, Term term,
                     Finish finish) {
  for (int64_t s = blockIdx.x; s < segments; s += gridDim.x) {
    double sum = 0;
    for (int64_t i = threadIdx.x; i < length; i += Threads)
      sum += term(s, i);
    sum = blockReduce<Threads>(sum, SumOp(), 0.0);
    if (threadIdx.x == 0)
      finish(s, sum);
  }
}

/// Threads per block for segments of `length` items: a warp for short ones.
inline int threadsForSegment(int64_t length) { return length < 512 ? 32 : 256; }

/// Launches `segmentSumKernel` on `stream` (for segments > 0); returns the
/// launch error.
template <typename Term, typename Finish>
cudaError_t launchSegmentSum(cudaStream_t stream, int64_t segments,
                             int64_t length, Term term, Finish finish) {
  unsigned blocks = static_cast<unsigned>(std::min(segments, kMaxBlocks));
  if (threadsForSegment(length) == 32)
    segmentSumKernel<32>
        <<<blocks, 32, 0, stream>>>(segments, length, term, finish);
  else
    segmentSumKernel<256>
        <<<blocks, 256, 0, stream>>>(segments, length, term, finish);
  return cudaGetLastError();
}

} // namespace metart::cuda

#endif // METART_SRC_CUDA_REDUCE_CUH
