//===- OpCost.h - the work and traffic of each op ---------------*- C++ -*-===//
//
// The cost model's per-op counts (ARCHITECTURE §5): floating-point
// operations (a multiply-add counts two) and bytes read and written by the
// runtime call an op becomes, from static shapes. Products and convolutions
// count their multiply-adds; elementwise maps one operation per element;
// reductions one per input element; softmax 5, normalisations 8 and losses
// 3 (MSE) or 6 (cross-entropy) per element; views (reshape, stop_gradient,
// slices) cost nothing. Collectives move bytes but compute nothing here:
// their bytes count as communication.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_PLANNER_OPCOST_H
#define METAC_PLANNER_OPCOST_H

#include "mlir/IR/Operation.h"

namespace mlir::func {
class FuncOp;
} // namespace mlir::func

namespace metac::planner {

struct OpCost {
  double flops = 0;
  /// Bytes the op's kernel reads and writes in device memory.
  double bytes = 0;
  /// Payload bytes of collectives and transfers between ranks.
  double commBytes = 0;

  OpCost &operator+=(const OpCost &other) {
    flops += other.flops;
    bytes += other.bytes;
    commBytes += other.commBytes;
    return *this;
  }
};

/// The cost of `op` alone (not of ops nested in its regions).
OpCost estimateOpCost(mlir::Operation *op);

/// The bytes of a statically shaped tensor type (0 for anything else).
uint64_t tensorBytes(mlir::Type type);

/// Ring attention (an attention op with `ring_axes`): the ranks of its
/// ring, from the module's mesh; 1 for any other op.
int64_t ringRanksOf(mlir::Operation *op);

/// The bytes ring attention's runtime call passes to the next rank (the
/// key side's blocks, ring size - 1 times per pass, and the key-side
/// cotangents' way home), counted at the first op of the call; 0 for the
/// call's other ops and for any other op.
double ringExchangeBytes(mlir::Operation *op);

/// The part of ringExchangeBytes that rotates the key side's blocks around
/// the ring: the runtime moves the next block while the kernel computes on
/// this one (the zigzag moves and the cotangents' way home wait).
double ringRotationBytes(mlir::Operation *op);

/// The sum over every op of `function`, nested ones included.
OpCost estimateFunctionCost(mlir::func::FuncOp function);

} // namespace metac::planner

#endif // METAC_PLANNER_OPCOST_H
