//===- DifferentiableOpInterface.td - reverse-mode rules ---*- tablegen -*-===//

#ifndef METAC_INTERFACES_DIFFERENTIABLEOPINTERFACE_TD
#define METAC_INTERFACES_DIFFERENTIABLEOPINTERFACE_TD

include "mlir/IR/OpBase.td"

def DifferentiableOpInterface : OpInterface<"DifferentiableOpInterface"> {
  let cppNamespace = "::metac";
  let description = [{
    An op that knows its vector-Jacobian product (VJP). Given a cotangent for
    each result, `buildVJP` emits ops, at the builder's insertion point, that
    compute the cotangent of each operand, and appends one value per operand
    to `operandCotangents`: null where the cotangent is zero or the operand
    is not differentiable (integer ids, labels, the input of a piecewise
    constant function).

    The nn ops build their VJPs from nn ops only, so the result can itself be
    differentiated: that is what makes second-order meta-gradients and
    Hessian-vector products exact.
  }];
  let methods = [
    InterfaceMethod<[{
        Emits the VJP for `resultCotangents` (one per result, none null) and
        appends one cotangent (or null) per operand to `operandCotangents`.
      }],
      "::mlir::LogicalResult", "buildVJP",
      (ins "::mlir::OpBuilder &":$builder,
           "::mlir::ValueRange":$resultCotangents,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandCotangents)>,
  ];
}

#endif // METAC_INTERFACES_DIFFERENTIABLEOPINTERFACE_TD
