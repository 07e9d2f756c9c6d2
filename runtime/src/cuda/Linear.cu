//===- Linear.cu - affine layers and matrix products on CUDA --------------===//
//
// Both are one strided-batched cuBLAS call, on bf16 and f16 operands as
// they are (tensor cores, f32 accumulation): `linear` batches its weight
// slices (the tasks of a meta-batch), each slice's rows one product with the
// slice's weight read transposed; `matmul` batches its batch entries. The
// bias is written first and the product added to it, as on the CPU.
//
//===----------------------------------------------------------------------===//

#include "../cpu/Dtype.h"
#include "CudaBackend.h"
#include "Gemm.h"
#include "Launch.cuh"
#include "Status.h"

namespace metart::cuda {

namespace {
/// y[r, o] = bias[r / rowsPerSlice, o] for `rows` rows of `width`.
template <typename T>
__global__ void biasRowsKernel(int64_t rows, int64_t rowsPerSlice,
                               int64_t width, const T *bias, T *y) {
  int64_t count = rows * width;
  for (int64_t i = gridStart(); i < count; i += gridStride()) {
    int64_t row = i / width, column = i % width;
    y[i] = bias[(row / rowsPerSlice) * width + column];
  }
}
} // namespace

KernelStatus CudaBackend::linear(metart_dtype dtype, const LinearSizes &sizes,
                                 const void *x, const void *weight,
                                 const void *bias, void *y) {
  if (KernelStatus status = activate(); status.failed())
    return status;
  const LinearSizes &s = sizes;
  int64_t rows = s.slices * s.rowsPerSlice;
  if (rows == 0 || s.out == 0)
    return KernelStatus::ok();
  if (bias) {
    // A copy: 16-bit floats move as 16-bit integers.
    auto copyBias = [&](auto t) {
      using T = decltype(t);
      biasRowsKernel<<<blocksFor(rows * s.out), kThreads, 0, stream.get()>>>(
          rows, s.rowsPerSlice, s.out, static_cast<const T *>(bias),
          static_cast<T *>(y));
      return checkLaunch("linear bias");
    };
    KernelStatus status = dtypeSize(dtype) == 2
                              ? copyBias(uint16_t())
                              : cpu::withFloat(dtype, copyBias);
    if (status.failed())
      return status;
  }
  // y_s = x_s w_s^T (+ y_s): w_s is stored [out, in], read transposed.
  return gemm(blas, stream.get(), dtype, s.slices, s.rowsPerSlice, s.out, s.in,
              {x, s.in, false, s.rowsPerSlice * s.in},
              {weight, s.in, true, s.out * s.in}, bias ? 1.0 : 0.0,
              {y, s.out, s.rowsPerSlice * s.out});
}

KernelStatus CudaBackend::matmul(metart_dtype dtype, const MatmulSizes &sizes,
                                 const void *a, const void *b, void *y) {
  if (KernelStatus status = activate(); status.failed())
    return status;
  const MatmulSizes &s = sizes;
  // Stored shapes: a is [m, k] or, transposed, [k, m]; b is [k, n] or [n, k].
  return gemm(blas, stream.get(), dtype, s.batch, s.m, s.n, s.k,
              {a, s.transposeA ? s.m : s.k, s.transposeA, s.m * s.k},
              {b, s.transposeB ? s.k : s.n, s.transposeB, s.k * s.n}, 0.0,
              {y, s.n, s.m * s.n});
}

} // namespace metart::cuda
