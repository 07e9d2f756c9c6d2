//===- FuzzFrontend.cpp - libFuzzer target for the spec frontend ----------===//
//
// Feeds arbitrary bytes to the lexer, parser and MLIRGen. Besides the
// sanitizers' checks, it asserts two properties: a spec either compiles or
// reports at least one error, and every module metac produces prints in a
// form that parses back and verifies (what `metac ... | metac-opt` relies on).
//
//===----------------------------------------------------------------------===//

#include "metac/Frontend/MLIRGen.h"
#include "metac/Frontend/Parser.h"
#include "metac/Frontend/Resolve.h"
#include "metac/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <cstdio>
#include <cstdlib>

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static DialectRegistry *registry = [] {
    auto *r = new DialectRegistry();
    metac::registerAllDialects(*r);
    return r;
  }();
  MLIRContext context(*registry, MLIRContext::Threading::DISABLED);
  unsigned reported = 0;
  context.getDiagEngine().registerHandler([&](Diagnostic &) {
    ++reported;
    return success();
  });

  llvm::StringRef spec(reinterpret_cast<const char *>(data), size);
  metac::frontend::SourceDiagnostics diags(&context, "fuzz.meta");
  metac::frontend::Parser parser(spec, diags);
  metac::frontend::Module ast = parser.parseModule();
  if (diags.getErrorCount() ||
      failed(metac::frontend::resolveConstants(ast, diags)))
    return 0;
  OwningOpRef<ModuleOp> module = metac::frontend::generateMLIR(ast, diags, ".");
  if (!module) {
    if (reported == 0) {
      std::fprintf(stderr, "metac rejected a spec without a diagnostic\n");
      std::abort();
    }
    return 0;
  }
  std::string printed;
  llvm::raw_string_ostream os(printed);
  module->print(os);
  OwningOpRef<ModuleOp> reparsed =
      parseSourceString<ModuleOp>(printed, ParserConfig(&context));
  if (!reparsed || failed(verify(*reparsed))) {
    std::fprintf(stderr, "printed IR does not parse back:\n%s\n",
                 printed.c_str());
    std::abort();
  }
  return 0;
}
