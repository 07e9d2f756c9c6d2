//===- Passes.td - planning and partitioning passes --------*- tablegen -*-===//

#ifndef METAC_PARTITION_PASSES_TD
#define METAC_PARTITION_PASSES_TD

include "mlir/Pass/PassBase.td"

def MetaPlan : Pass<"meta-plan", "::mlir::ModuleOp"> {
  let summary = "Put the device mesh and the task batch's shardings into IR";
  let description = [{
    For each `meta.train` with a mesh (its `plan`, or the `mesh` option,
    which overrides it), adds an upstream `shard.grid @<train>.mesh` of shape
    `task x data x tensor x pipeline x expert` and annotates the task batch
    of the step and evaluation functions (their last four arguments,
    `[T, N, ...]`) with `shard.shard`: dimension 0 split over the `task` axis
    (grid axis 0) and dimension 1 over the `data` axis (grid axis 1), or
    over the `expert` axis (grid axis 4), which also splits the experts of
    mixture-of-experts layers. With a `tensor`
    axis, consecutive linear layers of the model with an activation between
    them form Megatron column/row pairs: the first layer's weight and bias
    are split by output features, the second's weight by input features,
    annotated `annotate_for_users` (the runtime passes whole parameters;
    their users take slices; the outer step keeps the whole ones). Optimizer
    state is replicated; results are replicated by contract.

    A mesh that does not divide the meta-batch or a task's sample counts is
    reported at the train op, before anything runs. A single-rank mesh
    leaves the module unchanged.
  }];
  let options = [
    Option<"mesh", "mesh", "std::string", /*default=*/"",
           "Mesh overriding the spec's plan, e.g. task=4,data=2">,
    Option<"microBatches", "micro-batches", "int64_t", /*default=*/"0",
           "Micro-batches of a pipeline (0: the plan's, else 2 x stages)">,
    Option<"schedule", "schedule", "std::string", /*default=*/"",
           "Pipeline schedule overriding the plan's: gpipe, 1f1b or pipedream">,
  ];
  let dependentDialects = ["::mlir::shard::ShardDialect"];
}

