//===- Gemm.cpp - row-major products through cuBLAS -----------------------===//

#include "Gemm.h"

#include "Status.h"

#include <algorithm>
#include <climits>

namespace metart::cuda {

static cublasOperation_t operationOf(bool transposed) {
  return transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
}

/// The sizes of a product that do not fit cuBLAS's `int`.
static bool fitsInt(std::initializer_list<int64_t> sizes) {
  return std::all_of(sizes.begin(), sizes.end(),
                     [](int64_t size) { return size <= INT_MAX; });
}

/// Zeroes the m x n matrices of `c` (the products with k = 0, beta = 0).
static KernelStatus zero(cudaStream_t stream, size_t elementSize, int64_t batch,
                         int64_t m, int64_t n, const GemmResult &c) {
  char *data = static_cast<char *>(c.data);
  if (c.ld == n && c.batchStride == m * n)
    return checkCuda(
        cudaMemsetAsync(data, 0, batch * m * n * elementSize, stream),
        "cudaMemsetAsync");
  for (int64_t i = 0; i < batch; ++i) {
    KernelStatus status = checkCuda(
        cudaMemset2DAsync(data + i * c.batchStride * elementSize,
                          c.ld * elementSize, 0, n * elementSize, m, stream),
        "cudaMemset2DAsync");
    if (status.failed())
      return status;
  }
  return KernelStatus::ok();
}

/// One strided-batched call of at most INT_MAX products.
template <typename T>
static KernelStatus call(cublasHandle_t handle, int count, int m, int n, int k,
                         const GemmOperand &a, const GemmOperand &b, T beta,
                         const GemmResult &c) {
  T one = 1;
  const T *aData = static_cast<const T *>(a.data);
  const T *bData = static_cast<const T *>(b.data);
  T *cData = static_cast<T *>(c.data);
  // Column-major C^T (n x m) = op(B)^T op(A)^T: B comes first.
  if constexpr (sizeof(T) == sizeof(float))
    return checkCublas(cublasSgemmStridedBatched(
                           handle, operationOf(b.transposed),
                           operationOf(a.transposed), n, m, k, &one, bData,
                           static_cast<int>(b.ld), b.batchStride, aData,
                           static_cast<int>(a.ld), a.batchStride, &beta, cData,
                           static_cast<int>(c.ld), c.batchStride, count),
                       "cublasSgemmStridedBatched");
  else
    return checkCublas(cublasDgemmStridedBatched(
                           handle, operationOf(b.transposed),
                           operationOf(a.transposed), n, m, k, &one, bData,
                           static_cast<int>(b.ld), b.batchStride, aData,
                           static_cast<int>(a.ld), a.batchStride, &beta, cData,
                           static_cast<int>(c.ld), c.batchStride, count),
                       "cublasDgemmStridedBatched");
}

template <typename T>
static KernelStatus gemmOf(cublasHandle_t handle, int64_t batch, int64_t m,
                           int64_t n, int64_t k, GemmOperand a, GemmOperand b,
                           T beta, const GemmResult &c) {
  for (int64_t first = 0; first < batch; first += INT_MAX) {
    int count = static_cast<int>(std::min<int64_t>(INT_MAX, batch - first));
    GemmOperand aPart = a, bPart = b;
    GemmResult cPart = c;
    aPart.data = static_cast<const T *>(a.data) + first * a.batchStride;
    bPart.data = static_cast<const T *>(b.data) + first * b.batchStride;
    cPart.data = static_cast<T *>(c.data) + first * c.batchStride;
    KernelStatus status =
        call<T>(handle, count, static_cast<int>(m), static_cast<int>(n),
                static_cast<int>(k), aPart, bPart, beta, cPart);
    if (status.failed())
      return status;
  }
  return KernelStatus::ok();
}

KernelStatus gemm(cublasHandle_t handle, cudaStream_t stream,
                  metart_dtype dtype, int64_t batch, int64_t m, int64_t n,
                  int64_t k, const GemmOperand &a, const GemmOperand &b,
                  double beta, const GemmResult &c) {
  if (batch == 0 || m == 0 || n == 0)
    return KernelStatus::ok();
  size_t elementSize = dtypeSize(dtype);
  if (k == 0)
    return beta == 0 ? zero(stream, elementSize, batch, m, n, c)
                     : KernelStatus::ok();
  if (!fitsInt({m, n, k, a.ld, b.ld, c.ld}))
    return {METART_ERROR_UNSUPPORTED,
            "a product of sizes m = " + std::to_string(m) +
                ", n = " + std::to_string(n) + ", k = " + std::to_string(k) +
                " exceeds cuBLAS's 32-bit sizes"};
  if (dtype == METART_F64)
    return gemmOf<double>(handle, batch, m, n, k, a, b, beta, c);
  return gemmOf<float>(handle, batch, m, n, k, a, b, static_cast<float>(beta),
                       c);
}

} // namespace metart::cuda
