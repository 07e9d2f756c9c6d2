//===- CollectiveCalls.h - the runtime calls of the shard collectives -*- C++
//-*-===//
//
// How NNToRuntime lowers shard.all_reduce, all_gather, all_slice and
// reduce_scatter: the metart entry point that the partitioning passes'
// marks choose (algorithm, compression, asynchronous start, staleness) and
// its arguments.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_LIB_CONVERSION_NNTORUNTIME_COLLECTIVECALLS_H
#define METAC_LIB_CONVERSION_NNTORUNTIME_COLLECTIVECALLS_H

#include "RuntimeCallEmitter.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"

namespace metac::lowering {

/// A runtime entry point and its arguments.
struct RuntimeCall {
  llvm::StringRef callee;
  llvm::SmallVector<mlir::Value> args;
};

/// The bit mask of grid axes (bit i for axis i) that the runtime maps to a
/// communicator.
int64_t axesMask(llvm::ArrayRef<mlir::shard::GridAxis> axes);

/// The call of collective `op` with the descriptors of its operand `input`
/// and its result `output`. Call sites that keep state in the runtime
/// (compressed or stale sums) are numbered from `nextSite`.
RuntimeCall collectiveCall(mlir::Operation *op, RuntimeCallEmitter &emit,
                           mlir::Value ctx, mlir::Value input,
                           mlir::Value output, int64_t &nextSite);

} // namespace metac::lowering

#endif // METAC_LIB_CONVERSION_NNTORUNTIME_COLLECTIVECALLS_H