def MetaPartition : Pass<"meta-partition", "::mlir::ModuleOp"> {
  let summary = "Partition annotated functions into per-rank SPMD programs";
  let description = [{
    Propagates the `shard.shard` annotations of each function forward
    through its nn ops and rewrites it into the program every rank runs: each
    value gets its per-rank type, and collectives are inserted where the
    shardings require them.

    A value is split (dimension d holds this rank's slice along a mesh axis),
    replicated, or partial (every rank holds a summand of it along some
    axes). Contractions and reductions over a split dimension give partial
    results; linear ops (add, sub, scale, neg, transpose, reshape,
    broadcast, reduce_sum, and products with one partial operand) keep them
    partial; any other use first sums them with `shard.all_reduce`. Means
    over split dimensions are scaled by local/global counts, so the
    constants that autodiff folded in (1/N, 1/T) stay right. Results and
    `meta.outer_step` take replicated operands: that is where the
    meta-gradient all-reduce over `task` lands, while the `data` axis sums
    every inner-loop gradient where the SGD update uses it. Replicated
    values that meet split ones are sliced without communication
    (`shard.all_slice`, folded into broadcasts and splat constants);
    mismatched splits are gathered (`shard.all_gather`). Ops without a rule
    run replicated on gathered operands, which is always correct.

    Pipeline stages (a `pipeline` axis of p stages): the functions are
    first partitioned for one micro-batch (a group of tasks: the task axis
    is split `micro_batches` times more), then the model's layers are cut
    into p contiguous groups of about equal parameter count, each op is
    assigned to the stage of the parameters it reads (or of the nearest op
    that reads one), and each function is replaced by p functions
    `<name>.stage<s>`. A stage function runs its ops for every micro-batch
    in the GPipe order (each op for all micro-batches, in program order),
    sends the values other stages use (`shard.send` over the pipeline axis)
    and receives those it uses (`shard.recv`) at the same point of that
    order on both sides, so ranks never wait on each other in a cycle. A
    task's inner loop crosses the stages forward and back once per step;
    other tasks fill the bubble. The micro-batches' partial meta-gradients
    and losses are added on the stage that computes them and summed over the
    pipeline axis together with the task reduction, so every stage applies
    the same outer step to all parameters.
  }];
  let options = [
    Option<"ringAttention", "ring-attention", "bool", /*default=*/"true",
           "Fused attention over positions split by the sequence axis runs "
           "as ring attention (false: keys and values gathered)">,
  ];
  let dependentDialects = ["::mlir::shard::ShardDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::metac::nn::NNDialect"];
}

def MetaAccumulateGradients : Pass<"meta-accumulate-gradients",
                                   "::mlir::ModuleOp"> {
  let summary = "Accumulate meta-gradients over several task chunks before "
                "one reduction";
  let description = [{
    Gradient accumulation: each meta-iteration takes `steps` times as many
    tasks, and the step function computes them in `steps` sequential chunks
    of the original size (views of the task batch, `tensor.extract_slice`),
    so activation memory stays that of one chunk. The chunks' meta-gradients
    and meta-losses (before their all-reduce, when partitioned) are summed
    and divided by `steps`, then reduced once and applied by one outer step.
    Inner-loop collectives stay inside each chunk. Evaluation functions are
    chunked the same way, their per-task losses concatenated. The train op's
    `meta_batch` becomes `steps` times larger: it is what the runtime draws.
  }];
  let options = [
    Option<"steps", "steps", "int64_t", /*default=*/"1",
           "Task chunks per meta-iteration (1: off)">,
  ];
  let dependentDialects = ["::mlir::tensor::TensorDialect",
                           "::metac::nn::NNDialect"];
}

def MetaShardOptimizerState : Pass<"meta-shard-optimizer-state",
                                   "::mlir::ModuleOp"> {
  let summary = "Shard the outer optimizer's state over the task, data and "
                "expert axes (ZeRO-1)";
  let description = [{
    On a mesh whose task, data and expert axes hold Z > 1 ranks (the
    expert axis's ranks update whole parameters alike too: the step
    gathers the experts' gradients), every rank keeps
    the outer optimizer's state (Adam's m and v, SGD's momentum) of only
    1/Z of each parameter, and updates only that part: the step's
    `meta.outer_step` gets each parameter and its (all-reduced, replicated)
    gradient flattened and sliced to this rank's part (`shard.all_slice`,
    no communication), the state arguments and results become those parts,
    and the updated parts are gathered back (`shard.all_gather` over the
    same axes) into the replicated parameters the step returns.
    The arithmetic is elementwise, so the parameters are those of the
    unsharded program bit for bit; the state takes 1/Z of the memory. A
    parameter whose element count Z does not divide keeps its whole state.
    The update guard still sees the whole gradients. The step function
    gets `meta.zero_parts` (Z) and `meta.zero_mask` (the axes), which the
    runtime reads to allocate, checkpoint (gathered: a checkpoint holds
    whole tensors, so it resumes with or without sharding) and resume the
    state. Pipeline stages are not supported yet.

    With `stage=2` (ZeRO-2) the gradients are sharded too: a gradient that
    the partitioner all-reduced over exactly those axes is
    reduce-scattered instead (each rank receives the sum of its part only,
    half an all-reduce's traffic), and the update guard gets in its place a
    one-element stand-in whose norm is the whole gradient's (the square
    root of the parts' f64 sums of squares, all-reduced), so its verdict
    and clipping are the whole gradient's; a gradient reduced any other
    way is sliced as in stage 1. Run it before bucketing (which merges the
    all-reduces it looks for).
  }];
  let options = [
    Option<"stage", "stage", "int64_t", /*default=*/"1",
           "1: shard the optimizer state; 2: and the gradients">
  ];
  let dependentDialects = ["::mlir::shard::ShardDialect",
                           "::metac::nn::NNDialect"];
}

def MetaKeepParamsSplit : Pass<"meta-keep-params-split", "::mlir::ModuleOp"> {
  let summary = "Keep the parameters the partitioner splits split between "
                "steps (each rank its part, its state and its update)";
  let description = [{
    The partitioner splits an expert's weights over the expert axis, and a
    head's, a column's or a row-parallel projection's over the tensor axis,
    by slicing the whole parameter at the start of the step
    (`shard.all_slice`), and gathers the gradient (`shard.all_gather`) for
    an outer update of the whole parameter on every rank. Where every
    function that takes the parameters (the step, the steps of a mixed
    meta-batch, the evaluations) only slices a parameter on one dimension
    over the same axes, and the step's `meta.outer_step` updates it and
    returns it,
    this pass makes the argument the rank's part instead: the slices go,
    the update takes the gradient's part (the gather's operand, or a slice
    of a replicated gradient), the optimizer state arguments become parts
    too, and the update guard gets a one-element stand-in whose norm is
    the whole gradient's (the parts' f64 sums of squares, all-reduced over
    the split's axes, marked `metac.exact` so that no compression narrows
    them). The arithmetic of the update is elementwise, so the parameters
    are the same. Each such argument gets `meta.param_parts = array<i64:
    parts, axes mask, dimension>`, from which the
    runtime allocates parts, initialises and loads them from wholes and
    gathers them for files. Under pipeline stages it runs after
    `meta-keep-stage-params` and decides on the functions of the stage
    that holds a parameter (the others take an empty tensor and get the
    same attribute). Programs with parameter servers (which hold whole
    parameters) are left as they are.
  }];
  let options = [
    Option<"servers", "parameter-servers", "int64_t", /*default=*/"-1",
           "Parameter servers (leave the program as it is when > 0; -1: "
           "the spec's)">
  ];
  let dependentDialects = ["::mlir::shard::ShardDialect",
                           "::metac::nn::NNDialect"];
}

