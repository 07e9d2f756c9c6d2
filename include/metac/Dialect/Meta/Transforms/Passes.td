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

    Rematerialisation (`remat`): the forward of an outermost request is cut
    after inner steps into segments, and the reverse sweep recomputes every
    segment but the last from the values entering it (the checkpoints)
    before it differentiates it, instead of keeping the segment's values
    alive from the forward. Peak memory then holds the checkpoints and one
    segment's values; with about the square root of the steps as segments
    it grows with the square root of the inner steps. Each cut lies between
    an inner step's gradient and the next one's, where the fewest forward
    bytes are alive (after the update). The copies carry
    `meta.recomputed` so that CSE keeps them apart from the originals.
  }];
  let options = [
    Option<"remat", "remat", "int64_t", /*default=*/"0",
           "Segments of the outer forward recomputed in the reverse sweep: "
           "0 or 1 keep every value, -1 about the square root of the inner "
           "steps, N that many (at most the inner steps + 1)">
  ];
  let dependentDialects = ["::metac::nn::NNDialect",
                           "::mlir::arith::ArithDialect"];
}

def MetaMixedPrecision : Pass<"meta-mixed-precision", "::mlir::ModuleOp"> {
  let summary = "Make the model of each bf16 or fp16 meta.train compute in "
                "that type";
  let description = [{
    For each `meta.train` whose `precision` is `bf16` or `fp16`, rewrites its
    model function: each float argument (the f32 parameters and the sample)
    is converted with `nn.convert` to the 16-bit type where the model
    starts, every op and float constant of the body computes in that type,
    and the results are converted back to the declared (f32) result types
    where it returns. The function's signature is unchanged, so everything
    outside the model stays in f32: the parameters (the master weights),
    the losses, the inner SGD updates, the outer optimizer and its state.

    Differentiation needs nothing more: the derivative of a conversion
    converts the cotangent back, so every gradient of the parameters comes
    out in f32, while the values that the unrolled inner loop keeps for its
    reverse sweeps are 16-bit. The runtime computes each 16-bit op in f32
    (f32 accumulation in products and reductions) and rounds its result.

    The model gets `meta.precision`; a model that two training programs
    want in different precisions is reported. The `precision` option
    overrides every training program's own (`metac --precision`), and
    `loss-scale` (`dynamic` or `off`) every one's `loss_scale`
    (`metac --loss-scale`); dynamic scaling with `on_nonfinite = ignore`
    is reported (the scale is adjusted by the check that it leaves out).
  }];
  let options = [
    Option<"precision", "precision", "std::string", /*default=*/"",
           "f32, bf16 or fp16 for every meta.train (default: each one's "
           "own precision attribute)">,
    Option<"lossScale", "loss-scale", "std::string", /*default=*/"",
           "dynamic or off for every meta.train (default: each one's own "
           "loss_scale attribute)">
  ];
  let dependentDialects = ["::metac::nn::NNDialect",
                           "::mlir::arith::ArithDialect"];
}

def MetaExpand : Pass<"meta-expand", "::mlir::ModuleOp"> {
  let summary = "Expand each meta.train into its meta-iteration step function";
  let description = [{
    For each `meta.train`, emits `@<name>.step(params..., state..., support
    inputs, support targets, query inputs, query targets) -> (params...,
    state..., meta-loss)`: the meta-gradient (`meta.grad` over the shared
    parameters) of the mean over tasks (`meta.map`) of the query loss after
    the algorithm's inner adaptation (`meta.adapt`), followed by the outer
    optimizer step (`meta.outer_step`). The per-sample model is inlined on
    the support and query sets, vectorised over samples. The train op gets a
    `meta.step` attribute naming the function.

    Supports MAML (order 1 and 2, hence FOMAML); other algorithms are
    reported.

    A meta-batch mixed from task classes (`meta.task_mix`) has one batch
    (four arguments) and one `meta.map` per class, each with the class's
    sizes and inner steps, and a meta-loss summed over the meta-batch. Its
    tasks are split over the task axis (`task-parts`, else the plan's) by
    estimated cost or by count (`balance`, else `meta.balance`, else cost);
    ranks with different shares of the classes get different functions,
    `@<name>.step` and `@<name>.step.group<g>`, listed in
    `meta.step_variants`, with `meta.task_assignment` saying which rank
    runs which and draws which tasks.
  }];
  let options = [
    Option<"taskParts", "task-parts", "int64_t", /*default=*/"0",
           "Ranks of the task axis a mixed meta-batch is split over (0: the "
           "train op's plan, else 1)">,
    Option<"balance", "balance", "std::string", /*default=*/"\"\"",
           "How a mixed meta-batch is split over the task axis: cost or "
           "count (empty: the train op's meta.balance, else cost)">,
  ];
  let dependentDialects = ["::metac::nn::NNDialect",
                           "::mlir::func::FuncDialect"];
}

def MetaUnrollAdapt : Pass<"meta-unroll-adapt"> {
  let summary = "Unroll each meta.adapt into gradient steps";
  let description = [{
    Replaces `meta.adapt` by `steps` copies of: a `meta.grad` of its body at
    the current parameters (`first_order` when `order = 1`) and the SGD
    update `p - inner_lr * g`. The result is straight-line code that
    `meta-autodiff` differentiates through.
  }];
  let dependentDialects = ["::metac::nn::NNDialect"];
}

def MetaBatchTasks : Pass<"meta-batch-tasks"> {
  let summary = "Vectorise each meta.map over its tasks";
  let description = [{
    Replaces `meta.map` by its body with a leading task axis on every value
    that depends on a mapped operand, so one device runs all of its tasks as
    batched ops. Gradient requests inside the body differentiate the sum of
    the per-task losses, which gives each task its own gradient since tasks
    do not interact.
  }];
  let dependentDialects = ["::metac::nn::NNDialect"];
}

#endif // METAC_DIALECT_META_TRANSFORMS_PASSES_TD
