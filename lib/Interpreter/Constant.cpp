//===- Constant.cpp - tensor constants in the interpreter -----------------===//
//
// `arith.constant` with a dense tensor value, splat or not, of floats
// (converted to double) or integers (sign-extended to int64, zero-extended
// when unsigned or i1).
//
//===----------------------------------------------------------------------===//

#include "Kernels.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace metac::interp::detail {

FailureOr<Tensor> evaluateOp(arith::ConstantOp op, const Frame &) {
  auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
  if (!dense || !isSupportedType(op.getType()))
    return op.emitError("unsupported constant of type ")
           << op.getType()
           << " (the interpreter supports dense, statically shaped tensor "
              "constants of floats or integers of at most "
           << kMaxElements << " elements)";
  Tensor t;
  ArrayRef<int64_t> shape = dense.getType().getShape();
  t.shape.assign(shape.begin(), shape.end());
  Type element = dense.getElementType();
  if (isa<FloatType>(element)) {
    for (APFloat value : dense.getValues<APFloat>()) {
      bool losesInfo = false;
      value.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven,
                    &losesInfo);
      t.values.push_back(value.convertToDouble());
    }
    return t;
  }
  t.isInteger = true;
  bool zeroExtend = element.isUnsignedInteger() || element.isInteger(1);
  for (const APInt &value : dense.getValues<APInt>()) {
    if (zeroExtend ? !value.isIntN(63) : !value.isSignedIntN(64))
      return op.emitError("integer constant ")
             << llvm::toString(value, 10, /*Signed=*/!zeroExtend)
             << " does not fit in int64";
    t.ints.push_back(zeroExtend ? static_cast<int64_t>(value.getZExtValue())
                                : value.getSExtValue());
  }
  return t;
}

} // namespace metac::interp::detail
