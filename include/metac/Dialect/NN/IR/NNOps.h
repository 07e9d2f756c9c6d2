//===- NNOps.h - nn dialect operations --------------------------*- C++ -*-===//

#ifndef METAC_DIALECT_NN_IR_NNOPS_H
#define METAC_DIALECT_NN_IR_NNOPS_H

#include "metac/Dialect/NN/IR/NNDialect.h"
#include "metac/Interfaces/DifferentiableOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "metac/Dialect/NN/IR/NNOps.h.inc"

#endif // METAC_DIALECT_NN_IR_NNOPS_H
