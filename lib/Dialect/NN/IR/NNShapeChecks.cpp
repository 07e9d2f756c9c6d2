//===- NNShapeChecks.cpp - checks shared by the nn verifiers --------------===//

#include "NNShapeChecks.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"
#include <cmath>

using namespace mlir;

namespace metac::nn::detail {

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
    return op->emitOpError()
           << what << " shape " << shapeStr(shapeOf(param))
           << " does not match the expected shape " << shapeStr(expected);
  return success();
}

LogicalResult verifyPositivePair(Operation *op, StringRef name,
                                 ArrayRef<int64_t> values, int64_t minimum) {
  if (values.size() != 2)
    return op->emitOpError()
           << "expects " << name << " to have 2 values, got " << values.size();
  for (int64_t v : values)
    if (v < minimum)
      return op->emitOpError() << "expects " << name << " values >= " << minimum
                               << ", got " << shapeStr(values);
  return success();
}

/// Sorted, distinct dimensions in [0, rank).
LogicalResult verifyDimensionList(Operation *op, StringRef name,
                                  ArrayRef<int64_t> dims, int64_t rank) {
  for (auto [i, d] : llvm::enumerate(dims)) {
    if (d < 0 || d >= rank)
      return op->emitOpError()
             << name << " " << d << " is out of range for rank " << rank;
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

LogicalResult verifyShapeOf(Operation *op, StringRef what, Value value,
                            ArrayRef<int64_t> expected) {
  if (shapeOf(value) != expected)
    return op->emitOpError()
           << what << " shape " << shapeStr(shapeOf(value))
           << " does not match the expected shape " << shapeStr(expected);
  return success();
}

FailureOr<SmallVector<int64_t>>
convolutionOutputShape(Operation *op, ArrayRef<int64_t> x, ArrayRef<int64_t> w,
                       ArrayRef<int64_t> stride, ArrayRef<int64_t> padding,
                       int64_t &weightBatch) {
  if (x.size() < 3)
    return op->emitOpError(
               "expects an input of rank >= 3 ([..., C, H, W]), got ")
           << shapeStr(x);
  if (failed(verifyPositivePair(op, "stride", stride, 1)) ||
      failed(verifyPositivePair(op, "padding", padding, 0)))
    return failure();
  FailureOr<int64_t> batch =
      verifyWeightBatchPrefix(op, "weight", w, 4, x.drop_back(3));
  if (failed(batch))
    return failure();
  weightBatch = *batch;
  ArrayRef<int64_t> core = w.drop_front(*batch);
  int64_t channels = x[x.size() - 3];
  if (core[1] != channels)
    return op->emitOpError("input channels ")
           << channels << " do not match the weight's in-channels " << core[1]
           << " (input " << shapeStr(x) << ", weight " << shapeStr(w) << ")";
  SmallVector<int64_t> expected(x.drop_back(3));
  expected.push_back(core[0]);
  for (int i = 0; i < 2; ++i) {
    FailureOr<int64_t> size = windowOutput(op, x[x.size() - 2 + i], core[2 + i],
                                           stride[i], padding[i]);
    if (failed(size))
      return failure();
    expected.push_back(*size);
  }
  return expected;
}

FailureOr<SmallVector<int64_t>>
poolingOutputShape(Operation *op, ArrayRef<int64_t> x, ArrayRef<int64_t> kernel,
                   ArrayRef<int64_t> stride, ArrayRef<int64_t> padding) {
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
  return expected;
}

FailureOr<SmallVector<int64_t>>
attentionOutputShape(Operation *op, ArrayRef<int64_t> q, ArrayRef<int64_t> k,
                     ArrayRef<int64_t> v, bool causal, double scale) {
  if (q.size() < 2 || k.size() != q.size() || v.size() != q.size())
    return op->emitOpError(
               "expects query, key and value of one rank >= 2, got ")
           << shapeStr(q) << ", " << shapeStr(k) << " and " << shapeStr(v);
  size_t r = q.size();
  if (q.drop_back(2) != k.drop_back(2) || q.drop_back(2) != v.drop_back(2))
    return op->emitOpError("batch dimensions differ: ")
           << shapeStr(q) << ", " << shapeStr(k) << " and " << shapeStr(v);
  if (q[r - 1] != k[r - 1])
    return op->emitOpError("query and key widths differ: ")
           << q[r - 1] << " vs " << k[r - 1];
  if (k[r - 2] != v[r - 2])
    return op->emitOpError("key and value lengths differ: ")
           << k[r - 2] << " vs " << v[r - 2];
  if (causal && q[r - 2] != k[r - 2])
    return op->emitOpError("is causal but its query length ")
           << q[r - 2] << " is not its key length " << k[r - 2];
  if (!std::isfinite(scale))
    return op->emitOpError("expects a finite scale");
  SmallVector<int64_t> expected(q.drop_back(1));
  expected.push_back(v[r - 1]);
  return expected;
}

LogicalResult verifyRingAxes(Operation *op,
                             std::optional<ArrayRef<int16_t>> axes) {
  if (!axes)
    return success();
  if (axes->empty())
    return op->emitOpError("'ring_axes' names no mesh axis");
  for (auto [i, axis] : llvm::enumerate(*axes)) {
    if (axis < 0 || axis >= 6)
      return op->emitOpError("'ring_axes' has ")
             << axis << ", not an axis of the six-axis mesh";
    if (i > 0 && axis <= (*axes)[i - 1])
      return op->emitOpError("'ring_axes' must increase, got ")
             << (*axes)[i - 1] << " then " << axis;
  }
  return success();
}

} // namespace metac::nn::detail
