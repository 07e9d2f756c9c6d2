//===- Pooling.cpp - 2-D pooling in the interpreter -----------------------===//
//
// Max and average pooling over the last two dimensions, the derivatives of
// both, and `nn.max_pool2d_gather`. Max pooling pads with -inf, so padding
// is never selected, and picks the first maximum of a window in row-major
// order; average pooling counts the padding in the window size (PyTorch's
// count_include_pad=True).
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "TensorUtils.h"

#include <cassert>
#include <cmath>

using namespace mlir;

namespace metac::interp::detail {

namespace {
/// The sizes of one pooling: input `[B..., C, h, w]`, output
/// `[B..., C, oh, ow]`; `planes` is the product of B... and C.
struct PoolGeometry {
  int64_t planes, h, w, oh, ow;
  int64_t kernelH, kernelW, strideH, strideW, padH, padW;
};
} // namespace

template <typename PoolOp>
static PoolGeometry geometry(PoolOp op, ArrayRef<int64_t> input,
                             ArrayRef<int64_t> output) {
  PoolGeometry g;
  g.planes = product(input.drop_back(2));
  g.h = input[input.size() - 2];
  g.w = input.back();
  g.oh = output[output.size() - 2];
  g.ow = output.back();
  g.kernelH = op.getKernel()[0];
  g.kernelW = op.getKernel()[1];
  g.strideH = op.getStride()[0];
  g.strideW = op.getStride()[1];
  g.padH = op.getPadding()[0];
  g.padW = op.getPadding()[1];
  return g;
}

/// Calls `fn(inputIndex, outputIndex)` (flat, row-major) for every input
/// element in the window of every output element, the elements of one
/// window consecutively and in row-major order; padding is left out.
static void forEachWindowTap(const PoolGeometry &g,
                             llvm::function_ref<void(int64_t, int64_t)> fn) {
  for (int64_t n = 0; n < g.planes; ++n)
    for (int64_t i = 0; i < g.oh; ++i)
      for (int64_t j = 0; j < g.ow; ++j) {
        int64_t out = (n * g.oh + i) * g.ow + j;
        for (int64_t u = 0; u < g.kernelH; ++u)
          for (int64_t v = 0; v < g.kernelW; ++v) {
            int64_t y = i * g.strideH - g.padH + u;
            int64_t x = j * g.strideW - g.padW + v;
            if (y >= 0 && y < g.h && x >= 0 && x < g.w)
              fn((n * g.h + y) * g.w + x, out);
          }
      }
}

/// For every output element, the flat input index of its window's maximum:
/// the first one in row-major order on ties, the first NaN if there is one
/// (NaN propagates, as in PyTorch).
static std::vector<int64_t> windowArgmax(const PoolGeometry &g,
                                         const Tensor &input) {
  std::vector<int64_t> argmax(g.planes * g.oh * g.ow, -1);
  forEachWindowTap(g, [&](int64_t in, int64_t out) {
    int64_t &best = argmax[out];
    double value = input.values[in];
    if (best < 0 || value > input.values[best] ||
        (std::isnan(value) && !std::isnan(input.values[best])))
      best = in;
  });
  // The verifier keeps the padding at most half the kernel, so every window
  // holds an input element.
  assert(llvm::all_of(argmax, [](int64_t i) { return i >= 0; }));
  return argmax;
}

FailureOr<Tensor> evaluateOp(nn::MaxPool2DOp op, const Frame &frame) {
  const Tensor &x = frame.get(op.getInput());
  Tensor y = zeros(shapeOf(op.getResult()));
  std::vector<int64_t> argmax = windowArgmax(geometry(op, x.shape, y.shape), x);
  for (size_t out = 0, e = argmax.size(); out < e; ++out)
    y.values[out] = x.values[argmax[out]];
  return y;
}

FailureOr<Tensor> evaluateOp(nn::MaxPool2DBackwardOp op, const Frame &frame) {
  const Tensor &x = frame.get(op.getInput());
  const Tensor &grad = frame.get(op.getGrad());
  Tensor dx = zeros(x.shape);
  std::vector<int64_t> argmax =
      windowArgmax(geometry(op, x.shape, grad.shape), x);
  for (size_t out = 0, e = argmax.size(); out < e; ++out)
    dx.values[argmax[out]] += grad.values[out];
  return dx;
}

FailureOr<Tensor> evaluateOp(nn::MaxPool2DGatherOp op, const Frame &frame) {
  const Tensor &x = frame.get(op.getInput());
  const Tensor &source = frame.get(op.getSource());
  Tensor y = zeros(shapeOf(op.getResult()));
  std::vector<int64_t> argmax = windowArgmax(geometry(op, x.shape, y.shape), x);
  for (size_t out = 0, e = argmax.size(); out < e; ++out)
    y.values[out] = source.values[argmax[out]];
  return y;
}

FailureOr<Tensor> evaluateOp(nn::AvgPool2DOp op, const Frame &frame) {
  const Tensor &x = frame.get(op.getInput());
  Tensor y = zeros(shapeOf(op.getResult()));
  PoolGeometry g = geometry(op, x.shape, y.shape);
  forEachWindowTap(
      g, [&](int64_t in, int64_t out) { y.values[out] += x.values[in]; });
  double windowSize = static_cast<double>(g.kernelH * g.kernelW);
  for (double &value : y.values)
    value /= windowSize;
  return y;
}

FailureOr<Tensor> evaluateOp(nn::AvgPool2DBackwardOp op, const Frame &frame) {
  const Tensor &grad = frame.get(op.getGrad());
  Tensor dx = zeros(shapeOf(op.getResult()));
  PoolGeometry g = geometry(op, dx.shape, grad.shape);
  double windowSize = static_cast<double>(g.kernelH * g.kernelW);
  forEachWindowTap(g, [&](int64_t in, int64_t out) {
    dx.values[in] += grad.values[out] / windowSize;
  });
  return dx;
}

} // namespace metac::interp::detail
