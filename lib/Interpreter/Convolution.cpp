//===- Convolution.cpp - 2-D convolution in the interpreter ---------------===//
//
// `nn.conv2d` (cross-correlation, as PyTorch) and its derivatives with
// respect to the input and the weight. All three visit the same taps
// (output position, weight element, input element) and differ only in which
// of the three they accumulate into, which makes the derivatives the exact
// transposes of the forward op.
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"
#include "TensorUtils.h"

using namespace mlir;

namespace metac::interp::detail {

namespace {
/// The sizes of one convolution: input `[B..., C, H, W]`, weight
/// `[P..., O, C, kh, kw]` and output `[B..., O, oh, ow]`.
struct ConvGeometry {
  /// The product of B..., and of the B dimensions after P (the images that
  /// share one weight slice).
  int64_t images, imagesPerWeight;
  int64_t c, h, w, o, kh, kw, oh, ow;
  int64_t strideH, strideW, padH, padW;
};
} // namespace

static ConvGeometry geometry(ArrayRef<int64_t> input, ArrayRef<int64_t> weight,
                             ArrayRef<int64_t> output, ArrayRef<int64_t> stride,
                             ArrayRef<int64_t> padding) {
  ArrayRef<int64_t> batch = input.drop_back(3);
  int64_t weightBatch = weight.size() - 4;
  ArrayRef<int64_t> core = weight.drop_front(weightBatch);
  ConvGeometry g;
  g.images = product(batch);
  g.imagesPerWeight = product(batch.drop_front(weightBatch));
  g.c = input[input.size() - 3];
  g.h = input[input.size() - 2];
  g.w = input.back();
  g.o = core[0];
  g.kh = core[2];
  g.kw = core[3];
  g.oh = output[output.size() - 2];
  g.ow = output.back();
  g.strideH = stride[0];
  g.strideW = stride[1];
  g.padH = padding[0];
  g.padW = padding[1];
  return g;
}

/// Calls `fn(inputIndex, weightIndex, outputIndex)` (flat, row-major) for
/// every product `input * weight` that contributes to an output element:
/// output[n, o, i, j] += input[n, c, i * stride - pad + u, j * stride - pad
/// + v] * weight[p(n), o, c, u, v], taps on the zero padding left out.
static void forEachTap(const ConvGeometry &g,
                       llvm::function_ref<void(int64_t, int64_t, int64_t)> fn) {
  for (int64_t n = 0; n < g.images; ++n) {
    int64_t p = n / g.imagesPerWeight;
    for (int64_t o = 0; o < g.o; ++o)
      for (int64_t i = 0; i < g.oh; ++i)
        for (int64_t j = 0; j < g.ow; ++j) {
          int64_t out = ((n * g.o + o) * g.oh + i) * g.ow + j;
          for (int64_t c = 0; c < g.c; ++c)
            for (int64_t u = 0; u < g.kh; ++u)
              for (int64_t v = 0; v < g.kw; ++v) {
                int64_t y = i * g.strideH - g.padH + u;
                int64_t x = j * g.strideW - g.padW + v;
                if (y < 0 || y >= g.h || x < 0 || x >= g.w)
                  continue;
                int64_t in = ((n * g.c + c) * g.h + y) * g.w + x;
                int64_t wt = (((p * g.o + o) * g.c + c) * g.kh + u) * g.kw + v;
                fn(in, wt, out);
              }
        }
  }
}

FailureOr<Tensor> evaluateOp(nn::Conv2DOp op, const Frame &frame) {
  const Tensor &x = frame.get(op.getInput());
  const Tensor &w = frame.get(op.getWeight());
  Tensor y = zeros(shapeOf(op.getResult()));
  ConvGeometry g =
      geometry(x.shape, w.shape, y.shape, op.getStride(), op.getPadding());
  if (op.getBias()) {
    const Tensor &bias = frame.get(op.getBias());
    int64_t plane = g.oh * g.ow;
    for (int64_t n = 0; n < g.images; ++n)
      for (int64_t o = 0; o < g.o; ++o)
        for (int64_t e = 0; e < plane; ++e)
          y.values[(n * g.o + o) * plane + e] =
              bias.values[(n / g.imagesPerWeight) * g.o + o];
  }
  forEachTap(g, [&](int64_t in, int64_t wt, int64_t out) {
    y.values[out] += x.values[in] * w.values[wt];
  });
  return y;
}

FailureOr<Tensor> evaluateOp(nn::Conv2DBackwardInputOp op, const Frame &frame) {
  const Tensor &grad = frame.get(op.getGrad());
  const Tensor &w = frame.get(op.getWeight());
  Tensor dx = zeros(shapeOf(op.getResult()));
  ConvGeometry g =
      geometry(dx.shape, w.shape, grad.shape, op.getStride(), op.getPadding());
  forEachTap(g, [&](int64_t in, int64_t wt, int64_t out) {
    dx.values[in] += grad.values[out] * w.values[wt];
  });
  return dx;
}

FailureOr<Tensor> evaluateOp(nn::Conv2DBackwardWeightOp op,
                             const Frame &frame) {
  const Tensor &x = frame.get(op.getInput());
  const Tensor &grad = frame.get(op.getGrad());
  Tensor dw = zeros(shapeOf(op.getResult()));
  ConvGeometry g =
      geometry(x.shape, dw.shape, grad.shape, op.getStride(), op.getPadding());
  forEachTap(g, [&](int64_t in, int64_t wt, int64_t out) {
    dw.values[wt] += x.values[in] * grad.values[out];
  });
  return dw;
}

} // namespace metac::interp::detail
