//===- NNVerifiers.cpp - nn op verifiers ----------------------------------===//
//
// Shape and attribute checks of the nn ops. Messages name the op (through
// emitOpError) and print shapes as `[d0, d1, ...]` so a shape error in a spec
// reads the same as one in hand-written IR.
//
//===----------------------------------------------------------------------===//

#include "NNShapeChecks.h"

#include "metac/Dialect/NN/IR/NNOps.h"

#include <cmath>

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace metac::nn;

using namespace metac::nn::detail;

LogicalResult LinearOp::verify() {
  ArrayRef<int64_t> x = shapeOf(getInput()), w = shapeOf(getWeight());
  if (x.empty())
    return emitOpError("expects an input of rank >= 1");
  FailureOr<int64_t> batch =
      verifyWeightBatchPrefix(*this, "weight", w, 2, x.drop_back());
  if (failed(batch))
    return failure();
  int64_t out = w[w.size() - 2], in = w.back();
  if (x.back() != in)
    return emitOpError("input features ")
           << x.back() << " do not match the weight's in-features " << in
           << " (input " << shapeStr(x) << ", weight " << shapeStr(w) << ")";
  SmallVector<int64_t> biasShape(w.drop_back());
  if (getBias() &&
      failed(verifyVectorParam(*this, "bias", getBias(), biasShape)))
    return failure();
  SmallVector<int64_t> expected(x.drop_back());
  expected.push_back(out);
  if (failed(verifyResultShape(*this, expected)))
    return failure();
  return verifySameElementType(*this, {getInput(), getWeight(), getBias()});
}

LogicalResult MatmulOp::verify() {
  ArrayRef<int64_t> a = shapeOf(getLhs()), b = shapeOf(getRhs());
  if (a.size() < 2 || b.size() < 2)
    return emitOpError("expects operands of rank >= 2, got ")
           << shapeStr(a) << " and " << shapeStr(b);
  if (a.size() != b.size() || a.drop_back(2) != b.drop_back(2))
    return emitOpError("batch dimensions differ: ")
           << shapeStr(a) << " and " << shapeStr(b);
  size_t r = a.size();
  int64_t m = getTransposeLhs() ? a[r - 1] : a[r - 2];
  int64_t ka = getTransposeLhs() ? a[r - 2] : a[r - 1];
  int64_t kb = getTransposeRhs() ? b[r - 1] : b[r - 2];
  int64_t n = getTransposeRhs() ? b[r - 2] : b[r - 1];
  if (ka != kb)
    return emitOpError("contracting dimensions differ: ")
           << ka << " vs " << kb << " (lhs " << shapeStr(a) << ", rhs "
           << shapeStr(b) << ")";
  SmallVector<int64_t> expected(a.drop_back(2));
  expected.append({m, n});
  if (failed(verifyResultShape(*this, expected)))
    return failure();
  return verifySameElementType(*this, {getLhs(), getRhs()});
}

LogicalResult AttentionOp::verify() {
  if (failed(verifyRingAxes(*this, getRingAxes())))
    return failure();
  FailureOr<SmallVector<int64_t>> expected = attentionOutputShape(
      *this, shapeOf(getQuery()), shapeOf(getKey()), shapeOf(getValue()),
      getCausal(), getScale().convertToDouble());
  if (failed(expected) || failed(verifyResultShape(*this, *expected)))
    return failure();
  return verifySameElementType(*this, {getQuery(), getKey(), getValue()});
}

LogicalResult Conv2DOp::verify() {
  ArrayRef<int64_t> w = shapeOf(getWeight());
  int64_t batch = 0;
  FailureOr<SmallVector<int64_t>> expected = convolutionOutputShape(
      *this, shapeOf(getInput()), w, getStride(), getPadding(), batch);
  if (failed(expected))
    return failure();
  SmallVector<int64_t> biasShape(w.take_front(batch + 1));
  if (getBias() &&
      failed(verifyVectorParam(*this, "bias", getBias(), biasShape)))
    return failure();
  if (failed(verifyResultShape(*this, *expected)))
    return failure();
  return verifySameElementType(*this, {getInput(), getWeight(), getBias()});
}

static LogicalResult verifyPool(Operation *op, Value input,
                                ArrayRef<int64_t> kernel,
                                ArrayRef<int64_t> stride,
                                ArrayRef<int64_t> padding) {
  FailureOr<SmallVector<int64_t>> expected =
      poolingOutputShape(op, shapeOf(input), kernel, stride, padding);
  if (failed(expected) || failed(verifyResultShape(op, *expected)))
    return failure();
  return verifySameElementType(op, {input});
}

