//===- Runner.cpp - compile and train a spec in-process -------------------===//

#include "metac/Runner/Runner.h"

#include "ProgramDescription.h"
#include "RuntimeSymbols.h"

#include "metac/Conversion/Passes.h"
#include "metac/Dialect/Meta/IR/MetaOps.h"
#include "metac/Pipelines/Pipelines.h"

#include "metart/comm.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

using namespace mlir;
using namespace metac;

namespace {

bool isKernel(LLVM::LLVMFuncOp function) {
  return function.getName().starts_with(kFusedKernelPrefix) &&
         !function.getName().ends_with(kFusedKernelThunkSuffix) &&
         !function.isExternal();
}

/// A target machine for this host, generating code at `level`.
FailureOr<std::unique_ptr<llvm::TargetMachine>>
hostTargetMachine(Location loc, llvm::CodeGenOptLevel level) {
  auto host = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!host)
    return emitError(loc, "JIT compilation failed: ")
           << llvm::toString(host.takeError());
  host->setCodeGenOptLevel(level);
  auto machine = host->createTargetMachine();
  if (!machine)
    return emitError(loc, "JIT compilation failed: ")
           << llvm::toString(machine.takeError());
  return std::move(*machine);
}

/// The optimisation of the generated kernels: LLVM's -O2 pipeline with the
/// host's target machine (the loop vectoriser's cost model needs it:
/// without one LLVM assumes no vector registers and ConvNet MAML's kernels
/// took 105 instead of 31 ms per meta-iteration), without unrolling and
/// the SLP vectoriser. The kernels' loops have constant trip counts, which
/// -O2 unrolls fully into straight lines that the SLP vectoriser then
/// searches: sinusoid's kernels compiled in 1.8 s instead of 0.2, and ran
/// no faster.
std::function<llvm::Error(llvm::Module *)>
kernelOptimizer(llvm::TargetMachine *machine) {
  return [machine](llvm::Module *module) -> llvm::Error {
    llvm::LoopAnalysisManager loops;
    llvm::FunctionAnalysisManager functions;
    llvm::CGSCCAnalysisManager sccs;
    llvm::ModuleAnalysisManager modules;
    llvm::PipelineTuningOptions tuning;
    tuning.LoopUnrolling = false;
    tuning.SLPVectorization = false;
    tuning.LoopVectorization = true;
    // As clang under -fno-unroll-loops (Executable.cpp), so that the JIT's
    // kernels and an executable's sum in the same order, bit for bit.
    tuning.LoopInterleaving = false;
    llvm::PassBuilder builder(machine, tuning);
    builder.registerModuleAnalyses(modules);
    builder.registerCGSCCAnalyses(sccs);
    builder.registerFunctionAnalyses(functions);
    builder.registerLoopAnalyses(loops);
    builder.crossRegisterProxies(loops, functions, sccs, modules);
    builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2)
        .run(*module, modules);
    return llvm::Error::success();
  };
}

/// Moves the generated kernels of `lowered` into a module of their own
/// (with the declarations they call: malloc, free, libm), leaving
/// declarations in their place; null when there are none.
OwningOpRef<ModuleOp> splitKernels(ModuleOp lowered) {
  SmallVector<LLVM::LLVMFuncOp> kernels;
  for (auto function : lowered.getOps<LLVM::LLVMFuncOp>())
    if (isKernel(function))
      kernels.push_back(function);
  if (kernels.empty())
    return nullptr;
  OpBuilder b(lowered.getContext());
  OwningOpRef<ModuleOp> own = ModuleOp::create(lowered.getLoc());
  b.setInsertionPointToEnd(own->getBody());
  llvm::StringSet<> declared;
  for (LLVM::LLVMFuncOp kernel : kernels) {
    kernel.walk([&](LLVM::CallOp call) {
      std::optional<StringRef> callee = call.getCallee();
      if (!callee || !declared.insert(*callee).second)
        return;
      if (auto declaration = lowered.lookupSymbol<LLVM::LLVMFuncOp>(*callee))
        b.clone(*declaration);
    });
    b.clone(*kernel);
    // The step module keeps a declaration to call.
    kernel.getBody().dropAllReferences();
    kernel.getBody().getBlocks().clear();
    kernel.setLinkage(LLVM::Linkage::External);
  }
  return own;
}

} // namespace

