//===- NNLayerVJP.cpp - derivatives of layers and their derivatives -------===//
//
// Products, convolutions, pooling and lookups are linear in the operand that
// carries a cotangent, so their VJPs are again such ops; the derivative ops'
// VJPs close the set (conv2d <-> its two backward ops, max_pool2d_backward
// <-> max_pool2d_gather, avg_pool2d <-> avg_pool2d_backward, embedding <->
// embedding_backward).
//
//===----------------------------------------------------------------------===//

#include "metac/Dialect/NN/IR/NNBuilder.h"
#include "metac/Dialect/NN/IR/NNOps.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace metac::nn;

using Cotangents = SmallVectorImpl<Value>;

static RankedTensorType typeOf(Value v) {
  return cast<RankedTensorType>(v.getType());
}

static int64_t product(ArrayRef<int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims)
    p *= d;
  return p;
}

LogicalResult LinearOp::buildVJP(OpBuilder &b, ValueRange dys, Cotangents &dx) {
  // y[B..., out] = x[B..., in] W[P..., out, in]^T + bias[P..., out], where P
  // is a prefix of B. Rows of x beyond P are flattened into one axis M.
  NNBuilder nn(b, getLoc());
  Value dy = dys[0], x = getInput(), w = getWeight();
  ArrayRef<int64_t> ws = typeOf(w).getShape();
  ArrayRef<int64_t> xs = typeOf(x).getShape();
  size_t p = ws.size() - 2;
  int64_t out = ws[p], in = ws[p + 1];
  int64_t rows = product(xs.drop_back().drop_front(p));
  SmallVector<int64_t> dyShape(ws.take_front(p)), xShape(ws.take_front(p));
  dyShape.append({rows, out});
  xShape.append({rows, in});
  Value dyRows = nn.reshape(dy, dyShape), xRows = nn.reshape(x, xShape);
  dx.push_back(nn.linear(dy, nn.transposeLastTwo(w)));
  dx.push_back(nn.matmul(dyRows, xRows, /*transposeA=*/true));
  if (getBias())
    dx.push_back(nn.reduceSum(dyRows, {static_cast<int64_t>(p)}));
  return success();
}

LogicalResult MatmulOp::buildVJP(OpBuilder &b, ValueRange dys, Cotangents &dx) {
  NNBuilder nn(b, getLoc());
  Value dy = dys[0], a = getLhs(), c = getRhs();
  bool ta = getTransposeLhs(), tb = getTransposeRhs();
  if (!ta && !tb) // y = a c
    dx.append({nn.matmul(dy, c, false, true), nn.matmul(a, dy, true, false)});
  else if (ta && !tb) // y = a^T c
    dx.append({nn.matmul(c, dy, false, true), nn.matmul(a, dy)});
  else if (!ta && tb) // y = a c^T
    dx.append({nn.matmul(dy, c), nn.matmul(dy, a, true, false)});
  else // y = a^T c^T
    dx.append({nn.matmul(c, dy, true, true), nn.matmul(dy, a, true, true)});
  return success();
}

LogicalResult Conv2DOp::buildVJP(OpBuilder &b, ValueRange dys, Cotangents &dx) {
  NNBuilder nn(b, getLoc());
  Value dy = dys[0];
  dx.push_back(Conv2DBackwardInputOp::create(b, getLoc(), getInput().getType(),
                                             dy, getWeight(), getStrideAttr(),
                                             getPaddingAttr()));
  dx.push_back(Conv2DBackwardWeightOp::create(
      b, getLoc(), getWeight().getType(), getInput(), dy, getStrideAttr(),
      getPaddingAttr()));
  if (getBias()) {
    // Sum over everything but the weight's batch dimensions and channels.
    int64_t p = typeOf(getWeight()).getRank() - 4;
    int64_t rank = typeOf(dy).getRank();
    SmallVector<int64_t> keep = llvm::to_vector(llvm::seq<int64_t>(0, p));
    keep.push_back(rank - 3);
    dx.push_back(nn.reduceSum(dy, complementDims(rank, keep)));
  }
  return success();
}

