//===- MetaOps.cpp - the meta dialect, its operations and attributes ------===//

#include "metac/Dialect/Meta/IR/MetaOps.h"
#include "metac/Dialect/Meta/IR/MetaDialect.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace metac::meta;

#include "metac/Dialect/Meta/IR/MetaOpsDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "metac/Dialect/Meta/IR/MetaAttrs.cpp.inc"

void MetaDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "metac/Dialect/Meta/IR/MetaOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "metac/Dialect/Meta/IR/MetaAttrs.cpp.inc"
      >();
}

#define GET_OP_CLASSES
#include "metac/Dialect/Meta/IR/MetaOps.cpp.inc"
