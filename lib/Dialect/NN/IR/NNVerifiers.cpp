//===- NNVerifiers.cpp - nn op verifiers ----------------------------------===//
//
// Shape and attribute checks of the nn ops. Messages name the op (through
// emitOpError) and print shapes as `[d0, d1, ...]` so a shape error in a spec
// reads the same as one in hand-written IR.
//
//===----------------------------------------------------------------------===//

#include "metac/Dialect/NN/IR/NNOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace metac::nn;

namespace {

std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << '[';
  llvm::interleaveComma(shape, os);
  os << ']';
  return s;
}

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

Type elementOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

/// All float operands and the result share one element type.
LogicalResult verifySameElementType(Operation *op, ValueRange values) {
  Type expected = elementOf(op->getResult(0));
  for (Value v : values)
    if (v && elementOf(v) != expected)
      return op->emitOpError("operand element type ")
             << elementOf(v) << " does not match result element type "
             << expected;
  return success();
}

LogicalResult verifyResultShape(Operation *op, ArrayRef<int64_t> expected) {
  ArrayRef<int64_t> actual = shapeOf(op->getResult(0));
  if (actual != expected)
    return op->emitOpError("result shape ")
           << shapeStr(actual) << " does not match the expected shape "
           << shapeStr(expected);
  return success();
}

/// A weight `[P..., rest...]` applies to an input `[B..., ...]` when `P...` is
/// a prefix of `B...` (`leadingInput` = the input's dimensions before its
/// own feature dimensions). Returns the number of batch dimensions P.
FailureOr<int64_t> verifyWeightBatchPrefix(Operation *op, StringRef what,
                                           ArrayRef<int64_t> weightShape,
                                           int64_t weightCoreRank,
                                           ArrayRef<int64_t> leadingInput) {
  int64_t batch = static_cast<int64_t>(weightShape.size()) - weightCoreRank;
  if (batch < 0)
    return op->emitOpError("expects ")
           << what << " of rank at least " << weightCoreRank << ", got "
           << shapeStr(weightShape);
  if (batch > static_cast<int64_t>(leadingInput.size()) ||
      weightShape.take_front(batch) != leadingInput.take_front(batch))
    return op->emitOpError() << what << " batch dimensions "
                             << shapeStr(weightShape.take_front(batch))
                             << " are not a prefix of the input's leading "
                                "dimensions "
                             << shapeStr(leadingInput);
  return batch;
}

LogicalResult verifyVectorParam(Operation *op, StringRef what, Value param,
                                ArrayRef<int64_t> expected) {
  if (shapeOf(param) != expected)
    return op->emitOpError() << what << " shape " << shapeStr(shapeOf(param))
                             << " does not match the expected shape "
                             << shapeStr(expected);
  return success();
}

LogicalResult verifyPositivePair(Operation *op, StringRef name,
                                 ArrayRef<int64_t> values, int64_t minimum) {
  if (values.size() != 2)
    return op->emitOpError() << "expects " << name << " to have 2 values, got "
                             << values.size();
  for (int64_t v : values)
    if (v < minimum)
      return op->emitOpError()
             << "expects " << name << " values >= " << minimum << ", got "
             << shapeStr(values);
  return success();
}

/// Sorted, distinct dimensions in [0, rank).
LogicalResult verifyDimensionList(Operation *op, StringRef name,
                                  ArrayRef<int64_t> dims, int64_t rank) {
  for (auto [i, d] : llvm::enumerate(dims)) {
    if (d < 0 || d >= rank)
      return op->emitOpError() << name << " " << d << " is out of range for rank "
                               << rank;
    if (i > 0 && dims[i - 1] >= d)
      return op->emitOpError()
             << name << " must be sorted and distinct, got " << shapeStr(dims);
  }
  return success();
}

/// Output size of a window of `kernel` moved by `stride` over `size` padded
/// by `padding` on each side; fails when the window does not fit.
FailureOr<int64_t> windowOutput(Operation *op, int64_t size, int64_t kernel,
                                int64_t stride, int64_t padding) {
  int64_t padded = size + 2 * padding;
  if (padded < kernel)
    return op->emitOpError("window of size ")
           << kernel << " does not fit the padded input size " << padded;
  return (padded - kernel) / stride + 1;
}

} // namespace

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
  if (getBias() && failed(verifyVectorParam(*this, "bias", getBias(), biasShape)))
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

