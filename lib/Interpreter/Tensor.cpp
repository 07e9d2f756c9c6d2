//===- Tensor.cpp - the interpreter's tensor values -----------------------===//

#include "metac/Interpreter/Tensor.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace metac::interp {

bool isSupportedType(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape() ||
      !isa<FloatType, IntegerType>(tensor.getElementType()))
    return false;
  // The element count, without overflowing on absurd shapes.
  int64_t elements = 1;
  for (int64_t size : tensor.getShape()) {
    if (size != 0 && elements > kMaxElements / size)
      return false;
    elements *= size;
  }
  return true;
}

} // namespace metac::interp