def MetaKeepStageParams : Pass<"meta-keep-stage-params", "::mlir::ModuleOp"> {
  let summary = "Keep each parameter and its optimizer state on the one "
                "pipeline stage that reads it";
  let description = [{
    The pipeline split gives every stage function every parameter and its
    optimizer state, and every stage applies the same outer update to all
    of them. Where a parameter is read by one stage only (in the step and
    in every evaluation; its update aside), the other stages take an empty
    tensor in its place (`tensor<0xT>`, and so do its state arguments) and
    leave it out of their `meta.outer_step`. Every stage function gets
    `meta.param_stage = s` on the argument (s: the stage that holds it),
    from which the runtime allocates, initialises, loads and saves the
    parameter on that stage's ranks alone. The meta-gradient all-reduce
    and the update guard are left as they are: a gradient's partial sums
    may come from other stages, and all stages must reach the same verdict
    and clipping scale, so the owner applies the update every stage
    applied before.
  }];
}

def MetaBucketCollectives : Pass<"meta-bucket-collectives", "::mlir::ModuleOp"> {
  let summary = "Merge independent all-reduces into few large ones";
  let description = [{
    Many small all-reduces cost a latency each: the meta-gradient of every
    parameter, or every inner-loop gradient under data parallelism. This
    pass merges all-reduces over the same axes with the same reduction and
    element type whose operands do not depend on each other's results into
    buckets of at most `bucket-bytes`: the operands are flattened
    (`nn.reshape`) and packed (`tensor.concat`), reduced by one
    `shard.all_reduce`, and unpacked with `tensor.extract_slice` (views, no
    copies). The merged collective sits right after its last operand is
    computed; the users of the results that came earlier move after it.
  }];
  let options = [
    Option<"bucketBytes", "bucket-bytes", "int64_t", /*default=*/"25 << 20",
           "Largest bucket in bytes">,
  ];
  let dependentDialects = ["::mlir::shard::ShardDialect",
                           "::mlir::tensor::TensorDialect",
                           "::metac::nn::NNDialect"];
}

