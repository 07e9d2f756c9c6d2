//===- metac-gradcheck.cpp - finite-difference checks of the autodiff -----===//
//
// For every function of an MLIR file (or one, with --entry), checks the
// first- and second-order derivatives metac's autodiff builds against
// central finite differences on the reference interpreter; exits non-zero
// when a check fails.
//
//===----------------------------------------------------------------------===//

#include "metac/InitAll.h"
#include "metac/Testing/GradientCheck.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
namespace cl = llvm::cl;

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::opt<std::string> input(cl::Positional, cl::desc("<file.mlir>"),
                             cl::init("-"));
  cl::opt<std::string> entry("entry", cl::desc("Check only this function"));
  cl::opt<int> order("order",
                     cl::desc("1: gradients; 2: also gradients of "
                              "gradients"),
                     cl::init(2));
  cl::opt<uint64_t> seed("seed", cl::desc("Seed of inputs and weights"),
                         cl::init(1));
  cl::opt<double> tolerance(
      "tolerance",
      cl::desc("Accepted |analytic - numeric| / max(1, |numeric|)"),
      cl::init(1e-6));
  cl::ParseCommandLineOptions(argc, argv, "metac gradient checker\n");
  if (order != 1 && order != 2) {
    llvm::errs() << "metac-gradcheck: error: --order must be 1 or 2\n";
    return 1;
  }

  std::string error;
  auto file = openInputFile(input, &error);
  if (!file) {
    llvm::errs() << "metac-gradcheck: error: " << error << "\n";
    return 1;
  }
  DialectRegistry registry;
  metac::registerAllDialects(registry);
  MLIRContext context(registry);
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  metac::testing::GradientCheckOptions options;
  options.order = order;
  options.seed = seed;
  options.tolerance = tolerance;
  int checked = 0, failedChecks = 0;
  for (auto fn : module->getOps<func::FuncOp>()) {
    if (fn.isDeclaration() || (!entry.empty() && fn.getSymName() != entry))
      continue;
    auto result = metac::testing::checkGradients(fn, options);
    ++checked;
    if (failed(result)) {
      ++failedChecks;
      llvm::outs() << "@" << fn.getSymName() << ": ERROR\n";
      continue;
    }
    llvm::outs() << "@" << fn.getSymName() << ":";
    for (int o = 0; o < order; ++o)
      llvm::outs() << " order " << o + 1 << " " << result->partials[o]
                   << " partials, max error "
                   << llvm::format("%.2e", result->maxError[o]) << ";";
    llvm::outs() << (result->passed ? " ok\n" : " FAILED\n");
    if (!result->passed)
      ++failedChecks;
  }
  if (!entry.empty() && checked == 0) {
    llvm::errs() << "metac-gradcheck: error: no function '" << entry << "'\n";
    return 1;
  }
  llvm::outs() << checked - failedChecks << " passed, " << failedChecks
               << " failed\n";
  return failedChecks ? 1 : 0;
}
