//===- metac-eval.cpp - evaluate an nn function on random inputs ----------===//
//
// `metac-eval FILE.mlir --entry=NAME --seed=S` fills every argument of the
// function @NAME with deterministic pseudo-random values (see
// metac/Interpreter/RandomInputs.h for the generator and the
// `metac.eval.min` / `metac.eval.max` argument attributes), evaluates it
// with the reference interpreter, and prints the inputs and outputs as JSON
// (metac/Interpreter/TensorJSON.h). Errors are diagnostics on stderr and a
// non-zero exit status.
//
//===----------------------------------------------------------------------===//

#include "metac/InitAll.h"
#include "metac/Interpreter/Interpreter.h"
#include "metac/Interpreter/RandomInputs.h"
#include "metac/Interpreter/TensorJSON.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;

namespace cl = llvm::cl;

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::OptionCategory category("metac-eval options");
  cl::opt<std::string> inputFile(cl::Positional, cl::desc("<file.mlir | ->"),
                                 cl::init("-"), cl::cat(category));
  cl::opt<std::string> entry("entry", cl::desc("The function to evaluate"),
                             cl::value_desc("name"), cl::Required,
                             cl::cat(category));
  cl::opt<uint64_t> seed(
      "seed", cl::desc("Seed of the pseudo-random inputs (splitmix64)"),
      cl::init(0), cl::cat(category));
  cl::HideUnrelatedOptions({&category, &llvm::getColorCategory()});
  cl::ParseCommandLineOptions(
      argc, argv,
      "metac-eval: evaluates an nn function on pseudo-random inputs\n\n"
      "Prints {\"inputs\": [...], \"outputs\": [...]} as JSON.\n");

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> buffer = openInputFile(inputFile, &error);
  if (!buffer) {
    llvm::WithColor::error(llvm::errs(), "metac-eval") << error << "\n";
    return 1;
  }

  DialectRegistry registry;
  metac::registerAllDialects(registry);
  MLIRContext context(registry);
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);

  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;
  auto func = dyn_cast_or_null<func::FuncOp>(
      SymbolTable::lookupSymbolIn(*module, entry));
  if (!func) {
    llvm::WithColor::error(llvm::errs(), "metac-eval")
        << "no function named '" << entry << "' in " << inputFile << "\n";
    return 1;
  }
  FailureOr<std::vector<metac::interp::Tensor>> inputs =
      metac::interp::makeRandomInputs(func, seed);
  if (failed(inputs))
    return 1;
  FailureOr<std::vector<metac::interp::Tensor>> outputs =
      metac::interp::evaluate(func, *inputs);
  if (failed(outputs))
    return 1;
  metac::interp::printEvaluationJSON(llvm::outs(), *inputs, *outputs);
  return 0;
}
