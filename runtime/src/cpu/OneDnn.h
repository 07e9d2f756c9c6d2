//===- OneDnn.h - convolutions through oneDNN -------------------*- C++ -*-===//
//
// oneDNN's JIT convolutions run 2-10x faster than im2col + OpenBLAS on the
// example networks' shapes (docs/kernels.md, bench/conv_kernels.sh): they
// work on channel-blocked layouts (nChw16c) that keep a 16-wide vector of
// channels in registers. metart's tensors stay NCHW, so each call reorders
// its operands into the layouts oneDNN picks and the result back, in the
// backend's workspace. oneDNN computes f32 only; f64 and the shapes for
// which it has only a reference implementation stay on im2col.
//
// Which kernel computes a shape is measured (Convolution.cpp): oneDNN on
// the backend's threads, oneDNN on one thread (small shapes, where waking
// OpenMP's threads costs more than it gains) or im2col. METART_CONVOLUTION
// overrides that: `im2col` turns oneDNN off, `onednn` uses it wherever
// `handles` says so; `auto`, the default, measures. Built without oneDNN,
// `handles` is always false.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_CPU_ONEDNN_H
#define METART_SRC_CPU_ONEDNN_H

#include "../KernelSizes.h"
#include "../Tensor.h"

#include <memory>

namespace metart::cpu {

class Workspace;

/// The three convolution kernels of the CPU backend through oneDNN, with
/// their primitives kept per shape (creating one JIT-compiles it).
class OneDnnConvolutions {
public:
  OneDnnConvolutions();
  ~OneDnnConvolutions();
  OneDnnConvolutions(const OneDnnConvolutions &) = delete;
  OneDnnConvolutions &operator=(const OneDnnConvolutions &) = delete;

  /// Whether oneDNN computes convolutions of `dtype` with these sizes (in
  /// all three directions): it is built in and enabled, the type is f32 and
  /// its implementation for the shape is not a reference one.
  bool handles(metart_dtype dtype, const ConvSizes &sizes);

  /// y = conv(x, w) + b per slice, as CpuBackend::conv2d (bias may be null).
  KernelStatus forward(const ConvSizes &sizes, Workspace &workspace,
                       const float *x, const float *weight, const float *bias,
                       float *y);
  /// The input derivative, as CpuBackend::conv2dBackwardInput.
  KernelStatus backwardInput(const ConvSizes &sizes, Workspace &workspace,
                             const float *grad, const float *weight, float *y);
  /// The weight derivative, as CpuBackend::conv2dBackwardWeight.
  KernelStatus backwardWeight(const ConvSizes &sizes, Workspace &workspace,
                              const float *x, const float *grad, float *y);

  /// Whether METART_CONVOLUTION asks for oneDNN wherever it handles a
  /// shape, without measuring.
  bool forced() const;
  /// Runs the kernels on `threads` threads (0: the backend's).
  void setThreads(int threads);

  /// The implementation oneDNN chose for the forward convolution of these
  /// sizes (e.g. "jit:avx512_core"), or "" when oneDNN does not handle it.
  std::string implementation(const ConvSizes &sizes);

private:
  struct State;
  std::unique_ptr<State> state;
};

} // namespace metart::cpu

#endif // METART_SRC_CPU_ONEDNN_H
