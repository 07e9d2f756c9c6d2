//===- Gemm.h - row-major products through cuBLAS ---------------*- C++ -*-===//
//
// The one place the CUDA backend calls cuBLAS: a batch of row-major GEMMs
// over double, float, bf16 or f16 (tensor cores accumulating in f32) as one
// strided-batched call (cuBLAS is column-major:
// a row-major C = A B is the column-major C^T = B^T A^T, so the operands
// swap). A batch stride of 0 repeats an operand, which is how images that
// share a weight slice become one call. Sizes beyond cuBLAS's 32-bit
// integers are reported, batches beyond them split.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_CUDA_GEMM_H
#define METART_SRC_CUDA_GEMM_H

#include "../Tensor.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

namespace metart::cuda {

/// One operand of a batch of row-major products: the matrix as the product
/// reads it, stored transposed when `transposed`, with `ld` elements
/// between the starts of consecutive stored rows and `batchStride` between
/// the starts of consecutive matrices of the batch.
struct GemmOperand {
  const void *data;
  int64_t ld;
  bool transposed;
  int64_t batchStride;
};

/// The result of a batch of products (not transposed).
struct GemmResult {
  void *data;
  int64_t ld;
  int64_t batchStride;
};

/// `gemm` with a result of another type: 16-bit operands (bf16, f16) into
/// an f32 result, the products accumulating in f32 either way.
KernelStatus gemmInto(cublasHandle_t handle, cudaStream_t stream,
                      metart_dtype dtype, metart_dtype outputType,
                      int64_t batch, int64_t m, int64_t n, int64_t k,
                      const GemmOperand &a, const GemmOperand &b, double beta,
                      const GemmResult &c);

/// `c_i = a_i b_i + beta c_i` for i < `batch`, with `a_i` m x k, `b_i`
/// k x n and `beta` 0 or 1, queued on the handle's stream (`stream`). With
/// k = 0 the products are zero.
KernelStatus gemm(cublasHandle_t handle, cudaStream_t stream,
                  metart_dtype dtype, int64_t batch, int64_t m, int64_t n,
                  int64_t k, const GemmOperand &a, const GemmOperand &b,
                  double beta, const GemmResult &c);

} // namespace metart::cuda

#endif // METART_SRC_CUDA_GEMM_H
