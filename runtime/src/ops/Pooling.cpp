//===- Pooling.cpp - checks and dispatch of 2-D pooling -------------------===//
//
// Max and average pooling of `[B..., C, H, W]`, their derivatives and the
// gather at the maxima. Padding is at most half the kernel, so every window
// holds an input element.
//
//===----------------------------------------------------------------------===//

#include "../Checker.h"
#include "../Context.h"
#include "Widen.h"

using namespace metart;

namespace {
/// The checked geometry of one pooling.
struct Geometry {
  PoolSizes sizes;
  /// `[B..., C, H', W']`.
  SmallShape output;
};
} // namespace

/// Checks the pooling of `input` (named `inputName`) and computes its
/// geometry.
static bool pooling(Checker &check, const char *inputName,
                    const metart_tensor &input, const int64_t *kernel,
                    const int64_t *stride, const int64_t *padding,
                    Geometry &g) {
  ShapeRef x = shapeOf(input);
  if (!check.pair("kernel", kernel, 1) || !check.pair("stride", stride, 1) ||
      !check.pair("padding", padding, 0))
    return false;
  if (x.size() < 3)
    return check.reject("expects ", inputName,
                        " of rank >= 3 ([..., C, H, W]), got ",
                        describe(input));
  if (2 * padding[0] > kernel[0] || 2 * padding[1] > kernel[1])
    return check.reject("padding ", ShapeRef(padding, 2),
                        " exceeds half the kernel ", ShapeRef(kernel, 2));
  PoolSizes &s = g.sizes;
  s.planes = x.dropBack(2).product();
  s.height = x[x.size() - 2];
  s.width = x.back();
  s.kernelH = kernel[0];
  s.kernelW = kernel[1];
  s.strideH = stride[0];
  s.strideW = stride[1];
  s.padH = padding[0];
  s.padW = padding[1];
  if (s.height + 2 * s.padH < s.kernelH || s.width + 2 * s.padW < s.kernelW)
    return check.reject("the kernel ", ShapeRef(kernel, 2),
                        " does not fit the input ", ShapeRef(x.end() - 2, 2),
                        " padded by ", ShapeRef(padding, 2));
  s.outHeight = (s.height + 2 * s.padH - s.kernelH) / s.strideH + 1;
  s.outWidth = (s.width + 2 * s.padW - s.kernelW) / s.strideW + 1;
  g.output = SmallShape(x.dropBack(2));
  g.output.push_back(s.outHeight);
  g.output.push_back(s.outWidth);
  return true;
}

/// Checks a pooling from `x` to `y`, both float of one element type.
static bool forward(Checker &check, const metart_tensor *x,
                    const int64_t *kernel, const int64_t *stride,
                    const int64_t *padding, const metart_tensor *y,
                    Geometry &g) {
  return check.floatTensor("x", x) && check.floatTensor("y", y) &&
         check.sameDtype("y", *y, "x", *x) &&
         pooling(check, "x", *x, kernel, stride, padding, g) &&
         check.shape("y", *y, g.output) && check.disjoint("y", *y, "x", *x);
}

metart_status metart_nn_max_pool2d(metart_context *context,
                                   const metart_tensor *x,
                                   const int64_t *kernel, const int64_t *stride,
                                   const int64_t *padding,
                                   const metart_tensor *y) {
  Checker check(context, "metart_nn_max_pool2d");
  Geometry g;
  if (!forward(check, x, kernel, stride, padding, y, g))
    return check.result();
  Widened w(context, dtypeOf(*x));
  const void *xd = w.in(x);
  void *yd = w.out(y);
  return check.finish(w.run(
      [&] { return context->backend->maxPool2d(w.dtype(), g.sizes, xd, yd); }));
}

metart_status metart_nn_avg_pool2d(metart_context *context,
                                   const metart_tensor *x,
                                   const int64_t *kernel, const int64_t *stride,
                                   const int64_t *padding,
                                   const metart_tensor *y) {
  Checker check(context, "metart_nn_avg_pool2d");
  Geometry g;
  if (!forward(check, x, kernel, stride, padding, y, g))
    return check.result();
  Widened w(context, dtypeOf(*x));
  const void *xd = w.in(x);
  void *yd = w.out(y);
  return check.finish(w.run(
      [&] { return context->backend->avgPool2d(w.dtype(), g.sizes, xd, yd); }));
}

metart_status
metart_nn_max_pool2d_backward(metart_context *context, const metart_tensor *x,
                              const metart_tensor *grad, const int64_t *kernel,
                              const int64_t *stride, const int64_t *padding,
                              const metart_tensor *y) {
  Checker check(context, "metart_nn_max_pool2d_backward");
  Geometry g;
  if (!check.floatTensor("x", x) || !check.floatTensor("grad", grad) ||
      !check.floatTensor("y", y) || !check.sameDtype("grad", *grad, "x", *x) ||
      !check.sameDtype("y", *y, "x", *x) ||
      !pooling(check, "x", *x, kernel, stride, padding, g) ||
      !check.shape("grad", *grad, g.output) ||
      !check.shape("y", *y, shapeOf(*x)) || !check.disjoint("y", *y, "x", *x) ||
      !check.disjoint("y", *y, "grad", *grad))
    return check.result();
  Widened w(context, dtypeOf(*x));
  const void *xd = w.in(x), *sd = w.in(grad);
  void *yd = w.out(y);
  return check.finish(w.run([&] {
    return context->backend->maxPool2dBackward(w.dtype(), g.sizes, xd, sd, yd);
  }));
}

metart_status
metart_nn_max_pool2d_gather(metart_context *context, const metart_tensor *x,
                            const metart_tensor *source, const int64_t *kernel,
                            const int64_t *stride, const int64_t *padding,
                            const metart_tensor *y) {
  Checker check(context, "metart_nn_max_pool2d_gather");
  Geometry g;
  if (!check.floatTensor("x", x) || !check.floatTensor("source", source) ||
      !check.floatTensor("y", y) ||
      !check.sameDtype("source", *source, "x", *x) ||
      !check.sameDtype("y", *y, "x", *x) ||
      !pooling(check, "x", *x, kernel, stride, padding, g) ||
      !check.shape("source", *source, shapeOf(*x)) ||
      !check.shape("y", *y, g.output) || !check.disjoint("y", *y, "x", *x) ||
      !check.disjoint("y", *y, "source", *source))
    return check.result();
  Widened w(context, dtypeOf(*x));
  const void *xd = w.in(x), *sd = w.in(source);
  void *yd = w.out(y);
  return check.finish(w.run([&] {
    return context->backend->maxPool2dGather(w.dtype(), g.sizes, xd, sd, yd);
  }));
}

metart_status metart_nn_avg_pool2d_backward(
    metart_context *context, const metart_tensor *grad, const int64_t *kernel,
    const int64_t *stride, const int64_t *padding, const metart_tensor *y) {
  Checker check(context, "metart_nn_avg_pool2d_backward");
  Geometry g;
  if (!check.floatTensor("grad", grad) || !check.floatTensor("y", y) ||
      !check.sameDtype("y", *y, "grad", *grad) ||
      !pooling(check, "y", *y, kernel, stride, padding, g) ||
      !check.shape("grad", *grad, g.output) ||
      !check.disjoint("y", *y, "grad", *grad))
    return check.result();
  Widened w(context, dtypeOf(*grad));
  const void *gd = w.in(grad);
  void *yd = w.out(y);
  return check.finish(w.run([&] {
    return context->backend->avgPool2dBackward(w.dtype(), g.sizes, gd, yd);
  }));
}