def MetaParameterServers : Pass<"meta-parameter-servers", "::mlir::ModuleOp"> {
  let summary = "Move the outer update to parameter servers";
  let description = [{
    With `servers` = N > 0 (`--parameter-servers`, or the program's
    `parallel { parameter_servers = N }`), N ranks beyond the mesh hold the
    meta-parameters and the outer optimizer's state, each a contiguous
    slice of their flattened concatenation. In each training step, the sums
    of the outer gradients and of the meta-loss over the mesh, the update
    guard and `meta.outer_step` become one `meta.server_step`, which pushes
    this rank's partial gradients and loss and pulls the parameters; the
    step no longer takes or returns optimizer state (the servers keep it).
    `staleness` (0: synchronous) and `asynchronous` (staleness = inf) say
    how far a rank may run ahead. Serves meshes of the task and data axes;
    refuses tensor and pipeline axes, ZeRO and loss scaling.
    `asynchronous` without servers is an error: an all-reduce meets every
    rank.
  }];
  let dependentDialects = ["::metac::nn::NNDialect"];
  let options = [
    Option<"servers", "servers", "int64_t", /*default=*/"-1",
           "Parameter servers (0: none, all-reduce; -1: the program's "
           "`parameter_servers`, else 0)">,
    Option<"staleness", "staleness", "int64_t", /*default=*/"-1",
           "Updates by which a rank's parameters may lag (-1: the "
           "program's `staleness`, else 0)">,
    Option<"asynchronous", "asynchronous", "bool", /*default=*/"false",
           "Servers apply every push on arrival (staleness = inf)">,
  ];
}

