//===- Passes.h - planning and partitioning passes --------------*- C++ -*-===//

#ifndef METAC_PARTITION_PASSES_H
#define METAC_PARTITION_PASSES_H

#include "metac/Dialect/NN/IR/NNDialect.h"

#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace metac::partition {

#define GEN_PASS_DECL
#include "metac/Partition/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "metac/Partition/Passes.h.inc"

} // namespace metac::partition

#endif // METAC_PARTITION_PASSES_H
