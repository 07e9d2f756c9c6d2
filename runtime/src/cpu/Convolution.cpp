//===- Convolution.cpp - 2-D convolution on the CPU -----------------------===//
//
// im2col + GEMM. `im2col` lays an image's input taps out as a `[C * kh *
// kw, H' * W']` matrix (zeros for the padding), so that the convolution with
// its weight slice `[O, C * kh * kw]` is a GEMM. The images of one slice
// (those sharing a weight) go through in groups, their columns side by side
// in one `[taps, group * H' * W']` matrix, so that each product is one large
// GEMM rather than one small GEMM per image (a 3x3 image has 9 positions);
// the outputs are then scattered to `[image, O, H', W']`. The input
// derivative is the transposed product followed by `col2im`, which adds the
// columns back onto the images; the weight derivative is the product of the
// grouped output gradients with the grouped columns, summed over groups. A
// 1x1 convolution with stride 1 and no padding uses each image itself as its
// columns, one image at a time.
//
//===----------------------------------------------------------------------===//

#include "CpuBackend.h"
#include "Dtype.h"
#include "Gemm.h"

#include <algorithm>
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
  /// Images per product (at most a slice's).
  int64_t group;
};

/// The images of one product: [first, first + count), all of one slice.
struct Group {
  int64_t first, count, slice;
};

/// The output columns [lo, hi) whose tap at kernel offset `v` falls inside
/// an input row of `size` elements.
struct Span {
  int64_t lo, hi;
};
} // namespace

/// The columns and staged outputs of a group take at most this many bytes
/// (unless one image needs more): large enough for GEMMs that run at
/// BLAS's speed, small enough to stay in the last-level cache's vicinity.
constexpr size_t kGroupBytes = size_t(8) << 20;

static Plan planOf(const ConvSizes &s, size_t elementSize) {
  Plan p;
  p.taps = s.channels * s.kernelH * s.kernelW;
  p.positions = s.outHeight * s.outWidth;
  p.direct = s.kernelH == 1 && s.kernelW == 1 && s.strideH == 1 &&
             s.strideW == 1 && s.padH == 0 && s.padW == 0;
  p.imageSize = s.channels * s.height * s.width;
  p.outputSize = s.outChannels * p.positions;
  p.group = 1;
  uint64_t perImage =
      static_cast<uint64_t>(p.taps + s.outChannels) * p.positions * elementSize;
  if (!p.direct && perImage > 0)
    p.group = std::clamp<int64_t>(static_cast<int64_t>(kGroupBytes / perImage),
                                  1, std::max<int64_t>(s.imagesPerSlice, 1));
  return p;
}