LogicalResult metac::runProgram(ModuleOp module, const RunOptions &options,
                                raw_ostream &os) {
  FailureOr<ProgramDescription> program = describeProgram(module);
  if (failed(program))
    return failure();
  Location loc = (*module.getOps<meta::TrainOp>().begin()).getLoc();

  // Lower and JIT compile the step and evaluation functions.
  OwningOpRef<ModuleOp> lowered(module.clone());
  PassManager pm(module.getContext());
  addLoweringPasses(pm);
  if (failed(pm.run(*lowered)))
    return failure();
  // A rank of a pipeline runs its own stage's functions only (the runtime
  // picks the stage of its rank, Run.cpp): compile just those. JIT time
  // grows with the module, and each of a job's ranks compiles on the same
  // cores.
  int64_t stages = program->stages;
  int64_t ownStage = -1;
  if (stages > 1 && metart_world_init() == METART_OK &&
      metart_world_size() > 1) {
    int64_t inner = 1; // the ranks of the axes after the pipeline's
    for (int axis = METART_AXIS_PIPELINE + 1; axis < METART_NUM_AXES; ++axis)
      inner *= std::max<int64_t>(program->mesh[axis], 1);
    ownStage = metart_world_rank() / inner % stages;
    SymbolTable symbols(*lowered);
    std::vector<std::string> functions{program->stepFunction};
    for (const EvaluationDescription &e : program->evaluations)
      functions.push_back(e.function);
    for (const std::string &function : functions)
      for (int64_t stage = 0; stage < stages; ++stage)
        if (stage != ownStage)
          if (Operation *op =
                  symbols.lookup(stageFunction(function, stages, stage)))
            op->erase();
  }
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  registerBuiltinDialectTranslation(*module.getContext());
  registerLLVMDialectTranslation(*module.getContext());
  // The options hold a reference to the transformer: keep it alive.
  std::function<llvm::Error(llvm::Module *)> optimize =
      makeOptimizingTransformer(2, 0, nullptr);
  ExecutionEngineOptions engineOptions;
  engineOptions.transformer = optimize;
  // The step is a long straight line of runtime calls: instruction
  // selection and register allocation at -O0 (fast allocation). Greedy
  // allocation is superlinear in it, and took 9 of every 10 s of a
  // 22M-parameter BERT's 10-step evaluation; the calls run the same.
  auto machine = hostTargetMachine(loc, llvm::CodeGenOptLevel::None);
  if (failed(machine))
    return failure();
  // The generated kernels are loops: their own module, compiled with full
  // instruction selection and register allocation.
  OwningOpRef<ModuleOp> kernelModule = splitKernels(*lowered);
  // Declared before the engine that may use them: destroyed after it.
  std::unique_ptr<llvm::TargetMachine> kernelMachine;
  std::function<llvm::Error(llvm::Module *)> optimizeKernels;
  std::unique_ptr<ExecutionEngine> kernelEngine;
  std::vector<std::pair<std::string, void *>> kernelAddresses;
  if (kernelModule) {
    auto target = hostTargetMachine(loc, llvm::CodeGenOptLevel::Default);
    auto costs = hostTargetMachine(loc, llvm::CodeGenOptLevel::Default);
    if (failed(target) || failed(costs))
      return failure();
    kernelMachine = std::move(*costs);
    optimizeKernels = kernelOptimizer(kernelMachine.get());
    ExecutionEngineOptions kernelOptions;
    kernelOptions.transformer = optimizeKernels;
    auto created = ExecutionEngine::create(*kernelModule, kernelOptions,
                                           std::move(*target));
    if (!created)
      return emitError(loc, "JIT compilation of the kernels failed: ")
             << llvm::toString(created.takeError());
    kernelEngine = std::move(*created);
    for (auto kernel : kernelModule->getOps<LLVM::LLVMFuncOp>()) {
      if (kernel.isExternal())
        continue;
      auto address = kernelEngine->lookup(kernel.getName());
      if (!address)
        return emitError(loc, "JIT lost kernel '")
               << kernel.getName()
               << "': " << llvm::toString(address.takeError());
      kernelAddresses.push_back(
          {kernel.getName().str(), reinterpret_cast<void *>(*address)});
    }
  }
  auto engine =
      ExecutionEngine::create(*lowered, engineOptions, std::move(*machine));
  if (!engine)
    return emitError(loc, "JIT compilation failed: ")
           << llvm::toString(engine.takeError());
  // The runtime is linked into metac: JIT code calls it directly, and the
  // kernels where the kernel engine put them.
  (*engine)->registerSymbols([&](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap map;
    for (const RuntimeSymbol &s : getRuntimeSymbols())
      map[interner(s.name)] = {llvm::orc::ExecutorAddr::fromPtr(s.address),
                               llvm::JITSymbolFlags::Exported};
    for (const auto &[name, address] : kernelAddresses)
      map[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                             llvm::JITSymbolFlags::Exported};
    return map;
  });
  (*engine)->initialize();
  auto lookup = [&](StringRef name) -> FailureOr<metart_function> {
    auto address = (*engine)->lookup(name);
    if (!address) {
      llvm::consumeError(address.takeError());
      return emitError(loc, "JIT lost function '") << name << "'";
    }
    return reinterpret_cast<metart_function>(*address);
  };

  // One function per pipeline stage (just one without a pipeline; null
  // for the stages this rank does not run).
  size_t runStage = ownStage >= 0 ? size_t(ownStage) : 0;
  auto lookupStages = [&](const std::string &function)
      -> FailureOr<std::vector<metart_function>> {
    std::vector<metart_function> functions(stages, nullptr);
    for (int64_t stage = 0; stage < stages; ++stage) {
      if (ownStage >= 0 && stage != ownStage)
        continue;
      FailureOr<metart_function> fn =
          lookup(stageFunction(function, stages, stage));
      if (failed(fn))
        return failure();
      functions[stage] = *fn;
    }
    return functions;
  };
  metart_program_desc desc{};
  desc.name = program->name.c_str();
  FailureOr<std::vector<metart_function>> steps =
      lookupStages(program->stepFunction);
  if (failed(steps))
    return failure();
  desc.step = (*steps)[runStage];
  if (stages > 1)
    desc.step_stages = steps->data();
  // A mixed meta-batch: the step of each group of task ranks.
  std::vector<metart_function> stepGroups;
  for (const std::string &group : program->stepGroups) {
    FailureOr<metart_function> fn = lookup(group);
    if (failed(fn))
      return failure();
    stepGroups.push_back(*fn);
  }
  desc.num_task_classes = program->classTasks.size();
  desc.class_tasks = program->classTasks.data();
  desc.class_support = program->classSupport.data();
  desc.class_query = program->classQuery.data();
  desc.step_groups = stepGroups.data();
  desc.num_step_groups = stepGroups.size();
  desc.task_assignment = program->taskAssignment.data();
  desc.params = program->params.data();
  desc.num_params = program->params.size();
  desc.state_per_param = program->statePerParam;
  desc.step_counter = program->stepCounter;
  desc.tasks = program->tasks.spec;
  desc.tasks.path = program->tasks.path.c_str();
  desc.meta_batch = program->metaBatch;
  desc.iterations = program->iterations;
  desc.seed = program->seed;
  static_assert(std::tuple_size_v<decltype(program->mesh)> == METART_NUM_AXES,
                "the compiler's mesh and the runtime's have the same axes");
  for (int axis = 0; axis < METART_NUM_AXES; ++axis)
    desc.mesh[axis] = program->mesh[axis];
  desc.loss_name = program->lossName.c_str();
  desc.checkpoint_every = program->checkpointEvery;
  desc.guarded = program->guarded;
  desc.flops_per_iteration = program->flopsPerIteration;
  desc.on_nonfinite = program->onNonfinite;
  desc.loss_scaling = program->lossScaling;
  desc.zero_parts = program->zeroParts;
  desc.zero_mask = program->zeroMask;
  desc.servers = program->servers;
  desc.offload_optimizer = program->offloadOptimizer;
  desc.offload_params = program->offloadParams;
  desc.pipeline_fill = program->pipelineFill;
  desc.zero_sharded =
      program->zeroSharded.empty() ? nullptr : program->zeroSharded.data();
  desc.checkpoint_dir =
      program->checkpointDir.empty() ? nullptr : program->checkpointDir.c_str();
  std::vector<metart_eval_desc> evals;
  std::vector<std::vector<metart_function>> evalStages;
  evalStages.reserve(program->evaluations.size());
  for (const EvaluationDescription &e : program->evaluations) {
    FailureOr<std::vector<metart_function>> fns = lookupStages(e.function);
    if (failed(fns))
      return failure();
    evalStages.push_back(std::move(*fns));
    metart_eval_desc eval{e.steps,       evalStages.back()[runStage],
                          e.tasks.spec,  e.count,
                          nullptr,       e.accuracy,
                          e.divergeAbove};
    if (stages > 1)
      eval.stage_functions = evalStages.back().data();
    eval.tasks.path = e.tasks.path.c_str();
    evals.push_back(eval);
  }
  desc.evals = evals.data();
  desc.num_evals = evals.size();

  auto orNull = [](const std::string &s) {
    return s.empty() ? nullptr : s.c_str();
  };
  metart_run_options run{};
  run.train.iterations = options.iterations ? *options.iterations : -1;
  run.train.init_params = orNull(options.initParams);
  run.train.init_params_partial = options.initParamsPartial;
  run.train.save_params = orNull(options.saveParams);
  run.train.checkpoint_dir = orNull(options.checkpointDir);
  run.train.checkpoint_every = options.checkpointEvery;
  run.train.resume_dir = orNull(options.resumeDir);
  run.train.metrics_path = orNull(options.metrics);
  run.train.progress = options.progress;
  run.train.profile = options.profile ? 1 : 0;
  run.train.trace_path = orNull(options.trace);
  run.train.no_graph = options.noCudaGraph ? 1 : 0;
  run.train.on_nonfinite = options.onNonfinite;
  run.train.max_consecutive_skips = options.maxConsecutiveSkips;
  run.train.diverge_above = options.divergeAbove;
  run.train.slow_rank = options.slowRank;
  run.train.slow_factor = options.slowFactor;
  run.train.slow_period = options.slowPeriod;
  run.train.comm_timeout_seconds = options.commTimeout;
  run.train.checkpoint_format = options.checkpointFormat;
  run.train.hang_rank = options.hangRank;
  run.train.hang_iteration = options.hangIteration;
  run.seed = options.seed ? static_cast<int64_t>(*options.seed) : -1;
  run.backend = orNull(options.backend);
  run.memory_limit_bytes = options.memoryLimit;

  os.flush();
  char error[1024] = "";
  if (metart_status status =
          metart_run(&desc, &run, stdout, error, sizeof(error))) {
    // Preempted: every rank wrote the checkpoint and stops here; the exit
    // code says which signal, as a process killed by it would (the world
    // is finalised at exit).
    if (status == METART_PREEMPTED) {
      if (metart_world_rank() == 0)
        llvm::errs() << "metac: " << error << "\n";
      std::fflush(stdout);
      llvm::errs().flush();
      std::exit(128 + metart_preemption_signal());
    }
    if (metart_world_size() <= 1)
      return emitError(loc, "training failed: ") << error;
    // Every rank stops at a non-finite meta-iteration by itself.
    if (status == METART_ERROR_NONFINITE)
      return emitError(loc, "training failed on rank ")
             << metart_world_rank() << ": " << error;
    emitError(loc, "training failed on rank ")
        << metart_world_rank() << ": " << error;
    // The other ranks may wait for this one in a collective: stop the job.
    std::fflush(stdout);
    std::fflush(stderr);
    metart_world_abort(1);
    return failure();
  }
  return success();
}
