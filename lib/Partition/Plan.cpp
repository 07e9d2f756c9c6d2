//===- Plan.cpp - the planned phase: a mesh and the task batch's shardings ===//
//
// The plan is explicit for now (the spec's `parallel { mesh = ... }` or
// `--mesh`); the cost-model planner will choose it for `auto`.
//
//===----------------------------------------------------------------------===//

#include "metac/Partition/Passes.h"

#include "metac/Dialect/Meta/IR/MetaOps.h"
#include "metac/Dialect/NN/IR/NNBuilder.h"
#include "metac/Dialect/NN/IR/NNOps.h"
#include "metac/Partition/Mesh.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/SymbolTable.h"

namespace metac::partition {
#define GEN_PASS_DEF_METAPLAN
#include "metac/Partition/Passes.h.inc"
} // namespace metac::partition

using namespace mlir;
using namespace metac;
using namespace metac::partition;

namespace {

/// The step and evaluation functions end with the task batch: support
/// inputs, support targets, query inputs, query targets, each [T, N, ...].
constexpr unsigned kBatchArguments = 4;

/// The task batch arguments a function ends with: four per task class of a
/// mixed meta-batch's step (`meta.task_classes`), else four.
unsigned batchArgumentCount(func::FuncOp function) {
  if (auto classes =
          function->getAttrOfType<DenseI64ArrayAttr>("meta.task_classes"))
    return kBatchArguments * classes.size();
  return kBatchArguments;
}

SmallVector<func::FuncOp> compiledFunctions(meta::TrainOp train,
                                            SymbolTable &symbols) {
  SmallVector<func::FuncOp> functions;
  if (auto variants = train->getAttrOfType<ArrayAttr>("meta.step_variants"))
    for (auto step : variants.getAsRange<FlatSymbolRefAttr>())
      functions.push_back(symbols.lookup<func::FuncOp>(step.getValue()));
  else if (auto step = train->getAttrOfType<FlatSymbolRefAttr>("meta.step"))
    functions.push_back(symbols.lookup<func::FuncOp>(step.getValue()));
  if (auto evals = train->getAttrOfType<ArrayAttr>("meta.eval"))
    for (auto eval : evals.getAsRange<FlatSymbolRefAttr>())
      functions.push_back(symbols.lookup<func::FuncOp>(eval.getValue()));
  return functions;
}

/// Reports why `mesh` cannot split the batch of `function`, if it cannot.
LogicalResult checkDivides(meta::TrainOp train, func::FuncOp function,
                           const MeshShape &mesh, StringRef origin) {
  if (!function || function.getNumArguments() < batchArgumentCount(function))
    return train.emitOpError("has no compiled step or evaluation function to "
                             "partition (run the expand phase first)");
  for (BlockArgument arg :
       function.getArguments().take_back(batchArgumentCount(function))) {
    auto type = cast<RankedTensorType>(arg.getType());
    const char *what[] = {"tasks per meta-batch", "samples per task",
                          "positions per sequence"};
    // The expert axis splits samples as the data axis does (both at once:
    // data major).
    unsigned splitters[] = {1u << MeshAxis::Task,
                            (1u << MeshAxis::Data) | (1u << MeshAxis::Expert),
                            1u << MeshAxis::Sequence};
    for (auto [dim, axes] : llvm::enumerate(splitters)) {
      int64_t size = 1;
      unsigned used = 0;
      for (unsigned axis = 0; axis < kNumMeshAxes; ++axis)
        if ((axes & (1u << axis)) && mesh.sizes[axis] > 1) {
          size *= mesh.sizes[axis];
          used |= 1u << axis;
        }
      if (size == 1)
        continue;
      bool several = llvm::popcount(used) > 1;
      if (type.getRank() <= int64_t(dim) || type.getDimSize(dim) % size != 0)
        return train.emitError()
               << "mesh " << mesh.str() << " (" << origin << ") does not fit '"
               << train.getSymName() << "': the "
               << (several ? std::string("data and expert")
                           : getMeshAxesName(used))
               << (several ? " axes (" : " axis (") << size << ") "
               << (several ? "do" : "does") << " not divide the " << what[dim]
               << " ("
               << (type.getRank() > int64_t(dim) ? type.getDimSize(dim) : 1)
               << ") of '" << function.getSymName() << "'";
    }
  }
  return success();
}

/// A parameter (model argument) split over `axis` on `dim`.
struct ParamSplit {
  unsigned argument;
  int64_t dim;
  unsigned axis = MeshAxis::Tensor;
};

/// The parameter name of a model argument ("" if none).
StringRef paramNameOf(func::FuncOp model, unsigned arg) {
  if (auto name = model.getArgAttrOfType<StringAttr>(arg, "meta.param"))
    return name.getValue();
  return "";
}

/// Splits every mixture-of-experts layer of `model` by experts over `axis`
/// (w1, b1, w2, b2 on their expert dimension) where `parts` divides the
/// experts; true if it split one.
bool splitExperts(func::FuncOp model, int64_t parts, unsigned axis,
                  SmallVectorImpl<ParamSplit> &splits) {
  bool split = false;
  for (unsigned arg = 0, e = model.getNumArguments(); arg + 1 < e; ++arg) {
    StringRef name = paramNameOf(model, arg);
    if (!name.ends_with(".experts.w1"))
      continue;
    StringRef layer = name.drop_back(strlen(".experts.w1"));
    SmallVector<unsigned> experts;
    for (unsigned other = 0; other + 1 < e; ++other)
      for (StringRef which :
           {".experts.w1", ".experts.b1", ".experts.w2", ".experts.b2"})
        if (paramNameOf(model, other) == (layer + which).str())
          experts.push_back(other);
    int64_t count =
        cast<RankedTensorType>(model.getArgument(arg).getType()).getDimSize(0);
    if (experts.size() != 4 || count % parts != 0)
      continue;
    for (unsigned w : experts)
      splits.push_back({w, 0, axis});
    split = true;
  }
  return split;
}

/// Follows single-operand elementwise ops (activations) back from `v`.
Value throughActivations(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (def->getNumOperands() != 1 || def->getNumResults() != 1 ||
        def->getOperand(0).getType() != v.getType() ||
        !isa<nn::NNDialect>(def->getDialect()) || isa<nn::ReshapeOp>(def))
      break;
    v = def->getOperand(0);
  }
  return v;
}

