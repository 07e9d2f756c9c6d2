//===- metac-opt.cpp - MLIR optimizer driver for metac
//---------------------===//
//
// mlir-opt with the meta and nn dialects, metac's passes and phase pipelines,
// and the upstream dialects and passes metac uses.
//
//===----------------------------------------------------------------------===//

#include "metac/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  metac::registerAllDialects(registry);
  metac::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "metac optimizer driver\n", registry));
}
