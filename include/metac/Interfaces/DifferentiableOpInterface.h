//===- DifferentiableOpInterface.h - reverse-mode rules ---------*- C++ -*-===//

#ifndef METAC_INTERFACES_DIFFERENTIABLEOPINTERFACE_H
#define METAC_INTERFACES_DIFFERENTIABLEOPINTERFACE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"

#include "metac/Interfaces/DifferentiableOpInterface.h.inc"

#endif // METAC_INTERFACES_DIFFERENTIABLEOPINTERFACE_H