/// Megatron-style splits: consecutive linear layers with only an activation
/// between them form a pair; the first is split by output features
/// (column-parallel: weight dimension 0 and its bias), the second by input
/// features (row-parallel: weight dimension 1), so the pair needs one
/// all-reduce forward and one backward. Layers left unpaired stay
/// replicated.
LogicalResult planTensorSplits(meta::TrainOp train, func::FuncOp model,
                               const MeshShape &mesh, StringRef origin,
                               SmallVectorImpl<ParamSplit> &splits) {
  int64_t size = mesh.sizes[MeshAxis::Tensor];
  auto argumentOf = [&](Value v) -> std::optional<unsigned> {
    // A bf16 or f16 model uses its parameters through conversions.
    while (auto convert = v.getDefiningOp<nn::ConvertOp>())
      v = convert.getInput();
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg || arg.getOwner()->getParentOp() != model)
      return std::nullopt;
    return arg.getArgNumber();
  };
  // Embedding tables split by vocabulary: each rank holds a block of rows;
  // lookups become one-hot products (rewriteEmbeddings), whose contraction
  // over the split vocabulary sums the ranks' rows.
  model.walk([&](nn::EmbeddingOp op) {
    std::optional<unsigned> table = argumentOf(op.getTable());
    auto type = cast<RankedTensorType>(op.getTable().getType());
    if (table && type.getRank() == 2 && type.getDimSize(0) % size == 0)
      splits.push_back({*table, 0});
  });

  // Attention layers split by heads: the q, k and v projections by output
  // features (whole heads per rank), o by input features.
  auto paramName = [&](unsigned arg) { return paramNameOf(model, arg); };
  DenseSet<Operation *> attentionLinears;
  model.walk([&](nn::LinearOp q) {
    std::optional<unsigned> wq = argumentOf(q.getWeight());
    if (!wq || !paramName(*wq).ends_with(".q.weight"))
      return;
    StringRef layer = paramName(*wq).drop_back(strlen(".q.weight"));
    // The heads: the reshape of q's result into [..., S, heads, width].
    int64_t heads = 0;
    for (Operation *user : q->getUsers())
      if (auto reshape = dyn_cast<nn::ReshapeOp>(user))
        heads = cast<RankedTensorType>(reshape.getType()).getShape().end()[-2];
    if (heads == 0 || heads % size != 0)
      return;
    SmallVector<nn::LinearOp> projections;
    model.walk([&](nn::LinearOp op) {
      if (std::optional<unsigned> w = argumentOf(op.getWeight()))
        for (StringRef which :
             {".q.weight", ".k.weight", ".v.weight", ".o.weight"})
          if (paramName(*w) == (layer + which).str())
            projections.push_back(op);
    });
    if (projections.size() != 4)
      return;
    for (nn::LinearOp op : projections) {
      bool output =
          paramName(*argumentOf(op.getWeight())).ends_with(".o.weight");
      splits.push_back({*argumentOf(op.getWeight()), output ? 1 : 0});
      if (!output && op.getBias())
        if (std::optional<unsigned> b = argumentOf(op.getBias()))
          splits.push_back({*b, 0});
      attentionLinears.insert(op);
    }
  });

  // Mixture-of-experts layers split by experts: each rank computes the
  // slots of E / size experts (their per-task adapted weights and
  // activations split with them); the gate stays whole, so every rank
  // routes alike. With an expert axis, that axis splits them instead.
  if (mesh.sizes[MeshAxis::Expert] == 1)
    splitExperts(model, size, MeshAxis::Tensor, splits);

  SmallVector<nn::LinearOp> linears;
  model.walk([&](nn::LinearOp op) {
    if (!attentionLinears.contains(op))
      linears.push_back(op);
  });
  for (size_t i = 0; i + 1 < linears.size(); ++i) {
    nn::LinearOp column = linears[i], row = linears[i + 1];
    std::optional<unsigned> w1 = argumentOf(column.getWeight());
    std::optional<unsigned> w2 = argumentOf(row.getWeight());
    if (!w1 || !w2 || throughActivations(row.getInput()) != column.getResult())
      continue;
    int64_t hidden =
        cast<RankedTensorType>(column.getWeight().getType()).getDimSize(0);
    if (hidden % size != 0)
      continue;
    splits.push_back({*w1, 0});
    if (column.getBias()) {
      std::optional<unsigned> b1 = argumentOf(column.getBias());
      if (!b1)
        continue;
      splits.push_back({*b1, 0});
    }
    splits.push_back({*w2, 1});
    ++i;
  }
  if (splits.empty())
    return train.emitError()
           << "mesh " << mesh.str() << " (" << origin
           << "): the tensor axis splits pairs of consecutive linear layers "
              "whose hidden width it divides, and attention layers whose "
              "heads it divides; model '"
           << model.getSymName() << "' has none";
  return success();
}

