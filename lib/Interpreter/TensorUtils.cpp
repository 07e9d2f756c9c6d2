//===- TensorUtils.cpp - shapes and indices of interpreter tensors --------===//

#include "TensorUtils.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace metac::interp {

int64_t Tensor::numElements() const { return detail::product(shape); }

namespace detail {

int64_t product(ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

Tensor zeros(ArrayRef<int64_t> shape) {
  Tensor t;
  t.shape.assign(shape.begin(), shape.end());
  t.values.assign(product(shape), 0.0);
  return t;
}

void forEachIndex(ArrayRef<int64_t> shape,
                  function_ref<void(ArrayRef<int64_t>, int64_t)> fn) {
  int64_t count = product(shape);
  SmallVector<int64_t> index(shape.size(), 0);
  for (int64_t flat = 0; flat < count; ++flat) {
    fn(index, flat);
    // Odometer increment, last dimension fastest.
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
}

int64_t flatIndex(ArrayRef<int64_t> shape, ArrayRef<int64_t> index) {
  int64_t flat = 0;
  for (auto [size, i] : llvm::zip_equal(shape, index))
    flat = flat * size + i;
  return flat;
}

SmallVector<int64_t> dropDims(ArrayRef<int64_t> index, ArrayRef<int64_t> dims) {
  SmallVector<int64_t> kept;
  for (auto [d, i] : llvm::enumerate(index))
    if (!llvm::is_contained(dims, static_cast<int64_t>(d)))
      kept.push_back(i);
  return kept;
}

LogicalResult checkIndex(Operation *op, StringRef what, int64_t value,
                         int64_t bound) {
  if (value >= 0 && value < bound)
    return success();
  return op->emitOpError() << what << " " << value << " is out of range [0, "
                           << bound << ")";
}

void roundTo(Tensor &tensor, Type element) {
  const llvm::fltSemantics &semantics =
      cast<FloatType>(element).getFloatSemantics();
  for (double &x : tensor.values) {
    llvm::APFloat v(x);
    bool lost = false;
    v.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &lost);
    x = v.convertToDouble();
  }
}

} // namespace detail
} // namespace metac::interp
