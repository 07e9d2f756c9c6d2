//===- Cudnn.h - convolutions through cuDNN ---------------------*- C++ -*-===//
//
// cuDNN, loaded when first asked for (dlopen of libcudnn.so.9, or the file
// METART_CUDNN names: PyPI's nvidia-cudnn-cu13 puts it in a Python
// environment, not on the loader's path), computes the three convolution
// kernels of the CUDA backend per weight slice, in NCHW, with its
// heuristics' first deterministic algorithm that computes in full
// precision (FMA math, no TF32; direct sums, no FFT or Winograd), as the
// im2col kernels and the peers benchmarked against compute. Which of cuDNN and
// im2col + cuBLAS runs a shape is measured on its first call (Convolution.cu);
// METART_CONVOLUTION = cudnn or im2col overrides the measurement. Built without
// cuDNN's headers, or where the library does not load, `handles` is false and
// im2col computes every convolution.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_CUDA_CUDNN_H
#define METART_SRC_CUDA_CUDNN_H

#include "../KernelSizes.h"
#include "../Tensor.h"

#include <cuda_runtime.h>

#include <memory>
#include <string>

namespace metart::cuda {

class DeviceWorkspace;

class CudnnConvolutions {
public:
  CudnnConvolutions();
  ~CudnnConvolutions();
  CudnnConvolutions(const CudnnConvolutions &) = delete;
  CudnnConvolutions &operator=(const CudnnConvolutions &) = delete;

  /// Whether cuDNN computes convolutions of `dtype` with these sizes: it is
  /// built in, enabled and loads (the first call loads it, so it must not
  /// come while `stream` records a graph), the type is f32 or f64, and the
  /// images are few calls' worth (at most 16 weight slices).
  bool handles(metart_dtype dtype, const ConvSizes &sizes, cudaStream_t stream);
  /// Whether METART_CONVOLUTION=cudnn asks for cuDNN wherever it handles a
  /// shape, without measuring.
  bool forced() const;
  /// Why cuDNN computes nothing ("" when it loaded or was never asked).
  std::string unavailable() const;

  /// y = conv(x, w) per slice, added to y when `accumulate` (the bias
  /// written first), as CudaBackend::conv2d.
  KernelStatus forward(cudaStream_t stream, DeviceWorkspace &workspace,
                       metart_dtype dtype, const ConvSizes &sizes,
                       const void *x, const void *weight, void *y,
                       bool accumulate);
  /// The input derivative, as CudaBackend::conv2dBackwardInput.
  KernelStatus backwardInput(cudaStream_t stream, DeviceWorkspace &workspace,
                             metart_dtype dtype, const ConvSizes &sizes,
                             const void *grad, const void *weight, void *y);
  /// The weight derivative, as CudaBackend::conv2dBackwardWeight.
  KernelStatus backwardWeight(cudaStream_t stream, DeviceWorkspace &workspace,
                              metart_dtype dtype, const ConvSizes &sizes,
                              const void *x, const void *grad, void *y);

  struct State;

private:
  std::unique_ptr<State> state;
};

} // namespace metart::cuda

#endif // METART_SRC_CUDA_CUDNN_H
