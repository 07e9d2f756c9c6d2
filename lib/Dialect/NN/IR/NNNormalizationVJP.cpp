//===- NNNormalizationVJP.cpp - derivatives of normalisations -------------===//
//
// Batch and layer normalisation share one rule: with x_hat = (x - mean) *
// rstd over the reduced dimensions R,
//   dx = rstd * (dx_hat - mean_R(dx_hat) - x_hat * mean_R(dx_hat * x_hat)),
// where dx_hat = dy * weight. The statistics are recomputed from x in nn ops,
// so the rule differentiates again.
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

/// Appends the cotangents of x, weight and bias of a normalisation of `x`
/// over `reduced` whose weight and bias cover the dimensions `affine` of x.
static void normalizationVJP(NNBuilder &nn, Value x, Value weight, Value dy,
                             ArrayRef<int64_t> reduced,
                             ArrayRef<int64_t> affine, double epsilon,
                             Cotangents &dx) {
  ArrayRef<int64_t> shape = typeOf(x).getShape();
  int64_t rank = shape.size();
  auto spread = [&](Value v) { return nn.broadcast(v, shape, reduced); };
  Value centred = nn.sub(x, spread(nn.reduceMean(x, reduced)));
  Value variance = nn.reduceMean(nn.mul(centred, centred), reduced);
  Value rstd = spread(
      nn.rsqrt(nn.add(variance, nn.constant(typeOf(variance), epsilon))));
  Value xhat = nn.mul(centred, rstd);

  SmallVector<int64_t> others = complementDims(rank, affine);
  Value dxhat = nn.mul(dy, nn.broadcast(weight, shape, others));
  Value meanDxhat = spread(nn.reduceMean(dxhat, reduced));
  Value meanDxhatXhat = spread(nn.reduceMean(nn.mul(dxhat, xhat), reduced));
  dx.push_back(nn.mul(
      rstd, nn.sub(nn.sub(dxhat, meanDxhat), nn.mul(xhat, meanDxhatXhat))));
  dx.push_back(nn.reduceSum(nn.mul(dy, xhat), others));
  dx.push_back(nn.reduceSum(dy, others));
}

LogicalResult BatchNormOp::buildVJP(OpBuilder &b, ValueRange dys,
                                    Cotangents &dx) {
  NNBuilder nn(b, getLoc());
  int64_t batch = typeOf(getWeight()).getRank() - 1;
  SmallVector<int64_t> affine = llvm::to_vector(llvm::seq<int64_t>(0, batch));
  affine.push_back(getChannelDim());
  normalizationVJP(nn, getInput(), getWeight(), dys[0], getReduceDims(), affine,
                   getEpsilon().convertToDouble(), dx);
  return success();
}

LogicalResult LayerNormOp::buildVJP(OpBuilder &b, ValueRange dys,
                                    Cotangents &dx) {
  NNBuilder nn(b, getLoc());
  int64_t rank = typeOf(getInput()).getRank();
  int64_t batch = typeOf(getWeight()).getRank() - 1;
  SmallVector<int64_t> affine = llvm::to_vector(llvm::seq<int64_t>(0, batch));
  affine.push_back(rank - 1);
  normalizationVJP(nn, getInput(), getWeight(), dys[0], {rank - 1}, affine,
                   getEpsilon().convertToDouble(), dx);
  return success();
}

LogicalResult SoftmaxOp::buildVJP(OpBuilder &b, ValueRange dys,
                                  Cotangents &dx) {
  // dx = y * (dy - sum_axis(dy * y)).
  NNBuilder nn(b, getLoc());
  Value y = getResult(), dy = dys[0];
  int64_t axis = getAxis();
  Value dot = nn.broadcast(nn.reduceSum(nn.mul(dy, y), {axis}),
                           typeOf(y).getShape(), {axis});
  dx.push_back(nn.mul(y, nn.sub(dy, dot)));
  return success();
}

LogicalResult LogSoftmaxOp::buildVJP(OpBuilder &b, ValueRange dys,
                                     Cotangents &dx) {
  // dx = dy - softmax(x) * sum_axis(dy), softmax(x) = exp(y).
  NNBuilder nn(b, getLoc());
  Value y = getResult(), dy = dys[0];
  int64_t axis = getAxis();
  Value total =
      nn.broadcast(nn.reduceSum(dy, {axis}), typeOf(y).getShape(), {axis});
  dx.push_back(nn.sub(dy, nn.mul(nn.exp(y), total)));
  return success();
}