LogicalResult Conv2DOp::verify() {
  ArrayRef<int64_t> x = shapeOf(getInput()), w = shapeOf(getWeight());
  if (x.size() < 3)
    return emitOpError("expects an input of rank >= 3 ([..., C, H, W]), got ")
           << shapeStr(x);
  if (failed(verifyPositivePair(*this, "stride", getStride(), 1)) ||
      failed(verifyPositivePair(*this, "padding", getPadding(), 0)))
    return failure();
  FailureOr<int64_t> batch =
      verifyWeightBatchPrefix(*this, "weight", w, 4, x.drop_back(3));
  if (failed(batch))
    return failure();
  ArrayRef<int64_t> core = w.drop_front(*batch);
  int64_t channels = x[x.size() - 3];
  if (core[1] != channels)
    return emitOpError("input channels ")
           << channels << " do not match the weight's in-channels " << core[1]
           << " (input " << shapeStr(x) << ", weight " << shapeStr(w) << ")";
  SmallVector<int64_t> biasShape(w.take_front(*batch));
  biasShape.push_back(core[0]);
  if (getBias() && failed(verifyVectorParam(*this, "bias", getBias(), biasShape)))
    return failure();
  SmallVector<int64_t> expected(x.drop_back(3));
  expected.push_back(core[0]);
  for (int i = 0; i < 2; ++i) {
    FailureOr<int64_t> size =
        windowOutput(*this, x[x.size() - 2 + i], core[2 + i], getStride()[i],
                     getPadding()[i]);
    if (failed(size))
      return failure();
    expected.push_back(*size);
  }
  if (failed(verifyResultShape(*this, expected)))
    return failure();
  return verifySameElementType(*this, {getInput(), getWeight(), getBias()});
}

static LogicalResult verifyPool(Operation *op, Value input,
                                ArrayRef<int64_t> kernel,
                                ArrayRef<int64_t> stride,
                                ArrayRef<int64_t> padding) {
  ArrayRef<int64_t> x = shapeOf(input);
  if (x.size() < 3)
    return op->emitOpError(
               "expects an input of rank >= 3 ([..., C, H, W]), got ")
           << shapeStr(x);
  if (failed(verifyPositivePair(op, "kernel", kernel, 1)) ||
      failed(verifyPositivePair(op, "stride", stride, 1)) ||
      failed(verifyPositivePair(op, "padding", padding, 0)))
    return failure();
  for (int i = 0; i < 2; ++i)
    if (padding[i] * 2 > kernel[i])
      return op->emitOpError("padding ")
             << shapeStr(padding) << " exceeds half the kernel "
             << shapeStr(kernel);
  SmallVector<int64_t> expected(x.drop_back(2));
  for (int i = 0; i < 2; ++i) {
    FailureOr<int64_t> size =
        windowOutput(op, x[x.size() - 2 + i], kernel[i], stride[i], padding[i]);
    if (failed(size))
      return failure();
    expected.push_back(*size);
  }
  if (failed(verifyResultShape(op, expected)))
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
           << shapeStr(w) << " does not match the normalised size "
           << x.back() << " of the input " << shapeStr(x);
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

LogicalResult ReduceMaxOp::verify() {
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

LogicalResult CrossEntropyLossOp::verify() {
  ArrayRef<int64_t> l = shapeOf(getLogits()), y = shapeOf(getLabels());
  if (l.empty() || l.drop_back() != y)
    return emitOpError("labels shape ")
           << shapeStr(y) << " is not the logits shape " << shapeStr(l)
           << " without its class dimension";
  if (failed(verifyBatchRank(*this, getBatchRank(), y.size())) ||
      failed(verifyResultShape(*this, l.take_front(getBatchRank()))))
    return failure();
  return verifySameElementType(*this, {getLogits()});
}
