//===- NNOps.cpp - the nn dialect and its operations ----------------------===//

#include "metac/Dialect/NN/IR/NNOps.h"
#include "metac/Dialect/NN/IR/NNDialect.h"

using namespace mlir;
using namespace metac::nn;

#include "metac/Dialect/NN/IR/NNOpsDialect.cpp.inc"

void NNDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "metac/Dialect/NN/IR/NNOps.cpp.inc"
      >();
}

#define GET_OP_CLASSES
#include "metac/Dialect/NN/IR/NNOps.cpp.inc"
