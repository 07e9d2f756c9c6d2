//===- ReduceScatterSlices.cpp - sums that each rank slices ---------------===//
//
// Resharding a partial sum onto a split (the sequence axis's positions after
// a product that contracted them, a tensor-parallel block's output under a
// sequence split) completes the sum with an all-reduce and slices it: every
// rank receives all of it to keep 1/n. A reduce-scatter over the sliced
// axis moves only the parts (each rank's sum of its part), and the other
// axes of the sum are all-reduced on that part.
//
//===----------------------------------------------------------------------===//

#include "ReduceScatterSlices.h"

#include "metac/Partition/Mesh.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"

using namespace mlir;
using namespace metac::partition;

void metac::partition::reduceScatterSlices(func::FuncOp function) {
  SmallVector<shard::AllSliceOp> slices;
  function.walk([&](shard::AllSliceOp slice) { slices.push_back(slice); });
  for (shard::AllSliceOp slice : slices) {
    auto reduce = slice.getInput().getDefiningOp<shard::AllReduceOp>();
    if (!reduce || !reduce->hasOneUse() ||
        reduce.getReduction() != shard::ReductionKind::Sum ||
        !reduce->getDiscardableAttrDictionary().empty() ||
        reduce.getGrid() != slice.getGrid())
      continue;
    ArrayRef<int16_t> summed = reduce.getGridAxes();
    ArrayRef<int16_t> sliced = slice.getGridAxes();
    if (sliced.size() != 1 || !llvm::is_contained(summed, sliced[0]) ||
        llvm::is_contained(summed, int16_t(MeshAxis::Task)) ||
        llvm::is_contained(summed, int16_t(MeshAxis::Pipeline)))
      continue;
    OpBuilder b(slice);
    Location loc = slice.getLoc();
    Value part = shard::ReduceScatterOp::create(
        b, loc, slice.getType(), slice.getGrid(), sliced, reduce.getInput(),
        shard::ReductionKind::Sum, slice.getSliceAxis());
    SmallVector<int16_t> others;
    for (int16_t axis : summed)
      if (axis != sliced[0])
        others.push_back(axis);
    if (!others.empty())
      part =
          shard::AllReduceOp::create(b, loc, slice.getType(), slice.getGrid(),
                                     others, part, shard::ReductionKind::Sum);
    slice.getResult().replaceAllUsesWith(part);
    slice.erase();
    reduce.erase();
  }
}
