//===- ReduceScatterSlices.h - sums that each rank slices -------*- C++ -*-===//

#ifndef METAC_LIB_PARTITION_REDUCESCATTERSLICES_H
#define METAC_LIB_PARTITION_REDUCESCATTERSLICES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace metac::partition {

/// Replaces an all-reduce whose only user slices the sum over one of its
/// axes by a reduce-scatter over that axis (then an all-reduce of the part
/// over the others): each rank receives only the part it keeps, as
/// Megatron's sequence parallelism does after a tensor-parallel block.
/// Reductions over the task or pipeline axis are left alone (the
/// pipeline stages and the outer update own them).
void reduceScatterSlices(mlir::func::FuncOp function);

} // namespace metac::partition

#endif // METAC_LIB_PARTITION_REDUCESCATTERSLICES_H
