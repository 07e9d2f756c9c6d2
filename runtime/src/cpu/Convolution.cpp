//===- Convolution.cpp - 2-D convolution on the CPU -----------------------===//
//
// im2col + GEMM, the images (or the weight derivative's slices) in
// parallel. For each image, `im2col` lays the input taps out as a
// `[C * kh * kw, H' * W']` matrix (zeros for the padding), so that the
// convolution with its weight slice `[O, C * kh * kw]` is one GEMM. The
// input derivative is the transposed product followed by `col2im`, which
// adds the columns back onto the image; the weight derivative sums, over the
// images of a slice, the product of the output gradient with the columns.
// A 1x1 convolution with stride 1 and no padding uses the image itself as
// its columns. f32 convolutions run on oneDNN where it measures faster
// (OneDnn.h, chooseConvolution below).
//
//===----------------------------------------------------------------------===//

#include "CpuBackend.h"
#include "Dtype.h"
#include "Gemm.h"
#include "Parallel.h"
#include "Workspace.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace metart::cpu {

namespace {
/// The products one image's convolution makes, in GEMM terms.
struct Plan {
  /// Rows of the columns matrix (C * kh * kw) and its columns (H' * W').
  int64_t taps, positions;
  /// Whether the image is its own columns matrix (1x1, stride 1, no pad).
  bool direct;
  /// Elements of an input image and of an output image.
  int64_t imageSize, outputSize;
};

/// The output columns [lo, hi) whose tap at kernel offset `v` falls inside
/// an input row of `size` elements.
struct Span {
  int64_t lo, hi;
};
} // namespace

static Plan planOf(const ConvSizes &s) {
  Plan p;
  p.taps = s.channels * s.kernelH * s.kernelW;
  p.positions = s.outHeight * s.outWidth;
  p.direct = s.kernelH == 1 && s.kernelW == 1 && s.strideH == 1 &&
             s.strideW == 1 && s.padH == 0 && s.padW == 0;
  p.imageSize = s.channels * s.height * s.width;
  p.outputSize = s.outChannels * p.positions;
  return p;
}

/// The outputs j in [0, outSize) with 0 <= j * stride - pad + v < size.
static Span validSpan(int64_t v, int64_t pad, int64_t stride, int64_t size,
                      int64_t outSize) {
  int64_t lo = pad - v > 0 ? (pad - v + stride - 1) / stride : 0;
  int64_t last = size - 1 + pad - v;
  int64_t hi = last < 0 ? 0 : std::min(outSize, last / stride + 1);
  lo = std::min(lo, outSize);
  return {lo, std::max(lo, hi)};
}

/// Calls `fn(columnRow, imageRow, shift, span)` for every row of output
/// positions of every tap (channel c, kernel offset u, v) whose input row
/// exists: `columnRow` points at the row's outputs in the columns matrix,
/// `imageRow` at the input row, output j reads input element `j * stride +
/// shift`, and `span` bounds the outputs that fall inside the input row.
/// Outputs outside it, and rows without an input row (`pad(columnRow)`), are
/// padding.
template <typename T, typename Col, typename Fn, typename Pad>
static void forEachTapRow(const ConvSizes &s, Col *columns, T *image, Fn fn,
                          Pad pad) {
  int64_t positions = s.outHeight * s.outWidth;
  for (int64_t c = 0; c < s.channels; ++c)
    for (int64_t u = 0; u < s.kernelH; ++u)
      for (int64_t v = 0; v < s.kernelW; ++v) {
        Col *tap = columns + ((c * s.kernelH + u) * s.kernelW + v) * positions;
        Span span = validSpan(v, s.padW, s.strideW, s.width, s.outWidth);
        for (int64_t i = 0; i < s.outHeight; ++i) {
          Col *columnRow = tap + i * s.outWidth;
          int64_t row = i * s.strideH - s.padH + u;
          if (row < 0 || row >= s.height) {
            pad(columnRow);
            continue;
          }
          fn(columnRow, image + (c * s.height + row) * s.width, v - s.padW,
             span);
        }
      }
}

/// Lays out the taps of `image` as the columns matrix `[taps, positions]`.
template <typename T>
static void im2col(const ConvSizes &s, const T *image, T *columns) {
  int64_t stride = s.strideW, width = s.outWidth;
  forEachTapRow(
      s, columns, image,
      [&](T *out, const T *in, int64_t shift, Span span) {
        for (int64_t j = 0; j < span.lo; ++j)
          out[j] = T(0);
        if (stride == 1)
          std::copy(in + span.lo + shift, in + span.hi + shift, out + span.lo);
        else
          for (int64_t j = span.lo; j < span.hi; ++j)
            out[j] = in[j * stride + shift];
        for (int64_t j = span.hi; j < width; ++j)
          out[j] = T(0);
      },
      [&](T *out) { std::fill(out, out + width, T(0)); });
}

