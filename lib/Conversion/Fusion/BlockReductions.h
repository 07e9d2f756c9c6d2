//===- BlockReductions.h - long sums across a block's threads ---*- C++ -*-===//
//
// A sum that one GPU thread would run serially over many terms (batch
// norm's sums over samples and pixels: hundreds to thousands of terms for
// a hundred outputs) leaves the GPU idle and reads memory one row per
// thread. Such a sum is rewritten, before the loops are formed, into one
// block per output: the block's threads add strided parts of the summed
// elements (neighbouring threads read neighbouring addresses) and
// `gpu.all_reduce` combines them (lowered upstream to warp shuffles and
// shared memory).
//
//===----------------------------------------------------------------------===//

#ifndef METAC_LIB_CONVERSION_FUSION_BLOCKREDUCTIONS_H
#define METAC_LIB_CONVERSION_FUSION_BLOCKREDUCTIONS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace metac::fusion {

/// Rewrites each sum in `function` (linalg.generic on buffers with one
/// result updated by `arith.addf`, in f32 or f64) over more than
/// `longestSerial` terms per output into a block reduction: a
/// `scf.parallel` over the outputs holding one over the threads of a
/// block, whose threads sum strided terms and meet in `gpu.all_reduce`.
/// Other sums are left as they are.
void reduceAcrossThreads(mlir::func::FuncOp function, int64_t longestSerial);

/// Whether `loop` is a block reduction's (its threads meet in an
/// all-reduce): it is mapped as built, never merged with its neighbours or
/// tiled again.
bool isBlockReduction(mlir::scf::ParallelOp loop);

/// Maps a block reduction's loops, outputs to blocks and threads to
/// threads, whether the canonicaliser left them nested, merged them into
/// one loop, or dropped the loop over a single output.
void mapBlockReduction(mlir::scf::ParallelOp loop);

} // namespace metac::fusion

#endif // METAC_LIB_CONVERSION_FUSION_BLOCKREDUCTIONS_H