/// Table lookups as products with one-hot rows, which partition like any
/// product: `embedding(ids, table)` = one_hot(ids) . table and its
/// gradient `embedding_backward(ids, g)` = one_hot(ids)^T . g. The
/// positions are flattened into one matrix dimension per leading (task)
/// dimension of the table. A table without leading dimensions (the
/// evaluation's, not adapted per task) is applied as a linear layer
/// instead, which keeps every position dimension apart: tasks and samples
/// split over different mesh axes both stay split. Its gradient keeps the
/// first position dimension (the tasks) as a batch of per-task products
/// summed after.
void rewriteEmbeddings(func::FuncOp function) {
  auto rewrite = [](Operation *op, Value ids, Value table, Value grad) {
    OpBuilder b(op);
    nn::NNBuilder nn(b, op->getLoc());
    auto idsType = cast<RankedTensorType>(ids.getType());
    auto tableType = cast<RankedTensorType>(table ? table.getType()
                                                  : op->getResult(0).getType());
    int64_t leading = tableType.getRank() - 2;
    int64_t vocab = tableType.getShape().end()[-2];
    int64_t width = tableType.getShape().back();
    Type element = tableType.getElementType();
    SmallVector<int64_t> hotShape(idsType.getShape());
    hotShape.push_back(vocab);
    Value hot = nn::OneHotOp::create(
        b, op->getLoc(), RankedTensorType::get(hotShape, element), ids);
    if (table && leading == 0) {
      op->getResult(0).replaceAllUsesWith(
          nn.linear(hot, nn.transposeLastTwo(table)));
      op->erase();
      return;
    }
    int64_t batch =
        std::min(std::max<int64_t>(leading, 1), idsType.getRank() - 1);
    ArrayRef<int64_t> lead = idsType.getShape().take_front(batch);
    int64_t positions = 1;
    for (int64_t d : idsType.getShape().drop_front(batch))
      positions *= d;
    auto rows = [&](int64_t columns) {
      SmallVector<int64_t> shape(lead);
      shape.append({positions, columns});
      return shape;
    };
    hot = nn.reshape(hot, rows(vocab));
    Value result;
    if (table) {
      result = nn.reshape(
          nn.matmul(hot, table),
          cast<RankedTensorType>(op->getResult(0).getType()).getShape());
    } else {
      result = nn.matmul(hot, nn.reshape(grad, rows(width)),
                         /*transposeA=*/true);
      if (batch > leading)
        result = nn.reduceSum(
            result, llvm::to_vector(llvm::seq<int64_t>(leading, batch)));
    }
    op->getResult(0).replaceAllUsesWith(result);
    op->erase();
  };
  for (auto op : llvm::to_vector(function.getOps<nn::EmbeddingOp>()))
    rewrite(op, op.getIds(), op.getTable(), Value());
  for (auto op : llvm::to_vector(function.getOps<nn::EmbeddingBackwardOp>()))
    rewrite(op, op.getIds(), Value(), op.getGrad());
}

