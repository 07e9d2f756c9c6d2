//===- MetaOps.h - meta dialect operations ----------------------*- C++ -*-===//

#ifndef METAC_DIALECT_META_IR_METAOPS_H
#define METAC_DIALECT_META_IR_METAOPS_H

#include "metac/Dialect/Meta/IR/MetaAttrs.h"
#include "metac/Dialect/Meta/IR/MetaDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "metac/Dialect/Meta/IR/MetaOps.h.inc"

#endif // METAC_DIALECT_META_IR_METAOPS_H
