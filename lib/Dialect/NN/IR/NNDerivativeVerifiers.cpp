//===- NNDerivativeVerifiers.cpp - verifiers of the derivative ops --------===//
//
// The ops that derivatives need are checked against the forward op they
// differentiate: the cotangent must have the forward output's shape.
//
//===----------------------------------------------------------------------===//

#include "NNShapeChecks.h"

#include "metac/Dialect/NN/IR/NNOps.h"

#include "llvm/ADT/StringSwitch.h"

using namespace mlir;
using namespace metac::nn;
using namespace metac::nn::detail;

/// The operand of an attention derivative that `name` ("query", "key",
/// "value" and, where `grad` is given, "grad") names; null for others.
static Value attentionOperand(StringRef name, Value query, Value key,
                              Value value, Value grad = {}) {
  return llvm::StringSwitch<Value>(name)
      .Case("query", query)
      .Case("key", key)
      .Case("value", value)
      .Case("grad", grad)
      .Default(Value());
}

LogicalResult AttentionBackwardOp::verify() {
  if (failed(verifyRingAxes(*this, getRingAxes())))
    return failure();
  FailureOr<SmallVector<int64_t>> output = attentionOutputShape(
      *this, shapeOf(getQuery()), shapeOf(getKey()), shapeOf(getValue()),
      getCausal(), getScale().convertToDouble());
  if (failed(output) ||
      failed(verifyShapeOf(*this, "gradient", getGrad(), *output)))
    return failure();
  Value operand = attentionOperand(getWrt(), getQuery(), getKey(), getValue());
  if (!operand)
    return emitOpError("'wrt' must be \"query\", \"key\" or \"value\", got \"")
           << getWrt() << "\"";
  if (failed(verifyResultShape(*this, shapeOf(operand))))
    return failure();
  return verifySameElementType(*this,
                               {getQuery(), getKey(), getValue(), getGrad()});
}

LogicalResult AttentionDoubleBackwardOp::verify() {
  if (failed(verifyRingAxes(*this, getRingAxes())))
    return failure();
  FailureOr<SmallVector<int64_t>> output = attentionOutputShape(
      *this, shapeOf(getQuery()), shapeOf(getKey()), shapeOf(getValue()),
      getCausal(), getScale().convertToDouble());
  if (failed(output) ||
      failed(verifyShapeOf(*this, "gradient", getGrad(), *output)))
    return failure();
  Value from = attentionOperand(getFrom(), getQuery(), getKey(), getValue());
  if (!from)
    return emitOpError("'from' must be \"query\", \"key\" or \"value\", got \"")
           << getFrom() << "\"";
  Value wrt =
      attentionOperand(getWrt(), getQuery(), getKey(), getValue(), getGrad());
  if (!wrt)
    return emitOpError("'wrt' must be \"query\", \"key\", \"value\" or "
                       "\"grad\", got \"")
           << getWrt() << "\"";
  if (failed(
          verifyShapeOf(*this, "cotangent", getCotangent(), shapeOf(from))) ||
      failed(verifyResultShape(*this, shapeOf(wrt))))
    return failure();
  return verifySameElementType(
      *this, {getQuery(), getKey(), getValue(), getGrad(), getCotangent()});
}

LogicalResult Conv2DBackwardInputOp::verify() {
  int64_t batch = 0;
  FailureOr<SmallVector<int64_t>> output =
      convolutionOutputShape(*this, shapeOf(getResult()), shapeOf(getWeight()),
                             getStride(), getPadding(), batch);
  if (failed(output) ||
      failed(verifyShapeOf(*this, "gradient", getGrad(), *output)))
    return failure();
  return verifySameElementType(*this, {getGrad(), getWeight()});
}

LogicalResult Conv2DBackwardWeightOp::verify() {
  int64_t batch = 0;
  FailureOr<SmallVector<int64_t>> output =
      convolutionOutputShape(*this, shapeOf(getInput()), shapeOf(getResult()),
                             getStride(), getPadding(), batch);
  if (failed(output) ||
      failed(verifyShapeOf(*this, "gradient", getGrad(), *output)))
    return failure();
  return verifySameElementType(*this, {getInput(), getGrad()});
}

LogicalResult MaxPool2DBackwardOp::verify() {
  FailureOr<SmallVector<int64_t>> output = poolingOutputShape(
      *this, shapeOf(getInput()), getKernel(), getStride(), getPadding());
  if (failed(output) ||
      failed(verifyShapeOf(*this, "gradient", getGrad(), *output)) ||
      failed(verifyResultShape(*this, shapeOf(getInput()))))
    return failure();
  return verifySameElementType(*this, {getInput(), getGrad()});
}

LogicalResult MaxPool2DGatherOp::verify() {
  FailureOr<SmallVector<int64_t>> output = poolingOutputShape(
      *this, shapeOf(getInput()), getKernel(), getStride(), getPadding());
  if (failed(output) ||
      failed(
          verifyShapeOf(*this, "source", getSource(), shapeOf(getInput()))) ||
      failed(verifyResultShape(*this, *output)))
    return failure();
  return verifySameElementType(*this, {getInput(), getSource()});
}

LogicalResult AvgPool2DBackwardOp::verify() {
  FailureOr<SmallVector<int64_t>> output = poolingOutputShape(
      *this, shapeOf(getResult()), getKernel(), getStride(), getPadding());
  if (failed(output) ||
      failed(verifyShapeOf(*this, "gradient", getGrad(), *output)))
    return failure();
  return verifySameElementType(*this, {getGrad()});
}

LogicalResult EmbeddingBackwardOp::verify() {
  ArrayRef<int64_t> ids = shapeOf(getIds()), table = shapeOf(getResult());
  if (failed(verifyWeightBatchPrefix(*this, "table", table, 2, ids)))
    return failure();
  SmallVector<int64_t> expected(ids);
  expected.push_back(table.back());
  if (failed(verifyShapeOf(*this, "gradient", getGrad(), expected)))
    return failure();
  return verifySameElementType(*this, {getGrad()});
}

LogicalResult MoeDispatchOp::verify() {
  ArrayRef<int64_t> probs = shapeOf(getProbs()), result = shapeOf(getResult());
  if (probs.size() < 2)
    return emitOpError("probabilities must be [..., tokens, experts], got ")
           << shapeStr(probs);
  if (result.empty() || result.drop_back() != probs)
    return emitOpError("result shape ")
           << shapeStr(result) << " is not the probabilities' shape "
           << shapeStr(probs) << " plus a capacity dimension";
  int64_t experts = probs.back();
  if (getTopK() < 1 || static_cast<int64_t>(getTopK()) > experts)
    return emitOpError("top_k must be in [1, ")
           << experts << "] (the experts), got " << getTopK();
  if (result.back() < 1)
    return emitOpError("capacity must be at least 1, got ") << result.back();
  if (cast<ShapedType>(getProbs().getType()).getElementType() !=
      cast<ShapedType>(getResult().getType()).getElementType())
    return emitOpError("result element type differs from the "
                       "probabilities'");
  return success();
}

LogicalResult OneHotOp::verify() {
  ArrayRef<int64_t> labels = shapeOf(getLabels()),
                    result = shapeOf(getResult());
  if (result.empty() || result.drop_back() != labels)
    return emitOpError("result shape ")
           << shapeStr(result) << " is not the labels shape "
           << shapeStr(labels) << " plus a class dimension";
  return success();
}
