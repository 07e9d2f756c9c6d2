//===- NNElementwiseVJP.cpp - derivatives of elementwise nn ops -----------===//
//
// y = f(x) elementwise: dx = dy * f'(x), with f' written in nn ops (often in
// terms of y, which the forward pass already computed).
//
//===----------------------------------------------------------------------===//

#include "metac/Dialect/NN/IR/NNBuilder.h"
#include "metac/Dialect/NN/IR/NNOps.h"

#include "mlir/IR/TypeUtilities.h"

#include <cmath>

using namespace mlir;
using namespace metac::nn;

using Cotangents = SmallVectorImpl<Value>;

LogicalResult NegOp::buildVJP(OpBuilder &b, ValueRange dy, Cotangents &dx) {
  dx.push_back(NNBuilder(b, getLoc()).neg(dy[0]));
  return success();
}

LogicalResult ExpOp::buildVJP(OpBuilder &b, ValueRange dy, Cotangents &dx) {
  dx.push_back(NNBuilder(b, getLoc()).mul(dy[0], getResult()));
  return success();
}

LogicalResult LogOp::buildVJP(OpBuilder &b, ValueRange dy, Cotangents &dx) {
  dx.push_back(NNBuilder(b, getLoc()).div(dy[0], getInput()));
  return success();
}

LogicalResult SqrtOp::buildVJP(OpBuilder &b, ValueRange dy, Cotangents &dx) {
  // d sqrt(x) = 1 / (2 sqrt(x)).
  NNBuilder nn(b, getLoc());
  dx.push_back(nn.scale(nn.div(dy[0], getResult()), 0.5));
  return success();
}

LogicalResult RsqrtOp::buildVJP(OpBuilder &b, ValueRange dy, Cotangents &dx) {
  // d x^(-1/2) = -1/2 x^(-3/2) = -1/2 y^3.
  NNBuilder nn(b, getLoc());
  Value y = getResult();
  dx.push_back(nn.scale(nn.mul(nn.mul(dy[0], y), nn.mul(y, y)), -0.5));
  return success();
}

LogicalResult ErfOp::buildVJP(OpBuilder &b, ValueRange dy, Cotangents &dx) {
  // d erf(x) = 2 / sqrt(pi) exp(-x^2).
  NNBuilder nn(b, getLoc());
  Value x = getInput();
  Value density = nn.exp(nn.neg(nn.mul(x, x)));
  dx.push_back(nn.scale(nn.mul(dy[0], density), 2.0 / std::sqrt(M_PI)));
  return success();
}

LogicalResult ReluOp::buildVJP(OpBuilder &b, ValueRange dy, Cotangents &dx) {
  NNBuilder nn(b, getLoc());
  dx.push_back(nn.mul(dy[0], nn.step(getInput())));
  return success();
}

LogicalResult StepOp::buildVJP(OpBuilder &, ValueRange, Cotangents &dx) {
  dx.push_back(nullptr); // piecewise constant
  return success();
}

LogicalResult TanhOp::buildVJP(OpBuilder &b, ValueRange dy, Cotangents &dx) {
  // d tanh(x) = 1 - y^2.
  NNBuilder nn(b, getLoc());
  Value y = getResult();
  dx.push_back(nn.sub(dy[0], nn.mul(nn.mul(dy[0], y), y)));
  return success();
}

LogicalResult SigmoidOp::buildVJP(OpBuilder &b, ValueRange dy, Cotangents &dx) {
  // d sigmoid(x) = y - y^2.
  NNBuilder nn(b, getLoc());
  Value y = getResult();
  dx.push_back(nn.mul(dy[0], nn.sub(y, nn.mul(y, y))));
  return success();
}

LogicalResult GeluOp::buildVJP(OpBuilder &b, ValueRange dy, Cotangents &dx) {
  // gelu(x) = x Phi(x): d = Phi(x) + x phi(x), with
  // Phi(x) = (1 + erf(x / sqrt 2)) / 2 and phi(x) = exp(-x^2 / 2) / sqrt(2 pi).
  NNBuilder nn(b, getLoc());
  Value x = getInput();
  Value cdf =
      nn.scale(nn.add(nn.onesLike(x), nn.erf(nn.scale(x, M_SQRT1_2))), 0.5);
  Value pdf = nn.scale(nn.exp(nn.scale(nn.mul(x, x), -0.5)),
                       1.0 / std::sqrt(2.0 * M_PI));
  dx.push_back(nn.mul(dy[0], nn.add(cdf, nn.mul(x, pdf))));
  return success();
}

LogicalResult ScaleOp::buildVJP(OpBuilder &b, ValueRange dy, Cotangents &dx) {
  dx.push_back(
      NNBuilder(b, getLoc()).scale(dy[0], getFactor().convertToDouble()));
  return success();
}

LogicalResult ConvertOp::buildVJP(OpBuilder &b, ValueRange dy, Cotangents &dx) {
  dx.push_back(NNBuilder(b, getLoc())
                   .convert(dy[0], getElementTypeOrSelf(getInput().getType())));
  return success();
}

LogicalResult StopGradientOp::buildVJP(OpBuilder &, ValueRange,
                                       Cotangents &dx) {
  dx.push_back(nullptr);
  return success();
}

LogicalResult AddOp::buildVJP(OpBuilder &, ValueRange dy, Cotangents &dx) {
  dx.append({dy[0], dy[0]});
  return success();
}

LogicalResult SubOp::buildVJP(OpBuilder &b, ValueRange dy, Cotangents &dx) {
  dx.append({dy[0], NNBuilder(b, getLoc()).neg(dy[0])});
  return success();
}

LogicalResult MulOp::buildVJP(OpBuilder &b, ValueRange dy, Cotangents &dx) {
  NNBuilder nn(b, getLoc());
  dx.append({nn.mul(dy[0], getRhs()), nn.mul(dy[0], getLhs())});
  return success();
}

LogicalResult DivOp::buildVJP(OpBuilder &b, ValueRange dy, Cotangents &dx) {
  // y = a / b: da = dy / b, db = -dy a / b^2 = -(dy / b) y.
  NNBuilder nn(b, getLoc());
  Value da = nn.div(dy[0], getRhs());
  dx.append({da, nn.neg(nn.mul(da, getResult()))});
  return success();
}