/// Products over a task's tokens flatten its samples and positions,
/// [T, N, S, X] <-> [T, N*S, X] (weight gradients contract over them; the
/// second-order terms multiply them by weights). The positions are an inner
/// factor of that dimension, so a split over the sequence axis could not
/// survive the flattening and the activations would be gathered. Every
/// such reshape in `function` flattens positions first instead,
/// [T, S*N, X], through a transpose: all flattened values change their
/// order alike (the products and sums over them are the same, summed in
/// another order) and the split survives as an outer factor.
void flattenPositionsFirst(func::FuncOp function) {
  auto merges = [](ArrayRef<int64_t> split, ArrayRef<int64_t> merged) {
    return split.size() == 4 && merged.size() == 3 && split[0] == merged[0] &&
           split[1] * split[2] == merged[1] && split[3] == merged[2] &&
           split[1] > 1 && split[2] > 1;
  };
  SmallVector<nn::ReshapeOp> reshapes;
  function.walk([&](nn::ReshapeOp op) {
    ArrayRef<int64_t> in =
        cast<RankedTensorType>(op.getInput().getType()).getShape();
    ArrayRef<int64_t> out = cast<RankedTensorType>(op.getType()).getShape();
    if (merges(in, out) || merges(out, in))
      reshapes.push_back(op);
  });
  for (nn::ReshapeOp op : reshapes) {
    OpBuilder b(op);
    nn::NNBuilder nn(b, op.getLoc());
    ArrayRef<int64_t> in =
        cast<RankedTensorType>(op.getInput().getType()).getShape();
    ArrayRef<int64_t> out = cast<RankedTensorType>(op.getType()).getShape();
    Value result;
    if (in.size() == 4) {
      result = nn.reshape(nn.transpose(op.getInput(), {0, 2, 1, 3}), out);
    } else {
      Value unflat =
          nn.reshape(op.getInput(), {out[0], out[2], out[1], out[3]});
      result = nn.transpose(unflat, {0, 2, 1, 3});
    }
    op.getResult().replaceAllUsesWith(result);
    op.erase();
  }
}

