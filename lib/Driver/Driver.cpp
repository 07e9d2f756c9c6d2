//===- Driver.cpp - the metac compiler driver -----------------------------===//

#include "metac/Driver/Driver.h"

#include "AutoPlan.h"
#include "RankHeader.h"
#include "Remat.h"

#include "metac/Conversion/Passes.h"
#include "metac/Dialect/Meta/IR/Compression.h"
#include "metac/Dialect/Meta/IR/MetaOps.h"
#include "metac/Dialect/Meta/Transforms/TaskAssignment.h"
#include "metac/Frontend/MLIRGen.h"
#include "metac/Frontend/Parser.h"
#include "metac/Frontend/Resolve.h"
#include "metac/InitAll.h"
#include "metac/Partition/Mesh.h"
#include "metac/Pipelines/Pipelines.h"
#include "metac/Runner/Runner.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/ToolUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

#include <array>
#include <cmath>
#include <cstdlib>
#include <unistd.h>

using namespace mlir;
using namespace metac;

namespace cl = llvm::cl;

namespace {

struct Options {
  cl::OptionCategory category{"metac options"};
  cl::opt<std::string> input{cl::Positional, cl::desc("<spec.meta | ->"),
                             cl::init("-"), cl::cat(category)};
  cl::opt<std::string> output{"o", cl::desc("Output file (default: stdout)"),
                              cl::value_desc("file"), cl::init("-"),
                              cl::cat(category)};
  cl::opt<std::string> compileTo{
      "compile-to",
      cl::desc("Stop after this phase and print its output: ast, meta, "
               "expand, batched, autodiff, planned, partitioned, optimized, "
               "fused, lowered, llvm, exe"),
      cl::value_desc("phase"), cl::init(""), cl::cat(category)};
  cl::opt<std::string> mesh{
      "mesh",
      cl::desc("Device mesh overriding the spec's plan, e.g. task=4,data=2 "
               "(axes task, data, tensor, pipeline), or auto (the planner "
               "chooses, with --cluster)"),
      cl::value_desc("axis=size,..."), cl::init(""), cl::cat(category)};
  cl::opt<std::string> cluster{
      "cluster",
      cl::desc("Cluster description (YAML) for automatic planning "
               "(parallel { auto }, --mesh=auto, metac plan)"),
      cl::value_desc("file"), cl::init(""), cl::cat(category)};
  cl::opt<int64_t> devices{
      "devices",
      cl::desc("Plan for this many devices of the cluster (default: all)"),
      cl::init(0), cl::cat(category)};
  cl::opt<double> memoryMargin{
      "memory-margin",
      cl::desc("Fraction of a device's memory the planner keeps free "
               "(default 0.1)"),
      cl::init(0.1), cl::cat(category)};
  cl::opt<std::string> format{"format",
                              cl::desc("metac plan: table (default) or json"),
                              cl::init("table"), cl::cat(category)};
  cl::opt<int64_t> rank{
      "rank",
      cl::desc("With --compile-to=partitioned or later: print the program "
               "of this rank"),
      cl::init(-1), cl::cat(category)};
  cl::opt<double> bucketMB{
      "bucket-mb",
      cl::desc("Merge all-reduces into buckets of at most this many MiB in "
               "the optimized phase (0: off)"),
      cl::init(25), cl::cat(category)};
  cl::opt<std::string> allReduce{
      "allreduce",
      cl::desc("How all-reduces move their data (optimized phase): library "
               "(MPI's or NCCL's choice), ring, tree, or hierarchical "
               "(within nodes, across them, within them); default: the "
               "spec's parallel { allreduce = ... }, else library"),
      cl::value_desc("algorithm"), cl::init(""), cl::cat(category)};
  cl::opt<std::string> compress{
      "compress",
      cl::desc("Compress gradient all-reduces (task and data axes): none; "
               "bf16 or fp16 (a 16-bit wire, sums in f32); topk:RATIO (each "
               "rank sends that fraction of its outer gradient's entries) "
               "or powersgd:RANK (a rank-RANK factorization), both with "
               "error feedback; default: the spec's parallel { compress = "
               "... }, else none"),
      cl::value_desc("type"), cl::init(""), cl::cat(category)};
  cl::opt<std::string> overlap{
      "overlap",
      cl::desc("Start gradient all-reduces as soon as their gradients are "
               "ready and run them while the backward pass goes on "
               "(--overlap or --overlap=true; false turns the spec's "
               "parallel { overlap = true } off)"),
      cl::value_desc("bool"),
      cl::ValueOptional,
      cl::init(""),
      cl::cat(category)};
  cl::opt<std::string> staleness{
      "staleness",
      cl::desc("Let ranks run up to this many meta-iterations ahead of the "
               "slowest on the task axis: each applies the outer gradients "
               "summed that many iterations earlier (0: synchronous; inf: "
               "asynchronous, with parameter servers; default: the spec's "
               "parallel { staleness = ... }, else 0)"),
      cl::value_desc("S|inf"), cl::init(""), cl::cat(category)};
  cl::opt<std::string> offload{
      "offload",
      cl::desc("Keep state in host memory between its uses: optimizer (the "
               "outer optimizer's moments), params (the parameters, copied "
               "to the device around each op that reads them), all or none"),
      cl::value_desc("none|optimizer|params|all"), cl::init(""),
      cl::cat(category)};
  cl::opt<std::string> balance{
      "balance",
      cl::desc("How a meta-batch mixed from task classes (the spec's mix { "
               "... }) splits over the task axis: cost (each rank about the "
               "same estimated work) or count (the same number of tasks); "
               "default: the spec's parallel { balance = ... }, else cost"),
      cl::value_desc("cost|count"), cl::init(""), cl::cat(category)};
  cl::opt<int64_t> parameterServers{
      "parameter-servers",
      cl::desc("Ranks beyond the mesh that hold the meta-parameters and the "
               "outer optimizer's state: the mesh's ranks push their "
               "meta-gradients to them and pull the parameters (0: "
               "all-reduce; default: the spec's parallel { "
               "parameter_servers = ... }, else 0)"),
      cl::init(-1), cl::cat(category)};
  cl::opt<int64_t> accumulate{
      "accumulate",
      cl::desc("Accumulate meta-gradients over this many chunks of the "
               "meta-batch before one reduction (each iteration then draws "
               "this many times meta_batch tasks)"),
      cl::init(1), cl::cat(category)};
  cl::opt<int64_t> zero{
      "zero",
      cl::desc("1: shard the outer optimizer's state over the task and data "
               "axes (ZeRO-1: each rank updates and keeps the state of 1/Z "
               "of every parameter); 2: and reduce-scatter the gradients "
               "(ZeRO-2); 0: replicate both (default)"),
      cl::init(0), cl::cat(category)};
  cl::opt<std::string> splitParams{
      "split-params",
      cl::desc("Keep split parameters split between steps (experts, "
               "tensor-parallel heads and columns, a pipeline stage's "
               "layers): each rank holds and updates its part and its "
               "optimizer state (on, the default); off: every rank holds "
               "them whole"),
      cl::value_desc("on|off"), cl::init("on"), cl::cat(category)};
  cl::opt<int64_t> microBatches{
      "micro-batches",
      cl::desc("Micro-batches (groups of tasks) a pipeline streams per "
               "meta-iteration (default: the plan's, else 2 x stages)"),
      cl::init(0), cl::cat(category)};
  cl::opt<std::string> schedule{
      "schedule",
      cl::desc("Pipeline schedule: gpipe, 1f1b or pipedream (default: the "
               "plan's)"),
      cl::init(""), cl::cat(category)};
  cl::opt<std::string> remat{
      "remat",
      cl::desc("Recompute the meta-gradient's forward in its reverse sweep "
               "instead of keeping it: off (default), sqrt (about the square "
               "root of the inner steps as segments), steps (every inner "
               "step), or a number of segments"),
      cl::init(""), cl::cat(category)};
  cl::opt<std::string> precision{
      "precision",
      cl::desc("The type models compute in: f32, bf16 or fp16 (f32 master "
               "weights, losses and updates); overrides the spec's precision"),
      cl::init(""), cl::cat(category)};
  cl::opt<std::string> fusion{
      "fusion",
      cl::desc("Group elementwise, broadcast and sum chains into generated "
               "kernels (on, the default) or call the runtime op by op "
               "(off)"),
      cl::value_desc("on|off"), cl::init("on"), cl::cat(category)};
  cl::opt<std::string> ringAttention{
      "ring-attention",
      cl::desc("Fused attention over positions split by the sequence axis: "
               "ring attention, keys and values passed around the axis (on, "
               "the default; CPU backend), or gathered on every rank (off)"),
      cl::value_desc("on|off"), cl::init("on"), cl::cat(category)};
  cl::opt<std::string> deviceKernels{
      "device-kernels",
      cl::desc("Also compile the fused groups into CUDA kernels (PTX through "
               "NVVM), which the CUDA backend launches instead of calling "
               "its kernels op by op (on), or not (off, the default)"),
      cl::value_desc("on|off"), cl::init("off"), cl::cat(category)};
  cl::opt<std::string> lossScale{
      "loss-scale",
      cl::desc("Dynamic loss scaling of the meta-gradient: dynamic or off; "
               "overrides the spec's loss_scale (default: dynamic with "
               "fp16)"),
      cl::init(""), cl::cat(category)};
  cl::opt<std::string> memoryBudget{
      "memory-budget",
      cl::desc("Bytes (K, M, G suffixes) one device may hold: recompute as "
               "little of the meta-gradient's forward as fits (--remat "
               "chosen)"),
      cl::init(""), cl::cat(category)};
  cl::list<std::string> settings{
      "set",
      cl::desc("Replace a constant or a field of the spec before compiling: "
               "NAME=VALUE or DECL.FIELD[.FIELD]=VALUE, VALUE as in a spec "
               "(e.g. maml_sine.meta_batch=50, width=160); repeatable"),
      cl::value_desc("path=value"), cl::cat(category)};
  cl::opt<bool> verifyDiagnostics{
      "verify-diagnostics",
      cl::desc("Check the diagnostics against expected-* comments in the "
               "spec (for tests)"),
      cl::init(false), cl::cat(category)};