LogicalResult MaxPool2DOp::verify() {
  return verifyPool(*this, getInput(), getKernel(), getStride(), getPadding());
}

LogicalResult AvgPool2DOp::verify() {
  return verifyPool(*this, getInput(), getKernel(), getStride(), getPadding());
}

LogicalResult BatchNormOp::verify() {
  ArrayRef<int64_t> x = shapeOf(getInput());
  int64_t rank = x.size(), channel = getChannelDim();
  if (channel < 0 || channel >= rank)
    return emitOpError("channel dimension ")
           << channel << " is out of range for rank " << rank;
  if (failed(verifyDimensionList(*this, "reduce dimension", getReduceDims(),
                                 rank)))
    return failure();
  if (llvm::is_contained(getReduceDims(), channel))
    return emitOpError("reduce dimensions must not contain the channel "
                       "dimension ")
           << channel;
  if (getEpsilon().convertToDouble() < 0)
    return emitOpError("expects a non-negative epsilon");
  // Weights carry the channel count, after optional leading batch dimensions.
  ArrayRef<int64_t> w = shapeOf(getWeight());
  FailureOr<int64_t> batch = verifyWeightBatchPrefix(
      *this, "weight", w, 1, x.take_front(std::min<int64_t>(channel, rank)));
  if (failed(batch))
    return failure();
  if (w.back() != x[channel])
    return emitOpError("weight shape ")
           << shapeStr(w) << " does not match the " << x[channel]
           << " channels of the input " << shapeStr(x);
  if (failed(verifyVectorParam(*this, "bias", getBias(), w)) ||
      failed(verifyResultShape(*this, x)))
    return failure();
  return verifySameElementType(*this, {getInput(), getWeight(), getBias()});
}

LogicalResult LayerNormOp::verify() {
  ArrayRef<int64_t> x = shapeOf(getInput()), w = shapeOf(getWeight());
  if (x.empty())
    return emitOpError("expects an input of rank >= 1");
  if (getEpsilon().convertToDouble() < 0)
    return emitOpError("expects a non-negative epsilon");
  FailureOr<int64_t> batch =
      verifyWeightBatchPrefix(*this, "weight", w, 1, x.drop_back());
  if (failed(batch))
    return failure();
  if (w.back() != x.back())
    return emitOpError("weight shape ")
           << shapeStr(w) << " does not match the normalised size " << x.back()
           << " of the input " << shapeStr(x);
  if (failed(verifyVectorParam(*this, "bias", getBias(), w)) ||
      failed(verifyResultShape(*this, x)))
    return failure();
  return verifySameElementType(*this, {getInput(), getWeight(), getBias()});
}

LogicalResult EmbeddingOp::verify() {
  ArrayRef<int64_t> ids = shapeOf(getIds()), table = shapeOf(getTable());
  FailureOr<int64_t> batch =
      verifyWeightBatchPrefix(*this, "table", table, 2, ids);
  if (failed(batch))
    return failure();
  SmallVector<int64_t> expected(ids);
  expected.push_back(table.back());
  if (failed(verifyResultShape(*this, expected)))
    return failure();
  return verifySameElementType(*this, {getTable()});
}

static LogicalResult verifyAxis(Operation *op, int64_t axis, Value input) {
  int64_t rank = shapeOf(input).size();
  if (axis < 0 || axis >= rank)
    return op->emitOpError("axis ")
           << axis << " is out of range for rank " << rank;
  return success();
}

LogicalResult SoftmaxOp::verify() {
  return verifyAxis(*this, getAxis(), getInput());
}

LogicalResult LogSoftmaxOp::verify() {
  return verifyAxis(*this, getAxis(), getInput());
}

LogicalResult ReshapeOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getType());
  if (in.getNumElements() != out.getNumElements())
    return emitOpError("cannot reshape ")
           << shapeStr(in.getShape()) << " (" << in.getNumElements()
           << " elements) to " << shapeStr(out.getShape()) << " ("
           << out.getNumElements() << " elements)";
  return verifySameElementType(*this, {getInput()});
}

LogicalResult ConvertOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getType());
  if (in.getShape() != out.getShape())
    return emitOpError("converts ")
           << shapeStr(in.getShape()) << " to another shape "
           << shapeStr(out.getShape()) << " (only the element type changes)";
  if (in.getElementType() == out.getElementType())
    return emitOpError("converts ") << in.getElementType() << " to itself";
  return success();
}