LogicalResult Conv2DBackwardInputOp::buildVJP(OpBuilder &b, ValueRange dys,
                                              Cotangents &dx) {
  // r = B_in(g, w), bilinear: dg = conv2d(dr, w), dw = B_w(dr, g).
  Value dr = dys[0];
  dx.push_back(Conv2DOp::create(b, getLoc(), getGrad().getType(), dr,
                                getWeight(), nullptr, getStrideAttr(),
                                getPaddingAttr()));
  dx.push_back(Conv2DBackwardWeightOp::create(
      b, getLoc(), getWeight().getType(), dr, getGrad(), getStrideAttr(),
      getPaddingAttr()));
  return success();
}

LogicalResult Conv2DBackwardWeightOp::buildVJP(OpBuilder &b, ValueRange dys,
                                               Cotangents &dx) {
  // r = B_w(x, g), bilinear: dx = B_in(g, dr), dg = conv2d(x, dr).
  Value dr = dys[0];
  dx.push_back(Conv2DBackwardInputOp::create(b, getLoc(), getInput().getType(),
                                             getGrad(), dr, getStrideAttr(),
                                             getPaddingAttr()));
  dx.push_back(Conv2DOp::create(b, getLoc(), getGrad().getType(), getInput(),
                                dr, nullptr, getStrideAttr(),
                                getPaddingAttr()));
  return success();
}

LogicalResult MaxPool2DOp::buildVJP(OpBuilder &b, ValueRange dys,
                                    Cotangents &dx) {
  dx.push_back(MaxPool2DBackwardOp::create(b, getLoc(), getInput().getType(),
                                           getInput(), dys[0], getKernelAttr(),
                                           getStrideAttr(), getPaddingAttr()));
  return success();
}

LogicalResult MaxPool2DBackwardOp::buildVJP(OpBuilder &b, ValueRange dys,
                                            Cotangents &dx) {
  // Linear in grad; the argmax positions are piecewise constant in input.
  dx.push_back(nullptr);
  dx.push_back(MaxPool2DGatherOp::create(b, getLoc(), getGrad().getType(),
                                         getInput(), dys[0], getKernelAttr(),
                                         getStrideAttr(), getPaddingAttr()));
  return success();
}

LogicalResult MaxPool2DGatherOp::buildVJP(OpBuilder &b, ValueRange dys,
                                          Cotangents &dx) {
  dx.push_back(nullptr);
  dx.push_back(MaxPool2DBackwardOp::create(b, getLoc(), getSource().getType(),
                                           getInput(), dys[0], getKernelAttr(),
                                           getStrideAttr(), getPaddingAttr()));
  return success();
}

LogicalResult AvgPool2DOp::buildVJP(OpBuilder &b, ValueRange dys,
                                    Cotangents &dx) {
  dx.push_back(AvgPool2DBackwardOp::create(b, getLoc(), getInput().getType(),
                                           dys[0], getKernelAttr(),
                                           getStrideAttr(), getPaddingAttr()));
  return success();
}

LogicalResult AvgPool2DBackwardOp::buildVJP(OpBuilder &b, ValueRange dys,
                                            Cotangents &dx) {
  dx.push_back(AvgPool2DOp::create(b, getLoc(), getGrad().getType(), dys[0],
                                   getKernelAttr(), getStrideAttr(),
                                   getPaddingAttr()));
  return success();
}

LogicalResult EmbeddingOp::buildVJP(OpBuilder &b, ValueRange dys,
                                    Cotangents &dx) {
  dx.push_back(nullptr); // integer ids
  dx.push_back(EmbeddingBackwardOp::create(b, getLoc(), getTable().getType(),
                                           getIds(), dys[0]));
  return success();
}

LogicalResult EmbeddingBackwardOp::buildVJP(OpBuilder &b, ValueRange dys,
                                            Cotangents &dx) {
  dx.push_back(nullptr);
  dx.push_back(
      EmbeddingOp::create(b, getLoc(), getGrad().getType(), getIds(), dys[0]));
  return success();
}