  // `metac run SPEC`: compile, then train and evaluate.
  cl::OptionCategory runCategory{"metac run options"};
  cl::opt<int64_t> iterations{"iterations",
                              cl::desc("Meta-iterations (default: the spec's)"),
                              cl::init(-1), cl::cat(runCategory)};
  cl::opt<int64_t> seed{"seed", cl::desc("Random seed (default: the spec's)"),
                        cl::init(-1), cl::cat(runCategory)};
  cl::opt<std::string> initParams{
      "init-params", cl::desc("Start from these parameters (safetensors)"),
      cl::value_desc("file"), cl::cat(runCategory)};
  cl::opt<bool> initParamsPartial{
      "init-params-partial",
      cl::desc("--init-params may lack some parameters (a pretrained body "
               "without the task's head): they keep their initialisation"),
      cl::cat(runCategory)};
  cl::opt<std::string> saveParams{
      "save-params", cl::desc("Write the trained parameters (safetensors)"),
      cl::value_desc("file"), cl::cat(runCategory)};
  cl::opt<int64_t> checkpointEvery{
      "checkpoint-every", cl::desc("Checkpoint every N meta-iterations"),
      cl::init(0), cl::cat(runCategory)};
  cl::opt<std::string> checkpointDir{
      "checkpoint-dir", cl::desc("Directory of the checkpoint"),
      cl::value_desc("dir"), cl::cat(runCategory)};
  cl::opt<std::string> checkpointFormat{
      "checkpoint-format",
      cl::desc("gathered (one file of whole tensors, written by rank 0) or "
               "sharded (every rank writes its pieces, in parallel, and an "
               "index; resumable on any mesh); default: sharded when ZeRO "
               "shards the optimizer state"),
      cl::value_desc("gathered|sharded"), cl::init(""), cl::cat(runCategory)};
  cl::opt<std::string> resume{"resume",
                              cl::desc("Resume from this checkpoint directory"),
                              cl::value_desc("dir"), cl::cat(runCategory)};
  cl::opt<std::string> metrics{
      "metrics", cl::desc("Write per-iteration metrics (JSON lines)"),
      cl::value_desc("file"), cl::cat(runCategory)};
  cl::opt<std::string> backend{
      "backend", cl::desc("cpu or cuda (default: cuda when a GPU is present)"),
      cl::cat(runCategory)};
  cl::opt<uint64_t> memoryLimit{
      "memory-limit", cl::desc("Cap on the runtime's device memory, in bytes"),
      cl::init(0), cl::cat(runCategory)};
  cl::opt<bool> profile{
      "profile",
      cl::desc("Time each runtime call (kernels, copies, collectives) of "
               "the meta-iterations and print the totals per function"),
      cl::init(false), cl::cat(runCategory)};
  cl::opt<std::string> trace{
      "trace",
      cl::desc("Write a timeline of the meta-iterations' runtime calls "
               "(kernels, copies, collectives) in the Chrome trace format, "
               "which the Perfetto UI opens; with several ranks, one file "
               "each (.rank<r> before .json)"),
      cl::value_desc("file"), cl::cat(runCategory)};
  cl::opt<bool> noCudaGraph{
      "no-cuda-graph",
      cl::desc("Run each meta-iteration op by op (default on cuda: replay "
               "one recorded as a CUDA graph)"),
      cl::init(false), cl::cat(runCategory)};
  cl::opt<bool> quiet{"quiet", cl::desc("No progress output"), cl::init(false),
                      cl::cat(runCategory)};
  cl::opt<std::string> onNonfinite{
      "on-nonfinite",
      cl::desc("A meta-iteration whose meta-loss or outer gradient is not "
               "finite: stop (default), skip its update, or ignore (no "
               "check compiled); overrides the spec's on_nonfinite"),
      cl::value_desc("stop|skip|ignore"), cl::init(""), cl::cat(category)};
  cl::opt<int64_t> maxConsecutiveSkips{
      "max-consecutive-skips",
      cl::desc("Under --on-nonfinite=skip, stop after this many skipped "
               "meta-iterations in a row (default 20)"),
      cl::init(0), cl::cat(runCategory)};
  cl::opt<std::string> slowRank{
      "slow-rank",
      cl::desc("A straggler for tests and benchmarks: world rank R takes "
               "FACTOR (> 1) times as long per meta-iteration; with PERIOD "
               "the straggler moves to the next rank every PERIOD "
               "meta-iterations"),
      cl::value_desc("R:FACTOR[:PERIOD]"), cl::init(""), cl::cat(runCategory)};
  cl::opt<double> commTimeout{
      "comm-timeout",
      cl::desc("Seconds a blocking collective may make no progress before "
               "the run ends with an error naming the rank, the collective "
               "and its axes (default: METART_COMM_TIMEOUT, else 50)"),
      cl::init(0), cl::cat(runCategory)};
  cl::opt<std::string> hangRank{
      "hang-rank",
      cl::desc("A hang for tests: world rank R stops for good before "
               "meta-iteration ITERATION"),
      cl::value_desc("R:ITERATION"), cl::init(""), cl::cat(runCategory)};
  cl::opt<double> divergeAbove{
      "diverge-above",
      cl::desc("An evaluation task whose query loss is above this has "
               "diverged (default: the spec's diverge_above, else only "
               "non-finite losses)"),
      cl::init(0), cl::cat(runCategory)};
  cl::opt<int64_t> np{"np",
                      cl::desc("Launch this many processes with mpirun on "
                               "this machine (default: as launched)"),
                      cl::init(0), cl::cat(runCategory)};
};

/// Parses and lowers the spec up to `phase`, printing the result to `os`.
LogicalResult compile(llvm::SourceMgr &sourceMgr, MLIRContext &context,
                      Phase phase, raw_ostream &os, const RunOptions *run,
                      StringRef executable, const PipelineOptions &pipeline,
                      int64_t rank, StringRef onNonfinite,
                      driver::PlanRequest planRequest,
                      std::optional<bool> planJson, uint64_t memoryBudget,
                      bool userRemat, ArrayRef<std::string> settings) {
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  llvm::StringRef filename = buffer->getBufferIdentifier();
  frontend::SourceDiagnostics diags(&context, filename);
  frontend::Parser parser(buffer->getBuffer(), diags);
  frontend::Module ast = parser.parseModule();
  if (diags.getErrorCount() ||
      failed(frontend::applyOverrides(ast, settings, &context)) ||
      failed(frontend::resolveConstants(ast, diags)))
    return failure();
  if (phase == Phase::AST) {
    frontend::dumpAST(ast, os);
    return success();
  }
  llvm::SmallString<256> directory(filename == "<stdin>" ? "." : filename);
  llvm::sys::path::remove_filename(directory);
  if (directory.empty())
    directory = ".";
  OwningOpRef<ModuleOp> module = frontend::generateMLIR(ast, diags, directory);
  if (!module)
    return failure();
  // Read by metac-generate-kernels, wherever the lowering runs (the JIT,
  // executables, --compile-to).
  if (pipeline.deviceKernels)
    (*module)->setAttr(kGenerateDeviceKernelsAttr, UnitAttr::get(&context));
  // --on-nonfinite replaces the spec's policy before anything is compiled
  // from it (`ignore` compiles no guard).
  if (!onNonfinite.empty())
    module->walk(
        [&](meta::TrainOp train) { train.setOnNonfinite(onNonfinite); });
  // --memory-budget: the least recomputation that fits.
  PipelineOptions compiled = pipeline;
  if (memoryBudget > 0 && phase >= Phase::Autodiff) {
    llvm::Expected<driver::RematChoice> choice =
        driver::chooseRemat(*module, pipeline, memoryBudget);
    if (!choice)
      return emitError(module->getLoc(), llvm::toString(choice.takeError()));
    compiled.remat = choice->segments;
    // Said once, by the first rank, before the run's own lines.
    const char *worldRank = std::getenv("OMPI_COMM_WORLD_RANK");
    if (run && run->progress > 0 &&
        (!worldRank || std::string(worldRank) == "0"))
      llvm::outs() << llvm::formatv(
          "memory budget {0} bytes: {1}, peak {2} bytes (without "
          "recomputation {3})\n",
          memoryBudget, driver::describeRemat(choice->segments),
          choice->peakBytes, choice->keptPeakBytes);
  }
  // Running and executables start from the fused phase's IR, which
  // still describes the program; they lower a copy themselves.
  bool whole = run || phase == Phase::Exe;
  Phase target = whole ? Phase::Fused : phase;
  planRequest.specDirectory = std::string(directory);
  // Automatic planning (and `metac plan`) works on the autodiff phase: the
  // compilation stops there, plans, and goes on with the chosen plans.
  bool automatic = planJson || (target >= Phase::Planned &&
                                driver::needsPlanner(*module, planRequest));
  Phase first = automatic ? Phase::Autodiff : target;
  // Where no plan fits, the planner tries recomputing the meta-gradient's
  // forward (--remat=sqrt, then every step) unless --remat or
  // --memory-budget decided it.
  OwningOpRef<ModuleOp> metaPhase;
  if (automatic && !planJson && memoryBudget == 0 && !userRemat)
    metaPhase = cast<ModuleOp>((*module)->clone());
  PassManager pm(&context);
  if (failed(applyPassManagerCLOptions(pm)) ||
      failed(buildPipelineTo(pm, first, compiled)) || failed(pm.run(*module)))
    return failure();
  if (planJson)
    return driver::printPlans(*module, planRequest, *planJson, os);
  if (automatic) {
    if (metaPhase && !driver::plansFit(*module, planRequest))
      for (int64_t segments : {int64_t(-1), driver::kRematEveryStep}) {
        PipelineOptions recomputing = compiled;
        recomputing.remat = segments;
        llvm::Expected<OwningOpRef<ModuleOp>> variant =
            driver::compileToAutodiff(*metaPhase, recomputing);
        if (!variant) {
          llvm::consumeError(variant.takeError());
          break;
        }
        if (!driver::plansFit(**variant, planRequest))
          continue;
        module = std::move(*variant);
        compiled.remat = segments;
        break;
      }
    planRequest.remat = compiled.remat;
    if (failed(driver::applyAutomaticPlans(*module, planRequest)))
      return failure();
    // A mixed meta-batch is expanded again for the chosen task axis.
    Phase from = Phase::Autodiff;
    for (auto train : llvm::to_vector(module->getOps<meta::TrainOp>()))
      if (train->hasAttr("meta.task_mix")) {
        meta::dropExpansion(*module, train.getSymName());
        from = Phase::Meta;
      }
    PassManager rest(&context);
    PipelineOptions chosen = compiled;
    chosen.mesh.clear();
    if (failed(applyPassManagerCLOptions(rest)) ||
        failed(buildPipelineBetween(rest, from, target, chosen)) ||
        failed(rest.run(*module)))
      return failure();
  }
  if (rank >= 0 && failed(driver::printRankHeader(*module, phase, rank, os)))
    return failure();
  if (run)
    return runProgram(*module, *run, os);
  if (phase == Phase::Exe)
    return emitExecutable(*module, executable);
  if (phase == Phase::LLVM) {
    registerBuiltinDialectTranslation(context);
    registerLLVMDialectTranslation(context);
    llvm::LLVMContext llvmContext;
    std::unique_ptr<llvm::Module> llvmModule =
        translateModuleToLLVMIR(*module, llvmContext, "metac");
    if (!llvmModule)
      return emitError(module->getLoc(), "translation to LLVM IR failed");
    llvmModule->print(os, nullptr);
    return success();
  }
  module->print(os);
  return success();
}

} // namespace