LogicalResult TransposeOp::verify() {
  ArrayRef<int64_t> x = shapeOf(getInput());
  ArrayRef<int64_t> perm = getPermutation();
  if (perm.size() != x.size())
    return emitOpError("permutation ")
           << shapeStr(perm) << " does not have rank " << x.size();
  SmallVector<bool> seen(x.size(), false);
  SmallVector<int64_t> expected;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(x.size()) || seen[p])
      return emitOpError("permutation ")
             << shapeStr(perm) << " is not a permutation of 0.."
             << x.size() - 1;
    seen[p] = true;
    expected.push_back(x[p]);
  }
  if (failed(verifyResultShape(*this, expected)))
    return failure();
  return verifySameElementType(*this, {getInput()});
}

LogicalResult BroadcastOp::verify() {
  ArrayRef<int64_t> x = shapeOf(getInput()), y = shapeOf(getResult());
  ArrayRef<int64_t> dims = getDimensions();
  if (x.size() + dims.size() != y.size())
    return emitOpError("result rank ")
           << y.size() << " is not the input rank " << x.size() << " plus "
           << dims.size() << " new dimensions";
  if (failed(verifyDimensionList(*this, "dimension", dims, y.size())))
    return failure();
  SmallVector<int64_t> kept;
  for (int64_t i = 0, e = y.size(); i < e; ++i)
    if (!llvm::is_contained(dims, i))
      kept.push_back(y[i]);
  if (ArrayRef<int64_t>(kept) != x)
    return emitOpError("input shape ")
           << shapeStr(x) << " does not match the result " << shapeStr(y)
           << " without the new dimensions " << shapeStr(dims);
  return verifySameElementType(*this, {getInput()});
}

static LogicalResult verifyReduce(Operation *op, Value input,
                                  ArrayRef<int64_t> dims) {
  ArrayRef<int64_t> x = shapeOf(input);
  if (failed(verifyDimensionList(op, "dimension", dims, x.size())))
    return failure();
  SmallVector<int64_t> expected;
  for (int64_t i = 0, e = x.size(); i < e; ++i)
    if (!llvm::is_contained(dims, i))
      expected.push_back(x[i]);
  if (failed(verifyResultShape(op, expected)))
    return failure();
  return verifySameElementType(op, {input});
}

LogicalResult ReduceSumOp::verify() {
  return verifyReduce(*this, getInput(), getDimensions());
}

LogicalResult ReduceMeanOp::verify() {
  return verifyReduce(*this, getInput(), getDimensions());
}

static LogicalResult verifyBatchRank(Operation *op, int64_t batchRank,
                                     int64_t maxRank) {
  if (batchRank < 0 || batchRank > maxRank)
    return op->emitOpError("batch_rank ")
           << batchRank << " is out of range [0, " << maxRank << "]";
  return success();
}

LogicalResult MSELossOp::verify() {
  ArrayRef<int64_t> p = shapeOf(getPrediction()), t = shapeOf(getTarget());
  if (p != t)
    return emitOpError("prediction shape ")
           << shapeStr(p) << " does not match target shape " << shapeStr(t);
  if (failed(verifyBatchRank(*this, getBatchRank(), p.size())) ||
      failed(verifyResultShape(*this, p.take_front(getBatchRank()))))
    return failure();
  return verifySameElementType(*this, {getPrediction(), getTarget()});
}

/// Logits `[B..., N..., C]` against labels `[B..., N...]`, one result per
/// batch index: the shapes of a classification loss or metric.
template <typename OpT> static LogicalResult verifyClassification(OpT op) {
  ArrayRef<int64_t> l = shapeOf(op.getLogits()), y = shapeOf(op.getLabels());
  if (l.empty() || l.drop_back() != y)
    return op.emitOpError("labels shape ")
           << shapeStr(y) << " is not the logits shape " << shapeStr(l)
           << " without its class dimension";
  if (failed(verifyBatchRank(op, op.getBatchRank(), y.size())) ||
      failed(verifyResultShape(op, l.take_front(op.getBatchRank()))))
    return failure();
  return verifySameElementType(op, {op.getLogits()});
}

LogicalResult CrossEntropyLossOp::verify() {
  return verifyClassification(*this);
}

LogicalResult AccuracyOp::verify() { return verifyClassification(*this); }
