//===- KeepParamsSplit.cpp - split parameters stay split between steps ----===//
//
// The partitioner splits an expert's weights over the expert axis (and a
// head's or a column's over the tensor axis) by slicing the whole,
// replicated parameter at the start of each step, and gathers the weight's
// gradient back for an outer update of the whole parameter on every rank.
// The rank can keep just its part, its optimizer state and its update
// between steps: the slices and the gather go, and parameter and state
// memory falls by the split's factor.
//
//===----------------------------------------------------------------------===//

#include "metac/Partition/Passes.h"

#include "LearnedParams.h"

#include "metac/Dialect/Meta/IR/MetaOps.h"
#include "metac/Dialect/NN/IR/NNBuilder.h"
#include "metac/Dialect/NN/IR/NNOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/SymbolTable.h"

namespace metac::partition {
#define GEN_PASS_DEF_METAKEEPPARAMSSPLIT
#include "metac/Partition/Passes.h.inc"
} // namespace metac::partition

using namespace mlir;
using namespace metac;

namespace {

/// How parameter i is split where it is sliced: the slices' grid, axes
/// and dimension.
struct Split {
  FlatSymbolRefAttr grid;
  SmallVector<shard::GridAxis> axes;
  int64_t dim = 0;
  bool operator==(const Split &o) const {
    return grid == o.grid && axes == o.axes && dim == o.dim;
  }
};

/// The functions that take the parameters first: the step (or the steps
/// of a mixed meta-batch) and the evaluations; under pipeline stages,
/// each one's stage functions.
SmallVector<func::FuncOp> parameterFunctions(ModuleOp module,
                                             meta::TrainOp train) {
  SmallVector<func::FuncOp> functions;
  int64_t stages = 1;
  if (auto attr = train->getAttrOfType<IntegerAttr>("meta.pipeline_stages"))
    stages = attr.getInt();
  auto add = [&](Attribute ref) {
    auto symbol = dyn_cast_or_null<FlatSymbolRefAttr>(ref);
    if (!symbol)
      return;
    for (int64_t s = 0; s < stages; ++s) {
      std::string name = symbol.getValue().str();
      if (stages > 1)
        name += ".stage" + std::to_string(s);
      if (auto f = module.lookupSymbol<func::FuncOp>(name))
        if (!llvm::is_contained(functions, f))
          functions.push_back(f);
    }
  };
  add(train->getAttr("meta.step"));
  for (const char *list : {"meta.step_variants", "meta.eval"})
    if (auto refs = train->getAttrOfType<ArrayAttr>(list))
      for (Attribute ref : refs)
        add(ref);
  return functions;
}

/// Whether argument `i` of `f` stands for a parameter another pipeline
/// stage holds (meta-keep-stage-params: an empty tensor).
bool heldElsewhere(func::FuncOp f, unsigned i) {
  return f.getArgAttr(i, "meta.param_stage") &&
         cast<RankedTensorType>(f.getArgumentTypes()[i]).getNumElements() == 0;
}

/// Where `update` takes argument `i` of `f` among its parameters (other
/// stages' parameters may have left it), if it does.
std::optional<unsigned> positionIn(meta::OuterStepOp update, func::FuncOp f,
                                   unsigned i) {
  if (!update)
    return std::nullopt;
  for (auto [j, param] : llvm::enumerate(update.getParams()))
    if (param == f.getArgument(i))
      return j;
  return std::nullopt;
}

/// The split of `arg` when every read is a slice of one dimension over the
/// same axes, or an outer update that `function` returns; none otherwise
/// (and for an argument that is not read).
std::optional<Split> splitOf(BlockArgument arg, meta::OuterStepOp update,
                             unsigned index) {
  std::optional<Split> split;
  for (OpOperand &use : arg.getUses()) {
    if (auto slice = dyn_cast<shard::AllSliceOp>(use.getOwner())) {
      Split here{slice.getGridAttr(),
                 SmallVector<shard::GridAxis>(slice.getGridAxes()),
                 slice.getSliceAxis().getSExtValue()};
      if (split && !(*split == here))
        return std::nullopt;
      split = here;
      continue;
    }
    if (update && use.getOwner() == update.getOperation() &&
        use.getOperandNumber() ==
            update.getParams().getBeginOperandIndex() + index) {
      Value result = update.getResult(index);
      if (!llvm::all_of(result.getUsers(), [](Operation *user) {
            return isa<func::ReturnOp>(user);
          }))
        return std::nullopt;
      continue;
    }
    return std::nullopt;
  }
  return split;
}

/// The square root of the squared norm of a gradient held in parts over
/// `split`, as one element of the gradient's type (the guard takes one
/// type): the update guard's stand-in for the whole gradient (its norm is
/// the whole's, rounded once; not finite where any part is not). The sum
/// of the parts' f64 squares is marked exact: no compression narrows it.
Value normStandIn(OpBuilder &b, Location loc, Value part, const Split &split) {
  nn::NNBuilder nn(b, loc);
  auto type = cast<RankedTensorType>(part.getType());
  Value flat = nn.reshape(part, {type.getNumElements()});
  Value wide = nn.convert(flat, b.getF64Type());
  Value squares = nn.reduceSum(nn.mul(wide, wide), {0});
  auto total = shard::AllReduceOp::create(b, loc, squares.getType(),
                                          split.grid.getValue(), split.axes,
                                          squares, shard::ReductionKind::Sum);
  total->setAttr("metac.exact", b.getUnitAttr());
  Value root = nn::SqrtOp::create(b, loc, total.getType(), total);
  return nn.reshape(nn.convert(root, type.getElementType()), {1});
}

struct MetaKeepParamsSplitPass
    : public partition::impl::MetaKeepParamsSplitBase<MetaKeepParamsSplitPass> {
  using MetaKeepParamsSplitBase::MetaKeepParamsSplitBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (meta::TrainOp train : module.getOps<meta::TrainOp>())
      keepSplit(module, train);
  }

