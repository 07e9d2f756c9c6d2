//===- NNFused.cpp - the fusion group op ----------------------------------===//

#include "metac/Dialect/NN/IR/NNOps.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace metac::nn;

bool FusedOp::isFusible(Operation *op) {
  if (!isa<NegOp, ExpOp, LogOp, SqrtOp, RsqrtOp, ErfOp, ReluOp, StepOp, TanhOp,
           SigmoidOp, GeluOp, ScaleOp, AddOp, SubOp, MulOp, DivOp, BroadcastOp,
           ReduceSumOp, ReduceMeanOp>(op))
    return false;
  // Kernels compute in the tensors' own type: bf16 and f16 stay on the
  // runtime, which widens them to f32.
  auto isWide = [](Type type) {
    Type element = cast<RankedTensorType>(type).getElementType();
    return element.isF32() || element.isF64();
  };
  return llvm::all_of(op->getOperandTypes(), isWide) &&
         llvm::all_of(op->getResultTypes(), isWide);
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
      return op.emitOpError("cannot be part of an nn.fused group (only "
                            "elementwise maps, broadcasts and sums of f32 or "
                            "f64 tensors can)");
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