/// Uses of the parameters read this rank's slice (sliced locally, no
/// communication); the outer step keeps the whole, replicated parameters.
void annotateParams(func::FuncOp function, shard::GridOp grid,
                    ArrayRef<ParamSplit> splits) {
  if (splits.empty())
    return;
  Block &entry = function.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  MLIRContext *ctx = b.getContext();
  for (const ParamSplit &split : splits) {
    BlockArgument arg = function.getArgument(split.argument);
    SmallVector<shard::GridAxesAttr> axes;
    for (int64_t d = 0; d <= split.dim; ++d)
      axes.push_back(shard::GridAxesAttr::get(
          ctx, d == split.dim ? ArrayRef<int16_t>{int16_t(split.axis)}
                              : ArrayRef<int16_t>{}));
    auto sharding = shard::ShardingOp::create(
        b, function.getLoc(), FlatSymbolRefAttr::get(grid), axes,
        ArrayRef<int64_t>{}, ArrayRef<int64_t>{});
    auto annotated = shard::ShardOp::create(b, function.getLoc(), arg.getType(),
                                            arg, sharding.getResult(),
                                            /*annotate_for_users=*/true);
    arg.replaceUsesWithIf(annotated.getResult(), [&](OpOperand &use) {
      return use.getOwner() != annotated &&
             !isa<meta::OuterStepOp>(use.getOwner());
    });
  }
}

void annotateBatch(func::FuncOp function, shard::GridOp grid,
                   const MeshShape &mesh, bool microBatched) {
  Block &entry = function.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  Location loc = function.getLoc();
  MLIRContext *ctx = b.getContext();
  SmallVector<shard::GridAxesAttr> splitAxes;
  splitAxes.push_back(shard::GridAxesAttr::get(
      ctx, mesh.sizes[MeshAxis::Task] > 1 || microBatched
               ? ArrayRef<int16_t>{int16_t(MeshAxis::Task)}
               : ArrayRef<int16_t>{}));
  // The expert axis splits samples as the data axis does; both at once,
  // data major (as the runtime shards them).
  SmallVector<int16_t> samples;
  for (unsigned axis : {MeshAxis::Data, MeshAxis::Expert})
    if (mesh.sizes[axis] > 1)
      samples.push_back(axis);
  splitAxes.push_back(shard::GridAxesAttr::get(ctx, samples));
  // The sequence axis splits each sample's positions.
  if (mesh.sizes[MeshAxis::Sequence] > 1)
    splitAxes.push_back(shard::GridAxesAttr::get(
        ctx, ArrayRef<int16_t>{int16_t(MeshAxis::Sequence)}));
  auto sharding =
      shard::ShardingOp::create(b, loc, FlatSymbolRefAttr::get(grid), splitAxes,
                                ArrayRef<int64_t>{}, ArrayRef<int64_t>{});
  for (BlockArgument arg :
       function.getArguments().take_back(batchArgumentCount(function))) {
    auto annotated = shard::ShardOp::create(b, loc, arg.getType(), arg,
                                            sharding.getResult(), false);
    arg.replaceAllUsesExcept(annotated.getResult(), annotated);
  }
}