/// Adds the columns matrix back onto `image` (which the caller zeroed).
template <typename T>
static void col2im(const ConvSizes &s, const T *columns, T *image) {
  int64_t stride = s.strideW;
  forEachTapRow(
      s, columns, image,
      [&](const T *in, T *out, int64_t shift, Span span) {
        if (stride == 1) {
          T *row = out + shift;
          for (int64_t j = span.lo; j < span.hi; ++j)
            row[j] += in[j];
          return;
        }
        for (int64_t j = span.lo; j < span.hi; ++j)
          out[j * stride + shift] += in[j];
      },
      [](const T *) {});
}

/// The workspace bytes of one columns matrix, or SIZE_MAX on overflow.
template <typename T> static size_t columnBytes(const Plan &p) {
  if (p.direct || p.taps == 0 || p.positions == 0)
    return 0;
  size_t limit = std::numeric_limits<size_t>::max() / sizeof(T);
  if (static_cast<uint64_t>(p.positions) >
      limit / static_cast<uint64_t>(p.taps))
    return std::numeric_limits<size_t>::max();
  return static_cast<size_t>(p.taps * p.positions) * sizeof(T);
}

/// Checks the sizes against BLAS and the columns matrix's bytes.
template <typename T>
static KernelStatus checkSizes(const ConvSizes &s, const Plan &p) {
  if (!fitsBlas(s.outChannels, p.positions, p.taps))
    return {METART_ERROR_UNSUPPORTED,
            "a convolution with " + std::to_string(p.taps) + " taps and " +
                std::to_string(p.positions) +
                " output positions exceeds BLAS's 32-bit sizes"};
  if (columnBytes<T>(p) == std::numeric_limits<size_t>::max())
    return workspaceExhausted(columnBytes<T>(p));
  return KernelStatus::ok();
}

/// Each thread's columns matrix: images are convolved in parallel.
static thread_local Workspace threadColumns;

/// Runs `body(i, columns)` for i in [0, count) (images, or slices of
/// images) in parallel, each thread with its own columns matrix (null when
/// the plan needs none). Every i writes its own outputs, so the results do
/// not depend on the threads. The products are small: each runs on its
/// thread alone (Gemm.cpp), which beats splitting one product at a time
/// over the threads (the f64 Fashion-MNIST ConvNet, 2 shots and 16
/// queries, beside two niced processes: 669 -> 496 ms per meta-iteration).
template <typename T, typename Body>
static KernelStatus inParallel(const Plan &p, int64_t count, Body body) {
  size_t bytes = columnBytes<T>(p);
  std::atomic<bool> exhausted{false};
  parallelFor(count, 1, [&](int64_t begin, int64_t end) {
    T *columns = nullptr;
    if (bytes > 0) {
      columns = static_cast<T *>(threadColumns.get(bytes));
      if (!columns) {
        exhausted.store(true, std::memory_order_relaxed);
        return;
      }
    }
    for (int64_t i = begin; i < end; ++i)
      body(i, columns);
  });
  return exhausted.load() ? workspaceExhausted(bytes) : KernelStatus::ok();
}

template <typename T>
static KernelStatus conv2dOf(const ConvSizes &s, const T *x, const T *weight,
                             const T *bias, T *y) {
  Plan p = planOf(s);
  if (KernelStatus status = checkSizes<T>(s, p); status.failed())
    return status;
  return inParallel<T>(p, s.images, [&](int64_t n, T *columns) {
    int64_t slice = n / s.imagesPerSlice;
    const T *image = x + n * p.imageSize;
    T *out = y + n * p.outputSize;
    if (bias)
      for (int64_t o = 0; o < s.outChannels; ++o)
        std::fill(out + o * p.positions, out + (o + 1) * p.positions,
                  bias[slice * s.outChannels + o]);
    const T *matrix = image;
    if (!p.direct) {
      im2col(s, image, columns);
      matrix = columns;
    }
    gemm(s.outChannels, p.positions, p.taps,
         MatrixRef<T>{weight + slice * s.outChannels * p.taps, p.taps, false},
         MatrixRef<T>{matrix, p.positions, false}, bias ? T(1) : T(0), out,
         p.positions);
  });
}

namespace {
/// The kernels a convolution can run on, in the order they are measured.
enum Candidate { Im2col, OneDnn, OneDnnOneThread, Candidates };
} // namespace

static const char *const candidateNames[Candidates] = {"im2col", "oneDNN",
                                                       "oneDNN on one thread"};

