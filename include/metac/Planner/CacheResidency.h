//===- CacheResidency.h - which bytes an op finds in cache ------*- C++ -*-===//
//
// A program's ops mostly read what the ops just before them wrote: those
// operands are still in cache, and a call on them runs at the calibrated
// `hot` speed, not at the speed of operands read from memory. The share of
// an op's bytes found in cache follows from the LRU stack distance of each
// operand: the bytes of the other buffers touched since it was last
// touched, replayed over two meta-iterations so that parameters and inputs
// carry their distance from the previous one.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_PLANNER_CACHERESIDENCY_H
#define METAC_PLANNER_CACHERESIDENCY_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

namespace metac::planner {

/// The share in [0, 1] of a buffer of `bytes` at LRU stack distance
/// `distance` (bytes of other data touched since) that a cache of
/// `cacheBytes` still holds, taken at the buffer's middle line: all while
/// that fits, none from four times the cache on, in between falling with
/// the logarithm (associativity and other processes evict some lines
/// early, keep some late).
double cachedShare(double distance, double bytes, double cacheBytes);

/// For every op of `function`'s body that reads or writes tensors, the
/// share of its operand and result bytes that is in a cache of
/// `cacheBytes` when it runs (empty when `cacheBytes` is 0 or the body is
/// not one block).
llvm::DenseMap<mlir::Operation *, double>
cacheResidency(mlir::func::FuncOp function, double cacheBytes);

} // namespace metac::planner

#endif // METAC_PLANNER_CACHERESIDENCY_H