/// Calls `fn(group)` for consecutive groups of at most `p.group` images,
/// none spanning two slices.
template <typename Fn>
static void forEachGroup(const ConvSizes &s, const Plan &p, Fn fn) {
  for (int64_t n = 0; n < s.images;) {
    int64_t slice = n / s.imagesPerSlice;
    int64_t end =
        std::min({n + p.group, (slice + 1) * s.imagesPerSlice, s.images});
    fn(Group{n, end - n, slice});
    n = end;
  }
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
/// exists: `columnRow` points at the row's outputs in the columns matrix
/// (whose tap rows are `rowStride` elements apart),
/// `imageRow` at the input row, output j reads input element `j * stride +
/// shift`, and `span` bounds the outputs that fall inside the input row.
/// Outputs outside it, and rows without an input row (`pad(columnRow)`), are
/// padding.
template <typename T, typename Col, typename Fn, typename Pad>
static void forEachTapRow(const ConvSizes &s, Col *columns, int64_t rowStride,
                          T *image, Fn fn, Pad pad) {
  for (int64_t c = 0; c < s.channels; ++c)
    for (int64_t u = 0; u < s.kernelH; ++u)
      for (int64_t v = 0; v < s.kernelW; ++v) {
        Col *tap = columns + ((c * s.kernelH + u) * s.kernelW + v) * rowStride;
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

/// Lays out the taps of `image` as the columns `[taps, positions]` of a
/// matrix whose rows are `rowStride` elements apart.
template <typename T>
static void im2col(const ConvSizes &s, const T *image, T *columns,
                   int64_t rowStride) {
  int64_t stride = s.strideW, width = s.outWidth;
  forEachTapRow(
      s, columns, rowStride, image,
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

/// Adds the columns (rows `rowStride` apart) back onto `image` (which the
/// caller zeroed).
template <typename T>
static void col2im(const ConvSizes &s, const T *columns, int64_t rowStride,
                   T *image) {
  int64_t stride = s.strideW;
  forEachTapRow(
      s, columns, rowStride, image,
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

/// The workspace of one group: its columns (unless direct) and its staged
/// outputs or output gradients `[O, group * positions]` (for groups of more
/// than one image).
template <typename T> struct Buffers {
  T *columns = nullptr;
  T *staging = nullptr;
};

/// Checks the sizes against BLAS and reserves the workspace of one group.
template <typename T>
static KernelStatus prepare(const ConvSizes &s, const Plan &p,
                            Workspace &workspace, Buffers<T> &buffers) {
  int64_t width = p.group * p.positions;
  if (!fitsBlas(s.outChannels, width, p.taps) ||
      !fitsBlas(p.taps, width, s.outChannels))
    return {METART_ERROR_UNSUPPORTED,
            "a convolution with " + std::to_string(p.taps) + " taps and " +
                std::to_string(p.positions) +
                " output positions exceeds BLAS's 32-bit sizes"};
  uint64_t columns = p.direct ? 0 : static_cast<uint64_t>(p.taps) * width;
  uint64_t staging =
      p.group > 1 ? static_cast<uint64_t>(s.outChannels) * width : 0;
  if (columns + staging == 0)
    return KernelStatus::ok();
  if (columns + staging > std::numeric_limits<size_t>::max() / sizeof(T))
    return workspaceExhausted(std::numeric_limits<size_t>::max());
  size_t bytes = static_cast<size_t>(columns + staging) * sizeof(T);
  T *data = static_cast<T *>(workspace.get(bytes));
  if (!data)
    return workspaceExhausted(bytes);
  buffers.columns = p.direct ? nullptr : data;
  buffers.staging = p.group > 1 ? data + columns : nullptr;
  return KernelStatus::ok();
}

/// The group's input as one `[taps, count * positions]` matrix: the direct
/// image itself, or the images' columns side by side.
template <typename T>
static const T *groupColumns(const ConvSizes &s, const Plan &p, const T *x,
                             const Group &g, T *columns) {
  if (p.direct)
    return x + g.first * p.imageSize;
  int64_t width = g.count * p.positions;
  for (int64_t k = 0; k < g.count; ++k)
    im2col(s, x + (g.first + k) * p.imageSize, columns + k * p.positions,
           width);
  return columns;
}

template <typename T>
static KernelStatus conv2dOf(const ConvSizes &s, Workspace &workspace,
                             const T *x, const T *weight, const T *bias, T *y) {
  Plan p = planOf(s, sizeof(T));
  Buffers<T> buffers;
  KernelStatus status = prepare(s, p, workspace, buffers);
  if (status.failed())
    return status;
  const int64_t positions = p.positions, out = s.outChannels;
  forEachGroup(s, p, [&](const Group &g) {
    int64_t width = g.count * positions;
    const T *matrix = groupColumns(s, p, x, g, buffers.columns);
    const T *w = weight + g.slice * out * p.taps;
    const T *b = bias ? bias + g.slice * out : nullptr;
    T *image = y + g.first * p.outputSize;
    if (g.count == 1) {
      if (b)
        for (int64_t o = 0; o < out; ++o)
          std::fill(image + o * positions, image + (o + 1) * positions, b[o]);
      gemm(out, positions, p.taps, MatrixRef<T>{w, p.taps, false},
           MatrixRef<T>{matrix, positions, false}, b ? T(1) : T(0), image,
           positions);
      return;
    }
    // [O, count * positions] staged, then scattered image by image.
    gemm(out, width, p.taps, MatrixRef<T>{w, p.taps, false},
         MatrixRef<T>{matrix, width, false}, T(0), buffers.staging, width);
    for (int64_t k = 0; k < g.count; ++k)
      for (int64_t o = 0; o < out; ++o) {
        const T *from = buffers.staging + o * width + k * positions;
        T *to = image + k * p.outputSize + o * positions;
        T shift = b ? b[o] : T(0);
        for (int64_t j = 0; j < positions; ++j)
          to[j] = from[j] + shift;
      }
  });
  return KernelStatus::ok();
}

/// The group's output gradients as one `[O, count * positions]` matrix:
/// the gradient itself for one image, else gathered into `staging`.
template <typename T>
static const T *groupGradients(const ConvSizes &s, const Plan &p, const T *grad,
                               const Group &g, T *staging) {
  const T *first = grad + g.first * p.outputSize;
  if (g.count == 1)
    return first;
  int64_t width = g.count * p.positions;
  for (int64_t k = 0; k < g.count; ++k)
    for (int64_t o = 0; o < s.outChannels; ++o)
      std::copy_n(first + k * p.outputSize + o * p.positions, p.positions,
                  staging + o * width + k * p.positions);
  return staging;
}

KernelStatus CpuBackend::conv2d(metart_dtype dtype, const ConvSizes &sizes,
                                const void *x, const void *weight,
                                const void *bias, void *y) {
  return withFloat(dtype, [&](auto t) {
    using T = decltype(t);
    return conv2dOf(sizes, workspace, static_cast<const T *>(x),
                    static_cast<const T *>(weight),
                    static_cast<const T *>(bias), static_cast<T *>(y));
  });
}

template <typename T>
static KernelStatus backwardInputOf(const ConvSizes &s, Workspace &workspace,
                                    const T *grad, const T *weight, T *y) {
  Plan p = planOf(s, sizeof(T));
  Buffers<T> buffers;
  KernelStatus status = prepare(s, p, workspace, buffers);
  if (status.failed())
    return status;
  forEachGroup(s, p, [&](const Group &g) {
    int64_t width = g.count * p.positions;
    const T *gradients = groupGradients(s, p, grad, g, buffers.staging);
    T *images = y + g.first * p.imageSize;
    // columns = w_s^T grad: w_s is stored [O, taps], read transposed.
    T *target = p.direct ? images : buffers.columns;
    gemm(p.taps, width, s.outChannels,
         MatrixRef<T>{weight + g.slice * s.outChannels * p.taps, p.taps, true},
         MatrixRef<T>{gradients, width, false}, T(0), target, width);
    if (p.direct)
      return;
    std::fill(images, images + g.count * p.imageSize, T(0));
    for (int64_t k = 0; k < g.count; ++k)
      col2im(s, buffers.columns + k * p.positions, width,
             images + k * p.imageSize);
  });
  return KernelStatus::ok();
}

KernelStatus CpuBackend::conv2dBackwardInput(metart_dtype dtype,
                                             const ConvSizes &sizes,
                                             const void *grad,
                                             const void *weight, void *y) {
  return withFloat(dtype, [&](auto t) {
    using T = decltype(t);
    return backwardInputOf(sizes, workspace, static_cast<const T *>(grad),
                           static_cast<const T *>(weight), static_cast<T *>(y));
  });
}

template <typename T>
static KernelStatus backwardWeightOf(const ConvSizes &s, Workspace &workspace,
                                     const T *x, const T *grad, T *y) {
  Plan p = planOf(s, sizeof(T));
  Buffers<T> buffers;
  KernelStatus status = prepare(s, p, workspace, buffers);
  if (status.failed())
    return status;
  int64_t sliceSize = s.outChannels * p.taps;
  // Slices without images (an empty batch) get a zero gradient.
  std::fill(y, y + s.slices * sliceSize, T(0));
  forEachGroup(s, p, [&](const Group &g) {
    int64_t width = g.count * p.positions;
    const T *matrix = groupColumns(s, p, x, g, buffers.columns);
    const T *gradients = groupGradients(s, p, grad, g, buffers.staging);
    // w_s += grad columns^T: columns are stored [taps, count * positions].
    gemm(s.outChannels, p.taps, width, MatrixRef<T>{gradients, width, false},
         MatrixRef<T>{matrix, width, true}, T(1), y + g.slice * sliceSize,
         p.taps);
  });
  return KernelStatus::ok();
}

KernelStatus CpuBackend::conv2dBackwardWeight(metart_dtype dtype,
                                              const ConvSizes &sizes,
                                              const void *x, const void *grad,
                                              void *y) {
  return withFloat(dtype, [&](auto t) {
    using T = decltype(t);
    return backwardWeightOf(sizes, workspace, static_cast<const T *>(x),
                            static_cast<const T *>(grad), static_cast<T *>(y));
  });
}

} // namespace metart::cpu
