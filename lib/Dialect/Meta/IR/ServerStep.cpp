//===- ServerStep.cpp - meta.server_step ----------------------------------===//
//
// The outer update of a training step whose parameters and optimizer live
// on parameter servers: its results follow from its operands, and what the
// runtime moves (one buffer of a single float type) constrains them.
//
//===----------------------------------------------------------------------===//

#include "metac/Dialect/Meta/IR/MetaOps.h"

using namespace mlir;
using namespace metac::meta;

LogicalResult
ServerStepOp::inferReturnTypes(MLIRContext *context, std::optional<Location>,
                               ValueRange operands, DictionaryAttr attributes,
                               OpaqueProperties properties, RegionRange regions,
                               SmallVectorImpl<Type> &inferred) {
  ServerStepOp::Adaptor adaptor(operands, attributes, properties, regions);
  llvm::append_range(inferred, adaptor.getParams().getTypes());
  inferred.push_back(adaptor.getLoss().getType());
  int64_t count = static_cast<int64_t>(adaptor.getParams().size());
  inferred.push_back(RankedTensorType::get({count}, Float64Type::get(context)));
  return success();
}

LogicalResult ServerStepOp::verify() {
  if (getParams().empty())
    return emitOpError("expects at least one parameter");
  if (getGrads().getTypes() != getParams().getTypes())
    return emitOpError("expects one gradient of each parameter's type");
  // The servers hold one flat vector of the parameters: one float type.
  Type element =
      cast<RankedTensorType>(getParams()[0].getType()).getElementType();
  if (!element.isF32() && !element.isF64())
    return emitOpError("expects f32 or f64 parameters, got ") << element;
  for (Value p : getParams())
    if (cast<RankedTensorType>(p.getType()).getElementType() != element)
      return emitOpError("expects parameters of one float type (the servers "
                         "hold them as one vector), got ")
             << element << " and " << p.getType();
  if (getAsynchronous() && getStaleness() != 0)
    return emitOpError("is asynchronous or has a staleness bound, not both");
  if (getClipNorm() && !getGuarded())
    return emitOpError("clips gradients only with its guard ('guarded')");
  return success();
}