  void keepSplit(ModuleOp module, meta::TrainOp train) {
    // Parameter servers hold whole parameters.
    int64_t count = servers;
    if (count < 0)
      if (auto spec =
              train->getAttrOfType<IntegerAttr>("meta.parameter_servers"))
        count = spec.getInt();
    if (count > 0)
      return;
    SmallVector<func::FuncOp> functions = parameterFunctions(module, train);
    auto model = module.lookupSymbol<func::FuncOp>(train.getModel());
    if (functions.empty() || !model)
      return;
    unsigned params = partition::learnedParamCount(model, functions.front());
    SmallVector<meta::OuterStepOp> updates;
    for (func::FuncOp f : functions)
      updates.push_back(partition::outerStepOf(f));

    for (unsigned i = 0; i < params; ++i) {
      std::optional<Split> split;
      bool keep = true;
      std::optional<RankedTensorType> whole;
      for (auto [f, update] : llvm::zip(functions, updates)) {
        if (f.getNumArguments() <= i) {
          keep = false;
          break;
        }
        // A pipeline stage that does not hold it does not decide.
        if (heldElsewhere(f, i))
          continue;
        whole = cast<RankedTensorType>(f.getArgumentTypes()[i]);
        // A function with an outer update must update it (and return it).
        if (update && !positionIn(update, f, i)) {
          keep = false;
          break;
        }
        std::optional<Split> here = splitOf(
            f.getArgument(i), update, positionIn(update, f, i).value_or(0));
        if (!here) {
          // A function that does not read it at all (an ANIL evaluation of
          // the head alone) does not decide.
          if (f.getArgument(i).use_empty())
            continue;
          keep = false;
          break;
        }
        if (split && !(*split == *here)) {
          keep = false;
          break;
        }
        split = here;
      }
      if (!keep || !split || !whole)
        continue;
      auto grid = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(
          train, split->grid);
      if (!grid)
        continue;
      int64_t parts = 1, mask = 0;
      for (shard::GridAxis axis : split->axes) {
        parts *= grid.getShape()[axis];
        mask |= int64_t(1) << axis;
      }
      if (parts <= 1 || split->dim < 0 || split->dim >= whole->getRank() ||
          whole->getDimSize(split->dim) % parts)
        continue;
      SmallVector<int64_t> shape(whole->getShape());
      shape[split->dim] /= parts;
      auto partType = RankedTensorType::get(shape, whole->getElementType());
      for (auto [f, update] : llvm::zip(functions, updates)) {
        // The stages that do not hold it learn how the holder does.
        if (heldElsewhere(f, i)) {
          OpBuilder b(f.getContext());
          f.setArgAttr(i, "meta.param_parts",
                       b.getDenseI64ArrayAttr({parts, mask, split->dim}));
          continue;
        }
        if (failed(keepInParts(f, update, i, partType, *split, parts, mask)))
          return signalPassFailure();
      }
    }
    for (func::FuncOp f : functions) {
      Block &entry = f.getBody().front();
      f.setType(FunctionType::get(f.getContext(), entry.getArgumentTypes(),
                                  entry.getTerminator()->getOperandTypes()));
    }
  }

