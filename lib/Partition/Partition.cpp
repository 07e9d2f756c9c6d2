//===- Partition.cpp - the partitioned phase: per-rank SPMD programs ------===//
//
// Walks each annotated function once, in order (the functions are
// straight-line after autodiff), giving every value its per-rank type and
// inserting upstream `shard` collectives where an op's rule needs its
// operands distributed differently (ShardingRules.cpp).
//
//===----------------------------------------------------------------------===//

#include "Pipeline.h"
#include "ReduceScatterSlices.h"
#include "Sharding.h"

#include "metac/Dialect/NN/IR/NNOps.h"
#include "metac/Dialect/NN/Transforms/DecomposeNorms.h"
#include "metac/Partition/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"

#include <map>
#include <optional>

namespace metac::partition {
#define GEN_PASS_DEF_METAPARTITION
#include "metac/Partition/Passes.h.inc"
} // namespace metac::partition

using namespace mlir;
using namespace metac;
using namespace metac::partition;

namespace {

SmallVector<shard::GridAxis> axesOf(unsigned mask) {
  SmallVector<shard::GridAxis> axes;
  for (unsigned axis = 0; axis < kNumMeshAxes; ++axis)
    if (mask & (1u << axis))
      axes.push_back(axis);
  return axes;
}

/// The dimension to which an all-to-all moves dimension `d`'s split on the
/// way from `current` to `target`, if one does: an axis that moves to a
/// replicated dimension, the expert part of samples split over data and
/// expert (onto a replicated dimension that the target splits by expert),
/// or that part back (onto samples split over data that the target splits
/// over data and expert).
std::optional<int64_t> exchangeTarget(ArrayRef<int> current,
                                      ArrayRef<int> target, int64_t d) {
  int axis = current[d];
  if (axis == kReplicated || axis == target[d])
    return std::nullopt;
  int moving = axis, onto = kReplicated;
  if (axis == kDataExpert) {
    if (target[d] != int(MeshAxis::Data))
      return std::nullopt;
    moving = MeshAxis::Expert;
  } else if (axis == int(MeshAxis::Expert) &&
             llvm::is_contained(target, kDataExpert)) {
    moving = kDataExpert;
    onto = MeshAxis::Data;
  }
  for (auto [e, wanted] : llvm::enumerate(target))
    if (int64_t(e) != d && wanted == moving && current[e] == onto)
      return e;
  return std::nullopt;
}

class FunctionPartitioner {
public:
  FunctionPartitioner(func::FuncOp function, shard::GridOp grid,
                      bool ringAttention)
      : function(function), grid(grid), meshSizes(grid.getShape()),
        ringAttention(ringAttention) {
    // Pipelines compute a micro-batch at a time: the task axis is split
    // that many times more (the pipeline pass adds the parts up).
    if (auto micro = function->getAttrOfType<IntegerAttr>("meta.micro_batches"))
      meshSizes[MeshAxis::Task] *= micro.getInt();
    meshSizes.push_back(meshSizes[MeshAxis::Data] *
                        meshSizes[MeshAxis::Expert]); // kDataExpert
  }

  LogicalResult run();

private:
  const Sharding &shardingOf(Value v);
  RankedTensorType globalTypeOf(Value v);
  FailureOr<RankedTensorType> localType(RankedTensorType global,
                                        ArrayRef<int> dims, Location loc);
  /// Records `v`'s distribution and gives it its per-rank type.
  LogicalResult define(Value v, Sharding sharding);
  /// Records a value created already in per-rank form.
  void defineLocal(Value v, RankedTensorType global, Sharding sharding);

  Value sum(OpBuilder &b, Value v);
  FailureOr<Value> reshard(OpBuilder &b, Value v, ArrayRef<int> dims);
  /// Gathers dimension `dim` of `v` down to `keep` (kReplicated, or the
  /// data axis of samples split over data and expert).
  Value gather(OpBuilder &b, Value v, int64_t dim, int keep = kReplicated);
  /// Moves `v`'s split from dimension `from` to `to`, all-to-all: the whole
  /// split to a replicated `to`, or the expert part of samples split over
  /// data and expert (and back onto samples split over data).
  FailureOr<Value> allToAll(OpBuilder &b, Value v, int64_t from, int64_t to);
  FailureOr<Value> slice(OpBuilder &b, Value v, ArrayRef<int> dims);