/// Prints one shape's measurement (METART_CONVOLUTION_VERBOSE).
static void printChoice(int direction, const ConvSizes &s,
                        const double (&seconds)[Candidates], int fastest) {
  auto ll = [](int64_t v) { return static_cast<long long>(v); };
  std::string times;
  for (int c = 0; c < Candidates; ++c)
    times += std::string(c ? ", " : "") + candidateNames[c] + " " +
             (std::isfinite(seconds[c])
                  ? std::to_string(ll(std::llround(seconds[c] * 1e6))) + " us"
                  : std::string("(not run)"));
  std::fprintf(stderr,
               "metart: convolution %s, %lld slices of %lld images "
               "%lldx%lldx%lld -> %lldx%lldx%lld: %s: %s\n",
               direction == 0   ? "forward"
               : direction == 1 ? "input derivative"
                                : "weight derivative",
               ll(s.slices), ll(s.imagesPerSlice), ll(s.channels), ll(s.height),
               ll(s.width), ll(s.outChannels), ll(s.outHeight), ll(s.outWidth),
               times.c_str(), candidateNames[fastest]);
}

/// Runs one convolution (direction 0 forward, 1 input and 2 weight
/// derivative) on the kernel measured fastest for its shape. The first call
/// of a shape runs each candidate once to warm it up (oneDNN JIT-compiles
/// its primitive, im2col grows its workspace), then times them in turn,
/// three rounds, and keeps the fastest (one round, beside a build, once
/// chose im2col for ProtoNets' largest layer: 0.41x oneDNN's speed); a
/// candidate that fails (its workspace) is left out. f64, shapes oneDNN
/// does not handle and METART_CONVOLUTION=im2col take im2col;
/// METART_CONVOLUTION=onednn takes oneDNN on the backend's threads without
/// measuring. The choice is made per process: two runs may choose differently
/// for a shape near parity and so differ in the last bits of f32;
/// METART_CONVOLUTION fixes it.
template <typename Im2colFn, typename OneDnnFn>
static KernelStatus
chooseConvolution(int direction, metart_dtype dtype, const ConvSizes &s,
                  OneDnnConvolutions &convolutions,
                  std::map<std::array<int64_t, 15>, int> &choices,
                  Im2colFn im2col, OneDnnFn oneDnn) {
  if (!convolutions.handles(dtype, s))
    return im2col();
  auto run = [&](int candidate) {
    if (candidate == Im2col)
      return im2col();
    convolutions.setThreads(candidate == OneDnnOneThread ? 1 : 0);
    return oneDnn();
  };
  if (convolutions.forced())
    return run(OneDnn);
  std::array<int64_t, 15> key = {
      direction,  s.slices,      s.imagesPerSlice, s.channels, s.height,
      s.width,    s.outChannels, s.kernelH,        s.kernelW,  s.outHeight,
      s.outWidth, s.strideH,     s.strideW,        s.padH,     s.padW};
  auto found = choices.find(key);
  if (found != choices.end())
    return run(found->second);
  // Each candidate runs once to warm up, then kRounds rounds time each in
  // turn (interleaved, so that a burst of other load slows them alike) and
  // keep its fastest. A candidate that fails is left out; im2col is not
  // tried where its columns would take more than kIm2colBytes per thread
  // (memory kept for the run, where oneDNN wins by far anyway).
  constexpr int kRounds = 3;
  constexpr size_t kIm2colBytes = size_t(64) << 20;
  double seconds[Candidates];
  bool runs[Candidates];
  int last = -1;
  auto attempt = [&](int candidate) {
    runs[candidate] = !run(candidate).failed();
    if (runs[candidate])
      last = candidate;
    return runs[candidate];
  };
  for (int candidate : {OneDnn, OneDnnOneThread, Im2col}) {
    seconds[candidate] = std::numeric_limits<double>::infinity();
    runs[candidate] =
        candidate != Im2col || columnBytes<float>(planOf(s)) <= kIm2colBytes;
    if (runs[candidate])
      attempt(candidate);
  }
  for (int round = 0; round < kRounds; ++round)
    for (int candidate : {OneDnn, OneDnnOneThread, Im2col}) {
      if (!runs[candidate])
        continue;
      auto start = std::chrono::steady_clock::now();
      if (!attempt(candidate))
        continue;
      seconds[candidate] = std::min(
          seconds[candidate], std::chrono::duration<double>(
                                  std::chrono::steady_clock::now() - start)
                                  .count());
    }
  int fastest = -1;
  for (int candidate : {Im2col, OneDnn, OneDnnOneThread})
    if (runs[candidate] &&
        (fastest < 0 || seconds[candidate] < seconds[fastest]))
      fastest = candidate;
  // None ran: im2col computes it, or says why it cannot.
  if (fastest < 0)
    return im2col();
  choices[key] = fastest;
  if (std::getenv("METART_CONVOLUTION_VERBOSE"))
    printChoice(direction, s, seconds, fastest);
  // Leave the result to the chosen kernel, as every later call.
  return last == fastest ? KernelStatus::ok() : run(fastest);
}

