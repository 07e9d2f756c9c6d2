//===- Runner.cpp - compile and train a spec in-process -------------------===//

#include "metac/Runner/Runner.h"

#include "RuntimeSymbols.h"

#include "metac/Conversion/Passes.h"
#include "metac/Dialect/Meta/IR/MetaOps.h"

#include "metart/train.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/TargetSelect.h"

#include <memory>

using namespace mlir;
using namespace metac;

namespace {

std::optional<int32_t> dtypeOf(Type element) {
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

/// Deletes runtime handles when the run ends, whatever happened.
struct RuntimeHandles {
  metart_context *context = nullptr;
  SmallVector<metart_tasks *> tasks;
  ~RuntimeHandles() {
    for (metart_tasks *t : tasks)
      metart_tasks_destroy(t);
    if (context)
      metart_context_destroy(context);
  }
};

/// Parameter descriptions from the model's argument attributes.
struct ParamTable {
  std::vector<std::string> names;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<metart_param_spec> specs;
};

FailureOr<ParamTable> describeParams(func::FuncOp model) {
  ParamTable table;
  unsigned count = model.getNumArguments() - 1;
  table.names.resize(count);
  table.shapes.resize(count);
  for (unsigned i = 0; i < count; ++i) {
    auto type = cast<RankedTensorType>(model.getArgumentTypes()[i]);
    std::optional<int32_t> dtype = dtypeOf(type.getElementType());
    if (!dtype)
      return model.emitError("parameter type ")
             << type << " is not supported by the runtime (f32 or f64)";
    table.names[i] =
        model.getArgAttrOfType<StringAttr>(i, "meta.param").getValue().str();
    table.shapes[i].assign(type.getShape().begin(), type.getShape().end());
    StringRef init = "uniform_fan_in";
    if (auto a = model.getArgAttrOfType<StringAttr>(i, "meta.init"))
      init = a.getValue();
    int64_t fanIn = 0;
    if (auto a = model.getArgAttrOfType<IntegerAttr>(i, "meta.fan_in"))
      fanIn = a.getInt();
    int32_t kind = init == "ones"     ? METART_INIT_ONES
                   : init == "zeros"  ? METART_INIT_ZEROS
                   : init == "normal" ? METART_INIT_NORMAL
                                      : METART_INIT_UNIFORM_FAN_IN;
    table.specs.push_back({nullptr, *dtype,
                           static_cast<int32_t>(type.getRank()), nullptr, kind,
                           fanIn});
  }
  for (unsigned i = 0; i < count; ++i) {
    table.specs[i].name = table.names[i].c_str();
    table.specs[i].shape = table.shapes[i].data();
  }
  return table;
}

FailureOr<metart_tasks *> createTasks(meta::TasksOp op, uint64_t seed) {
  metart_tasks *tasks = nullptr;
  metart_status status;
  if (op.getKind() == "sinusoid") {
    auto range = [&](StringRef name, double lo, double hi) {
      std::array<double, 2> r = {lo, hi};
      if (auto a = op.getConfig().getAs<ArrayAttr>(name))
        for (auto [i, v] : llvm::enumerate(a.getAsRange<FloatAttr>()))
          r[i] = v.getValueAsDouble();
      return r;
    };
    metart_sinusoid_config config{};
    auto amplitude = range("amplitude", 0.1, 5.0);
    auto phase = range("phase", 0, 3.14159265358979);
    auto input = range("input", -5, 5);
    std::copy(amplitude.begin(), amplitude.end(), config.amplitude);
    std::copy(phase.begin(), phase.end(), config.phase);
    std::copy(input.begin(), input.end(), config.input);
    config.support = op.getSupportAttr().getInt();
    config.query = op.getQueryAttr().getInt();
    config.dtype =
        *dtypeOf(cast<RankedTensorType>(op.getInputType()).getElementType());
    status = metart_tasks_create_sinusoid(&config, seed, &tasks);
  } else if (op.getKind() == "episodes") {
    std::string path =
        op.getConfig().getAs<StringAttr>("path").getValue().str();
    status = metart_tasks_create_episodes(path.c_str(), &tasks);
  } else {
    return op.emitError("task distribution kind '")
           << op.getKind() << "' is not supported by the runtime yet";
  }
  if (status)
    return op.emitError("cannot create task distribution '")
           << op.getSymName() << "': "
           << (tasks ? metart_tasks_last_error(tasks)
                     : "invalid configuration");
  return tasks;
}

} // namespace

LogicalResult metac::runProgram(ModuleOp module, const RunOptions &options,
                                raw_ostream &os) {
  auto trains = llvm::to_vector(module.getOps<meta::TrainOp>());
  if (trains.size() != 1)
    return emitError(module.getLoc(), "metac run needs exactly one 'train' "
                                      "declaration, the spec has ")
           << trains.size();
  meta::TrainOp train = trains.front();
  auto model = module.lookupSymbol<func::FuncOp>(train.getModel());
  auto stepName = train->getAttrOfType<FlatSymbolRefAttr>("meta.step");
  if (!model || !stepName)
    return train.emitError("the program has no step function (compile it "
                           "to the autodiff phase first)");
  FailureOr<ParamTable> params = describeParams(model);
  if (failed(params))
    return failure();

  // Evaluations: the functions the expand phase made, in the order of the
  // evaluate ops' steps.
  struct Evaluation {
    std::string function;
    int64_t steps, count;
    meta::TasksOp tasks;
  };
  std::vector<Evaluation> evaluations;
  auto evalNames = train->getAttrOfType<ArrayAttr>("meta.eval");
  size_t e = 0;
  for (auto evaluate : train.getBody().front().getOps<meta::EvaluateOp>())
    for (int64_t steps : evaluate.getSteps())
      evaluations.push_back(
          {cast<FlatSymbolRefAttr>(evalNames[e++]).getValue().str(), steps,
           static_cast<int64_t>(evaluate.getCount()),
           module.lookupSymbol<meta::TasksOp>(evaluate.getTasks())});

  // Lower and JIT compile the step and evaluation functions.
  OwningOpRef<ModuleOp> lowered(module.clone());
  PassManager pm(module.getContext());
  pm.addPass(createConvertNNToRuntime());
  if (failed(pm.run(*lowered)))
    return failure();
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  registerBuiltinDialectTranslation(*module.getContext());
  registerLLVMDialectTranslation(*module.getContext());
  ExecutionEngineOptions engineOptions;
  engineOptions.transformer = makeOptimizingTransformer(2, 0, nullptr);
  auto engine = ExecutionEngine::create(*lowered, engineOptions);
  if (!engine)
    return train.emitError("JIT compilation failed: ")
           << llvm::toString(engine.takeError());
  // The runtime is linked into metac: JIT code calls it directly.
  (*engine)->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap map;
    for (const RuntimeSymbol &s : getRuntimeSymbols())
      map[interner(s.name)] = {llvm::orc::ExecutorAddr::fromPtr(s.address),
                               llvm::JITSymbolFlags::Exported};
    return map;
  });
  (*engine)->initialize();
  auto lookup = [&](StringRef name) -> FailureOr<metart_function> {
    auto address = (*engine)->lookup(name);
    if (!address) {
      llvm::consumeError(address.takeError());
      return train.emitError("JIT lost function '") << name << "'";
    }
    return reinterpret_cast<metart_function>(*address);
  };
  FailureOr<metart_function> step = lookup(stepName.getValue());
  if (failed(step))
    return failure();

  // The runtime: a context on the chosen backend, the task distributions.
  RuntimeHandles handles;
  metart_context_options contextOptions{};
  bool cuda = options.backend == "cuda" ||
              (options.backend.empty() &&
               metart_backend_available(METART_BACKEND_CUDA));
  contextOptions.backend = cuda ? METART_BACKEND_CUDA : METART_BACKEND_CPU;
  contextOptions.memory_limit_bytes = options.memoryLimit;
  if (metart_context_create(&contextOptions, &handles.context))
    return train.emitError("cannot create the runtime context: ")
           << metart_context_last_error(nullptr);
  uint64_t seed = options.seed ? *options.seed : train.getSeed();
  auto tasksOp = module.lookupSymbol<meta::TasksOp>(train.getTasks());
  FailureOr<metart_tasks *> trainTasks = createTasks(tasksOp, seed);
  if (failed(trainTasks))
    return failure();
  handles.tasks.push_back(*trainTasks);
  std::vector<metart_eval_spec> evalSpecs;
  for (Evaluation &evaluation : evaluations) {
    FailureOr<metart_function> fn = lookup(evaluation.function);
    // Evaluation tasks come from their own seed stream (the eval split).
    FailureOr<metart_tasks *> tasks = createTasks(evaluation.tasks, seed);
    if (failed(fn) || failed(tasks))
      return failure();
    handles.tasks.push_back(*tasks);
    evalSpecs.push_back({evaluation.steps, *fn, *tasks, evaluation.count});
  }

  meta::OptimizerStateLayout layout =
      meta::getOptimizerStateLayout(train.getOptimizer());
  std::string name = train.getSymName().str();
  std::string lossName = stringifyLossKind(train.getLoss()).str();
  metart_program program{};
  program.name = name.c_str();
  program.step = *step;
  program.params = params->specs.data();
  program.num_params = params->specs.size();
  program.state_per_param = layout.perParam;
  program.step_counter = layout.stepCounter;
  program.tasks = *trainTasks;
  program.meta_batch = train.getMetaBatch();
  program.iterations = train.getIterationsAttr().getInt();
  program.seed = seed;
  program.loss_name = lossName.c_str();
  program.evals = evalSpecs.data();
  program.num_evals = evalSpecs.size();

  auto orNull = [](const std::string &s) {
    return s.empty() ? nullptr : s.c_str();
  };
  metart_train_options trainOptions{};
  trainOptions.iterations = options.iterations ? *options.iterations : -1;
  trainOptions.init_params = orNull(options.initParams);
  trainOptions.save_params = orNull(options.saveParams);
  trainOptions.checkpoint_dir = orNull(options.checkpointDir);
  trainOptions.checkpoint_every = options.checkpointEvery;
  trainOptions.resume_dir = orNull(options.resumeDir);
  trainOptions.metrics_path = orNull(options.metrics);
  trainOptions.progress = options.progress;

  metart_train_result result{};
  char error[1024] = "";
  if (metart_train(handles.context, &program, &trainOptions, &result, error,
                   sizeof(error)))
    return train.emitError("training failed: ") << error;

  os << name << ": " << result.iterations_run << " meta-iterations on "
     << (cuda ? "cuda" : "cpu") << ", final meta-loss "
     << llvm::format("%.6g", result.final_loss) << ", "
     << llvm::format("%.3f", result.seconds_per_iteration * 1e3)
     << " ms/iteration, "
     << llvm::format("%.0f",
                     result.seconds_per_iteration > 0
                         ? program.meta_batch / result.seconds_per_iteration
                         : 0.0)
     << " tasks/s, peak device memory " << result.peak_device_bytes
     << " bytes\n";
  for (int64_t i = 0; i < result.num_evals; ++i) {
    const metart_eval_result &r = result.evals[i];
    os << "evaluation after " << r.steps << " step" << (r.steps == 1 ? "" : "s")
       << ": " << lossName << " " << llvm::format("%.4f", r.mean) << " +- "
       << llvm::format("%.4f", r.ci95) << " (95% CI, " << r.count
       << " tasks)\n";
  }
  return success();
}