  LogicalResult annotateArguments();
  LogicalResult partition(Operation *op);
  LogicalResult splitBias(nn::LinearOp linear);

  func::FuncOp function;
  shard::GridOp grid;
  SmallVector<int64_t> meshSizes;
  bool ringAttention;
  DenseMap<Value, Sharding> shardings;
  DenseMap<Value, RankedTensorType> globalTypes;
  DenseMap<Value, Value> summed;
  std::map<std::pair<void *, SmallVector<int>>, Value> resharded;
};

const Sharding &FunctionPartitioner::shardingOf(Value v) {
  auto it = shardings.find(v);
  if (it != shardings.end())
    return it->second;
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return shardings[v] = Sharding::replicated(type ? type.getRank() : 0);
}

RankedTensorType FunctionPartitioner::globalTypeOf(Value v) {
  auto it = globalTypes.find(v);
  return it != globalTypes.end() ? it->second
                                 : cast<RankedTensorType>(v.getType());
}

FailureOr<RankedTensorType>
FunctionPartitioner::localType(RankedTensorType global, ArrayRef<int> dims,
                               Location loc) {
  SmallVector<int64_t> shape(global.getShape());
  for (auto [d, axis] : llvm::enumerate(dims)) {
    if (axis == kReplicated)
      continue;
    if (shape[d] % meshSizes[axis] != 0)
      return emitError(loc)
             << "cannot split dimension " << d << " of " << global
             << " over the "
             << (axis == kDataExpert ? std::string("data and expert axes")
                                     : getMeshAxisName(axis) + " axis")
             << " (" << meshSizes[axis] << " ranks)";
    shape[d] /= meshSizes[axis];
  }
  return RankedTensorType::get(shape, global.getElementType(),
                               global.getEncoding());
}

LogicalResult FunctionPartitioner::define(Value v, Sharding sharding) {
  auto global = dyn_cast<RankedTensorType>(v.getType());
  if (!global)
    return success();
  globalTypes[v] = global;
  FailureOr<RankedTensorType> local =
      localType(global, sharding.dims, v.getLoc());
  if (failed(local))
    return failure();
  v.setType(*local);
  shardings[v] = std::move(sharding);
  return success();
}

void FunctionPartitioner::defineLocal(Value v, RankedTensorType global,
                                      Sharding sharding) {
  globalTypes[v] = global;
  shardings[v] = std::move(sharding);
}

/// Sums pending partial sums, once per value.
Value FunctionPartitioner::sum(OpBuilder &b, Value v) {
  Sharding s = shardingOf(v);
  if (!s.partial)
    return v;
  if (Value done = summed.lookup(v))
    return done;
  // Sum a broadcast's operand rather than its (larger) result: the reverse
  // sweep broadcasts partial gradients of reductions over samples (batch
  // norm's statistics), often scaled (a mean) or negated on the way. The
  // sum commutes with those linear ops, and a rank that then slices the
  // result slices the broadcast, so no activation-sized sum is moved.
  // (Only down to a broadcast: summing a scaled gradient's operand instead
  // of the gradient would hand the sum to its other uses, which would then
  // no longer add partial sums up before one all-reduce.)
  auto broadcastBelow = [&](Operation *op) {
    while (isa_and_nonnull<nn::ScaleOp, nn::NegOp>(op) &&
           shardingOf(op->getOperand(0)).partial == s.partial)
      op = op->getOperand(0).getDefiningOp();
    return isa_and_nonnull<nn::BroadcastOp>(op) &&
           shardingOf(op->getOperand(0)).partial == s.partial;
  };
  Operation *def = v.getDefiningOp();
  if (broadcastBelow(def)) {
    Value input = sum(b, def->getOperand(0));
    Operation *clone = b.clone(*def);
    clone->setOperand(0, input);
    Value result = clone->getResult(0);
    defineLocal(result, globalTypeOf(v), {s.dims, 0});
    summed[v] = result;
    return result;
  }
  auto reduce = shard::AllReduceOp::create(b, v.getLoc(), v.getType(),
                                           grid.getSymName(), axesOf(s.partial),
                                           v, shard::ReductionKind::Sum);
  Value result = reduce.getResult();
  defineLocal(result, globalTypeOf(v), {s.dims, 0});
  summed[v] = result;
  return result;
}

FailureOr<Value> FunctionPartitioner::allToAll(OpBuilder &b, Value v,
                                               int64_t from, int64_t to) {
  Sharding s = shardingOf(v);
  int axis = s.dims[from];
  if (axis == kDataExpert) {
    // Samples split over data and expert: the data part stays.
    axis = MeshAxis::Expert;
    s.dims[from] = MeshAxis::Data;
    s.dims[to] = MeshAxis::Expert;
  } else if (axis == int(MeshAxis::Expert) &&
             s.dims[to] == int(MeshAxis::Data)) {
    // Back: each rank's share of its data group's samples.
    s.dims[from] = kReplicated;
    s.dims[to] = kDataExpert;
  } else {
    s.dims[to] = axis;
    s.dims[from] = kReplicated;
  }
  FailureOr<RankedTensorType> type =
      localType(globalTypeOf(v), s.dims, v.getLoc());
  if (failed(type))
    return failure();
  auto exchanged = shard::AllToAllOp::create(
      b, v.getLoc(), *type, grid.getSymName(), axesOf(axisMask(axis)), v,
      APInt(64, to), APInt(64, from));
  defineLocal(exchanged.getResult(), globalTypeOf(v), s);
  return exchanged.getResult();
}

Value FunctionPartitioner::gather(OpBuilder &b, Value v, int64_t dim,
                                  int keep) {
  Sharding s = shardingOf(v);
  unsigned axes = axisMask(s.dims[dim]) & ~axisMask(keep);
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape(type.getShape());
  for (shard::GridAxis axis : axesOf(axes))
    shape[dim] *= meshSizes[axis];
  auto gathered = shard::AllGatherOp::create(
      b, v.getLoc(), RankedTensorType::get(shape, type.getElementType()),
      grid.getSymName(), axesOf(axes), v, APInt(64, dim));
  s.dims[dim] = keep;
  defineLocal(gathered.getResult(), globalTypeOf(v), s);
  return gathered.getResult();
}

/// Slices replicated dimensions of `v` to `dims`, without communication.
/// Slices of splat constants, broadcasts and scalings are folded into new
/// ones, so a replicated parameter broadcast over tasks becomes a broadcast
/// to this rank's tasks.
FailureOr<Value> FunctionPartitioner::slice(OpBuilder &b, Value v,
                                            ArrayRef<int> dims) {
  Sharding s = shardingOf(v);
  RankedTensorType global = globalTypeOf(v);
  Sharding target{SmallVector<int>(dims), s.partial};
  FailureOr<RankedTensorType> local = localType(global, dims, v.getLoc());
  if (failed(local))
    return failure();
  Operation *def = v.getDefiningOp();
  Location loc = v.getLoc();
  DenseElementsAttr splat;
  if (def && matchPattern(def, m_Constant(&splat)) && splat.isSplat()) {
    Value c = arith::ConstantOp::create(
        b, loc, *local,
        DenseElementsAttr::get(*local, splat.getSplatValue<Attribute>()));
    defineLocal(c, global, target);
    return c;
  }
  if (auto broadcast = dyn_cast_or_null<nn::BroadcastOp>(def)) {
    ArrayRef<int64_t> added = broadcast.getDimensions();
    Value input = broadcast.getInput();
    SmallVector<int> inputDims = shardingOf(input).dims;
    for (int64_t d = 0, source = 0; d < static_cast<int64_t>(dims.size()); ++d)
      if (!llvm::is_contained(added, d))
        inputDims[source++] = dims[d];
    FailureOr<Value> sliced = reshard(b, input, inputDims);
    if (failed(sliced))
      return failure();
    Value result = nn::BroadcastOp::create(b, loc, *local, *sliced,
                                           broadcast.getDimensionsAttr());
    defineLocal(result, global, target);
    return result;
  }
  if (auto transpose = dyn_cast_or_null<nn::TransposeOp>(def)) {
    ArrayRef<int64_t> permutation = transpose.getPermutation();
    SmallVector<int> inputDims(dims.size());
    for (auto [d, source] : llvm::enumerate(permutation))
      inputDims[source] = dims[d];
    FailureOr<Value> sliced = reshard(b, transpose.getInput(), inputDims);
    if (failed(sliced))
      return failure();
    Value result = nn::TransposeOp::create(b, loc, *local, *sliced,
                                           transpose.getPermutationAttr());
    defineLocal(result, global, target);
    return result;
  }
  // (A conversion too: a mixed-precision model converts the broadcast
  // parameters that a pipeline slices into micro-batches.)
  if (isa_and_nonnull<nn::ScaleOp, nn::NegOp, nn::ConvertOp>(def)) {
    FailureOr<Value> sliced = reshard(b, def->getOperand(0), dims);
    if (failed(sliced))
      return failure();
    Operation *clone = b.clone(*def);
    clone->setOperand(0, *sliced);
    clone->getResult(0).setType(*local);
    defineLocal(clone->getResult(0), global, target);
    return clone->getResult(0);
  }
  Value current = v;
  SmallVector<int> currentDims = s.dims;
  for (auto [d, axis] : llvm::enumerate(dims)) {
    if (axis == kReplicated || currentDims[d] == axis)
      continue;
    // (Samples split over data alone are sliced along expert.)
    unsigned axes = axisMask(axis) & ~axisMask(currentDims[d]);
    currentDims[d] = axis;
    FailureOr<RankedTensorType> type = localType(global, currentDims, loc);
    if (failed(type))
      return failure();
    current = shard::AllSliceOp::create(b, loc, *type, current,
                                        grid.getSymName(), axesOf(axes), d);
    defineLocal(current, global, {currentDims, s.partial});
  }
  return current;
}

/// Brings `v` to the distribution `dims`: gathers dimensions split
/// differently, then slices. Partial sums are carried along.
FailureOr<Value> FunctionPartitioner::reshard(OpBuilder &b, Value v,
                                              ArrayRef<int> dims) {
  if (!isa<RankedTensorType>(v.getType()))
    return v;
  const Sharding &s = shardingOf(v);
  if (ArrayRef<int>(s.dims) == dims)
    return v;
  auto key = std::make_pair(v.getAsOpaquePointer(), SmallVector<int>(dims));
  if (auto it = resharded.find(key); it != resharded.end())
    return it->second;
  Value current = v;
  // An axis that moves to another dimension exchanges parts all-to-all:
  // each rank sends the others their parts of the new dimension (1/n of
  // what a gather and a slice would bring in).
  for (int64_t d = 0, e = dims.size(); d < e; ++d) {
    std::optional<int64_t> target =
        exchangeTarget(shardingOf(current).dims, dims, d);
    if (!target)
      continue;
    FailureOr<Value> moved = allToAll(b, current, d, *target);
    if (failed(moved))
      return failure();
    current = *moved;
  }
  for (int64_t d = 0, e = dims.size(); d < e; ++d) {
    int axis = shardingOf(current).dims[d];
    if (axis == kReplicated || axis == dims[d] ||
        (axis == int(MeshAxis::Data) && dims[d] == kDataExpert))
      continue;
    current = gather(b, current, d,
                     axis == kDataExpert && dims[d] == int(MeshAxis::Data)
                         ? int(MeshAxis::Data)
                         : kReplicated);
  }
  if (ArrayRef<int>(shardingOf(current).dims) != dims) {
    FailureOr<Value> sliced = slice(b, current, dims);
    if (failed(sliced))
      return failure();
    current = *sliced;
  }
  resharded[key] = current;
  return current;
}

LogicalResult FunctionPartitioner::annotateArguments() {
  Block &entry = function.getBody().front();
  for (BlockArgument arg : entry.getArguments())
    if (failed(
            define(arg, Sharding::replicated(
                            cast<RankedTensorType>(arg.getType()).getRank()))))
      return failure();
  for (auto annotation :
       llvm::make_early_inc_range(entry.getOps<shard::ShardOp>())) {
    auto arg = dyn_cast<BlockArgument>(annotation.getSrc());
    auto sharding = annotation.getSharding().getDefiningOp<shard::ShardingOp>();
    if (!arg || !sharding)
      return annotation.emitOpError(
          "partitioning takes shardings of function arguments only");
    if (sharding.getGrid() != grid.getSymName())
      return annotation.emitOpError("uses a grid other than ")
             << grid.getSymName();
    Sharding s = Sharding::replicated(globalTypeOf(arg).getRank());
    for (auto [d, axes] : llvm::enumerate(sharding.getSplitAxes())) {
      ArrayRef<int16_t> list = axes.asArrayRef();
      if (list == ArrayRef<int16_t>{MeshAxis::Data, MeshAxis::Expert})
        s.dims[d] = kDataExpert;
      else if (list.size() > 1)
        return annotation.emitOpError(
            "splits one dimension over several axes, which is supported "
            "only for samples over the data and expert axes");
      else if (list.size() == 1)
        s.dims[d] = list[0];
    }
    if (annotation.getAnnotateForUsers()) {
      // A replicated argument whose users take a slice of it (a parameter
      // split over the tensor axis): sliced here, without communication.
      OpBuilder b(annotation);
      FailureOr<Value> slice = reshard(b, arg, s.dims);
      if (failed(slice))
        return failure();
      annotation.getResult().replaceAllUsesWith(*slice);
      annotation.erase();
      continue;
    }
    arg.setType(globalTypeOf(arg));
    if (failed(define(arg, s)))
      return failure();
    annotation.getResult().replaceAllUsesWith(arg);
    annotation.erase();
  }
  for (auto sharding :
       llvm::make_early_inc_range(entry.getOps<shard::ShardingOp>()))
    if (sharding->use_empty())
      sharding.erase();
  return success();
}

/// A linear layer whose contraction is split (row-parallel) sums partial
/// products; its bias must be added once, after the sum: split into the
/// product and a bias add.
LogicalResult FunctionPartitioner::splitBias(nn::LinearOp linear) {
  OpBuilder b(linear);
  Location loc = linear.getLoc();
  auto type = cast<RankedTensorType>(linear.getType());
  int64_t leading = globalTypeOf(linear.getWeight()).getRank() - 2;
  SmallVector<int64_t> added;
  for (int64_t d = leading; d < type.getRank() - 1; ++d)
    added.push_back(d);
  SmallVector<Operation *> created;
  auto product = nn::LinearOp::create(b, loc, type, linear.getInput(),
                                      linear.getWeight(), Value());
  created.push_back(product);
  Value bias = linear.getBias();
  if (!added.empty()) {
    auto broadcast = nn::BroadcastOp::create(b, loc, type, bias,
                                             b.getDenseI64ArrayAttr(added));
    created.push_back(broadcast);
    bias = broadcast.getResult();
  }
  Operation *sum = b.create(loc, b.getStringAttr(nn::AddOp::getOperationName()),
                            ValueRange{product.getResult(), bias}, {type});
  created.push_back(sum);
  linear.getResult().replaceAllUsesWith(sum->getResult(0));
  linear.erase();
  for (Operation *op : created)
    if (failed(partition(op)))
      return failure();
  return success();
}

LogicalResult FunctionPartitioner::partition(Operation *op) {
  if (op->getNumRegions() != 0)
    return op->emitOpError(
        "has regions, which partitioning does not support yet");
  // A partial value already summed for an earlier use is read summed: the
  // sum costs nothing more, and a later sum of something derived from it
  // is avoided.
  for (OpOperand &operand : op->getOpOperands())
    if (Value done = summed.lookup(operand.get()))
      operand.set(done);
  if (auto linear = dyn_cast<nn::LinearOp>(op); linear && linear.getBias()) {
    int in = shardingOf(linear.getInput()).dims.back();
    if (in != kReplicated && in == shardingOf(linear.getWeight()).dims.back())
      return splitBias(linear);
  }
  OpBuilder b(op);
  auto sharding = [&](Value v) -> const Sharding & { return shardingOf(v); };
  auto globalType = [&](Value v) { return globalTypeOf(v); };
  RuleContext ctx{meshSizes, sharding, globalType, ringAttention};
  OpPlan plan = planOp(op, ctx);
  for (auto [operand, target] : llvm::zip(op->getOpOperands(), plan.operands)) {
    Value v = operand.get();
    if (!isa<RankedTensorType>(v.getType()))
      continue;
    if (!target.keepPartial)
      v = sum(b, v);
    FailureOr<Value> ready = reshard(b, v, target.dims);
    if (failed(ready))
      return failure();
    operand.set(*ready);
  }
  if (isa<func::ReturnOp>(op))
    return success();
  for (auto [result, sharding] : llvm::zip(op->getResults(), plan.results))
    if (failed(define(result, sharding)))
      return failure();
  for (NamedAttribute attribute : plan.attributes)
    op->setAttr(attribute.getName(), attribute.getValue());
  if (plan.resultScale != 1.0) {
    Value result = op->getResult(0);
    b.setInsertionPointAfter(op);
    auto scaled = nn::ScaleOp::create(b, op->getLoc(), result,
                                      b.getF64FloatAttr(plan.resultScale));
    result.replaceAllUsesExcept(scaled.getResult(), scaled);
    defineLocal(scaled.getResult(), globalTypeOf(result), shardingOf(result));
  }
  return success();
}

LogicalResult FunctionPartitioner::run() {
  if (!function.getBody().hasOneBlock())
    return function.emitOpError(
        "has control flow, which partitioning does not support yet");
  Block &entry = function.getBody().front();
  // Only the original ops: those partitioning creates are per-rank already.
  // (The annotations are consumed by annotateArguments.)
  SmallVector<Operation *> original;
  for (Operation &op : entry)
    if (!isa<shard::ShardOp, shard::ShardingOp>(op))
      original.push_back(&op);
  if (failed(annotateArguments()))
    return failure();
  for (Operation *op : original)
    if (failed(partition(op)))
      return failure();
  function.setFunctionType(
      FunctionType::get(function.getContext(), entry.getArgumentTypes(),
                        entry.getTerminator()->getOperandTypes()));
  // Values whose every use was resharded (broadcasts folded into smaller
  // ones) are dead now.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(entry)))
    if (isOpTriviallyDead(&op))
      op.erase();
  return success();
}

/// The grid a function's annotations use, if it has any.
shard::GridOp gridOf(func::FuncOp function, SymbolTable &symbols) {
  shard::GridOp grid;
  function.walk([&](shard::ShardingOp sharding) {
    grid = symbols.lookup<shard::GridOp>(sharding.getGrid());
  });
  return grid;
}

struct MetaPartitionPass
    : public metac::partition::impl::MetaPartitionBase<MetaPartitionPass> {
  using MetaPartitionBase::MetaPartitionBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (auto function : module.getOps<func::FuncOp>()) {
      shard::GridOp grid = gridOf(function, symbols);
      if (!grid)
        continue;
      if (grid.getShape().size() != kNumMeshAxes) {
        grid.emitOpError("is not a metac mesh (task x data x tensor x "
                         "pipeline x expert x sequence)");
        return signalPassFailure();
      }
      // With the samples split, batch norm's statistics are local sums and
      // an all-reduce, not a gather of every sample.
      if (grid.getShape()[MeshAxis::Data] > 1 ||
          grid.getShape()[MeshAxis::Expert] > 1)
        nn::decomposeBatchNorms(function, [](nn::BatchNormOp) { return true; });
      if (failed(FunctionPartitioner(function, grid, ringAttention).run()))
        return signalPassFailure();
      reduceScatterSlices(function);
    }
    if (failed(splitPipelineStages(module)))
      return signalPassFailure();
  }
};

} // namespace
