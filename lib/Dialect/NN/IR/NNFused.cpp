//===- NNFused.cpp - the fusion group op ----------------------------------===//

#include "metac/Dialect/NN/IR/NNOps.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace metac::nn;

/// Whether every tensor `op` reads and writes is f32 or f64: kernels compute
/// in the tensors' own type, so bf16 and f16 stay on the runtime, which
/// widens them to f32.
static bool isWide(Operation *op) {
  auto wide = [](Type type) {
    Type element = cast<RankedTensorType>(type).getElementType();
    return element.isF32() || element.isF64();
  };
  return llvm::all_of(op->getOperandTypes(), wide) &&
         llvm::all_of(op->getResultTypes(), wide);
}

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// A batched product `op(a) op(b)` with one term, row or column: a map and
/// a sum (lib/Conversion/Fusion/DegenerateProducts.cpp).
static bool hasUnitDimension(Value a, Value b, bool transposeA,
                             bool transposeB) {
  ArrayRef<int64_t> as = shapeOf(a), bs = shapeOf(b);
  int64_t r = as.size();
  if (r < 3 || bs.size() != as.size())
    return false;
  int64_t m = transposeA ? as[r - 1] : as[r - 2];
  int64_t k = transposeA ? as[r - 2] : as[r - 1];
  int64_t n = transposeB ? bs[r - 2] : bs[r - 1];
  return m == 1 || n == 1 || k == 1;
}

bool FusedOp::isFusible(Operation *op) {
  if (!isWide(op))
    return false;
  if (auto product = dyn_cast<MatmulOp>(op))
    return hasUnitDimension(product.getLhs(), product.getRhs(),
                            product.getTransposeLhs(),
                            product.getTransposeRhs());
  if (auto linear = dyn_cast<LinearOp>(op))
    return hasUnitDimension(linear.getInput(), linear.getWeight(), false, true);
  // Statistics per task (or sample) keep the leading dimension.
  if (auto norm = dyn_cast<BatchNormOp>(op))
    return !norm.getReduceDims().empty() &&
           !llvm::is_contained(norm.getReduceDims(), 0);
  return isa<NegOp, ExpOp, LogOp, SqrtOp, RsqrtOp, ErfOp, ReluOp, StepOp,
             TanhOp, SigmoidOp, GeluOp, ScaleOp, AddOp, SubOp, MulOp, DivOp,
             BroadcastOp, ReduceSumOp, ReduceMeanOp>(op);
}

LogicalResult FusedOp::verify() {
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError("has ")
           << getInputs().size() << " inputs but its body takes "
           << body.getNumArguments() << " arguments";
  for (auto [index, input, argument] :
       llvm::enumerate(getInputs(), body.getArguments()))
    if (input.getType() != argument.getType())
      return emitOpError("input ")
             << index << " has type " << input.getType()
             << " but its block argument " << argument.getType();
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield)
    return emitOpError("body must end with nn.yield");
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError("yields ") << yield.getValues().getTypes()
                                  << " but returns " << getResultTypes();
  for (Operation &op : body.without_terminator())
    if (!isFusible(&op))
      return op.emitOpError(
          "cannot be part of an nn.fused group (only elementwise maps, "
          "broadcasts, sums, batched products with a unit dimension and "
          "per-task batch norms of f32 or f64 tensors can)");
  return success();
}

LogicalResult FusedOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FlatSymbolRefAttr kernel = getKernelAttr();
  if (!kernel)
    return success();
  auto function =
      symbols.lookupNearestSymbolFrom<FunctionOpInterface>(*this, kernel);
  if (!function)
    return emitOpError("names kernel ")
           << kernel << ", which is not a function of the module";
  // One buffer per input, then per result.
  unsigned expected = getInputs().size() + getNumResults();
  if (function.getNumArguments() != expected)
    return emitOpError("names kernel ")
           << kernel << " of " << function.getNumArguments()
           << " arguments; its group has " << expected << " inputs and results";
  return success();
}
