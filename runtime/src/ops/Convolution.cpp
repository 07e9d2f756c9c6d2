//===- Convolution.cpp - checks and dispatch of 2-D convolutions ----------===//
//
// `metart_nn_conv2d` and its derivatives. All three check one geometry: an
// input `[B..., C, H, W]`, a weight `[P..., O, C, kh, kw]` whose batch
// dimensions prefix `B...`, and the output `[B..., O, H', W']` with
// `H' = (H + 2 * padding[0] - kh) / stride[0] + 1`.
//
//===----------------------------------------------------------------------===//

#include "../Checker.h"
#include "../Context.h"
#include "Widen.h"

using namespace metart;

/// Output size of a window of `kernel` moved by `stride` over `size` padded
/// by `padding` on both sides, or -1 when the window does not fit.
static int64_t windowOutput(int64_t size, int64_t kernel, int64_t stride,
                            int64_t padding) {
  int64_t padded = size + 2 * padding;
  return padded < kernel ? -1 : (padded - kernel) / stride + 1;
}

namespace {
/// The checked geometry of one convolution.
struct Geometry {
  ConvSizes sizes;
  /// `[B..., O, H', W']`.
  SmallShape output;
  /// The number of weight batch dimensions P.
  size_t batchRank;
};
} // namespace

/// Checks the convolution of `input` (named `inputName`) by `weight` (named
/// `weightName`) with `stride` and `padding`, and computes its geometry.
static bool convolution(Checker &check, const char *inputName,
                        const metart_tensor &input, const char *weightName,
                        const metart_tensor &weight, const int64_t *stride,
                        const int64_t *padding, Geometry &g) {
  ShapeRef x = shapeOf(input), w = shapeOf(weight);
  if (!check.pair("stride", stride, 1) || !check.pair("padding", padding, 0))
    return false;
  if (x.size() < 3 || w.size() < 4)
    return check.reject("expects ", inputName,
                        " of rank >= 3 ([..., C, H, W]) and ", weightName,
                        " of rank >= 4 ([..., O, C, kh, kw]), got ",
                        describe(input), " and ", describe(weight));
  ShapeRef batch = x.dropBack(3);
  g.batchRank = w.size() - 4;
  if (g.batchRank > batch.size() ||
      w.takeFront(g.batchRank) != batch.takeFront(g.batchRank))
    return check.reject(weightName, " batch dimensions ",
                        w.takeFront(g.batchRank),
                        " are not a prefix of the input's batch dimensions ",
                        batch, " (", inputName, " ", describe(input), ", ",
                        weightName, " ", describe(weight), ")");
  ShapeRef core = w.dropFront(g.batchRank);
  ConvSizes &s = g.sizes;
  s.channels = x[x.size() - 3];
  s.height = x[x.size() - 2];
  s.width = x.back();
  s.outChannels = core[0];
  s.kernelH = core[2];
  s.kernelW = core[3];
  if (core[1] != s.channels)
    return check.reject("input channels ", s.channels,
                        " do not match the weight's in-channels ", core[1],
                        " (", inputName, " ", describe(input), ", ", weightName,
                        " ", describe(weight), ")");
  s.strideH = stride[0];
  s.strideW = stride[1];
  s.padH = padding[0];
  s.padW = padding[1];
  s.outHeight = windowOutput(s.height, s.kernelH, s.strideH, s.padH);
  s.outWidth = windowOutput(s.width, s.kernelW, s.strideW, s.padW);
  if (s.outHeight < 0 || s.outWidth < 0)
    return check.reject("the kernel ", ShapeRef(core.begin() + 2, 2),
                        " does not fit the input ", ShapeRef(x.end() - 2, 2),
                        " padded by ", ShapeRef(padding, 2));
  s.images = batch.product();
  s.slices = w.takeFront(g.batchRank).product();
  s.imagesPerSlice = batch.dropFront(g.batchRank).product();
  g.output = SmallShape(batch);
  g.output.push_back(s.outChannels);
  g.output.push_back(s.outHeight);
  g.output.push_back(s.outWidth);
  return true;
}

