//===- MetaDialect.h - meta dialect declaration -----------------*- C++ -*-===//

#ifndef METAC_DIALECT_META_IR_METADIALECT_H
#define METAC_DIALECT_META_IR_METADIALECT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Dialect.h"

#include "metac/Dialect/Meta/IR/MetaOpsDialect.h.inc"

#endif // METAC_DIALECT_META_IR_METADIALECT_H