int metac::metacMain(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  Options options;
  cl::HideUnrelatedOptions(
      {&options.category, &options.runCategory, &llvm::getColorCategory()});
  if (argc > 1 && llvm::StringRef(argv[1]) == "cluster")
    return clusterMain(argc - 1, argv + 1);
  if (argc > 1 && llvm::StringRef(argv[1]) == "calibrate")
    return calibrateMain(argc, argv);
  if (argc > 1 && llvm::StringRef(argv[1]) == "bench")
    return benchMain(argc, argv);
  // `metac run SPEC [options]` trains; `metac plan SPEC --cluster=FILE`
  // ranks plans; `metac SPEC [options]` compiles.
  bool runMode = argc > 1 && llvm::StringRef(argv[1]) == "run";
  bool planMode = argc > 1 && llvm::StringRef(argv[1]) == "plan";
  SmallVector<char *> args(argv, argv + argc);
  if (runMode || planMode)
    args.erase(args.begin() + 1);
  cl::ParseCommandLineOptions(
      args.size(), args.data(),
      "metac: the meta-learning compiler\n\n"
      "  metac SPEC [--compile-to=PHASE] [-o FILE]   compile a spec\n"
      "  metac run SPEC [options]                   train and evaluate it\n"
      "  metac plan SPEC --cluster=FILE             rank parallel plans for a "
      "cluster\n"
      "  metac cluster FILE...                      check cluster "
      "descriptions\n"
      "  metac calibrate -o FILE [--np=N]           measure this machine "
      "into a description\n"
      "  metac bench MATRIX.yaml -o DIR             run a benchmark matrix "
      "and report it\n");
  std::optional<RunOptions> run;
  if (runMode) {
    run.emplace();
    if (options.iterations >= 0)
      run->iterations = options.iterations;
    if (options.seed >= 0)
      run->seed = static_cast<uint64_t>(options.seed);
    run->initParams = options.initParams;
    run->initParamsPartial = options.initParamsPartial;
    run->saveParams = options.saveParams;
    run->checkpointEvery = options.checkpointEvery;
    run->checkpointDir = options.checkpointDir;
    run->resumeDir = options.resume;
    run->metrics = options.metrics;
    run->backend = options.backend;
    run->memoryLimit = options.memoryLimit;
    run->progress = options.quiet ? 0 : 2;
    run->profile = options.profile;
    run->trace = options.trace;
    run->noCudaGraph = options.noCudaGraph;
    run->maxConsecutiveSkips = options.maxConsecutiveSkips;
    run->divergeAbove = options.divergeAbove;
    if (!options.slowRank.empty()) {
      auto [rank, rest] = StringRef(options.slowRank).split(':');
      auto [factor, period] = rest.split(':');
      if (rank.getAsInteger(10, run->slowRank) || run->slowRank < 0 ||
          factor.getAsDouble(run->slowFactor) || !(run->slowFactor > 1) ||
          std::isinf(run->slowFactor) ||
          (!period.empty() &&
           (period.getAsInteger(10, run->slowPeriod) || run->slowPeriod < 1))) {
        llvm::errs() << "metac: error: --slow-rank must be R:FACTOR[:PERIOD] "
                        "with a rank, a factor above 1 and a period of at "
                        "least 1, got '"
                     << options.slowRank << "'\n";
        return 1;
      }
    }
    if (!(options.commTimeout >= 0) || std::isinf(options.commTimeout)) {
      llvm::errs() << "metac: error: --comm-timeout must be a number of "
                      "seconds, got "
                   << options.commTimeout << "\n";
      return 1;
    }
    run->commTimeout = options.commTimeout;
    if (options.checkpointFormat == "gathered")
      run->checkpointFormat = 1; // METART_CHECKPOINT_GATHERED
    else if (options.checkpointFormat == "sharded")
      run->checkpointFormat = 2; // METART_CHECKPOINT_SHARDED
    else if (!options.checkpointFormat.empty()) {
      llvm::errs() << "metac: error: --checkpoint-format must be gathered or "
                      "sharded, got '"
                   << options.checkpointFormat << "'\n";
      return 1;
    }
    if (!options.hangRank.empty()) {
      auto [rank, iteration] = StringRef(options.hangRank).split(':');
      if (rank.getAsInteger(10, run->hangRank) || run->hangRank < 0 ||
          iteration.getAsInteger(10, run->hangIteration) ||
          run->hangIteration < 1) {
        llvm::errs() << "metac: error: --hang-rank must be R:ITERATION with "
                        "a rank and an iteration of at least 1, got '"
                     << options.hangRank << "'\n";
        return 1;
      }
    }
    if (options.maxConsecutiveSkips < 0 || !(options.divergeAbove >= 0) ||
        std::isinf(options.divergeAbove)) {
      llvm::errs() << "metac: error: --max-consecutive-skips and "
                      "--diverge-above must not be negative\n";
      return 1;
    }
    if (!run->backend.empty() && run->backend != "cpu" &&
        run->backend != "cuda") {
      llvm::errs() << "metac: error: --backend must be cpu or cuda, got '"
                   << run->backend << "'\n";
      return 1;
    }
    if (run->checkpointEvery > 0 && run->checkpointDir.empty()) {
      llvm::errs() << "metac: error: --checkpoint-every needs "
                      "--checkpoint-dir\n";
      return 1;
    }
    if (run->initParamsPartial && run->initParams.empty()) {
      llvm::errs() << "metac: error: --init-params-partial needs "
                      "--init-params\n";
      return 1;
    }
    options.compileTo = "autodiff";
  }
  // Without --compile-to: an executable when writing to a file, the meta IR
  // when printing.
  if (options.compileTo.empty())
    options.compileTo = options.output == "-" ? "meta" : "exe";
  if (options.compileTo == "exe" && options.output == "-") {
    llvm::errs() << "metac: error: an executable needs an output file (-o)\n";
    return 1;
  }

  std::optional<Phase> phase = parsePhase(options.compileTo);
  if (!phase) {
    llvm::errs() << "metac: error: unknown phase '" << options.compileTo
                 << "' for --compile-to (expected one of:";
    for (Phase p : allPhases())
      llvm::errs() << ' ' << getPhaseName(p);
    llvm::errs() << ")\n";
    return 1;
  }
  if (!isPhaseImplemented(*phase)) {
    llvm::errs() << "metac: error: phase '" << options.compileTo
                 << "' is not implemented yet (on one device the program "
                    "goes from 'autodiff' to 'lowered')\n";
    return 1;
  }

  if (!options.onNonfinite.empty() && options.onNonfinite != "stop" &&
      options.onNonfinite != "skip" && options.onNonfinite != "ignore") {
    llvm::errs() << "metac: error: --on-nonfinite must be stop, skip or "
                    "ignore, got '"
                 << options.onNonfinite << "'\n";
    return 1;
  }

  driver::PlanRequest planRequest;
  planRequest.clusterFile = options.cluster;
  planRequest.options.devices = options.devices;
  planRequest.options.memoryMargin = options.memoryMargin;
  planRequest.allTrainings = options.mesh == "auto" || planMode;
  if (options.devices < 0 ||
      !(options.memoryMargin >= 0 && options.memoryMargin < 1)) {
    llvm::errs() << "metac: error: --devices must not be negative and "
                    "--memory-margin must be in [0, 1)\n";
    return 1;
  }
  std::optional<bool> planJson;
  if (planMode) {
    if (options.format != "table" && options.format != "json") {
      llvm::errs() << "metac: error: --format must be table or json, got '"
                   << options.format << "'\n";
      return 1;
    }
    planJson = options.format == "json";
    options.compileTo = "autodiff";
    // A given mesh is costed alone: a hand plan beside the planner's.
    if (!options.mesh.empty() && options.mesh != "auto") {
      auto mesh = partition::parseMeshShape(options.mesh);
      if (!mesh) {
        llvm::errs() << "metac: error: " << llvm::toString(mesh.takeError())
                     << "\n";
        return 1;
      }
      planner::PlanCandidate only;
      only.mesh = *mesh;
      if (only.mesh.sizes[partition::MeshAxis::Pipeline] > 1) {
        only.microBatches =
            options.microBatches > 0
                ? options.microBatches
                : 2 * only.mesh.sizes[partition::MeshAxis::Pipeline];
        only.schedule =
            options.schedule.empty() ? "gpipe" : std::string(options.schedule);
      }
      planRequest.options.only = only;
      options.mesh = "";
    }
  }
  if (options.mesh == "auto" && options.cluster.empty()) {
    llvm::errs() << "metac: error: --mesh=auto needs --cluster=FILE (a "
                    "cluster description; see docs/planning.md)\n";
    return 1;
  }
  PipelineOptions pipeline;
  if (!options.mesh.empty() && options.mesh != "auto") {
    auto mesh = partition::parseMeshShape(options.mesh);
    if (!mesh) {
      llvm::errs() << "metac: error: " << llvm::toString(mesh.takeError())
                   << "\n";
      return 1;
    }
    pipeline.mesh = options.mesh;
  }
  if (options.bucketMB < 0) {
    llvm::errs() << "metac: error: --bucket-mb must not be negative\n";
    return 1;
  }
  pipeline.bucketBytes = static_cast<int64_t>(options.bucketMB * (1 << 20));
  if (!options.allReduce.empty() && options.allReduce != "library" &&
      options.allReduce != "ring" && options.allReduce != "tree" &&
      options.allReduce != "hierarchical") {
    llvm::errs() << "metac: error: --allreduce must be library, ring, tree "
                    "or hierarchical, got '"
                 << options.allReduce << "'\n";
    return 1;
  }
  pipeline.allReduce = options.allReduce;
  if (!options.compress.empty() && !meta::parseCompression(options.compress)) {
    llvm::errs() << "metac: error: --compress must be "
                 << meta::kCompressionForms << ", got '" << options.compress
                 << "'\n";
    return 1;
  }
  pipeline.compress = options.compress;
  // A bare --overlap is --overlap=true.
  std::string overlap = options.overlap;
  if (options.overlap.getNumOccurrences() && overlap.empty())
    overlap = "true";
  if (!overlap.empty() && overlap != "true" && overlap != "false") {
    llvm::errs() << "metac: error: --overlap must be true or false, got '"
                 << overlap << "'\n";
    return 1;
  }
  pipeline.overlap = overlap;
  if (!options.staleness.empty()) {
    int64_t lag = -1;
    if (options.staleness == "inf")
      pipeline.asynchronous = true;
    else if (StringRef(options.staleness).getAsInteger(10, lag) || lag < 0 ||
             lag > 1024) {
      llvm::errs() << "metac: error: --staleness must be inf or in [0, "
                      "1024], got "
                   << options.staleness << "\n";
      return 1;
    } else
      pipeline.staleness = lag;
  }
  if (options.parameterServers.getNumOccurrences() &&
      (options.parameterServers < 0 || options.parameterServers > 4096)) {
    llvm::errs() << "metac: error: --parameter-servers must be in [0, "
                    "4096], got "
                 << options.parameterServers << "\n";
    return 1;
  }
  pipeline.parameterServers = options.parameterServers;
  pipeline.offload = options.offload;
  if (!options.balance.empty() && options.balance != "cost" &&
      options.balance != "count") {
    llvm::errs() << "metac: error: --balance must be cost or count, got '"
                 << options.balance << "'\n";
    return 1;
  }
  pipeline.balance = options.balance;
  planRequest.options.bucketBytes = pipeline.bucketBytes;
  planRequest.options.allReduce = pipeline.allReduce;
  planRequest.options.compress = pipeline.compress;
  planRequest.options.overlap = pipeline.overlap;
  planRequest.options.parameterServers = pipeline.parameterServers;
  planRequest.options.staleness = pipeline.staleness;
  planRequest.options.asynchronous = pipeline.asynchronous;
  planRequest.options.offload = pipeline.offload;
  planRequest.options.balance = pipeline.balance;
  if (options.accumulate < 1) {
    llvm::errs() << "metac: error: --accumulate must be at least 1\n";
    return 1;
  }
  pipeline.accumulate = options.accumulate;
  if (options.zero < 0 || options.zero > 2) {
    llvm::errs() << "metac: error: --zero must be 0, 1 or 2 (ZeRO-3 is not "
                    "implemented), got "
                 << options.zero << "\n";
    return 1;
  }
  pipeline.zero = options.zero;
  planRequest.options.zero = options.zero;
  if (options.splitParams != "on" && options.splitParams != "off") {
    llvm::errs() << "metac: error: --split-params must be on or off, got '"
                 << options.splitParams << "'\n";
    return 1;
  }
  pipeline.splitParams = options.splitParams == "on";
  planRequest.options.splitParams = pipeline.splitParams;
  if (options.microBatches < 0) {
    llvm::errs() << "metac: error: --micro-batches must not be negative\n";
    return 1;
  }
  pipeline.microBatches = options.microBatches;
  if (!options.schedule.empty() && options.schedule != "gpipe" &&
      options.schedule != "1f1b" && options.schedule != "pipedream") {
    llvm::errs() << "metac: error: --schedule must be gpipe, 1f1b or "
                    "pipedream, got '"
                 << options.schedule << "'\n";
    return 1;
  }
  pipeline.schedule = options.schedule;
  llvm::Expected<int64_t> remat = driver::parseRemat(options.remat);
  if (!remat) {
    llvm::errs() << "metac: error: " << llvm::toString(remat.takeError())
                 << "\n";
    return 1;
  }
  pipeline.remat = *remat;
  if (!options.precision.empty() && options.precision != "f32" &&
      options.precision != "bf16" && options.precision != "fp16") {
    llvm::errs() << "metac: error: --precision must be f32, bf16 or fp16, got '"
                 << options.precision << "'\n";
    return 1;
  }
  pipeline.precision = options.precision;
  if (!options.lossScale.empty() && options.lossScale != "dynamic" &&
      options.lossScale != "off") {
    llvm::errs() << "metac: error: --loss-scale must be dynamic or off, got '"
                 << options.lossScale << "'\n";
    return 1;
  }
  pipeline.lossScale = options.lossScale;
  if (options.fusion != "on" && options.fusion != "off") {
    llvm::errs() << "metac: error: --fusion must be on or off, got '"
                 << options.fusion << "'\n";
    return 1;
  }
  pipeline.fusion = options.fusion == "on";
  if (options.ringAttention != "on" && options.ringAttention != "off") {
    llvm::errs() << "metac: error: --ring-attention must be on or off, got '"
                 << options.ringAttention << "'\n";
    return 1;
  }
  pipeline.ringAttention = options.ringAttention == "on";
  if (options.deviceKernels != "on" && options.deviceKernels != "off") {
    llvm::errs() << "metac: error: --device-kernels must be on or off, got '"
                 << options.deviceKernels << "'\n";
    return 1;
  }
  pipeline.deviceKernels = options.deviceKernels == "on";
  uint64_t memoryBudget = 0;
  if (!options.memoryBudget.empty()) {
    if (!options.remat.empty()) {
      llvm::errs() << "metac: error: --memory-budget chooses the "
                      "recomputation: give it or --remat, not both\n";
      return 1;
    }
    llvm::Expected<uint64_t> bytes = driver::parseBytes(options.memoryBudget);
    if (!bytes) {
      llvm::errs() << "metac: error: " << llvm::toString(bytes.takeError())
                   << "\n";
      return 1;
    }
    memoryBudget = *bytes;
  }
  if (run && options.np > 0)
    if (int code = launchWithMpirun(argc, argv, options.np); code >= 0)
      return code;

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(options.input, &error);
  if (!input) {
    llvm::errs() << "metac: error: " << error << "\n";
    return 1;
  }

  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());

  // Render into a string first: nothing reaches the output file unless the
  // whole compilation succeeds.
  std::string result;
  llvm::raw_string_ostream resultStream(result);
  LogicalResult status = failure();
  if (options.verifyDiagnostics) {
    SourceMgrDiagnosticVerifierHandler handler(sourceMgr, &context);
    (void)compile(sourceMgr, context, *phase, resultStream,
                  run ? &*run : nullptr, options.output, pipeline, options.rank,
                  options.onNonfinite, planRequest, planJson, memoryBudget,
                  !options.remat.empty(), options.settings);
    status = handler.verify();
  } else {
    SourceMgrDiagnosticHandler handler(sourceMgr, &context);
    status = compile(sourceMgr, context, *phase, resultStream,
                     run ? &*run : nullptr, options.output, pipeline,
                     options.rank, options.onNonfinite, planRequest, planJson,
                     memoryBudget, !options.remat.empty(), options.settings);
  }
  if (failed(status))
    return 1;
  // Runs print as they go; executables are written by the linker.
  if (options.verifyDiagnostics || run || *phase == Phase::Exe)
    return 0;

  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(options.output, &error);
  if (!output) {
    llvm::errs() << "metac: error: " << error << "\n";
    return 1;
  }
  output->os() << result;
  output->keep();
  return 0;
}