def MetaOffload : Pass<"meta-offload", "::mlir::ModuleOp"> {
  let summary = "Keep the outer optimizer's state in host memory";
  let description = [{
    With `offload = optimizer` (`--offload=optimizer`), marks each training
    step's `meta.outer_step` `metac.offload` and the step `meta.offload =
    "optimizer"`: the runtime keeps the per-parameter state (Adam's moments,
    SGD's momentum) in host buffers, and the lowering copies each
    parameter's state into scratch device memory before its update and back
    after it, so the device holds one parameter's state at a time. The step
    count stays on the device. With `params` (`--offload=params`) the
    parameters live in host buffers: the update is marked
    `metac.offload_params` (each parameter is copied in, updated and copied
    back) and every step and evaluation function gets `meta.offload_params
    = N`, its N leading arguments being the parameters, which its lowering
    copies into scratch device memory before each op that reads them and
    frees after it. `all` does both. Refused under parameter servers
    (which hold the state already), and `params` with pipeline stages or
    ZeRO.
  }];
  let options = [
    Option<"offload", "offload", "std::string", /*default=*/"\"\"",
           "none, optimizer, params or all (empty: the training program's "
           "`offload`, else none)">,
  ];
}

def MetaSelectAllReduce : Pass<"meta-select-allreduce", "::mlir::ModuleOp"> {
  let summary = "Choose how every all-reduce moves its data";
  let description = [{
    Marks every `shard.all_reduce` with `metac.allreduce = "<algorithm>"`,
    which the runtime lowering turns into `metart_all_reduce_algorithm`:
    `ring` (reduce-scatter and all-gather around a ring: bandwidth-optimal),
    `tree` (binomial reduce and broadcast: fewest messages), or
    `hierarchical` (within each node, then across nodes, then within the
    node again). `library` removes the mark: MPI or NCCL choose.

    With `compress = bf16` or `fp16`, the f32 and f64 sums over the task and
    data axes (meta-gradients, inner-loop gradients, losses) are also marked
    `metac.compress`: they travel in that type, rounded, with f32 additions.
    With `topk:RATIO` or `powersgd:RANK` (lossy, with error feedback), only
    the outer gradients are marked: the all-reduces whose results reach
    the outer update's gradients (the meta-loss and inner-loop gradients
    stay exact). Sums over the tensor axis (a layer's partial results) stay
    exact. Runs before bucketing, which merges only all-reduces with the
    same choices (and none marked `powersgd`, whose factorization needs
    each gradient's own matrix).

    With `staleness = S` > 0 (bounded staleness on the task axis), the sums
    over the task axis in each training step (outer gradients, meta-loss)
    are marked `metac.staleness = S`: the lowering calls
    `metart_all_reduce_stale`, which starts this iteration's sum and
    returns the one started S iterations earlier, so ranks may run up to S
    iterations ahead of the slowest while every rank applies the same sums.
    It sums with the library's all-reduce, uncompressed, and does not
    combine with ZeRO-2's reduce-scatters.
  }];
  let options = [
    Option<"algorithm", "algorithm", "std::string", /*default=*/"\"\"",
           "library, ring, tree or hierarchical (empty: the training "
           "program's `parallel { allreduce = ... }`, else library)">,
    Option<"compress", "compress", "std::string", /*default=*/"\"\"",
           "none, bf16, fp16, topk:RATIO or powersgd:RANK (empty: the "
           "program's `compress`, else none)">,
    Option<"staleness", "staleness", "int64_t", /*default=*/"-1",
           "Iterations by which the task axis's sums may lag (0: "
           "synchronous; -1: the program's `staleness`, else 0)">,
  ];
  let dependentDialects = ["::mlir::shard::ShardDialect"];
}

def MetaHoistCollectives : Pass<"meta-hoist-collectives", "::mlir::ModuleOp"> {
  let summary = "Start every all-reduce as soon as its operand is computed";
  let description = [{
    With overlap requested (`overlap = true`, or the program's
    `parallel { overlap = true }` when the option is empty), moves each
    `shard.all_reduce` and `shard.reduce_scatter` up to right after the op
    that computes its operand, together with the pure ops that only feed it
    (the sum of a gradient over the tasks, a reshape). Autodiff emits every
    outer gradient's collective at the end of the step; hoisted, the last
    layer's gradient is reduced while the first layers' are still being
    computed. A collective never crosses a send or a receive (a pipeline
    stage's peer expects them in program order). Runs before
    `meta-bucket-collectives`, so that buckets follow the order in which
    gradients become ready. Results are unchanged: only pure ops and
    collectives move, and every rank running a function moves them alike.
  }];
  let options = [
    Option<"overlap", "overlap", "std::string", /*default=*/"\"\"",
           "true or false (empty: the training program's "
           "`parallel { overlap = ... }`, else false)">,
  ];
  let dependentDialects = ["::mlir::shard::ShardDialect"];
}

def MetaOverlapCollectives : Pass<"meta-overlap-collectives",
                                  "::mlir::ModuleOp"> {
  let summary = "Run all-reduces asynchronously, overlapped with compute";
  let description = [{
    With overlap requested (as for `meta-hoist-collectives`), marks each
    `shard.all_reduce` and `shard.reduce_scatter` that has compute between
    it and the first use of its result `metac.async`, and inserts a
    `meta.wait` right before that first use. The runtime lowering starts the
    collective where it stands (`metart_all_reduce_start`) and waits for it
    at the `meta.wait` (`metart_collective_wait`): on the CPU a
    communication thread runs it (every collective of the step keeps program
    order), with NCCL a second stream. Runs after bucketing and the
    all-reduce selection.
  }];
  let options = [
    Option<"overlap", "overlap", "std::string", /*default=*/"\"\"",
           "true or false (empty: the program's `overlap`, else false)">,
  ];
  let dependentDialects = ["::mlir::shard::ShardDialect",
                           "::metac::meta::MetaDialect"];
}

def MetaCarryBuffers : Pass<"meta-carry-buffers", "::mlir::ModuleOp"> {
  let summary = "Give one buffer to the carried values read before their store";
  let description = [{
    Under the pipedream schedule a value crosses from one call of a step to
    the next through `meta.carry_store` and `meta.carry_load` of one site,
    which the runtime holds in two buffers, so that a call's load and store
    may come in either order. Where every read of the loaded value (through
    views, and an asynchronous collective until its wait) ends before the
    store, one buffer does: marks both ops `metac.carry_buffers = 1`. A
    store of a function argument (stashed weights, the task batch) or a
    constant that comes before the load's reads is moved to just after
    them first, unless an update or a pull writes the argument in place
    between. Runs last in the optimized phase (the planner counts the
    buffers) and again before the lowering (fusion moves ops); a site that
    no longer qualifies loses its mark.
  }];
}

#endif // METAC_PARTITION_PASSES_TD
