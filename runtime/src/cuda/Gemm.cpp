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

/// The cuBLAS type of a float element type.
static cudaDataType_t cudaTypeOf(metart_dtype dtype) {
  switch (dtype) {
  case METART_F64:
    return CUDA_R_64F;
  case METART_BF16:
    return CUDA_R_16BF;
  case METART_F16:
    return CUDA_R_16F;
  default:
    return CUDA_R_32F;
  }
}

/// One strided-batched call on 16-bit operands: tensor-core products
/// accumulating in f32, the result rounded to `c`'s type (or kept in f32).
static KernelStatus callReduced(cublasHandle_t handle, int count, int m, int n,
                                int k, metart_dtype inputType,
                                metart_dtype outputType, const GemmOperand &a,
                                const GemmOperand &b, float beta,
                                const GemmResult &c) {
  float one = 1;
  cudaDataType_t in = cudaTypeOf(inputType), out = cudaTypeOf(outputType);
  return checkCublas(cublasGemmStridedBatchedEx(
                         handle, operationOf(b.transposed),
                         operationOf(a.transposed), n, m, k, &one, b.data, in,
                         static_cast<int>(b.ld), b.batchStride, a.data, in,
                         static_cast<int>(a.ld), a.batchStride, &beta, c.data,
                         out, static_cast<int>(c.ld), c.batchStride, count,
                         CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                     "cublasGemmStridedBatchedEx");
}

/// Splits a batch into calls of at most INT_MAX products.
template <typename Call>
static KernelStatus inParts(int64_t batch, size_t inputSize, size_t outputSize,
                            const GemmOperand &a, const GemmOperand &b,
                            const GemmResult &c, Call &&call) {
  for (int64_t first = 0; first < batch; first += INT_MAX) {
    int count = static_cast<int>(std::min<int64_t>(INT_MAX, batch - first));
    GemmOperand aPart = a, bPart = b;
    GemmResult cPart = c;
    aPart.data =
        static_cast<const char *>(a.data) + first * a.batchStride * inputSize;
    bPart.data =
        static_cast<const char *>(b.data) + first * b.batchStride * inputSize;
    cPart.data =
        static_cast<char *>(c.data) + first * c.batchStride * outputSize;
    KernelStatus status = call(count, aPart, bPart, cPart);
    if (status.failed())
      return status;
  }
  return KernelStatus::ok();
}

KernelStatus gemmInto(cublasHandle_t handle, cudaStream_t stream,
                      metart_dtype dtype, metart_dtype outputType,
                      int64_t batch, int64_t m, int64_t n, int64_t k,
                      const GemmOperand &a, const GemmOperand &b, double beta,
                      const GemmResult &c) {
  if (batch == 0 || m == 0 || n == 0)
    return KernelStatus::ok();
  size_t elementSize = dtypeSize(dtype), outputSize = dtypeSize(outputType);
  if (k == 0)
    return beta == 0 ? zero(stream, outputSize, batch, m, n, c)
                     : KernelStatus::ok();
  if (!fitsInt({m, n, k, a.ld, b.ld, c.ld}))
    return {METART_ERROR_UNSUPPORTED,
            "a product of sizes m = " + std::to_string(m) +
                ", n = " + std::to_string(n) + ", k = " + std::to_string(k) +
                " exceeds cuBLAS's 32-bit sizes"};
  int mi = static_cast<int>(m), ni = static_cast<int>(n),
      ki = static_cast<int>(k);
  auto parts = [&](auto call) {
    return inParts(batch, elementSize, outputSize, a, b, c, call);
  };
  if (outputType != dtype || dtype == METART_BF16 || dtype == METART_F16)
    return parts([&](int count, const GemmOperand &ap, const GemmOperand &bp,
                     const GemmResult &cp) {
      return callReduced(handle, count, mi, ni, ki, dtype, outputType, ap, bp,
                         static_cast<float>(beta), cp);
    });
  if (dtype == METART_F64)
    return parts([&](int count, const GemmOperand &ap, const GemmOperand &bp,
                     const GemmResult &cp) {
      return call<double>(handle, count, mi, ni, ki, ap, bp, beta, cp);
    });
  return parts([&](int count, const GemmOperand &ap, const GemmOperand &bp,
                   const GemmResult &cp) {
    return call<float>(handle, count, mi, ni, ki, ap, bp,
                       static_cast<float>(beta), cp);
  });
}

KernelStatus gemm(cublasHandle_t handle, cudaStream_t stream,
                  metart_dtype dtype, int64_t batch, int64_t m, int64_t n,
                  int64_t k, const GemmOperand &a, const GemmOperand &b,
                  double beta, const GemmResult &c) {
  return gemmInto(handle, stream, dtype, dtype, batch, m, n, k, a, b, beta, c);
}

} // namespace metart::cuda
