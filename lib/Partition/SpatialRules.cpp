//===- SpatialRules.cpp - how image ops propagate shardings ---------------===//
//
// Convolutions, pooling and batch norm treat their leading dimensions (the
// task and sample axes the compiler adds, and any batch of the model) as
// independent: a split there passes through, so task parallelism runs each
// rank's tasks without gathering images. The image dimensions (H, W) and
// the convolutions' contracted channels stay whole; batch norm's statistics
// need every element they average, so its reduced dimensions (the samples,
// under data parallelism) are gathered first. A weight's leading (task)
// dimensions follow the input's.
//
//===----------------------------------------------------------------------===//

#include "Sharding.h"

#include "metac/Dialect/NN/IR/NNOps.h"

using namespace mlir;
using namespace metac;
using namespace metac::partition;

namespace {

/// The first `count` dimensions of `a` and `b` joined (the more distributed
/// of each pair), written to both.
void joinLeading(MutableArrayRef<int> a, MutableArrayRef<int> b,
                 int64_t count) {
  for (int64_t i = 0; i < count; ++i)
    a[i] = b[i] = joinAxes(a[i], b[i]);
}

/// `dims[from..]` set to replicated.
void replicateFrom(MutableArrayRef<int> dims, int64_t from) {
  for (int64_t i = from; i < static_cast<int64_t>(dims.size()); ++i)
    dims[i] = kReplicated;
}

int64_t rankOf(Value v, const RuleContext &ctx) {
  return ctx.globalTypeOf(v).getRank();
}

/// `axis`, unless `taken` has it.
int unlessTaken(int axis, unsigned taken) {
  return axis != kReplicated && (taken & axisMask(axis)) ? kReplicated : axis;
}

} // namespace

/// input [B..., C, H, W] * weight [P..., O, C, kh, kw] (+ bias [P..., O]):
/// B passes through, O may stay split (output channels are independent).
OpPlan metac::partition::conv2dPlan(Operation *op, const RuleContext &ctx) {
  auto conv = cast<nn::Conv2DOp>(op);
  SmallVector<int> tx = ctx.shardingOf(conv.getInput()).dims;
  SmallVector<int> tw = ctx.shardingOf(conv.getWeight()).dims;
  int64_t nb = rankOf(conv.getInput(), ctx) - 3;
  int64_t np = rankOf(conv.getWeight(), ctx) - 4;
  joinLeading(tx, tw, np);
  dedupeAxes(MutableArrayRef<int>(tx).take_front(nb));
  replicateFrom(tx, nb);
  for (int64_t i = 0; i < np; ++i)
    tw[i] = tx[i];
  int out = unlessTaken(tw[np], splitMask(tx));
  replicateFrom(tw, np);
  tw[np] = out;

  OpPlan plan;
  plan.operands = {{tx, false}, {tw, false}};
  if (conv.getBias()) {
    SmallVector<int> tb(ArrayRef<int>(tw).take_front(np + 1));
    plan.operands.push_back({tb, false});
  }
  SmallVector<int> result(ArrayRef<int>(tx).take_front(nb));
  result.append({out, kReplicated, kReplicated});
  plan.results.push_back({result, 0});
  return plan;
}

/// grad [B..., O, H', W'] and weight [P..., O, C, kh, kw] give the input's
/// cotangent [B..., C, H, W]: B passes through, O (contracted) stays whole,
/// C may stay split.
OpPlan metac::partition::conv2dBackwardInputPlan(Operation *op,
                                                 const RuleContext &ctx) {
  auto backward = cast<nn::Conv2DBackwardInputOp>(op);
  SmallVector<int> tg = ctx.shardingOf(backward.getGrad()).dims;
  SmallVector<int> tw = ctx.shardingOf(backward.getWeight()).dims;
  int64_t nb = rankOf(backward.getGrad(), ctx) - 3;
  int64_t np = rankOf(backward.getWeight(), ctx) - 4;
  joinLeading(tg, tw, np);
  dedupeAxes(MutableArrayRef<int>(tg).take_front(nb));
  replicateFrom(tg, nb);
  for (int64_t i = 0; i < np; ++i)
    tw[i] = tg[i];
  int channels = unlessTaken(tw[np + 1], splitMask(tg));
  replicateFrom(tw, np);
  tw[np + 1] = channels;

  OpPlan plan;
  plan.operands = {{tg, false}, {tw, false}};
  SmallVector<int> result(ArrayRef<int>(tg).take_front(nb));
  result.append({channels, kReplicated, kReplicated});
  plan.results.push_back({result, 0});
  return plan;
}

