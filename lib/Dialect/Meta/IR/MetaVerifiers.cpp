//===- MetaVerifiers.cpp - meta op verifiers ------------------------------===//

#include "metac/Dialect/Meta/IR/MetaOps.h"

#include "llvm/ADT/StringSwitch.h"

#include <cmath>

using namespace mlir;
using namespace metac::meta;

//===----------------------------------------------------------------------===//
// meta.tasks
//===----------------------------------------------------------------------===//

bool TasksOp::isClassification() {
  return getKind() == "fashion_mnist" || getKind() == "image_folder" ||
         (getKind() == "episodes" &&
          isa<IntegerType>(
              cast<RankedTensorType>(getTargetType()).getElementType()));
}

/// An integer field of a task configuration, or 0 when absent.
static int64_t configInteger(TasksOp op, StringRef name) {
  auto value = op.getConfig().getAs<IntegerAttr>(name);
  return value ? value.getInt() : 0;
}

/// Sequence tasks: `vocab` and `length` (both >= 2) in the configuration,
/// samples tensor<length x i64> -> tensor<length x i64>.
static LogicalResult verifySequenceTasks(TasksOp op) {
  int64_t vocab = configInteger(op, "vocab"),
          length = configInteger(op, "length");
  if (vocab < 2 || length < 2)
    return op.emitOpError("sequence tasks expect integers vocab >= 2 and "
                          "length >= 2 in config, got ")
           << op.getConfig();
  auto expected =
      RankedTensorType::get({length}, IntegerType::get(op.getContext(), 64));
  if (op.getInputType() != expected || op.getTargetType() != expected)
    return op.emitOpError("sequence tasks of length ")
           << length << " have samples " << expected << " -> " << expected
           << ", got " << op.getInputType() << " -> " << op.getTargetType();
  if (op.getWaysAttr())
    return op.emitOpError("sequence tasks have no ways");
  return success();
}

