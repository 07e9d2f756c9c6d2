//===- MetaOps.td - meta dialect operations ----------------*- tablegen -*-===//

#ifndef METAC_DIALECT_META_IR_METAOPS_TD
#define METAC_DIALECT_META_IR_METAOPS_TD

include "metac/Dialect/Meta/IR/MetaBase.td"
include "metac/Dialect/Meta/IR/MetaAttrs.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

def Meta_ScalarLoss : Type<
    And<[RankedTensorOf<[F16, BF16, F32, F64]>.predicate,
         CPred<"::llvm::cast<::mlir::RankedTensorType>($_self).getRank() == 0">]>,
    "0-d float tensor", "::mlir::RankedTensorType">;

def Meta_StaticTensor : Type<
    And<[AnyRankedTensor.predicate, HasStaticShapePred]>,
    "statically shaped tensor", "::mlir::RankedTensorType">;

//===----------------------------------------------------------------------===//
// Declarations: task distributions and training programs
//===----------------------------------------------------------------------===//

def Meta_TasksOp : Meta_Op<"tasks", [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "a task distribution";
  let description = [{
    Declares a task distribution of kind `sinusoid`, `sequence`,
    `fashion_mnist`, `image_folder` or `episodes`. `input_type` and
    `target_type` are the per-sample types of inputs and targets; each task
    has `support` support samples and `query` query samples (for
    classification, `ways * shots` and `ways * query_per_class`). `config`
    holds the kind-specific fields of the spec (ranges, class lists, paths,
    a sequence's `vocab` and `length`).

    ```mlir
    meta.tasks @sine "sinusoid" support 10 query 10 :
        tensor<1xf32> -> tensor<1xf32>
        config {amplitude = [1.0e-01, 5.0], phase = [0.0, 3.14], input = [-5.0, 5.0]}
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, StrAttr:$kind,
                       I64Attr:$support, I64Attr:$query,
                       OptionalAttr<I64Attr>:$ways,
                       TypeAttrOf<Meta_StaticTensor>:$input_type,
                       TypeAttrOf<Meta_StaticTensor>:$target_type,
                       DictionaryAttr:$config);
  let assemblyFormat = [{
    $sym_name $kind `support` $support `query` $query (`ways` $ways^)? `:`
    $input_type `->` $target_type `config` $config attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Whether samples carry class labels (classification tasks).
    bool isClassification();
  }];
}

def Meta_TrainOp : Meta_Op<"train", [Symbol, HasParent<"::mlir::ModuleOp">,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>, NoTerminator,
    SingleBlock, NoRegionArguments]> {
  let summary = "a meta-training program";
  let description = [{
    Meta-trains the parameters of `model` (a `func.func`) on tasks drawn from
    `tasks` with `algorithm`, the task `loss` and the outer `optimizer`, for
    `iterations` meta-iterations of `meta_batch` tasks each, from `seed`.
    The body holds the program's evaluations (`meta.evaluate`). An optional
    `plan` gives an explicit device mesh; `checkpoint_every` and
    `checkpoint_dir` ask for periodic checkpoints. `clip_norm` clips the
    outer gradient to that global L2 norm (PyTorch's `clip_grad_norm_`).
    `on_nonfinite` says what a meta-iteration whose meta-loss or outer
    gradient is not finite does: `stop` the run (the default), `skip` its
    update, or `ignore` the check (no guard is compiled, so no clipping).
    `precision` (`f32`, the default, `bf16` or `fp16`) is the type the model
    computes in: with `bf16` or `fp16` the `meta-mixed-precision` pass makes
    the model convert its f32 parameters and inputs where it starts and its
    results back to f32 where it ends, so the parameters, the inner updates,
    the losses and the outer optimizer stay in f32. `loss_scale`
    (`dynamic` or `off`) scales the meta-loss before the meta-gradient is
    taken and the gradients back after it, by a factor the runtime adjusts
    (halved and the update skipped when a gradient overflows, doubled after
    2000 healthy meta-iterations: PyTorch's GradScaler defaults); without
    it, `fp16` scales unless `on_nonfinite = ignore` and other precisions
    do not.

    The model's leading arguments are its parameters (each with a
    `meta.param` name, PyTorch's `state_dict` naming); its last argument is
    one sample of the task distribution's inputs.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       FlatSymbolRefAttr:$model, FlatSymbolRefAttr:$tasks,
                       Meta_LossAttr:$loss, Meta_AlgorithmAttr:$algorithm,
                       Meta_OptimizerAttr:$optimizer, I64Attr:$meta_batch,
                       I64Attr:$iterations, I64Attr:$seed,
                       OptionalAttr<Meta_PlanAttr>:$plan,
                       OptionalAttr<I64Attr>:$checkpoint_every,
                       OptionalAttr<StrAttr>:$checkpoint_dir,
                       OptionalAttr<F64Attr>:$clip_norm,
                       OptionalAttr<StrAttr>:$on_nonfinite,
                       OptionalAttr<StrAttr>:$precision,
                       OptionalAttr<StrAttr>:$loss_scale);
  let regions = (region SizedRegion<1>:$body);
  let extraClassDeclaration = [{
    /// Whether the step scales its meta-loss (dynamic loss scaling).
    bool scalesLoss() {
      if (std::optional<::llvm::StringRef> scale = getLossScale())
        return *scale == "dynamic";
      return getPrecision() == "fp16" && getOnNonfinite() != "ignore";
    }
  }];
  let assemblyFormat = [{
    $sym_name `model` $model `tasks` $tasks `loss` $loss `algorithm`
    $algorithm `optimizer` $optimizer attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [OpBuilder<(ins "::llvm::StringRef":$name,
      "::llvm::StringRef":$model, "::llvm::StringRef":$tasks,
      "LossKind":$loss, "::mlir::Attribute":$algorithm,
      "::mlir::Attribute":$optimizer, "int64_t":$metaBatch,
      "int64_t":$iterations, "int64_t":$seed)>];
}

def Meta_EvaluateOp : Meta_Op<"evaluate", [HasParent<"TrainOp">,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "evaluation of the meta-trained parameters";
  let description = [{
    Adapts the meta-trained parameters on the support set of `count` tasks
    drawn from `tasks` for each number of inner steps in `steps` (0: no
    adaptation) and scores them on the query set, reporting the mean and 95%
    confidence interval of the loss (and of accuracy for classification).
    A task whose query loss is not finite, or above `diverge_above` when
    given, has diverged: it is counted and left out of the mean.
  }];
  let arguments = (ins FlatSymbolRefAttr:$tasks, I64Attr:$count,
                       DenseI64ArrayAttr:$steps,
                       OptionalAttr<F64Attr>:$diverge_above);
  let assemblyFormat = [{
    `tasks` $tasks `count` $count `steps` $steps
    (`diverge_above` $diverge_above^)? attr-dict
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// The expanded algorithm: task batches, inner loops, gradients, outer steps
//===----------------------------------------------------------------------===//

def Meta_TaskBatchOp : Meta_Op<"task_batch", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "the support and query sets of one task";
  let description = [{
    Reads one task from the distribution `tasks`: support inputs and targets
    (`[support, sample...]`) and query inputs and targets
    (`[query, sample...]`). The `batched` phase gives every result a leading
    task dimension.
  }];
  let arguments = (ins FlatSymbolRefAttr:$tasks);
  let results = (outs Meta_StaticTensor:$support_inputs,
                      Meta_StaticTensor:$support_targets,
                      Meta_StaticTensor:$query_inputs,
                      Meta_StaticTensor:$query_targets);
  let assemblyFormat = "$tasks attr-dict `:` type(results)";
}

def Meta_GradOp : Meta_Op<"grad", [RecursiveMemoryEffects,
    SingleBlock]> {
  let summary = "a gradient request";
  let description = [{
    Evaluates the body, a scalar function of its block arguments, at
    `inputs`, and returns its value and its gradient with respect to each
    argument. Values captured from above are constants of this
    differentiation but stay differentiable for an enclosing `meta.grad`,
    which is how second-order meta-gradients arise. With `first_order`, the
    gradients are constants to every enclosing differentiation (a
    stop-gradient): that is first-order MAML.

    ```mlir
    %loss, %g:2 = meta.grad(%w, %b) : (tensor<4x3xf32>, tensor<4xf32>)
        -> (tensor<f32>, tensor<4x3xf32>, tensor<4xf32>) {
    ^bb0(%pw: tensor<4x3xf32>, %pb: tensor<4xf32>):
      ...
      meta.yield %l : tensor<f32>
    }
    ```
  }];
  let arguments = (ins Variadic<Meta_StaticTensor>:$inputs, UnitAttr:$first_order);
  let results = (outs Meta_ScalarLoss:$value,
                      Variadic<Meta_StaticTensor>:$gradients);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `(` $inputs `)` (`first_order` $first_order^)? attr-dict `:`
    functional-type($inputs, results) $body
  }];
  let hasVerifier = 1;
}

def Meta_AdaptOp : Meta_Op<"adapt", [RecursiveMemoryEffects,
    SingleBlock]> {
  let summary = "the inner adaptation loop";
  let description = [{
    Starting from `params`, takes `steps` SGD steps of size `inner_lr` on the
    loss the body computes from its block arguments (the current adapted
    parameters), and returns the adapted parameters. `order = 2` keeps the
    dependence of each step's gradient on the parameters (exact second-order
    meta-gradients); `order = 1` treats inner gradients as constants.
  }];
  let arguments = (ins Variadic<Meta_StaticTensor>:$params, I64Attr:$steps,
                       F64Attr:$inner_lr, I64Attr:$order);
  let results = (outs Variadic<Meta_StaticTensor>:$adapted);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `(` $params `)` `steps` $steps `inner_lr` $inner_lr `order` $order
    attr-dict `:` functional-type($params, results) $body
  }];
  let hasVerifier = 1;
}

def Meta_YieldOp : Meta_Op<"yield", [Pure, Terminator, ReturnLike,
    ParentOneOf<["GradOp", "AdaptOp", "MapOp"]>]> {
  let summary = "the values a meta region computes";
  let description = [{
    Ends the body of `meta.grad` and `meta.adapt` (one 0-d float loss) and of
    `meta.map` (the per-task results).
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The loss of a gradient or adaptation body.
    ::mlir::Value getLoss() { return getValues().front(); }
  }];
}

def Meta_MapOp : Meta_Op<"map", [RecursiveMemoryEffects, SingleBlock,
    AttrSizedOperandSegments]> {
  let summary = "the same computation on every task of a batch";
  let description = [{
    Runs the body once per task: `mapped` operands have a leading task
    dimension of size `count` and the body sees one task's slice of each;
    `shared` operands are the same for every task. The body's yielded values
    are stacked along a new leading task dimension. The `batched` phase
    replaces the op by its body vectorised over tasks.

    ```mlir
    %losses = meta.map(%sx, %sy : tensor<25x10x1xf32>, tensor<25x10x1xf32>)
        shared(%w : tensor<1x1xf32>) -> tensor<25xf32> {
    ^bb0(%x: tensor<10x1xf32>, %y: tensor<10x1xf32>, %v: tensor<1x1xf32>):
      ...
      meta.yield %l : tensor<f32>
    }
    ```
  }];
  let arguments = (ins Variadic<Meta_StaticTensor>:$mapped,
                       Variadic<Meta_StaticTensor>:$shared);
  let results = (outs Variadic<Meta_StaticTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    `(` $mapped `:` type($mapped) `)` `shared` `(` ($shared^ `:`
    type($shared))? `)` attr-dict `->` type($results) $body
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The number of tasks (the mapped operands' leading dimension).
    int64_t getCount() {
      return ::llvm::cast<::mlir::RankedTensorType>(getMapped().front().getType())
          .getDimSize(0);
    }
  }];
}

def Meta_UpdateGuardOp : Meta_Op<"update_guard", [Pure]> {
  let summary = "the health check and clipping of an outer update";
  let description = [{
    Looks at the meta-`loss` and the outer gradients `grads` before the
    optimizer uses them. `norms[i]` is the squared L2 norm of `grads[i]`,
    summed in f64 (not finite when the gradient holds a non-finite value).
    `gate` is `[apply, scale]`: `apply` is 1 when the loss and every norm are
    finite and 0 otherwise (the update is skipped); `scale` is
    `min(1, clip_norm / (sqrt(sum(norms)) + 1e-6))` with `clip_norm`
    (PyTorch's `clip_grad_norm_`) and 1 without. The step returns `norms`
    so that the driver can name the first non-finite gradient.

    ```mlir
    %norms, %gate = meta.update_guard %loss grads(%gw, %gb :
        tensor<4x3xf32>, tensor<4xf32>) clip_norm 1.0 :
        tensor<f32> -> tensor<2xf64>, tensor<2xf64>
    ```
  }];
  let arguments = (ins Meta_ScalarLoss:$loss,
                       Variadic<Meta_StaticTensor>:$grads,
                       OptionalAttr<F64Attr>:$clip_norm);
  let results = (outs Meta_StaticTensor:$norms, Meta_StaticTensor:$gate);
  let assemblyFormat = [{
    $loss `grads` `(` $grads `:` type($grads) `)`
    (`clip_norm` $clip_norm^)? attr-dict `:` type($loss) `->` type($norms)
    `,` type($gate)
  }];
  let hasVerifier = 1;
}

def Meta_WaitOp : Meta_Op<"wait", [AllTypesMatch<["started", "result"]>]> {
  let summary = "the completion of a collective started asynchronously";
  let description = [{
    `started` is the result of a collective (a `shard.all_reduce` or
    `shard.reduce_scatter`) marked `metac.async`: the collective starts where
    it stands and runs while the ops between it and this wait compute; the
    wait returns its result once it has completed. Placed by
    `meta-overlap-collectives` before the first use of the result. The wait
    is the collective's only user, and the collective's operand stays alive
    until the wait (the runtime still reads it).

    ```mlir
    %sum = shard.all_reduce %g on @mesh grid_axes = [0] {metac.async}
        : tensor<1762xf32> -> tensor<1762xf32>
    ...  // the rest of the backward pass
    %ready = meta.wait %sum : tensor<1762xf32>
    ```
  }];
  let arguments = (ins Meta_StaticTensor:$started);
  let results = (outs Meta_StaticTensor:$result);
  let assemblyFormat = "$started attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Meta_CarryLoadOp : Meta_Op<"carry_load", []> {
  let summary = "a value kept from the previous training step";
  let description = [{
    Returns the value that `meta.carry_store` with the same `site` stored
    in the previous call of the step (zeros in the first call after the
    program started or resumed). The pipelined schedule `pipedream` runs
    the last segments of meta-iteration t - 1 next to the first ones of
    meta-iteration t: the values the later segments need (activations,
    the task batch, the weights they were computed with: weight stashing)
    cross from one step to the next through these pairs. The runtime keeps
    two buffers per site, so the load and the store of one step may come
    in either order.

    ```mlir
    %h = meta.carry_load site 3 : tensor<2x8x32xf32>
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$site);
  let results = (outs Meta_StaticTensor:$result);
  let assemblyFormat = "`site` $site attr-dict `:` type($result)";
}

def Meta_CarryStoreOp : Meta_Op<"carry_store", []> {
  let summary = "keeps a value for the next training step";
  let description = [{
    Copies `value` into the runtime's buffer of `site`, for the
    `meta.carry_load` of the same site in the next call of the step.

    ```mlir
    meta.carry_store %h site 3 : tensor<2x8x32xf32>
    ```
  }];
  let arguments = (ins Meta_StaticTensor:$value,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$site);
  let assemblyFormat = "$value `site` $site attr-dict `:` type($value)";
}

def Meta_OuterStepOp : Meta_Op<"outer_step", [Pure, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "one step of the outer optimizer";
  let description = [{
    Applies `optimizer` to `params` with `grads` and the optimizer's `state`,
    returning the new parameters followed by the new state (same types). The
    state is empty for SGD without momentum, one buffer per parameter for SGD
    with momentum, and `m...`, `v...` and a `tensor<i64>` step count for Adam
    and AdamW. With a `gate` (a `meta.update_guard`'s), the gradients are
    multiplied by `gate[1]` and nothing changes (the step count included)
    when `gate[0]` is 0.

    ```mlir
    %p:2 = meta.outer_step #meta.sgd<lr = 1.0, momentum = 0.0, weight_decay = 0.0>
        params(%w, %b : tensor<4x3xf32>, tensor<4xf32>)
        grads(%gw, %gb : tensor<4x3xf32>, tensor<4xf32>) state()
    ```
  }];
  let arguments = (ins Meta_OptimizerAttr:$optimizer,
                       Variadic<Meta_StaticTensor>:$params,
                       Variadic<Meta_StaticTensor>:$grads,
                       Variadic<Meta_StaticTensor>:$state,
                       Optional<Meta_StaticTensor>:$gate);
  let results = (outs Variadic<Meta_StaticTensor>:$results);
  let assemblyFormat = [{
    $optimizer `params` `(` ($params^ `:` type($params))? `)` `grads` `(`
    ($grads^ `:` type($grads))? `)` `state` `(` ($state^ `:` type($state))? `)`
    (`gate` `(` $gate^ `:` type($gate) `)`)? attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The updated parameters (the leading results).
    ::mlir::ResultRange getNewParams() {
      return getResults().take_front(getParams().size());
    }
    /// The updated optimizer state (the trailing results).
    ::mlir::ResultRange getNewState() {
      return getResults().drop_front(getParams().size());
    }
    /// Parameter `i`'s own state: Adam's two moments, SGD's momentum
    /// buffer, none for plain SGD (Adam's step count is shared).
    ::llvm::SmallVector<::mlir::Value, 2> getStateOf(unsigned i);
    /// The order in which an offloaded update stages its parameters:
    /// largest staged bytes first (the program's order otherwise).
    ::llvm::SmallVector<unsigned> getStagingOrder();
    /// Under --offload=optimizer, whether the next parameter's state is
    /// prefetched into a second staging area while this one is updated:
    /// where that area costs at most a quarter of the offloaded state and
    /// the overlap hides at least a fifth of its crossings.
    bool prefetchesOffloadedState();
  }];
}

def Meta_ServerStepOp : Meta_Op<"server_step", [AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "an outer update applied by parameter servers";
  let description = [{
    Replaces the sums of the outer gradients and of the meta-loss over the
    mesh, the update guard and `meta.outer_step` of a training step when
    `servers` dedicated ranks (beyond the mesh) hold the meta-parameters and
    the optimizer state (`--parameter-servers`): this rank pushes its
    partial `grads` and `loss` (its share of the sums) to the servers and
    pulls the parameters they hold, in place. Results: the new parameters,
    the meta-loss the servers summed, and the squared norm of each summed
    gradient (f64, as `meta.update_guard`'s). The servers apply `optimizer`
    to the sum of all ranks' pushes of an iteration, with the guard when
    `guarded` (skip non-finite updates, clip to `clip_norm`).

    `staleness` = S lets a rank compute its next iteration on parameters up
    to S updates old (stale-synchronous parallel; 0 is synchronous);
    `asynchronous` has the servers apply every push on arrival as an update
    of its own (the pushing rank's mean gradient) and answer the pusher at
    once, so no rank ever waits for another.

    ```mlir
    %p:3 = meta.server_step #meta.sgd<lr = 0.1, momentum = 0.0,
        weight_decay = 0.0> params(%w : tensor<4x3xf32>)
        grads(%gw : tensor<4x3xf32>) loss(%l : tensor<f32>)
        {servers = 1 : i64, staleness = 0 : i64}
    ```
  }];
  let arguments = (ins Meta_OptimizerAttr:$optimizer,
                       Variadic<Meta_StaticTensor>:$params,
                       Variadic<Meta_StaticTensor>:$grads,
                       Meta_ScalarLoss:$loss,
                       ConfinedAttr<I64Attr, [IntMinValue<1>]>:$servers,
                       ConfinedAttr<I64Attr, [IntMinValue<0>]>:$staleness,
                       UnitAttr:$asynchronous,
                       UnitAttr:$guarded,
                       OptionalAttr<F64Attr>:$clip_norm);
  let results = (outs Variadic<Meta_StaticTensor>:$results);
  let assemblyFormat = [{
    $optimizer `params` `(` $params `:` type($params) `)` `grads` `(`
    $grads `:` type($grads) `)` `loss` `(` $loss `:` type($loss) `)` attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The parameters pulled from the servers (the leading results).
    ::mlir::ResultRange getNewParams() {
      return getResults().take_front(getParams().size());
    }
    /// The meta-loss summed by the servers.
    ::mlir::Value getTotalLoss() { return getResults()[getParams().size()]; }
    /// The squared norm of each summed gradient (tensor<Nxf64>).
    ::mlir::Value getNorms() { return getResults().back(); }
  }];
}

#endif // METAC_DIALECT_META_IR_METAOPS_TD
