//===- Passes.td - meta dialect passes ---------------------*- tablegen -*-===//

#ifndef METAC_DIALECT_META_TRANSFORMS_PASSES_TD
#define METAC_DIALECT_META_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def MetaAutodiff : Pass<"meta-autodiff"> {
  let summary = "Expand every meta.grad into forward and reverse-mode ops";
  let description = [{
    Replaces each `meta.grad` by its body, inlined at the op, followed by the
    reverse sweep that computes the gradient of the yielded loss with
    respect to the body's arguments. The reverse sweep is built from each
    op's `DifferentiableOpInterface` rule, so the nn ops it emits can be
    differentiated again.

    Gradient requests are expanded innermost first: when an enclosing
    `meta.grad` is expanded, the inner request is already plain nn ops, so
    the outer reverse sweep differentiates through it. That is how
    second-order MAML meta-gradients and Hessian-vector products come out
    exact. Values the body captures from above are constants of its own
    gradient (they get no cotangent) but stay differentiable for enclosing
    requests. A `first_order` request wraps its gradients in
    `nn.stop_gradient`, so enclosing requests treat them as constants.

    The body must be straight-line code of differentiable ops (inner loops
    are unrolled by the `expand` phase); anything else is reported.
  }];
  let dependentDialects = ["::metac::nn::NNDialect",
                           "::mlir::arith::ArithDialect"];
}

#endif // METAC_DIALECT_META_TRANSFORMS_PASSES_TD
