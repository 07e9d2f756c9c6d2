//===- NNShapeVJP.cpp - derivatives of shape ops and reductions -----------===//
//
// Reshape and transpose are their own adjoints (inverted); broadcast and
// reduce_sum are each other's.
//
//===----------------------------------------------------------------------===//

#include "metac/Dialect/NN/IR/NNBuilder.h"
#include "metac/Dialect/NN/IR/NNOps.h"

using namespace mlir;
using namespace metac::nn;

using Cotangents = SmallVectorImpl<Value>;

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

LogicalResult ReshapeOp::buildVJP(OpBuilder &b, ValueRange dys,
                                  Cotangents &dx) {
  dx.push_back(NNBuilder(b, getLoc()).reshape(dys[0], shapeOf(getInput())));
  return success();
}

LogicalResult TransposeOp::buildVJP(OpBuilder &b, ValueRange dys,
                                    Cotangents &dx) {
  ArrayRef<int64_t> perm = getPermutation();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = i;
  dx.push_back(NNBuilder(b, getLoc()).transpose(dys[0], inverse));
  return success();
}

LogicalResult BroadcastOp::buildVJP(OpBuilder &b, ValueRange dys,
                                    Cotangents &dx) {
  dx.push_back(NNBuilder(b, getLoc()).reduceSum(dys[0], getDimensions()));
  return success();
}

LogicalResult ReduceSumOp::buildVJP(OpBuilder &b, ValueRange dys,
                                    Cotangents &dx) {
  dx.push_back(NNBuilder(b, getLoc())
                   .broadcast(dys[0], shapeOf(getInput()), getDimensions()));
  return success();
}

LogicalResult ReduceMeanOp::buildVJP(OpBuilder &b, ValueRange dys,
                                     Cotangents &dx) {
  NNBuilder nn(b, getLoc());
  ArrayRef<int64_t> shape = shapeOf(getInput());
  int64_t count = 1;
  for (int64_t d : getDimensions())
    count *= shape[d];
  dx.push_back(nn.scale(nn.broadcast(dys[0], shape, getDimensions()),
                        1.0 / static_cast<double>(count)));
  return success();
}
