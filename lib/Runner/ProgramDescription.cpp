//===- ProgramDescription.cpp - what the runtime needs to know ------------===//

#include "ProgramDescription.h"

#include "metac/Dialect/Meta/IR/MetaOps.h"
#include "metac/Dialect/Meta/Transforms/TaskAssignment.h"
#include "metac/Planner/OpCost.h"

using namespace mlir;
using namespace metac;

static std::optional<int32_t> dtypeOf(Type element) {
  if (element.isF32())
    return METART_F32;
  if (element.isF64())
    return METART_F64;
  if (element.isInteger(32))
    return METART_I32;
  if (element.isInteger(64))
    return METART_I64;
  return std::nullopt;
}

static FailureOr<TasksDescription> describeTasks(meta::TasksOp op) {
  TasksDescription d;
  if (op.getKind() == "sinusoid") {
    metart_sinusoid_config &c = d.spec.sinusoid;
    auto range = [&](StringRef name, double *out, double lo, double hi) {
      out[0] = lo;
      out[1] = hi;
      if (auto a = op.getConfig().getAs<ArrayAttr>(name))
        for (auto [i, v] : llvm::enumerate(a.getAsRange<FloatAttr>()))
          out[i] = v.getValueAsDouble();
    };
    range("amplitude", c.amplitude, 0.1, 5.0);
    range("phase", c.phase, 0, 3.14159265358979);
    range("input", c.input, -5, 5);
    c.support = op.getSupportAttr().getInt();
    c.query = op.getQueryAttr().getInt();
    c.dtype =
        *dtypeOf(cast<RankedTensorType>(op.getInputType()).getElementType());
    d.spec.kind = METART_TASKS_SINUSOID;
    return d;
  }
  if (op.getKind() == "sequence") {
    metart_sequence_config &c = d.spec.sequence;
    c.vocab = op.getConfig().getAs<IntegerAttr>("vocab").getInt();
    c.length = op.getConfig().getAs<IntegerAttr>("length").getInt();
    c.support = op.getSupportAttr().getInt();
    c.query = op.getQueryAttr().getInt();
    d.spec.kind = METART_TASKS_SEQUENCE;
    return d;
  }
  if (op.getKind() == "fashion_mnist" || op.getKind() == "image_folder") {
    auto shotsAttr = op.getConfig().getAs<IntegerAttr>("shots");
    if (!op.getWaysAttr() || !shotsAttr || op.getWaysAttr().getInt() < 1)
      return op.emitError("a classification task distribution needs ways "
                          "and config.shots");
    int64_t ways = op.getWaysAttr().getInt();
    int64_t shots = shotsAttr.getInt();
    int64_t query = op.getQueryAttr().getInt() / ways;
    auto input = cast<RankedTensorType>(op.getInputType());
    int32_t dtype = *dtypeOf(input.getElementType());
    if (auto path = op.getConfig().getAs<StringAttr>("path"))
      d.path = path.getValue().str();
    if (op.getKind() == "image_folder") {
      d.spec.kind = METART_TASKS_IMAGE_FOLDER;
      d.spec.image_folder = {nullptr, input.getDimSize(2), ways, shots, query,
                             dtype};
      return d;
    }
    metart_fashion_mnist_config &c = d.spec.fashion_mnist;
    auto classes = op.getConfig().getAs<DenseI64ArrayAttr>("classes");
    if (!classes || classes.empty() ||
        classes.size() > static_cast<int64_t>(std::size(c.classes)))
      return op.emitError("fashion_mnist needs 1 to 10 classes");
    llvm::copy(classes.asArrayRef(), c.classes);
    c.num_classes = classes.size();
    c.ways = ways;
    c.shots = shots;
    c.query = query;
    c.dtype = dtype;
    d.spec.kind = METART_TASKS_FASHION_MNIST;
    return d;
  }
  if (op.getKind() == "episodes") {
    d.spec.kind = METART_TASKS_EPISODES;
    d.path = op.getConfig().getAs<StringAttr>("path").getValue().str();
    return d;
  }
  return op.emitError("task distribution kind '")
         << op.getKind() << "' is not supported by the runtime yet";
}

std::string metac::stageFunction(const std::string &function, int64_t stages,
                                 int64_t stage) {
  return stages > 1 ? function + ".stage" + std::to_string(stage) : function;
}