KernelStatus CpuBackend::conv2d(metart_dtype dtype, const ConvSizes &sizes,
                                const void *x, const void *weight,
                                const void *bias, void *y) {
  auto im2col = [&] {
    return withFloat(dtype, [&](auto t) {
      using T = decltype(t);
      return conv2dOf(sizes, static_cast<const T *>(x),
                      static_cast<const T *>(weight),
                      static_cast<const T *>(bias), static_cast<T *>(y));
    });
  };
  auto oneDnn = [&] {
    return convolutions.forward(sizes, workspace, static_cast<const float *>(x),
                                static_cast<const float *>(weight),
                                static_cast<const float *>(bias),
                                static_cast<float *>(y));
  };
  return chooseConvolution(0, dtype, sizes, convolutions, convolutionChoices,
                           im2col, oneDnn);
}

template <typename T>
static KernelStatus backwardInputOf(const ConvSizes &s, const T *grad,
                                    const T *weight, T *y) {
  Plan p = planOf(s);
  if (KernelStatus status = checkSizes<T>(s, p); status.failed())
    return status;
  return inParallel<T>(p, s.images, [&](int64_t n, T *columns) {
    int64_t slice = n / s.imagesPerSlice;
    T *image = y + n * p.imageSize;
    // columns = w_s^T grad_n: w_s is stored [O, taps], read transposed.
    T *target = p.direct ? image : columns;
    gemm(p.taps, p.positions, s.outChannels,
         MatrixRef<T>{weight + slice * s.outChannels * p.taps, p.taps, true},
         MatrixRef<T>{grad + n * p.outputSize, p.positions, false}, T(0),
         target, p.positions);
    if (!p.direct) {
      std::fill(image, image + p.imageSize, T(0));
      col2im(s, columns, image);
    }
  });
}

KernelStatus CpuBackend::conv2dBackwardInput(metart_dtype dtype,
                                             const ConvSizes &sizes,
                                             const void *grad,
                                             const void *weight, void *y) {
  auto im2col = [&] {
    return withFloat(dtype, [&](auto t) {
      using T = decltype(t);
      return backwardInputOf(sizes, static_cast<const T *>(grad),
                             static_cast<const T *>(weight),
                             static_cast<T *>(y));
    });
  };
  auto oneDnn = [&] {
    return convolutions.backwardInput(
        sizes, workspace, static_cast<const float *>(grad),
        static_cast<const float *>(weight), static_cast<float *>(y));
  };
  return chooseConvolution(1, dtype, sizes, convolutions, convolutionChoices,
                           im2col, oneDnn);
}

template <typename T>
static KernelStatus backwardWeightOf(const ConvSizes &s, const T *x,
                                     const T *grad, T *y) {
  Plan p = planOf(s);
  if (KernelStatus status = checkSizes<T>(s, p); status.failed())
    return status;
  int64_t sliceSize = s.outChannels * p.taps;
  // Slices without images (an empty batch) get a zero gradient.
  std::fill(y, y + s.slices * sliceSize, T(0));
  // In parallel over slices: each sums its images in order.
  return inParallel<T>(p, s.slices, [&](int64_t slice, T *columns) {
    for (int64_t i = 0; i < s.imagesPerSlice; ++i) {
      int64_t n = slice * s.imagesPerSlice + i;
      if (n >= s.images)
        return;
      const T *matrix = x + n * p.imageSize;
      if (!p.direct) {
        im2col(s, matrix, columns);
        matrix = columns;
      }
      // w_s += grad_n columns^T: columns are stored [taps, positions].
      gemm(s.outChannels, p.taps, p.positions,
           MatrixRef<T>{grad + n * p.outputSize, p.positions, false},
           MatrixRef<T>{matrix, p.positions, true}, T(1), y + slice * sliceSize,
           p.taps);
    }
  });
}

KernelStatus CpuBackend::conv2dBackwardWeight(metart_dtype dtype,
                                              const ConvSizes &sizes,
                                              const void *x, const void *grad,
                                              void *y) {
  auto im2col = [&] {
    return withFloat(dtype, [&](auto t) {
      using T = decltype(t);
      return backwardWeightOf(sizes, static_cast<const T *>(x),
                              static_cast<const T *>(grad),
                              static_cast<T *>(y));
    });
  };
  auto oneDnn = [&] {
    return convolutions.backwardWeight(
        sizes, workspace, static_cast<const float *>(x),
        static_cast<const float *>(grad), static_cast<float *>(y));
  };
  return chooseConvolution(2, dtype, sizes, convolutions, convolutionChoices,
                           im2col, oneDnn);
}

} // namespace metart::cpu
