//===- Pipeline.h - pipeline stages of partitioned programs -----*- C++ -*-===//

#ifndef METAC_LIB_PARTITION_PIPELINE_H
#define METAC_LIB_PARTITION_PIPELINE_H

#include "mlir/IR/BuiltinOps.h"

namespace metac::partition {

/// Replaces the step and evaluation functions of each train op with a
/// `pipeline` axis by one function per stage (see the meta-partition pass).
/// Runs inside meta-partition: before it, collectives over the task axis
/// count the micro-batches as ranks, which only this step makes true.
mlir::LogicalResult splitPipelineStages(mlir::ModuleOp module);

} // namespace metac::partition

#endif // METAC_LIB_PARTITION_PIPELINE_H
