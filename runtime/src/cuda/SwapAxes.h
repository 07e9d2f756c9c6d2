//===- SwapAxes.h - exchanging the two leading axes -------------*- C++ -*-===//
//
// out[b][a][e] = in[a][b][e] (or +=), for the task-batched convolutions'
// layouts: [tasks, images, ...] to cuDNN's grouped [images, tasks x
// channels, ...] and back.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_CUDA_SWAPAXES_H
#define METART_SRC_CUDA_SWAPAXES_H

#include "../Tensor.h"

#include <cuda_runtime.h>

namespace metart::cuda {

/// `in` is [a, b, inner] of f32 or f64; `out` becomes (or, with
/// `accumulate`, adds) [b, a, inner].
KernelStatus swapLeadingAxes(cudaStream_t stream, metart_dtype dtype,
                             const void *in, void *out, int64_t a, int64_t b,
                             int64_t inner, bool accumulate);

} // namespace metart::cuda

#endif // METART_SRC_CUDA_SWAPAXES_H