struct MetaPlanPass
    : public metac::partition::impl::MetaPlanBase<MetaPlanPass> {
  using MetaPlanBase::MetaPlanBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    std::optional<MeshShape> override;
    if (!mesh.empty()) {
      auto parsed = parseMeshShape(mesh);
      if (!parsed) {
        module.emitError() << llvm::toString(parsed.takeError());
        return signalPassFailure();
      }
      override = *parsed;
    }
    for (auto train : llvm::to_vector(module.getOps<meta::TrainOp>()))
      if (failed(plan(train, override, symbols)))
        return signalPassFailure();
  }

  /// The schedule: --schedule, else the plan's, else GPipe.
  meta::PipelineSchedule scheduleOf(meta::PlanAttr plan) {
    if (schedule == "1f1b")
      return meta::PipelineSchedule::OneFOneB;
    if (schedule == "pipedream")
      return meta::PipelineSchedule::PipeDream;
    if (schedule == "gpipe" || !plan)
      return meta::PipelineSchedule::GPipe;
    return plan.getSchedule();
  }

  LogicalResult plan(meta::TrainOp train, std::optional<MeshShape> override,
                     SymbolTable &symbols) {
    meta::PlanAttr plan = train.getPlanAttr();
    MeshShape shape;
    if (override)
      shape = *override;
    else if (plan)
      shape.sizes = plan.getMeshSizes();
    StringRef origin = override ? "from --mesh" : "from the spec";
    // A mixed meta-batch was split over the task axis when it was expanded.
    if (auto parts = train->getAttrOfType<IntegerAttr>("meta.task_parts")) {
      if (parts.getInt() != shape.sizes[MeshAxis::Task])
        return train.emitError()
               << "mesh " << shape.str() << " (" << origin
               << "): the mixed meta-batch was split over " << parts.getInt()
               << " task ranks when it was expanded";
      if (shape.sizes[MeshAxis::Pipeline] > 1)
        return train.emitError()
               << "mesh " << shape.str() << " (" << origin
               << "): a mixed meta-batch does not combine with pipeline "
                  "stages yet";
    }
    if (shape.isSingleRank())
      return success();
    // Pipeline stages take the tasks in micro-batches (groups of tasks).
    int64_t micro = 1;
    int64_t stages = shape.sizes[MeshAxis::Pipeline];
    int64_t localTasks = train.getMetaBatch() / shape.sizes[MeshAxis::Task];
    if (stages > 1) {
      if (microBatches > 0)
        micro = microBatches;
      else if (plan && plan.getMicroBatches() > 1)
        micro = plan.getMicroBatches();
      else
        for (int64_t candidate : {2 * stages, stages})
          if (localTasks % candidate == 0) {
            micro = candidate;
            break;
          }
      if (localTasks % micro != 0)
        return train.emitError()
               << "mesh " << shape.str() << " (" << origin << "): " << micro
               << " micro-batches do not divide the " << localTasks
               << " tasks of each rank";
    }
    SmallVector<ParamSplit> splits;
    auto model = symbols.lookup<func::FuncOp>(train.getModel());
    if (shape.sizes[MeshAxis::Tensor] > 1)
      if (failed(planTensorSplits(train, model, shape, origin, splits)))
        return failure();
    if (int64_t experts = shape.sizes[MeshAxis::Expert]; experts > 1) {
      if (!splitExperts(model, experts, MeshAxis::Expert, splits))
        return train.emitError()
               << "mesh " << shape.str() << " (" << origin
               << "): the expert axis splits the experts of "
                  "mixture-of-experts layers, and model '"
               << model.getSymName() << "' has no moe layer whose experts it "
               << "divides";
    }

    if (shape.sizes[MeshAxis::Sequence] > 1) {
      auto tasks = symbols.lookup<meta::TasksOp>(train.getTasks());
      if (!tasks || tasks.getKind() != "sequence")
        return train.emitError()
               << "mesh " << shape.str() << " (" << origin
               << "): the sequence axis splits the positions of sequence "
                  "tasks, and '"
               << train.getTasks() << "' is a "
               << (tasks ? tasks.getKind() : StringRef("missing"))
               << " distribution";
    }

    SmallVector<func::FuncOp> functions = compiledFunctions(train, symbols);
    if (functions.empty())
      return train.emitOpError("has no compiled step function to partition "
                               "(run the expand phase first)");
    for (func::FuncOp function : functions)
      if (failed(checkDivides(train, function, shape, origin)))
        return failure();

    OpBuilder b(train);
    auto grid = shard::GridOp::create(b, train.getLoc(),
                                      (train.getSymName() + ".mesh").str(),
                                      b.getDenseI64ArrayAttr(shape.sizes));
    symbols.insert(grid);
    train.setPlanAttr(
        meta::PlanAttr::get(b.getContext(), shape.sizes[0], shape.sizes[1],
                            shape.sizes[2], shape.sizes[3], shape.sizes[4],
                            shape.sizes[5], micro, scheduleOf(plan)));
    train->setAttr("meta.mesh", FlatSymbolRefAttr::get(grid));
    for (func::FuncOp function : functions) {
      if (shape.sizes[MeshAxis::Tensor] > 1)
        rewriteEmbeddings(function);
      if (shape.sizes[MeshAxis::Sequence] > 1)
        flattenPositionsFirst(function);
      annotateBatch(function, grid, shape, stages > 1);
      annotateParams(function, grid, splits);
      if (micro > 1)
        function->setAttr("meta.micro_batches", b.getI64IntegerAttr(micro));
    }
    return success();
  }
};

} // namespace
