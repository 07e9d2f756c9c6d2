//===- NNDialect.h - nn dialect declaration ---------------------*- C++ -*-===//

#ifndef METAC_DIALECT_NN_IR_NNDIALECT_H
#define METAC_DIALECT_NN_IR_NNDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Dialect.h"

#include "metac/Dialect/NN/IR/NNOpsDialect.h.inc"

#endif // METAC_DIALECT_NN_IR_NNDIALECT_H