/// What the servers of `server` apply; the step keeps no optimizer state.
static void describeServers(meta::ServerStepOp server, ProgramDescription &d) {
  metart_servers_desc &s = d.servers;
  s.count = static_cast<int64_t>(server.getServers());
  s.staleness = static_cast<int64_t>(server.getStaleness());
  s.asynchronous = server.getAsynchronous();
  s.guarded = server.getGuarded();
  s.clip_norm =
      server.getClipNorm() ? server.getClipNorm()->convertToDouble() : 0.0;
  Attribute optimizer = server.getOptimizer();
  if (auto sgd = dyn_cast<meta::SGDAttr>(optimizer)) {
    s.optimizer = METART_OPTIMIZER_SGD;
    s.lr = sgd.getLr().convertToDouble();
    s.momentum = sgd.getMomentum().convertToDouble();
    s.weight_decay = sgd.getWeightDecay().convertToDouble();
  } else {
    auto adam = [&](auto a, int32_t kind) {
      s.optimizer = kind;
      s.lr = a.getLr().convertToDouble();
      s.beta1 = a.getBeta1().convertToDouble();
      s.beta2 = a.getBeta2().convertToDouble();
      s.eps = a.getEps().convertToDouble();
      s.weight_decay = a.getWeightDecay().convertToDouble();
    };
    if (auto w = dyn_cast<meta::AdamWAttr>(optimizer))
      adam(w, METART_OPTIMIZER_ADAMW);
    else
      adam(cast<meta::AdamAttr>(optimizer), METART_OPTIMIZER_ADAM);
  }
  // statePerParam and stepCounter stay the optimizer's: the step takes no
  // state (the servers keep it), but checkpoints hold it.
  // The step returns the servers' norms where it had a guard.
  d.guarded = d.guarded || s.guarded;
}

/// A mixed meta-batch's classes, step groups and assignment.
LogicalResult describeTaskMix(meta::TrainOp train, ProgramDescription &d) {
  auto mix = train->getAttrOfType<ArrayAttr>("meta.task_mix");
  if (!mix)
    return success();
  auto variants = train->getAttrOfType<ArrayAttr>("meta.step_variants");
  auto assignment =
      train->getAttrOfType<DenseI64ArrayAttr>("meta.task_assignment");
  std::optional<std::vector<meta::TaskClass>> classes =
      meta::readTaskClasses(mix);
  if (!variants || !assignment || !classes)
    return train.emitError("mixes task classes but was not expanded into "
                           "steps for them");
  for (const meta::TaskClass &c : *classes) {
    d.classTasks.push_back(c.tasks);
    d.classSupport.push_back(c.support);
    d.classQuery.push_back(c.query);
  }
  for (auto v : variants.getAsRange<FlatSymbolRefAttr>())
    d.stepGroups.push_back(v.getValue().str());
  d.taskAssignment.assign(assignment.asArrayRef().begin(),
                          assignment.asArrayRef().end());
  size_t row = 1 + 2 * classes->size();
  if (d.taskAssignment.size() != row * static_cast<size_t>(d.mesh[0]))
    return train.emitError("the mixed meta-batch was split over ")
           << d.taskAssignment.size() / row << " task ranks, but the mesh has "
           << d.mesh[0];
  return success();
}