metart_status metart_nn_conv2d(metart_context *context, const metart_tensor *x,
                               const metart_tensor *weight,
                               const metart_tensor *bias, const int64_t *stride,
                               const int64_t *padding, const metart_tensor *y) {
  Checker check(context, "metart_nn_conv2d");
  Geometry g;
  if (!check.floatTensor("x", x) || !check.floatTensor("weight", weight) ||
      (bias && !check.floatTensor("bias", bias)) ||
      !check.floatTensor("y", y) ||
      !check.sameDtype("weight", *weight, "x", *x) ||
      (bias && !check.sameDtype("bias", *bias, "x", *x)) ||
      !check.sameDtype("y", *y, "x", *x) ||
      !convolution(check, "x", *x, "weight", *weight, stride, padding, g) ||
      (bias && !check.shape("bias", *bias,
                            shapeOf(*weight).takeFront(g.batchRank + 1))) ||
      !check.shape("y", *y, g.output) || !check.disjoint("y", *y, "x", *x) ||
      !check.disjoint("y", *y, "weight", *weight) ||
      (bias && !check.disjoint("y", *y, "bias", *bias)))
    return check.result();
  Widened w(context, dtypeOf(*x));
  const void *xd = w.in(x), *wd = w.in(weight), *bd = w.in(bias);
  void *yd = w.out(y);
  return check.finish(w.run([&] {
    return context->backend->conv2d(w.dtype(), g.sizes, xd, wd, bd, yd);
  }));
}

metart_status metart_nn_conv2d_backward_input(metart_context *context,
                                              const metart_tensor *grad,
                                              const metart_tensor *weight,
                                              const int64_t *stride,
                                              const int64_t *padding,
                                              const metart_tensor *y) {
  Checker check(context, "metart_nn_conv2d_backward_input");
  Geometry g;
  if (!check.floatTensor("grad", grad) ||
      !check.floatTensor("weight", weight) || !check.floatTensor("y", y) ||
      !check.sameDtype("weight", *weight, "grad", *grad) ||
      !check.sameDtype("y", *y, "grad", *grad) ||
      !convolution(check, "y", *y, "weight", *weight, stride, padding, g) ||
      !check.shape("grad", *grad, g.output) ||
      !check.disjoint("y", *y, "grad", *grad) ||
      !check.disjoint("y", *y, "weight", *weight))
    return check.result();
  Widened w(context, dtypeOf(*grad));
  const void *gd = w.in(grad), *wd = w.in(weight);
  void *yd = w.out(y);
  return check.finish(w.run([&] {
    return context->backend->conv2dBackwardInput(w.dtype(), g.sizes, gd, wd,
                                                 yd);
  }));
}

metart_status metart_nn_conv2d_backward_weight(
    metart_context *context, const metart_tensor *x, const metart_tensor *grad,
    const int64_t *stride, const int64_t *padding, const metart_tensor *y) {
  Checker check(context, "metart_nn_conv2d_backward_weight");
  Geometry g;
  if (!check.floatTensor("x", x) || !check.floatTensor("grad", grad) ||
      !check.floatTensor("y", y) || !check.sameDtype("grad", *grad, "x", *x) ||
      !check.sameDtype("y", *y, "x", *x) ||
      !convolution(check, "x", *x, "y", *y, stride, padding, g) ||
      !check.shape("grad", *grad, g.output) ||
      !check.disjoint("y", *y, "x", *x) ||
      !check.disjoint("y", *y, "grad", *grad))
    return check.result();
  Widened w(context, dtypeOf(*x));
  const void *xd = w.in(x), *gd = w.in(grad);
  void *yd = w.out(y);
  return check.finish(w.run([&] {
    return context->backend->conv2dBackwardWeight(w.dtype(), g.sizes, xd, gd,
                                                  yd);
  }));
}