/// input [B..., C, H, W] and grad [B..., O, H', W'] give the weight's
/// cotangent [P..., O, C, kh, kw], summed over the batch dimensions after
/// P: those split give a partial result (summed later, with the other
/// gradients), those in P pass through.
OpPlan metac::partition::conv2dBackwardWeightPlan(Operation *op,
                                                  const RuleContext &ctx) {
  auto backward = cast<nn::Conv2DBackwardWeightOp>(op);
  SmallVector<int> tx = ctx.shardingOf(backward.getInput()).dims;
  SmallVector<int> tg = ctx.shardingOf(backward.getGrad()).dims;
  int64_t nb = rankOf(backward.getInput(), ctx) - 3;
  int64_t np = cast<RankedTensorType>(op->getResult(0).getType()).getRank() - 4;
  joinLeading(tx, tg, nb);
  dedupeAxes(MutableArrayRef<int>(tx).take_front(nb));
  replicateFrom(tx, nb);
  for (int64_t i = 0; i < nb; ++i)
    tg[i] = tx[i];
  replicateFrom(tg, nb);

  OpPlan plan;
  plan.operands = {{tx, false}, {tg, false}};
  SmallVector<int> result(ArrayRef<int>(tx).take_front(np));
  result.append(4, kReplicated);
  plan.results.push_back(
      {result, splitMask(ArrayRef<int>(tx).slice(np, nb - np))});
  return plan;
}

/// Pooling and its derivatives work on the last two dimensions of
/// same-rank operands: everything before them (channels included) passes
/// through. Average pooling and its derivative are linear in their one
/// operand, so a pending sum passes through them too.
OpPlan metac::partition::pool2dPlan(Operation *op, const RuleContext &ctx) {
  int64_t rank = rankOf(op->getOperand(0), ctx);
  SmallVector<int> dims(rank, kReplicated);
  for (Value operand : op->getOperands()) {
    const Sharding &s = ctx.shardingOf(operand);
    for (int64_t d = 0; d < rank - 2; ++d)
      dims[d] = joinAxes(dims[d], s.dims[d]);
  }
  dedupeAxes(dims);
  bool linear = isa<nn::AvgPool2DOp, nn::AvgPool2DBackwardOp>(op);
  unsigned partial = linear ? ctx.shardingOf(op->getOperand(0)).partial : 0;
  OpPlan plan;
  for (size_t i = 0; i < op->getNumOperands(); ++i)
    plan.operands.push_back({dims, linear});
  plan.results.push_back({dims, partial});
  return plan;
}

/// Dimensions that are neither reduced nor the channel are independent
/// normalisations; the channel may stay split (each channel has its own
/// statistics and affine parameters, weight and bias [P..., C], whose
/// leading dimensions follow the input's).
OpPlan metac::partition::batchNormPlan(Operation *op, const RuleContext &ctx) {
  auto norm = cast<nn::BatchNormOp>(op);
  SmallVector<int> dims = ctx.shardingOf(norm.getInput()).dims;
  const Sharding &w = ctx.shardingOf(norm.getWeight());
  const Sharding &b = ctx.shardingOf(norm.getBias());
  int64_t np = rankOf(norm.getWeight(), ctx) - 1;
  int64_t channel = norm.getChannelDim();
  for (int64_t i = 0; i < np; ++i)
    dims[i] = joinAxes(dims[i], joinAxes(w.dims[i], b.dims[i]));
  dims[channel] = joinAxes(dims[channel], joinAxes(w.dims[np], b.dims[np]));
  for (int64_t d : norm.getReduceDims())
    dims[d] = kReplicated;
  dedupeAxes(dims);
  SmallVector<int> params(ArrayRef<int>(dims).take_front(np));
  params.push_back(dims[channel]);
  OpPlan plan;
  plan.operands = {{dims, false}, {params, false}, {params, false}};
  plan.results.push_back({dims, 0});
  return plan;
}
