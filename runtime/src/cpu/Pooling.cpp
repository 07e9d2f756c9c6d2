//===- Pooling.cpp - 2-D pooling on the CPU -------------------------------===//
//
// Windows are clipped to the input, which is how max pooling pads with
// -inf (padding is never selected) and how average pooling adds zeros;
// average pooling still divides by the full window (count_include_pad).
// Max pooling picks the first maximum of a window in row-major order, or
// its first NaN (NaN propagates, as in PyTorch); its derivative and the
// gather use the same choice. Window sums are computed in double.
//
//===----------------------------------------------------------------------===//

#include "CpuBackend.h"
#include "Dtype.h"
#include "Parallel.h"

#include <algorithm>
#include <cmath>

namespace metart::cpu {

namespace {
/// The input rows [rowLo, rowHi) and columns [colLo, colHi) of one window.
struct Window {
  int64_t rowLo, rowHi, colLo, colHi;
};
} // namespace

/// The window of output (i, j), clipped to the input.
static Window windowOf(const PoolSizes &s, int64_t i, int64_t j) {
  int64_t row = i * s.strideH - s.padH, col = j * s.strideW - s.padW;
  return {std::max<int64_t>(row, 0), std::min(row + s.kernelH, s.height),
          std::max<int64_t>(col, 0), std::min(col + s.kernelW, s.width)};
}

/// Whether `value` replaces `current` as a window's maximum: larger, or the
/// window's first NaN. Without branches, so that loops over windows
/// vectorise.
template <typename T> static bool replacesMaximum(T value, T current) {
  return (value > current) | ((value != value) & (current == current));
}

/// `forEachArgmax` for K x K windows with stride K and no padding (the
/// usual max_pool2d(x, K)): every window lies inside the input, so the
/// loops need no clipping and the compiler unrolls the window.
template <int K, typename T, typename Fn>
static void forEachTiledArgmax(const PoolSizes &s, const T *x, int64_t first,
                               int64_t last, Fn fn) {
  int64_t inPlane = s.height * s.width;
  for (int64_t plane = first; plane < last; ++plane) {
    const T *in = x + plane * inPlane;
    for (int64_t i = 0; i < s.outHeight; ++i)
      for (int64_t j = 0; j < s.outWidth; ++j) {
        int64_t corner = i * K * s.width + j * K, best = corner;
        for (int r = 0; r < K; ++r)
          for (int c = 0; c < K; ++c) {
            int64_t at = corner + r * s.width + c;
            if (replacesMaximum(in[at], in[best]))
              best = at;
          }
        fn(plane, i * s.outWidth + j, best);
      }
  }
}

/// Whether windows are K x K with stride K and no padding.
static bool isTiled(const PoolSizes &s) {
  return s.padH == 0 && s.padW == 0 && s.kernelH == s.kernelW &&
         s.strideH == s.kernelH && s.strideW == s.kernelW;
}

/// Max pooling of the planes [first, last) with 2 x 2 windows and stride
/// 2: the window's maximum (its first NaN), branch-free over a row.
template <typename T>
static void tiledMax2(const PoolSizes &s, const T *x, T *y, int64_t first,
                      int64_t last) {
  int64_t inPlane = s.height * s.width, outPlane = s.outHeight * s.outWidth;
  for (int64_t plane = first; plane < last; ++plane)
    for (int64_t i = 0; i < s.outHeight; ++i) {
      const T *top = x + plane * inPlane + 2 * i * s.width;
      const T *bottom = top + s.width;
      T *out = y + plane * outPlane + i * s.outWidth;
      for (int64_t j = 0; j < s.outWidth; ++j) {
        T m = top[2 * j], v = top[2 * j + 1];
        m = replacesMaximum(v, m) ? v : m;
        v = bottom[2 * j];
        m = replacesMaximum(v, m) ? v : m;
        v = bottom[2 * j + 1];
        m = replacesMaximum(v, m) ? v : m;
        out[j] = m;
      }
    }
}

/// Calls `fn(plane, out, argmax)` for every output element of the planes
/// [first, last) (`out` its index within the output plane) with `argmax`
/// the index within the input plane of its window's maximum.
template <typename T, typename Fn>
static void forEachArgmaxOf(const PoolSizes &s, const T *x, int64_t first,
                            int64_t last, Fn fn) {
  bool tiled = isTiled(s);
  if (tiled && s.kernelH == 2)
    return forEachTiledArgmax<2>(s, x, first, last, fn);
  if (tiled && s.kernelH == 3)
    return forEachTiledArgmax<3>(s, x, first, last, fn);
  int64_t inPlane = s.height * s.width;
  for (int64_t plane = first; plane < last; ++plane) {
    const T *in = x + plane * inPlane;
    for (int64_t i = 0; i < s.outHeight; ++i)
      for (int64_t j = 0; j < s.outWidth; ++j) {
        Window w = windowOf(s, i, j);
        // Padding is at most half the kernel: every window holds an input.
        int64_t best = w.rowLo * s.width + w.colLo;
        for (int64_t r = w.rowLo; r < w.rowHi; ++r)
          for (int64_t c = w.colLo; c < w.colHi; ++c) {
            if (replacesMaximum(in[r * s.width + c], in[best]))
              best = r * s.width + c;
          }
        fn(plane, i * s.outWidth + j, best);
      }
  }
}

/// The planes a thread takes at least: about kElementGrain input elements.
static int64_t planeGrain(const PoolSizes &s) {
  return std::max<int64_t>(1, kElementGrain /
                                  std::max<int64_t>(s.height * s.width, 1));
}

/// `forEachArgmaxOf` over all planes, split over the backend's threads (a
/// plane's outputs and inputs belong to it alone).
template <typename T, typename Fn>
static void forEachArgmax(const PoolSizes &s, const T *x, Fn fn) {
  parallelFor(s.planes, planeGrain(s), [&](int64_t first, int64_t last) {
    forEachArgmaxOf(s, x, first, last, fn);
  });
}

KernelStatus CpuBackend::maxPool2d(metart_dtype dtype, const PoolSizes &sizes,
                                   const void *x, void *y) {
  withFloat(dtype, [&](auto t) {
    using T = decltype(t);
    const T *in = static_cast<const T *>(x);
    T *out = static_cast<T *>(y);
    if (isTiled(sizes) && sizes.kernelH == 2) {
      parallelFor(sizes.planes, planeGrain(sizes),
                  [&](int64_t first, int64_t last) {
                    tiledMax2(sizes, in, out, first, last);
                  });
      return;
    }
    int64_t inPlane = sizes.height * sizes.width;
    int64_t outPlane = sizes.outHeight * sizes.outWidth;
    forEachArgmax(sizes, in, [&](int64_t plane, int64_t o, int64_t argmax) {
      out[plane * outPlane + o] = in[plane * inPlane + argmax];
    });
  });
  return KernelStatus::ok();
}

KernelStatus CpuBackend::maxPool2dBackward(metart_dtype dtype,
                                           const PoolSizes &sizes,
                                           const void *x, const void *grad,
                                           void *y) {
  withFloat(dtype, [&](auto t) {
    using T = decltype(t);
    const T *g = static_cast<const T *>(grad);
    T *dx = static_cast<T *>(y);
    int64_t inPlane = sizes.height * sizes.width;
    int64_t outPlane = sizes.outHeight * sizes.outWidth;
    // Each plane zeroes its own part before adding into it.
    const T *in = static_cast<const T *>(x);
    parallelFor(
        sizes.planes, planeGrain(sizes), [&](int64_t first, int64_t last) {
          std::fill(dx + first * inPlane, dx + last * inPlane, T(0));
          forEachArgmaxOf(sizes, in, first, last,
                          [&](int64_t plane, int64_t o, int64_t argmax) {
                            dx[plane * inPlane + argmax] +=
                                g[plane * outPlane + o];
                          });
        });
  });
  return KernelStatus::ok();
}

KernelStatus CpuBackend::maxPool2dGather(metart_dtype dtype,
                                         const PoolSizes &sizes, const void *x,
                                         const void *source, void *y) {
  withFloat(dtype, [&](auto t) {
    using T = decltype(t);
    const T *src = static_cast<const T *>(source);
    T *out = static_cast<T *>(y);
    int64_t inPlane = sizes.height * sizes.width;
    int64_t outPlane = sizes.outHeight * sizes.outWidth;
    forEachArgmax(sizes, static_cast<const T *>(x),
                  [&](int64_t plane, int64_t o, int64_t argmax) {
                    out[plane * outPlane + o] = src[plane * inPlane + argmax];
                  });
  });
  return KernelStatus::ok();
}

KernelStatus CpuBackend::avgPool2d(metart_dtype dtype, const PoolSizes &sizes,
                                   const void *x, void *y) {
  withFloat(dtype, [&](auto t) {
    using T = decltype(t);
    const T *in = static_cast<const T *>(x);
    T *out = static_cast<T *>(y);
    double window = static_cast<double>(sizes.kernelH * sizes.kernelW);
    for (int64_t plane = 0; plane < sizes.planes; ++plane) {
      const T *p = in + plane * sizes.height * sizes.width;
      T *q = out + plane * sizes.outHeight * sizes.outWidth;
      for (int64_t i = 0; i < sizes.outHeight; ++i)
        for (int64_t j = 0; j < sizes.outWidth; ++j) {
          Window w = windowOf(sizes, i, j);
          double sum = 0;
          for (int64_t r = w.rowLo; r < w.rowHi; ++r)
            for (int64_t c = w.colLo; c < w.colHi; ++c)
              sum += static_cast<double>(p[r * sizes.width + c]);
          q[i * sizes.outWidth + j] = static_cast<T>(sum / window);
        }
    }
  });
  return KernelStatus::ok();
}

KernelStatus CpuBackend::avgPool2dBackward(metart_dtype dtype,
                                           const PoolSizes &sizes,
                                           const void *grad, void *y) {
  withFloat(dtype, [&](auto t) {
    using T = decltype(t);
    const T *g = static_cast<const T *>(grad);
    T *dx = static_cast<T *>(y);
    T window = static_cast<T>(sizes.kernelH * sizes.kernelW);
    int64_t inPlane = sizes.height * sizes.width;
    std::fill(dx, dx + sizes.planes * inPlane, T(0));
    for (int64_t plane = 0; plane < sizes.planes; ++plane) {
      T *p = dx + plane * inPlane;
      const T *q = g + plane * sizes.outHeight * sizes.outWidth;
      for (int64_t i = 0; i < sizes.outHeight; ++i)
        for (int64_t j = 0; j < sizes.outWidth; ++j) {
          Window w = windowOf(sizes, i, j);
          T share = q[i * sizes.outWidth + j] / window;
          for (int64_t r = w.rowLo; r < w.rowHi; ++r)
            for (int64_t c = w.colLo; c < w.colHi; ++c)
              p[r * sizes.width + c] += share;
        }
    }
  });
  return KernelStatus::ok();
}

} // namespace metart::cpu
