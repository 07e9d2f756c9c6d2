//===- Passes.td - metac conversion passes -----------------*- tablegen -*-===//

#ifndef METAC_CONVERSION_PASSES_TD
#define METAC_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertNNToRuntime : Pass<"convert-nn-to-runtime", "::mlir::ModuleOp"> {
  let summary = "Lower step functions over nn ops to calls of the metart C API";
  let description = [{
    Turns each function named by a `meta.train`'s `meta.step` and
    `meta.eval` attributes (straight-line functions of nn ops after the
    autodiff phase) into an LLVM dialect function

      `i32 @<name>(ptr context, ptr inputs, ptr outputs)`

    where `inputs` and `outputs` are arrays of `metart_tensor *` (one per
    argument and per result; an output may alias its input). Every tensor
    value gets a `metart_tensor` descriptor on the stack and data from the
    context's scratch arena (reset on entry); every nn op becomes a call of
    its kernel (`metart_nn_<op>`), `meta.outer_step` the optimizer's update
    in place, reshapes and stop-gradients alias their operand, and results
    are copied to the outputs. Each call's status is checked: the first
    non-zero status is returned.

    The models and meta declarations are removed: the lowered module holds
    LLVM dialect only.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // METAC_CONVERSION_PASSES_TD
