//===- Driver.cpp - the metac compiler driver -----------------------------===//

#include "metac/Driver/Driver.h"

#include "metac/Frontend/MLIRGen.h"
#include "metac/Frontend/Parser.h"
#include "metac/InitAll.h"
#include "metac/Pipelines/Pipelines.h"
#include "metac/Runner/Runner.h"

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
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

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
               "lowered, llvm, exe"),
      cl::value_desc("phase"), cl::init(""), cl::cat(category)};
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
  cl::opt<std::string> saveParams{
      "save-params", cl::desc("Write the trained parameters (safetensors)"),
      cl::value_desc("file"), cl::cat(runCategory)};
  cl::opt<int64_t> checkpointEvery{
      "checkpoint-every", cl::desc("Checkpoint every N meta-iterations"),
      cl::init(0), cl::cat(runCategory)};
  cl::opt<std::string> checkpointDir{
      "checkpoint-dir", cl::desc("Directory of the checkpoint"),
      cl::value_desc("dir"), cl::cat(runCategory)};
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
  cl::opt<bool> quiet{"quiet", cl::desc("No progress output"), cl::init(false),
                      cl::cat(runCategory)};
};

/// Parses and lowers the spec up to `phase`, printing the result to `os`.
LogicalResult compile(llvm::SourceMgr &sourceMgr, MLIRContext &context,
                      Phase phase, raw_ostream &os, const RunOptions *run,
                      StringRef executable) {
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  llvm::StringRef filename = buffer->getBufferIdentifier();
  frontend::SourceDiagnostics diags(&context, filename);
  frontend::Parser parser(buffer->getBuffer(), diags);
  frontend::Module ast = parser.parseModule();
  if (diags.getErrorCount())
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
  PassManager pm(&context);
  // Running and executables start from the autodiff phase's IR, which still
  // describes the program; they lower a copy themselves.
  bool whole = run || phase == Phase::Exe;
  if (failed(applyPassManagerCLOptions(pm)) ||
      failed(buildPipelineTo(pm, whole ? Phase::Autodiff : phase)) ||
      failed(pm.run(*module)))
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
  // `metac run SPEC [options]` trains; `metac SPEC [options]` compiles.
  bool runMode = argc > 1 && llvm::StringRef(argv[1]) == "run";
  SmallVector<char *> args(argv, argv + argc);
  if (runMode)
    args.erase(args.begin() + 1);
  cl::ParseCommandLineOptions(
      args.size(), args.data(),
      "metac: the meta-learning compiler\n\n"
      "  metac SPEC [--compile-to=PHASE] [-o FILE]   compile a spec\n"
      "  metac run SPEC [options]                   train and evaluate it\n");
  std::optional<RunOptions> run;
  if (runMode) {
    run.emplace();
    if (options.iterations >= 0)
      run->iterations = options.iterations;
    if (options.seed >= 0)
      run->seed = static_cast<uint64_t>(options.seed);
    run->initParams = options.initParams;
    run->saveParams = options.saveParams;
    run->checkpointEvery = options.checkpointEvery;
    run->checkpointDir = options.checkpointDir;
    run->resumeDir = options.resume;
    run->metrics = options.metrics;
    run->backend = options.backend;
    run->memoryLimit = options.memoryLimit;
    run->progress = options.quiet ? 0 : 2;
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
                  run ? &*run : nullptr, options.output);
    status = handler.verify();
  } else {
    SourceMgrDiagnosticHandler handler(sourceMgr, &context);
    status = compile(sourceMgr, context, *phase, resultStream,
                     run ? &*run : nullptr, options.output);
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
