//===- ConvolutionChoice.h - cuDNN or im2col, measured per shape -*- C++
//-*-===//
//
// The first call of a convolution shape in each direction, outside a
// graph's recording, runs cuDNN and im2col + cuBLAS once each (cuDNN loads
// its kernels, im2col grows its workspace), then records each in a CUDA
// graph and times a replay with events (the device's time without the
// host's launch gaps: training replays its step as a graph, and eager
// timings of these small convolutions measured mostly the launches), and
// keeps the faster for the shape. Every run writes the whole result, so
// the last one's is as good as any. A shape first seen while a graph
// records takes cuDNN, unmeasured. With METART_CONVOLUTION_VERBOSE set,
// each measurement is printed. The choice is measured per process: two
// runs (or a run and its resumption) may choose differently for a shape
// near parity, and so differ in the last bits; METART_CONVOLUTION fixes
// it.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_CUDA_CONVOLUTIONCHOICE_H
#define METART_SRC_CUDA_CONVOLUTIONCHOICE_H

#include "Cudnn.h"

#include <array>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

namespace metart::cuda {

/// The milliseconds the device takes to run `run()` (the second launch of
/// a graph that recorded it, timed by events: no host launch gaps, as
/// training replays its graph), or -1 when it could not be recorded.
template <typename Run> float replayMilliseconds(cudaStream_t stream, Run run) {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  float milliseconds = -1;
  if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed) ==
      cudaSuccess) {
    KernelStatus status = run();
    cudaError_t ended = cudaStreamEndCapture(stream, &graph);
    if (!status.failed() && ended == cudaSuccess && graph &&
        cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess &&
        cudaEventCreate(&start) == cudaSuccess &&
        cudaEventCreate(&stop) == cudaSuccess &&
        cudaGraphLaunch(exec, stream) == cudaSuccess &&
        cudaEventRecord(start, stream) == cudaSuccess &&
        cudaGraphLaunch(exec, stream) == cudaSuccess &&
        cudaEventRecord(stop, stream) == cudaSuccess &&
        cudaEventSynchronize(stop) == cudaSuccess &&
        cudaEventElapsedTime(&milliseconds, start, stop) != cudaSuccess)
      milliseconds = -1;
  }
  (void)cudaGetLastError(); // a failed capture leaves its error behind
  if (start)
    cudaEventDestroy(start);
  if (stop)
    cudaEventDestroy(stop);
  if (exec)
    cudaGraphExecDestroy(exec);
  if (graph)
    cudaGraphDestroy(graph);
  return milliseconds;
}

/// Runs `im2col()` or `library()` (each a full convolution returning a
/// KernelStatus) for a convolution in `direction` (0 forward, 1 input and
/// 2 weight derivative), as measured.
template <typename Im2col, typename Library>
KernelStatus chooseConvolution(int direction, metart_dtype dtype,
                               const ConvSizes &s, cudaStream_t stream,
                               bool capturing, CudnnConvolutions &cudnn,
                               std::map<std::array<int64_t, 17>, bool> &choices,
                               Im2col im2col, Library library) {
  if (!cudnn.handles(dtype, s, stream)) {
    if (cudnn.forced() && !cudnn.unavailable().empty())
      return {METART_ERROR_UNSUPPORTED,
              "METART_CONVOLUTION=cudnn: " + cudnn.unavailable()};
    return im2col();
  }
  // Where cuDNN cannot compute a shape (no algorithm of the precision
  // wanted, a workspace the device lacks), im2col does: every path writes
  // the whole result, the bias included.
  auto libraryElseIm2col = [&] {
    KernelStatus status = library();
    if (status.failed() && (status.code == METART_ERROR_UNSUPPORTED ||
                            status.code == METART_ERROR_OUT_OF_MEMORY))
      return im2col();
    return status;
  };
  if (cudnn.forced())
    return libraryElseIm2col();
  std::array<int64_t, 17> key = {direction,
                                 static_cast<int64_t>(dtype),
                                 s.images,
                                 s.slices,
                                 s.imagesPerSlice,
                                 s.channels,
                                 s.height,
                                 s.width,
                                 s.outChannels,
                                 s.kernelH,
                                 s.kernelW,
                                 s.outHeight,
                                 s.outWidth,
                                 s.strideH,
                                 s.strideW,
                                 s.padH,
                                 s.padW};
  auto found = choices.find(key);
  if (found != choices.end())
    return found->second ? libraryElseIm2col() : im2col();
  if (capturing)
    return libraryElseIm2col();
  // Each candidate runs once as it is (cuDNN loads its kernels, im2col
  // grows the workspace), then is timed as a graph replays it.
  float milliseconds[2] = {0, 0};
  bool libraryRuns = true;
  KernelStatus status = im2col();
  if (!status.failed()) {
    status = library();
    // cuDNN does not run the shape (no algorithm, no workspace, ...):
    // im2col computes it.
    if (status.failed()) {
      libraryRuns = false;
      status = im2col();
    }
  }
  if (status.failed())
    return status;
  for (int candidate = 0; candidate < (libraryRuns ? 2 : 1); ++candidate) {
    float replay = replayMilliseconds(
        stream, [&] { return candidate == 0 ? im2col() : library(); });
    if (replay < 0) {
      // A graph could not record it: the last eager run's result stands.
      libraryRuns = false;
      break;
    }
    milliseconds[candidate] = replay;
  }
  bool useLibrary = libraryRuns && milliseconds[1] < milliseconds[0];
  choices[key] = useLibrary;
  if (std::getenv("METART_CONVOLUTION_VERBOSE"))
    std::fprintf(
        stderr,
        "metart: convolution %s, %lld slices of %lld images "
        "%lldx%lldx%lld -> %lldx%lldx%lld: im2col %.1f us, cuDNN "
        "%s us: %s\n",
        direction == 0   ? "forward"
        : direction == 1 ? "input derivative"
                         : "weight derivative",
        static_cast<long long>(s.slices),
        static_cast<long long>(s.imagesPerSlice),
        static_cast<long long>(s.channels), static_cast<long long>(s.height),
        static_cast<long long>(s.width), static_cast<long long>(s.outChannels),
        static_cast<long long>(s.outHeight), static_cast<long long>(s.outWidth),
        milliseconds[0] * 1e3,
        libraryRuns ? std::to_string(milliseconds[1] * 1e3).c_str()
                    : "(no algorithm)",
        useLibrary ? "cuDNN" : "im2col");
  // Every run wrote the whole result: the last one's is as good as any.
  return KernelStatus::ok();
}

} // namespace metart::cuda

#endif // METART_SRC_CUDA_CONVOLUTIONCHOICE_H