FailureOr<ProgramDescription> metac::describeProgram(ModuleOp module) {
  auto trains = llvm::to_vector(module.getOps<meta::TrainOp>());
  if (trains.size() != 1)
    return emitError(module.getLoc(), "running a program needs exactly one "
                                      "'train' declaration, the spec has ")
           << trains.size();
  meta::TrainOp train = trains.front();
  auto model = module.lookupSymbol<func::FuncOp>(train.getModel());
  auto step = train->getAttrOfType<FlatSymbolRefAttr>("meta.step");
  if (!model || !step)
    return train.emitError("the program has no step function (compile it "
                           "to the autodiff phase first)");
  ProgramDescription d;
  d.name = train.getSymName().str();
  d.lossName = meta::stringifyLossKind(train.getLoss()).str();
  d.stepFunction = step.getValue().str();
  d.metaBatch = train.getMetaBatch();
  d.iterations = train.getIterationsAttr().getInt();
  d.seed = train.getSeed();
  if (std::optional<uint64_t> every = train.getCheckpointEvery())
    d.checkpointEvery = static_cast<int64_t>(*every);
  if (std::optional<StringRef> dir = train.getCheckpointDir())
    d.checkpointDir = dir->str();
  // Only a partitioned program runs on a mesh; the plan alone (before the
  // planned phase) describes the full batch.
  if (train->hasAttr("meta.mesh"))
    if (meta::PlanAttr plan = train.getPlanAttr())
      d.mesh = plan.getMeshSizes();
  if (auto stages = train->getAttrOfType<IntegerAttr>("meta.pipeline_stages"))
    d.stages = stages.getInt();
  d.onNonfinite = train.getOnNonfinite() == "skip" ? METART_NONFINITE_SKIP
                                                   : METART_NONFINITE_STOP;
  meta::OptimizerStateLayout layout =
      meta::getOptimizerStateLayout(train.getOptimizer());
  d.statePerParam = layout.perParam;
  d.stepCounter = layout.stepCounter;

  // The learned parameters: the model's, unless the step function names its
  // own (algorithms that learn more than the model, like Meta-SGD's rates).
  auto stepFunction = module.lookupSymbol<func::FuncOp>(
      stageFunction(step.getValue().str(), d.stages, 0));
  func::FuncOp source = model;
  unsigned count = model.getNumArguments() - 1;
  if (stepFunction && stepFunction.getNumArguments() > 0 &&
      stepFunction.getArgAttrOfType<StringAttr>(0, "meta.param")) {
    source = stepFunction;
    count = 0;
    while (count < stepFunction.getNumArguments() &&
           stepFunction.getArgAttrOfType<StringAttr>(count, "meta.param"))
      ++count;
  }
  for (unsigned i = 0; i < count; ++i) {
    // A parameter one pipeline stage holds has its type in that stage's
    // functions (the others take an empty tensor).
    func::FuncOp holder = source;
    if (source == stepFunction)
      if (auto stage =
              stepFunction.getArgAttrOfType<IntegerAttr>(i, "meta.param_stage"))
        if (auto f = module.lookupSymbol<func::FuncOp>(
                stageFunction(step.getValue().str(), d.stages, stage.getInt())))
          holder = f;
    auto type = cast<RankedTensorType>(holder.getArgumentTypes()[i]);
    std::optional<int32_t> dtype = dtypeOf(type.getElementType());
    if (!dtype || *dtype > METART_F64)
      return source.emitError("parameter type ")
             << type << " is not supported by the runtime (f32 or f64)";
    d.paramNames.push_back(
        source.getArgAttrOfType<StringAttr>(i, "meta.param").getValue().str());
    d.paramShapes.emplace_back(type.getShape().begin(), type.getShape().end());
    StringRef init = "uniform_fan_in";
    if (auto a = source.getArgAttrOfType<StringAttr>(i, "meta.init"))
      init = a.getValue();
    int64_t fanIn = 0;
    if (auto a = source.getArgAttrOfType<IntegerAttr>(i, "meta.fan_in"))
      fanIn = a.getInt();
    int32_t kind = init == "ones"       ? METART_INIT_ONES
                   : init == "zeros"    ? METART_INIT_ZEROS
                   : init == "normal"   ? METART_INIT_NORMAL
                   : init == "constant" ? METART_INIT_CONSTANT
                                        : METART_INIT_UNIFORM_FAN_IN;
    double value = 0;
    if (auto a = source.getArgAttrOfType<FloatAttr>(i, "meta.init_value"))
      value = a.getValueAsDouble();
    d.params.push_back({nullptr, *dtype, static_cast<int32_t>(type.getRank()),
                        nullptr, kind, fanIn, value});
  }
  for (unsigned i = 0; i < count; ++i) {
    d.params[i].name = d.paramNames[i].c_str();
    d.params[i].shape = d.paramShapes[i].data();
    if (!stepFunction || i >= stepFunction.getNumArguments())
      continue;
    // Held by one pipeline stage (meta-keep-stage-params).
    if (Attribute attr = stepFunction.getArgAttr(i, "meta.param_stage")) {
      auto stage = dyn_cast<IntegerAttr>(attr);
      if (!stage || stage.getInt() < 0 || stage.getInt() >= d.stages)
        return stepFunction.emitError("parameter '")
               << d.paramNames[i]
               << "' has a malformed meta.param_stage (a stage of the "
               << d.stages << " expected): " << attr;
      d.params[i].staged = 1;
      d.params[i].stage = static_cast<int32_t>(stage.getInt());
    }
    // Kept in parts between steps (meta-keep-params-split).
    Attribute attr = stepFunction.getArgAttr(i, "meta.param_parts");
    if (!attr)
      continue;
    auto parts = dyn_cast<DenseI64ArrayAttr>(attr);
    if (!parts || parts.size() != 3 || parts[0] < 2 || parts[2] < 0 ||
        parts[2] >= static_cast<int64_t>(d.paramShapes[i].size()))
      return stepFunction.emitError("parameter '")
             << d.paramNames[i]
             << "' has a malformed meta.param_parts (array<i64: parts >= 2, "
                "axes mask, dimension> expected): "
             << attr;
    d.params[i].parts = parts[0];
    d.params[i].part_mask = static_cast<int32_t>(parts[1]);
    d.params[i].part_dim = static_cast<int32_t>(parts[2]);
    // The step's own parameters (Meta-SGD's) have the part's type there:
    // the runtime's shape is the whole's.
    if (source == stepFunction)
      d.paramShapes[i][parts[2]] *= parts[0];
  }

  // Every stage's step has the guard when one has (it looks at the whole,
  // replicated gradient).
  if (stepFunction) {
    stepFunction.walk([&](meta::UpdateGuardOp) { d.guarded = true; });
    stepFunction.walk([&](meta::CarryLoadOp) { d.pipelineFill = 1; });
    for (unsigned i = 0; i < stepFunction.getNumArguments(); ++i)
      if (stepFunction.getArgAttr(i, meta::kLossScaleAttrName))
        d.lossScaling = 1;
    if (auto parts =
            stepFunction->getAttrOfType<IntegerAttr>("meta.zero_parts")) {
      d.zeroParts = parts.getInt();
      if (auto mask =
              stepFunction->getAttrOfType<IntegerAttr>("meta.zero_mask"))
        d.zeroMask = static_cast<int32_t>(mask.getInt());
      // A parameter's state is sharded when the step's first state buffer
      // of it is smaller than the parameter (in the step of the pipeline
      // stage that holds it, where one does).
      for (unsigned i = 0; i < count; ++i) {
        unsigned state = count + i;
        func::FuncOp holder = stepFunction;
        if (d.params[i].staged)
          if (auto f = module.lookupSymbol<func::FuncOp>(stageFunction(
                  step.getValue().str(), d.stages, d.params[i].stage)))
            holder = f;
        bool sharded = d.statePerParam > 0 &&
                       state < holder.getNumArguments() &&
                       cast<RankedTensorType>(holder.getArgumentTypes()[state])
                               .getNumElements() <
                           cast<RankedTensorType>(holder.getArgumentTypes()[i])
                               .getNumElements();
        d.zeroSharded.push_back(sharded);
      }
    }
    if (d.lossScaling && !d.guarded)
      return stepFunction.emitError(
          "scales its loss but has no update guard to adjust the scale by");
    d.flopsPerIteration = planner::estimateFunctionCost(stepFunction).flops;
    stepFunction.walk(
        [&](meta::ServerStepOp server) { describeServers(server, d); });
    if (auto offload =
            stepFunction->getAttrOfType<StringAttr>("meta.offload")) {
      d.offloadOptimizer =
          offload.getValue() == "optimizer" || offload.getValue() == "all";
      d.offloadParams =
          offload.getValue() == "params" || offload.getValue() == "all";
    }
  }

  if (failed(describeTaskMix(train, d)))
    return failure();

  FailureOr<TasksDescription> tasks =
      describeTasks(module.lookupSymbol<meta::TasksOp>(train.getTasks()));
  if (failed(tasks))
    return failure();
  d.tasks = *tasks;

  auto evalNames = train->getAttrOfType<ArrayAttr>("meta.eval");
  size_t e = 0;
  for (auto evaluate : train.getBody().front().getOps<meta::EvaluateOp>()) {
    FailureOr<TasksDescription> evalTasks =
        describeTasks(module.lookupSymbol<meta::TasksOp>(evaluate.getTasks()));
    if (failed(evalTasks))
      return failure();
    for (int64_t steps : evaluate.getSteps()) {
      std::string name =
          cast<FlatSymbolRefAttr>(evalNames[e++]).getValue().str();
      auto function = module.lookupSymbol<func::FuncOp>(
          stageFunction(name, d.stages, d.stages - 1));
      bool accuracy = function && function.getNumResults() == 2;
      double limit = evaluate.getDivergeAbove()
                         ? evaluate.getDivergeAbove()->convertToDouble()
                         : 0.0;
      d.evaluations.push_back({name, steps,
                               static_cast<int64_t>(evaluate.getCount()),
                               *evalTasks, accuracy, limit});
    }
  }
  return d;
}