LogicalResult TasksOp::verify() {
  StringRef kind = getKind();
  if (!llvm::is_contained(
          {"sinusoid", "sequence", "fashion_mnist", "image_folder", "episodes"},
          kind))
    return emitOpError("unknown task distribution kind '") << kind << "'";
  // I64Attr getters return uint64_t: read the values signed.
  int64_t support = getSupportAttr().getInt(), query = getQueryAttr().getInt();
  if (support < 1 || query < 1)
    return emitOpError("expects support and query sizes >= 1, got ")
           << support << " and " << query;
  auto target = cast<RankedTensorType>(getTargetType());
  int64_t ways = getWaysAttr() ? getWaysAttr().getInt() : 0;
  if (kind == "fashion_mnist" || kind == "image_folder") {
    if (ways < 2)
      return emitOpError("classification tasks expect ways >= 2");
    if (target.getRank() != 0 || !isa<IntegerType>(target.getElementType()))
      return emitOpError("classification targets must be 0-d integer "
                         "tensors, got ")
             << target;
    if (support % ways || query % ways)
      return emitOpError("support and query sizes must be multiples of ways "
                         "(")
             << ways << ")";
  } else if (kind == "sequence") {
    return verifySequenceTasks(*this);
  } else if (getWaysAttr() && ways < 2) {
    return emitOpError("expects ways >= 2, got ") << ways;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// meta.train
//===----------------------------------------------------------------------===//

void TrainOp::build(OpBuilder &builder, OperationState &state, StringRef name,
                    StringRef model, StringRef tasks, LossKind loss,
                    Attribute algorithm, Attribute optimizer, int64_t metaBatch,
                    int64_t iterations, int64_t seed) {
  MLIRContext *ctx = builder.getContext();
  state.addAttribute(getSymNameAttrName(state.name),
                     builder.getStringAttr(name));
  state.addAttribute(getModelAttrName(state.name),
                     FlatSymbolRefAttr::get(ctx, model));
  state.addAttribute(getTasksAttrName(state.name),
                     FlatSymbolRefAttr::get(ctx, tasks));
  state.addAttribute(getLossAttrName(state.name), LossKindAttr::get(ctx, loss));
  state.addAttribute(getAlgorithmAttrName(state.name), algorithm);
  state.addAttribute(getOptimizerAttrName(state.name), optimizer);
  state.addAttribute(getMetaBatchAttrName(state.name),
                     builder.getI64IntegerAttr(metaBatch));
  state.addAttribute(getIterationsAttrName(state.name),
                     builder.getI64IntegerAttr(iterations));
  state.addAttribute(getSeedAttrName(state.name),
                     builder.getI64IntegerAttr(seed));
  state.addRegion()->emplaceBlock();
}

LogicalResult TrainOp::verify() {
  // I64Attr getters return uint64_t: read the values signed.
  int64_t metaBatch = getMetaBatchAttr().getInt();
  if (metaBatch < 1)
    return emitOpError("expects meta_batch >= 1, got ") << metaBatch;
  if (getIterationsAttr().getInt() < 0)
    return emitOpError("expects iterations >= 0, got ")
           << getIterationsAttr().getInt();
  if (IntegerAttr every = getCheckpointEveryAttr(); every && every.getInt() < 1)
    return emitOpError("expects checkpoint_every >= 1, got ") << every.getInt();
  if (bool(getCheckpointEveryAttr()) != bool(getCheckpointDirAttr()))
    return emitOpError("checkpoint_every and checkpoint_dir go together");
  // Divisibility by task * micro_batches, without forming the product (which
  // may overflow).
  if (PlanAttr plan = getPlanAttr())
    if (metaBatch % plan.getTask() ||
        (metaBatch / plan.getTask()) % plan.getMicroBatches())
      return emitOpError("meta_batch ")
             << metaBatch << " is not divisible by task axis size "
             << plan.getTask() << " times " << plan.getMicroBatches()
             << " micro-batches";
  if (FloatAttr clip = getClipNormAttr();
      clip &&
      !(clip.getValueAsDouble() > 0 && std::isfinite(clip.getValueAsDouble())))
    return emitOpError("expects clip_norm > 0, got ")
           << clip.getValueAsDouble();
  if (std::optional<StringRef> precision = getPrecision();
      precision && *precision != "f32" && *precision != "bf16" &&
      *precision != "fp16")
    return emitOpError("expects precision f32, bf16 or fp16, got '")
           << *precision << "'";
  if (std::optional<StringRef> policy = getOnNonfinite();
      policy && *policy != "stop" && *policy != "skip" && *policy != "ignore")
    return emitOpError("expects on_nonfinite stop, skip or ignore, got '")
           << *policy << "'";
  if (std::optional<StringRef> scale = getLossScale();
      scale && *scale != "dynamic" && *scale != "off")
    return emitOpError("expects loss_scale dynamic or off, got '")
           << *scale << "'";
  if (getLossScale() == "dynamic" && getOnNonfinite() == "ignore")
    return emitOpError("scales the loss dynamically (loss_scale), which needs "
                       "the update guard that on_nonfinite = ignore leaves "
                       "out");
  if (getClipNormAttr() && getOnNonfinite() == "ignore")
    return emitOpError("clips the gradient (clip_norm), which needs the update "
                       "guard that on_nonfinite = ignore leaves out");
  return success();
}

/// The model's per-sample input and output, after the parameter arguments.
static LogicalResult verifyModelAgainstTasks(Operation *op, func::FuncOp model,
                                             TasksOp tasks, LossKind loss,
                                             Attribute algorithm) {
  FunctionType type = model.getFunctionType();
  // A second result marked meta.aux_loss: the layers' auxiliary loss.
  bool auxiliary = type.getNumResults() == 2 &&
                   model.getResultAttr(1, "meta.aux_loss") != nullptr;
  if (type.getNumInputs() < 1 || (type.getNumResults() != 1 && !auxiliary))
    return op->emitOpError("model '")
           << model.getSymName()
           << "' must take a sample and return one value (and, marked "
              "meta.aux_loss, an auxiliary loss)";
  if (auxiliary) {
    auto aux = dyn_cast<RankedTensorType>(type.getResult(1));
    if (!aux || aux.getRank() != 0 || !isa<FloatType>(aux.getElementType()))
      return op->emitOpError("model '")
             << model.getSymName()
             << "' returns an auxiliary loss that is not a float scalar: "
             << type.getResult(1);
  }
  unsigned sampleArg = type.getNumInputs() - 1;
  for (unsigned i = 0; i < sampleArg; ++i)
    if (!model.getArgAttrOfType<StringAttr>(i, "meta.param"))
      return op->emitOpError("model argument ")
             << i << " is neither a named parameter (meta.param) nor the "
             << "last argument";
  if (type.getInput(sampleArg) != tasks.getInputType())
    return op->emitOpError("model '")
           << model.getSymName() << "' takes " << type.getInput(sampleArg)
           << " but tasks '" << tasks.getSymName() << "' give inputs of type "
           << tasks.getInputType();
  auto output = dyn_cast<RankedTensorType>(type.getResult(0));
  if (!output)
    return op->emitOpError("model output must be a ranked tensor");
  if (isa<ProtoNetAttr>(algorithm)) {
    if (!tasks.isClassification())
      return op->emitOpError("protonet needs classification tasks");
    return success();
  }
  if (loss == LossKind::MSE) {
    if (output != tasks.getTargetType())
      return op->emitOpError("mse loss compares the model output ")
             << output << " with targets of type " << tasks.getTargetType();
    return success();
  }
  // Targets are one class label per position (a single one for
  // classification, one per token for sequences); the output adds a class
  // dimension.
  auto target = cast<RankedTensorType>(tasks.getTargetType());
  bool labels = isa<IntegerType>(target.getElementType()) &&
                (target.getRank() == 0 || tasks.getKind() == "sequence");
  if (!labels)
    return op->emitOpError("cross_entropy loss needs integer class labels, "
                           "tasks give ")
           << target;
  if (output.getRank() != target.getRank() + 1 ||
      output.getShape().drop_back() != target.getShape()) {
    InFlightDiagnostic diag = op->emitOpError(
        "cross_entropy loss needs a model output of one logit per class");
    if (target.getRank() > 0)
      diag << " at each position of targets " << target;
    return diag << ", got " << output;
  }
  int64_t logits = output.getShape().back();
  if (IntegerAttr ways = tasks.getWaysAttr(); ways && logits != ways.getInt())
    return op->emitOpError("model output ")
           << output << " has " << logits << " logits but tasks '"
           << tasks.getSymName() << "' are " << ways.getInt() << "-way";
  if (int64_t vocab = configInteger(tasks, "vocab");
      tasks.getKind() == "sequence" && logits != vocab)
    return op->emitOpError("model output ")
           << output << " has " << logits << " logits but tasks '"
           << tasks.getSymName() << "' have a vocabulary of " << vocab
           << " tokens";
  return success();
}

LogicalResult TrainOp::verifySymbolUses(SymbolTableCollection &symbols) {
  auto model =
      symbols.lookupNearestSymbolFrom<func::FuncOp>(*this, getModelAttr());
  if (!model)
    return emitOpError("model '") << getModel() << "' is not a func.func";
  auto tasks = symbols.lookupNearestSymbolFrom<TasksOp>(*this, getTasksAttr());
  if (!tasks)
    return emitOpError("tasks '") << getTasks() << "' is not a meta.tasks";
  return verifyModelAgainstTasks(*this, model, tasks, getLoss(),
                                 getAlgorithm());
}

//===----------------------------------------------------------------------===//
// meta.evaluate and meta.task_batch
//===----------------------------------------------------------------------===//

LogicalResult EvaluateOp::verify() {
  if (getCountAttr().getInt() < 1)
    return emitOpError("expects count >= 1, got ") << getCountAttr().getInt();
  if (getSteps().empty())
    return emitOpError("expects at least one number of steps");
  for (int64_t s : getSteps())
    if (s < 0)
      return emitOpError("expects steps >= 0, got ") << s;
  if (FloatAttr limit = getDivergeAboveAttr();
      limit && !(limit.getValueAsDouble() > 0))
    return emitOpError("expects diverge_above > 0, got ")
           << limit.getValueAsDouble();
  return success();
}

LogicalResult EvaluateOp::verifySymbolUses(SymbolTableCollection &symbols) {
  auto tasks = symbols.lookupNearestSymbolFrom<TasksOp>(*this, getTasksAttr());
  if (!tasks)
    return emitOpError("tasks '") << getTasks() << "' is not a meta.tasks";
  auto train = (*this)->getParentOfType<TrainOp>();
  auto trained =
      symbols.lookupNearestSymbolFrom<TasksOp>(train, train.getTasksAttr());
  if (trained && (trained.getInputType() != tasks.getInputType() ||
                  trained.getTargetType() != tasks.getTargetType()))
    return emitOpError("evaluation tasks '")
           << getTasks() << "' have samples " << tasks.getInputType() << " -> "
           << tasks.getTargetType() << " but training tasks '"
           << trained.getSymName() << "' have " << trained.getInputType()
           << " -> " << trained.getTargetType();
  return success();
}

LogicalResult TaskBatchOp::verifySymbolUses(SymbolTableCollection &symbols) {
  auto tasks = symbols.lookupNearestSymbolFrom<TasksOp>(*this, getTasksAttr());
  if (!tasks)
    return emitOpError("tasks '") << getTasks() << "' is not a meta.tasks";
  auto withCount = [](Type sample, int64_t count) {
    auto t = cast<RankedTensorType>(sample);
    SmallVector<int64_t> shape{count};
    llvm::append_range(shape, t.getShape());
    return RankedTensorType::get(shape, t.getElementType());
  };
  Type expected[] = {withCount(tasks.getInputType(), tasks.getSupport()),
                     withCount(tasks.getTargetType(), tasks.getSupport()),
                     withCount(tasks.getInputType(), tasks.getQuery()),
                     withCount(tasks.getTargetType(), tasks.getQuery())};
  for (auto [i, pair] : llvm::enumerate(llvm::zip(getResultTypes(), expected)))
    if (std::get<0>(pair) != std::get<1>(pair))
      return emitOpError("result ") << i << " has type " << std::get<0>(pair)
                                    << ", expected " << std::get<1>(pair);
  return success();
}

//===----------------------------------------------------------------------===//
// meta.grad and meta.adapt
//===----------------------------------------------------------------------===//

/// The body takes one argument per input, of the input's type, and yields
/// the scalar loss.
static LogicalResult verifyLossBody(Operation *op, Region &body,
                                    ValueRange inputs) {
  Block &block = body.front();
  if (block.getNumArguments() != inputs.size())
    return op->emitOpError("body takes ")
           << block.getNumArguments() << " arguments but the op has "
           << inputs.size() << " inputs";
  for (auto [i, pair] :
       llvm::enumerate(llvm::zip(block.getArgumentTypes(), inputs.getTypes())))
    if (std::get<0>(pair) != std::get<1>(pair))
      return op->emitOpError("body argument ")
             << i << " has type " << std::get<0>(pair) << " but input " << i
             << " has type " << std::get<1>(pair);
  // The block is not empty (SingleBlock), but its last op may not be a
  // terminator: Block::getTerminator would assert.
  auto yield = dyn_cast<YieldOp>(block.back());
  if (!yield)
    return op->emitOpError("body must end with meta.yield");
  if (yield.getValues().size() != 1)
    return op->emitOpError("body must yield exactly one loss, got ")
           << yield.getValues().size() << " values";
  auto loss = dyn_cast<RankedTensorType>(yield.getLoss().getType());
  if (!loss || loss.getRank() != 0 || !isa<FloatType>(loss.getElementType()))
    return op->emitOpError("body must yield a 0-d float loss, got ")
           << yield.getLoss().getType();
  return success();
}

LogicalResult GradOp::verify() {
  if (getInputs().empty())
    return emitOpError("expects at least one input to differentiate");
  if (failed(verifyLossBody(*this, getBody(), getInputs())))
    return failure();
  if (getGradients().size() != getInputs().size())
    return emitOpError("expects one gradient per input, got ")
           << getGradients().size() << " for " << getInputs().size();
  for (auto [i, pair] : llvm::enumerate(
           llvm::zip(getGradients().getTypes(), getInputs().getTypes())))
    if (std::get<0>(pair) != std::get<1>(pair))
      return emitOpError("gradient ")
             << i << " has type " << std::get<0>(pair) << " but input " << i
             << " has type " << std::get<1>(pair);
  auto yield = cast<YieldOp>(getBody().front().getTerminator());
  if (yield.getLoss().getType() != getValue().getType())
    return emitOpError("value type ")
           << getValue().getType() << " does not match the yielded loss type "
           << yield.getLoss().getType();
  return success();
}

LogicalResult AdaptOp::verify() {
  // I64Attr getters return uint64_t: read the values signed.
  int64_t steps = getStepsAttr().getInt(), order = getOrderAttr().getInt();
  if (steps < 1)
    return emitOpError("expects steps >= 1, got ") << steps;
  if (!(getInnerLr().convertToDouble() > 0))
    return emitOpError("expects inner_lr > 0");
  if (order != 1 && order != 2)
    return emitOpError("expects order 1 or 2, got ") << order;
  if (getParams().empty())
    return emitOpError("expects at least one parameter to adapt");
  if (getAdapted().getTypes() != getParams().getTypes())
    return emitOpError("results must have the types of the parameters");
  return verifyLossBody(*this, getBody(), getParams());
}

//===----------------------------------------------------------------------===//
// meta.outer_step
//===----------------------------------------------------------------------===//

/// Whether `type` is tensor<`size`xf64> (the guard's norms and gate).
static bool isGuardVector(Type type, int64_t size) {
  auto t = dyn_cast<RankedTensorType>(type);
  return t && t.getRank() == 1 && t.getDimSize(0) == size &&
         t.getElementType().isF64();
}

LogicalResult
OuterStepOp::inferReturnTypes(MLIRContext *, std::optional<Location>,
                              ValueRange operands, DictionaryAttr attributes,
                              OpaqueProperties properties, RegionRange regions,
                              SmallVectorImpl<Type> &inferred) {
  OuterStepOp::Adaptor adaptor(operands, attributes, properties, regions);
  llvm::append_range(inferred, adaptor.getParams().getTypes());
  llvm::append_range(inferred, adaptor.getState().getTypes());
  return success();
}

LogicalResult OuterStepOp::verify() {
  if (getGrads().getTypes() != getParams().getTypes())
    return emitOpError("expects one gradient of each parameter's type");
  OptimizerStateLayout layout = getOptimizerStateLayout(getOptimizer());
  size_t n = getParams().size();
  size_t expected = layout.perParam * n + (layout.stepCounter ? 1 : 0);
  if (getState().size() != expected)
    return emitOpError("optimizer ")
           << getOptimizer() << " expects " << expected << " state tensors for "
           << n << " parameters, got " << getState().size();
  for (unsigned k = 0; k < layout.perParam; ++k)
    for (size_t i = 0; i < n; ++i)
      if (getState()[k * n + i].getType() != getParams()[i].getType())
        return emitOpError("state tensor ")
               << k * n + i << " must have the type of parameter " << i;
  if (layout.stepCounter) {
    auto step = cast<RankedTensorType>(getState().back().getType());
    if (step.getRank() != 0 || !step.getElementType().isInteger(64))
      return emitOpError("the last state tensor is the step count and must "
                         "be tensor<i64>");
  }
  if (Value gate = getGate(); gate && !isGuardVector(gate.getType(), 2))
    return emitOpError("expects a gate of type tensor<2xf64>, got ")
           << gate.getType();
  return success();
}

//===----------------------------------------------------------------------===//
// meta.update_guard
//===----------------------------------------------------------------------===//

LogicalResult UpdateGuardOp::verify() {
  if (getGrads().empty())
    return emitOpError("expects at least one gradient");
  for (Value g : getGrads())
    if (!isa<FloatType>(cast<RankedTensorType>(g.getType()).getElementType()))
      return emitOpError("expects float gradients, got ") << g.getType();
  int64_t n = static_cast<int64_t>(getGrads().size());
  if (!isGuardVector(getNorms().getType(), n))
    return emitOpError("expects norms of type tensor<")
           << n << "xf64> (one per gradient), got " << getNorms().getType();
  if (!isGuardVector(getGate().getType(), 2))
    return emitOpError("expects a gate of type tensor<2xf64>, got ")
           << getGate().getType();
  if (FloatAttr clip = getClipNormAttr();
      clip &&
      !(clip.getValueAsDouble() > 0 && std::isfinite(clip.getValueAsDouble())))
    return emitOpError("expects clip_norm > 0, got ")
           << clip.getValueAsDouble();
  return success();
}

LogicalResult WaitOp::verify() {
  Operation *start = getStarted().getDefiningOp();
  if (!start || !start->hasAttr("metac.async"))
    return emitOpError("expects the result of a collective marked "
                       "'metac.async'");
  if (!getStarted().hasOneUse())
    return emitOpError("must be the only user of the collective it waits for");
  // Dominance orders the two; the runtime also needs them in one block.
  if (start->getBlock() != (*this)->getBlock())
    return emitOpError("must be in the block of the collective it waits for");
  return success();
}

//===----------------------------------------------------------------------===//
// meta.yield and meta.map
//===----------------------------------------------------------------------===//

LogicalResult YieldOp::verify() {
  // The parents check what they need (one loss, or the map's results).
  return success();
}

LogicalResult MapOp::verify() {
  if (getMapped().empty())
    return emitOpError("expects at least one mapped operand");
  int64_t count = -1;
  for (Value v : getMapped()) {
    auto type = cast<RankedTensorType>(v.getType());
    if (type.getRank() < 1)
      return emitOpError("mapped operands need a leading task dimension, got ")
             << type;
    if (count >= 0 && type.getDimSize(0) != count)
      return emitOpError("mapped operands disagree on the number of tasks: ")
             << count << " and " << type.getDimSize(0);
    count = type.getDimSize(0);
  }
  Block &block = getBody().front();
  SmallVector<Type> expected;
  for (Value v : getMapped())
    expected.push_back(RankedTensorType::get(
        cast<RankedTensorType>(v.getType()).getShape().drop_front(),
        cast<RankedTensorType>(v.getType()).getElementType()));
  llvm::append_range(expected, getShared().getTypes());
  if (block.getArgumentTypes() != ArrayRef<Type>(expected))
    return emitOpError("body arguments must be one task's slice of each mapped "
                       "operand, then the shared operands");
  auto yield = dyn_cast<YieldOp>(block.back());
  if (!yield)
    return emitOpError("body must end with meta.yield");
  if (yield.getValues().size() != getResults().size())
    return emitOpError("body yields ")
           << yield.getValues().size() << " values for " << getResults().size()
           << " results";
  for (auto [value, result] : llvm::zip(yield.getValues(), getResults())) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    auto stacked = cast<RankedTensorType>(result.getType());
    if (!type || stacked.getRank() != type.getRank() + 1 ||
        stacked.getDimSize(0) != count ||
        stacked.getShape().drop_front() != type.getShape() ||
        stacked.getElementType() != type.getElementType())
      return emitOpError("result type ")
             << result.getType() << " is not the yielded type "
             << value.getType() << " stacked over " << count << " tasks";
  }
  return success();
}