  /// Makes parameter `i` of `f` this rank's part: its slices become the
  /// argument itself, and the outer update takes the gradient's part and
  /// the state's parts.
  LogicalResult keepInParts(func::FuncOp f, meta::OuterStepOp update,
                            unsigned i, RankedTensorType partType,
                            const Split &split, int64_t parts, int64_t mask) {
    BlockArgument arg = f.getArgument(i);
    arg.setType(partType);
    OpBuilder b(f.getContext());
    f.setArgAttr(i, "meta.param_parts",
                 b.getDenseI64ArrayAttr({parts, mask, split.dim}));
    for (Operation *user : llvm::make_early_inc_range(arg.getUsers()))
      if (auto slice = dyn_cast<shard::AllSliceOp>(user)) {
        slice.getResult().replaceAllUsesWith(arg);
        slice.erase();
      }
    if (!update || !llvm::is_contained(arg.getUsers(), update.getOperation()))
      return success();
    // Where the update has it (after other stages' parameters left it).
    unsigned j = *positionIn(update, f, i);

    Location loc = update.getLoc();
    auto guard = update.getGate()
                     ? update.getGate().getDefiningOp<meta::UpdateGuardOp>()
                     : meta::UpdateGuardOp();
    b.setInsertionPoint(guard ? guard.getOperation() : update.getOperation());
    // The gradient's part: the operand of its gather where it was gathered
    // over these axes, else a slice of the whole (no communication).
    OpOperand &gradUse =
        update->getOpOperand(update.getGrads().getBeginOperandIndex() + j);
    Value grad = gradUse.get();
    Value gradPart;
    auto gather = grad.getDefiningOp<shard::AllGatherOp>();
    if (gather && gather.getGatherAxis().getSExtValue() == split.dim &&
        gather.getGridAttr() == split.grid &&
        gather.getGridAxes() == ArrayRef(split.axes))
      gradPart = gather.getInput();
    else
      gradPart = shard::AllSliceOp::create(
          b, loc, partType, grad, split.grid.getValue(), split.axes, split.dim);
    // The guard keeps a replicated gradient; a gathered one's norm comes
    // from the parts.
    if (guard && gradPart != grad && gather && gradPart == gather.getInput())
      for (OpOperand &use : guard->getOpOperands())
        if (use.get() == grad)
          use.set(normStandIn(b, loc, gradPart, split));
    gradUse.set(gradPart);
    if (gather && gather->use_empty())
      gather->erase();

    // The state of parameter i, and the update's results, take the part's
    // type.
    meta::OptimizerStateLayout layout =
        meta::getOptimizerStateLayout(update.getOptimizer());
    size_t n = update.getParams().size();
    for (unsigned k = 0; k < layout.perParam; ++k) {
      Value s = update.getState()[k * n + j];
      auto stateArg = dyn_cast<BlockArgument>(s);
      if (!stateArg || stateArg.getOwner() != &f.getBody().front() ||
          !stateArg.hasOneUse())
        return update.emitOpError("has optimizer state that is not an "
                                  "argument of its function used by it "
                                  "alone, which cannot be kept in parts");
      stateArg.setType(partType);
      update.getResult(n + k * n + j).setType(partType);
    }
    update.getResult(j).setType(partType);
    return success();
  }
};

} // namespace
