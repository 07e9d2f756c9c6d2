//===- DecomposeNorms.cpp - batch norm as reductions and maps -------------===//
//
// Batch norm averages over the samples. Written as the reductions and
// elementwise ops it stands for, it serves two passes. Partitioning: with
// the samples split over the data axis, the fused op would need every
// sample on every rank (its rule gathers them); decomposed, its statistics
// become local sums that one small all-reduce per statistic completes, and
// the samples stay split. Fusion: statistics per task keep the leading
// dimension, so the whole normalisation joins the activation's group (one
// kernel instead of the runtime's batch norm and a pass for the ReLU):
//   mean = mean_R(x), c = x - mean, var = mean_R(c * c),
//   y = c * rsqrt(var + eps) * weight + bias.
//
//===----------------------------------------------------------------------===//

#include "metac/Dialect/NN/Transforms/DecomposeNorms.h"

#include "metac/Dialect/NN/IR/NNBuilder.h"
#include "metac/Dialect/NN/IR/NNOps.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace metac;

void metac::nn::decomposeBatchNorms(
    Operation *root, llvm::function_ref<bool(BatchNormOp)> wanted) {
  SmallVector<nn::BatchNormOp> norms;
  root->walk([&](nn::BatchNormOp op) {
    if (!op.getReduceDims().empty() && wanted(op))
      norms.push_back(op);
  });
  for (nn::BatchNormOp op : norms) {
    OpBuilder b(op);
    nn::NNBuilder nn(b, op.getLoc());
    Value x = op.getInput();
    auto type = cast<RankedTensorType>(x.getType());
    ArrayRef<int64_t> shape = type.getShape();
    ArrayRef<int64_t> reduced = op.getReduceDims();
    // Weight and bias [P..., C] cover the leading P dimensions and the
    // channel.
    int64_t batch =
        cast<RankedTensorType>(op.getWeight().getType()).getRank() - 1;
    SmallVector<int64_t> affine = llvm::to_vector(llvm::seq<int64_t>(0, batch));
    affine.push_back(op.getChannelDim());
    SmallVector<int64_t> others = nn::complementDims(type.getRank(), affine);

    auto spread = [&](Value v) { return nn.broadcast(v, shape, reduced); };
    Value centred = nn.sub(x, spread(nn.reduceMean(x, reduced)));
    Value variance = nn.reduceMean(nn.mul(centred, centred), reduced);
    Value epsilon = nn.constant(cast<RankedTensorType>(variance.getType()),
                                op.getEpsilon().convertToDouble());
    Value normalised =
        nn.mul(centred, spread(nn.rsqrt(nn.add(variance, epsilon))));
    Value y =
        nn.add(nn.mul(normalised, nn.broadcast(op.getWeight(), shape, others)),
               nn.broadcast(op.getBias(), shape, others));
    op.replaceAllUsesWith(y);
    op.erase();
  }
}
