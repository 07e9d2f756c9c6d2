//===- NNLossVJP.cpp - derivatives of losses ------------------------------===//

#include "metac/Dialect/NN/IR/NNBuilder.h"
#include "metac/Dialect/NN/IR/NNOps.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace metac::nn;

using Cotangents = SmallVectorImpl<Value>;

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// The dimensions after the leading `batchRank` of a rank-`rank` shape.
static SmallVector<int64_t> trailingDims(int64_t rank, int64_t batchRank) {
  return llvm::to_vector(llvm::seq<int64_t>(batchRank, rank));
}

LogicalResult MSELossOp::buildVJP(OpBuilder &b, ValueRange dys,
                                  Cotangents &dx) {
  // l = mean((p - t)^2): dp = dl * 2 (p - t) / n, dt = -dp.
  NNBuilder nn(b, getLoc());
  ArrayRef<int64_t> shape = shapeOf(getPrediction());
  int64_t batchRank = getBatchRank();
  SmallVector<int64_t> reduced = trailingDims(shape.size(), batchRank);
  int64_t count = 1;
  for (int64_t d : reduced)
    count *= shape[d];
  Value diff = nn.sub(getPrediction(), getTarget());
  Value dl = nn.broadcast(dys[0], shape, reduced);
  Value dp = nn.mul(dl, nn.scale(diff, 2.0 / static_cast<double>(count)));
  dx.append({dp, nn.neg(dp)});
  return success();
}

LogicalResult CrossEntropyLossOp::buildVJP(OpBuilder &b, ValueRange dys,
                                           Cotangents &dx) {
  // l = mean_n(-log_softmax(z)[label]): dz = dl * (softmax(z) - onehot) / n.
  NNBuilder nn(b, getLoc());
  Value logits = getLogits();
  ArrayRef<int64_t> shape = shapeOf(logits);
  int64_t rank = shape.size(), batchRank = getBatchRank();
  int64_t count = 1;
  for (int64_t d : shape.drop_back().drop_front(batchRank))
    count *= d;
  Value onehot = OneHotOp::create(b, getLoc(), logits.getType(), getLabels());
  Value residual = nn.sub(nn.softmax(logits, rank - 1), onehot);
  Value dl = nn.broadcast(dys[0], shape, trailingDims(rank, batchRank));
  dx.push_back(
      nn.mul(dl, nn.scale(residual, 1.0 / static_cast<double>(count))));
  dx.push_back(nullptr); // integer labels
  return success();
}

LogicalResult OneHotOp::buildVJP(OpBuilder &, ValueRange, Cotangents &dx) {
  dx.push_back(nullptr);
  return success();
}

LogicalResult MoeDispatchOp::buildVJP(OpBuilder &, ValueRange, Cotangents &dx) {
  // Routing decisions are discrete: nothing flows back through the mask.
  dx.push_back(nullptr);
  return success();
}

LogicalResult AccuracyOp::buildVJP(OpBuilder &, ValueRange, Cotangents &) {
  // A step function of the logits: reached only if a metric were trained.
  return emitOpError("is a metric and has no derivative");
}
