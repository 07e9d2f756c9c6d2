//===- ShardingRules.cpp - how each nn op propagates shardings ------------===//
//
// One rule per op family: which distribution each operand must have, which
// one the results get, and where partial sums may stay pending. Rules are
// exact or they fall back to replicated computation; a rule never claims a
// partial result it cannot justify, since a wrong claim would be summed
// twice later.
//
//===----------------------------------------------------------------------===//

#include "Sharding.h"

#include "metac/Dialect/NN/IR/NNOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace metac;
using namespace metac::partition;

unsigned metac::partition::splitMask(ArrayRef<int> dims) {
  unsigned mask = 0;
  for (int axis : dims)
    if (axis != kReplicated)
      mask |= axisMask(axis);
  return mask;
}

unsigned Sharding::splitMask() const { return partition::splitMask(dims); }

void metac::partition::dedupeAxes(MutableArrayRef<int> dims, unsigned taken) {
  for (int &axis : dims) {
    if (axis == kReplicated)
      continue;
    // Samples split over data and expert where the expert axis is taken
    // keep their data part (a gather over expert, not over both).
    if (axis == kDataExpert && (taken & (1u << MeshAxis::Expert)) &&
        !(taken & (1u << MeshAxis::Data)))
      axis = MeshAxis::Data;
    if (taken & axisMask(axis))
      axis = kReplicated;
    else
      taken |= axisMask(axis);
  }
}

namespace {

bool isTensor(Value v) { return isa<RankedTensorType>(v.getType()); }

double meanScale(ArrayRef<int> reducedAxes, ArrayRef<int64_t> meshSizes) {
  double scale = 1.0;
  for (int axis : reducedAxes)
    if (axis != kReplicated)
      scale /= static_cast<double>(meshSizes[axis]);
  return scale;
}

/// Every operand gathered and summed, every result replicated.
OpPlan replicatedPlan(Operation *op, const RuleContext &ctx) {
  OpPlan plan;
  for (Value operand : op->getOperands()) {
    int64_t rank = isTensor(operand) ? ctx.globalTypeOf(operand).getRank() : 0;
    plan.operands.push_back({SmallVector<int>(rank, kReplicated), false});
  }
  for (Value result : op->getResults())
    plan.results.push_back(Sharding::replicated(
        isTensor(result) ? cast<RankedTensorType>(result.getType()).getRank()
                         : 0));
  return plan;
}

OpPlan unaryPlan(Value x, bool linear, const RuleContext &ctx) {
  const Sharding &s = ctx.shardingOf(x);
  OpPlan plan;
  plan.operands.push_back({s.dims, linear});
  plan.results.push_back({s.dims, linear ? s.partial : 0});
  return plan;
}

/// Elementwise binary ops. add/sub stay partial when both sides are
/// partial over the same axes; mul when one side is partial and the other
/// is not distributed over those axes; div only in the numerator.
OpPlan binaryPlan(Operation *op, const RuleContext &ctx) {
  const Sharding &l = ctx.shardingOf(op->getOperand(0));
  const Sharding &r = ctx.shardingOf(op->getOperand(1));
  SmallVector<int> dims;
  for (auto [a, b] : llvm::zip(l.dims, r.dims))
    dims.push_back(joinAxes(a, b));
  dedupeAxes(dims);
  unsigned split = splitMask(dims);
  bool keepL = false, keepR = false;
  unsigned partial = 0;
  if (isa<nn::AddOp, nn::SubOp>(op)) {
    if (l.partial && l.partial == r.partial && !(l.partial & split)) {
      keepL = keepR = true;
      partial = l.partial;
    }
  } else if (isa<nn::MulOp, nn::DivOp>(op)) {
    if (l.partial && !r.partial && !(l.partial & split)) {
      keepL = true;
      partial = l.partial;
    } else if (isa<nn::MulOp>(op) && r.partial && !l.partial &&
               !(r.partial & split)) {
      keepR = true;
      partial = r.partial;
    }
  }
  OpPlan plan;
  plan.operands = {{dims, keepL}, {dims, keepR}};
  plan.results.push_back({dims, partial});
  return plan;
}

/// A product with one operand partial stays partial when nothing else in it
/// is distributed over those axes.
void bilinearPartial(OpPlan &plan, unsigned lhsPartial, unsigned rhsPartial,
                     unsigned otherAxes) {
  if (lhsPartial && !rhsPartial && !(lhsPartial & otherAxes)) {
    plan.operands[0].keepPartial = true;
    plan.results[0].partial |= lhsPartial;
  } else if (rhsPartial && !lhsPartial && !(rhsPartial & otherAxes)) {
    plan.operands[1].keepPartial = true;
    plan.results[0].partial |= rhsPartial;
  }
}

/// x [B..., in] . W [P..., out, in]^T (+ b [P..., out]): W's leading
/// dimensions follow x's; a split contraction gives a partial result
/// (without bias, which would be added on every rank), and a contraction
/// split on one side only is sliced on the other (free): a table split by
/// vocabulary applied to replicated one-hot rows.
OpPlan linearPlan(nn::LinearOp op, const RuleContext &ctx) {
  const Sharding &x = ctx.shardingOf(op.getInput());
  const Sharding &w = ctx.shardingOf(op.getWeight());
  SmallVector<int> tx = x.dims, tw = w.dims;
  int64_t nx = tx.size(), np = tw.size() - 2;
  for (int64_t i = 0; i < np; ++i)
    tx[i] = tw[i] = joinAxes(tx[i], tw[i]);
  dedupeAxes(MutableArrayRef<int>(tx).drop_back());
  for (int64_t i = 0; i < np; ++i)
    tw[i] = tx[i];
  unsigned batchAxes = splitMask(ArrayRef<int>(tx).drop_back());
  int &xin = tx[nx - 1], &win = tw[np + 1];
  int k = joinAxes(xin, win);
  if (joinAxes(xin, win) != joinAxes(win, xin) || op.getBias() ||
      (k != kReplicated && (batchAxes & axisMask(k))))
    k = kReplicated;
  xin = win = k;
  unsigned contraction = k == kReplicated ? 0 : axisMask(k);
  int &out = tw[np];
  if (out != kReplicated && ((batchAxes | contraction) & axisMask(out)))
    out = kReplicated;

  OpPlan plan;
  SmallVector<int> result(ArrayRef<int>(tx).drop_back());
  result.push_back(out);
  plan.operands = {{tx, false}, {tw, false}};
  if (op.getBias()) {
    SmallVector<int> tb(ArrayRef<int>(tw).take_front(np));
    tb.push_back(out);
    plan.operands.push_back({tb, false});
  }
  plan.results.push_back({result, contraction});
  if (!op.getBias())
    bilinearPartial(plan, x.partial, w.partial,
                    splitMask(tx) | splitMask(tw) | contraction);
  return plan;
}

/// lhs [B..., m, k] . rhs [B..., k, n] (either read transposed).
OpPlan matmulPlan(nn::MatmulOp op, const RuleContext &ctx) {
  const Sharding &l = ctx.shardingOf(op.getLhs());
  const Sharding &r = ctx.shardingOf(op.getRhs());
  SmallVector<int> tl = l.dims, tr = r.dims;
  int64_t nb = tl.size() - 2;
  // The expert axis splits tokens (samples) and experts: when one operand
  // is split on one batch dimension and the other on another, the smaller
  // operand moves (all-to-all), so experts' weights are never gathered.
  // Samples split over data and expert keep their data part.
  auto batchDimOf = [&](ArrayRef<int> dims) {
    for (int64_t d = 0; d < nb; ++d)
      if (axisMask(dims[d]) & (1u << MeshAxis::Expert))
        return d;
    return int64_t(-1);
  };
  auto dropExpert = [](int &axis) {
    axis = axis == kDataExpert ? int(MeshAxis::Data) : kReplicated;
  };
  int64_t le = batchDimOf(tl), re = batchDimOf(tr);
  if (le >= 0 && re >= 0 && le != re) {
    if (ctx.globalTypeOf(op.getRhs()).getNumElements() >
        ctx.globalTypeOf(op.getLhs()).getNumElements())
      dropExpert(tl[le]);
    else
      dropExpert(tr[re]);
  }
  for (int64_t i = 0; i < nb; ++i)
    tl[i] = tr[i] = joinAxes(tl[i], tr[i]);
  dedupeAxes(MutableArrayRef<int>(tl).take_front(nb));
  for (int64_t i = 0; i < nb; ++i)
    tr[i] = tl[i];
  bool tlhs = op.getTransposeLhs(), trhs = op.getTransposeRhs();
  int &lm = tl[tlhs ? nb + 1 : nb], &lk = tl[tlhs ? nb : nb + 1];
  int &rk = tr[trhs ? nb + 1 : nb], &rn = tr[trhs ? nb : nb + 1];
  unsigned batchAxes = splitMask(ArrayRef<int>(tl).take_front(nb));
  // A contraction split on one side only is sliced on the other (free).
  int k = joinAxes(lk, rk);
  if (joinAxes(lk, rk) != joinAxes(rk, lk) ||
      (k != kReplicated && (batchAxes & axisMask(k))))
    k = kReplicated;
  // The sequence axis splits rows of positions; when they meet a
  // contraction over positions split the same way (attention's scores
  // times the values, or the scores' gradient times the keys), the rows
  // keep their split and the other operand is gathered: re-splitting the
  // rows by the contraction would leave a partial result of all rows to
  // all-reduce.
  if (k == int(MeshAxis::Sequence) && (lm == k || rn == k))
    k = kReplicated;
  lk = rk = k;
  unsigned contraction = k == kReplicated ? 0 : axisMask(k);
  if (lm != kReplicated && ((batchAxes | contraction) & axisMask(lm)))
    lm = kReplicated;
  unsigned taken =
      batchAxes | contraction | (lm == kReplicated ? 0 : axisMask(lm));
  if (rn != kReplicated && (taken & axisMask(rn)))
    rn = kReplicated;

  OpPlan plan;
  SmallVector<int> result(ArrayRef<int>(tl).take_front(nb));
  result.push_back(lm);
  result.push_back(rn);
  plan.operands = {{tl, false}, {tr, false}};
  plan.results.push_back({result, contraction});
  bilinearPartial(plan, l.partial, r.partial,
                  splitMask(tl) | splitMask(tr) | contraction);
  return plan;
}

OpPlan broadcastPlan(nn::BroadcastOp op, const RuleContext &ctx) {
  const Sharding &x = ctx.shardingOf(op.getInput());
  int64_t rank = cast<RankedTensorType>(op.getType()).getRank();
  SmallVector<int> result(rank, kReplicated);
  ArrayRef<int64_t> added = op.getDimensions();
  for (int64_t d = 0, source = 0; d < rank; ++d)
    if (!llvm::is_contained(added, d))
      result[d] = x.dims[source++];
  OpPlan plan;
  plan.operands.push_back({x.dims, true});
  plan.results.push_back({result, x.partial});
  return plan;
}

/// Sums over split dimensions are partial; means are sums scaled by
/// local/global counts.
OpPlan reducePlan(Operation *op, ArrayRef<int64_t> reduced, bool mean,
                  const RuleContext &ctx) {
  const Sharding &x = ctx.shardingOf(op->getOperand(0));
  SmallVector<int> result, reducedAxes;
  for (auto [d, axis] : llvm::enumerate(x.dims)) {
    if (llvm::is_contained(reduced, static_cast<int64_t>(d)))
      reducedAxes.push_back(axis);
    else
      result.push_back(axis);
  }
  OpPlan plan;
  plan.operands.push_back({x.dims, true});
  plan.results.push_back({result, x.partial | splitMask(reducedAxes)});
  if (mean)
    plan.resultScale = meanScale(reducedAxes, ctx.meshSizes);
  return plan;
}

OpPlan transposePlan(nn::TransposeOp op, const RuleContext &ctx) {
  const Sharding &x = ctx.shardingOf(op.getInput());
  SmallVector<int> result;
  for (int64_t source : op.getPermutation())
    result.push_back(x.dims[source]);
  OpPlan plan;
  plan.operands.push_back({x.dims, true});
  plan.results.push_back({result, x.partial});
  return plan;
}

/// A split dimension survives a reshape when the result has a dimension at
/// the same flat offset (same prefix product) that is the same dimension,
/// its outer factor (a split into [heads, width]: whole heads per rank), or
/// a merge that it leads ([heads, width] back into features): in each case
/// every rank's part stays one contiguous block. Others are gathered first.
OpPlan reshapePlan(nn::ReshapeOp op, const RuleContext &ctx) {
  const Sharding &x = ctx.shardingOf(op.getInput());
  ArrayRef<int64_t> in = ctx.globalTypeOf(op.getInput()).getShape();
  ArrayRef<int64_t> out = cast<RankedTensorType>(op.getType()).getShape();
  SmallVector<int> source = x.dims, result(out.size(), kReplicated);
  for (auto [d, axis] : llvm::enumerate(source)) {
    if (axis == kReplicated)
      continue;
    int64_t prefixIn = 1;
    for (int64_t i = 0; i < static_cast<int64_t>(d); ++i)
      prefixIn *= in[i];
    int64_t prefixOut = 1;
    bool kept = false;
    for (int64_t e = 0; e < static_cast<int64_t>(out.size());
         prefixOut *= out[e], ++e) {
      if (prefixOut != prefixIn)
        continue;
      int64_t parts = ctx.meshSizes[axis];
      bool same = out[e] == in[d];
      bool outerFactor = out[e] < in[d] && in[d] % out[e] == 0;
      // A merge led by this dimension: the following input dimensions
      // must make up the rest of out[e], unsplit.
      bool leadsMerge = false;
      if (out[e] > in[d] && out[e] % in[d] == 0) {
        int64_t rest = out[e] / in[d], product = 1;
        for (int64_t i = d + 1;
             i < static_cast<int64_t>(in.size()) && product < rest; ++i) {
          if (source[i] != kReplicated)
            break;
          product *= in[i];
        }
        leadsMerge = product == rest;
      }
      if ((same || outerFactor || leadsMerge) && out[e] % parts == 0) {
        result[e] = axis;
        kept = true;
      }
      break;
    }
    if (!kept)
      axis = kReplicated;
  }
  OpPlan plan;
  plan.operands.push_back({source, true});
  plan.results.push_back({result, x.partial});
  return plan;
}

/// Losses are means over the sample positions after `batchRank`: split
/// sample dimensions give partial, rescaled losses.
OpPlan lossPlan(Operation *op, int64_t batchRank, int64_t jointRank,
                const RuleContext &ctx) {
  const Sharding &a = ctx.shardingOf(op->getOperand(0));
  const Sharding &b = ctx.shardingOf(op->getOperand(1));
  SmallVector<int> joint;
  for (int64_t d = 0; d < jointRank; ++d)
    joint.push_back(joinAxes(a.dims[d], b.dims[d]));
  dedupeAxes(joint);
  SmallVector<int> ta = joint, tb = joint;
  // Class scores (cross-entropy's last dimension) stay whole.
  for (int64_t d = jointRank; d < static_cast<int64_t>(a.dims.size()); ++d)
    ta.push_back(kReplicated);
  OpPlan plan;
  plan.operands = {{ta, false}, {tb, false}};
  ArrayRef<int> sampleAxes = ArrayRef<int>(joint).drop_front(batchRank);
  plan.results.push_back(
      {SmallVector<int>(ArrayRef<int>(joint).take_front(batchRank)),
       splitMask(sampleAxes)});
  plan.resultScale = meanScale(sampleAxes, ctx.meshSizes);
  return plan;
}

OpPlan softmaxPlan(Operation *op, int64_t axis, const RuleContext &ctx) {
  SmallVector<int> dims = ctx.shardingOf(op->getOperand(0)).dims;
  dims[axis] = kReplicated;
  OpPlan plan;
  plan.operands.push_back({dims, false});
  plan.results.push_back({dims, 0});
  return plan;
}

/// Fused attention and its derivatives: the batch dimensions (tasks,
/// samples, heads) are independent and keep the operands' split; each
/// attention's features stay whole, and so do its queries and keys, unless
/// the sequence axis splits them: then they stay split and the op becomes
/// ring attention (`ring_axes`), whose keys travel around that axis.
OpPlan attentionPlan(Operation *op, const RuleContext &ctx) {
  SmallVector<int> dims = ctx.shardingOf(op->getOperand(0)).dims;
  size_t rank = dims.size();
  bool positionsSplit = false;
  for (Value operand : op->getOperands())
    positionsSplit |=
        ctx.shardingOf(operand).dims[rank - 2] == int(MeshAxis::Sequence);
  for (Value other : op->getOperands().drop_front())
    for (auto [d, axis] : llvm::enumerate(ctx.shardingOf(other).dims))
      dims[d] = joinAxes(dims[d], axis);
  dims[rank - 1] = kReplicated;
  dims[rank - 2] = ctx.ringAttention && positionsSplit ? int(MeshAxis::Sequence)
                                                       : kReplicated;
  // The positions' split comes first: batch dimensions give the axis up.
  for (size_t d = 0; d + 2 < rank; ++d)
    if (dims[d] == dims[rank - 2])
      dims[d] = kReplicated;
  dedupeAxes(dims);
  OpPlan plan;
  plan.operands.assign(op->getNumOperands(), OperandTarget{dims, false});
  plan.results.push_back({dims, 0});
  if (dims[rank - 2] != kReplicated) {
    Builder b(op->getContext());
    plan.attributes.push_back(b.getNamedAttr(
        "ring_axes", b.getDenseI16ArrayAttr({int16_t(MeshAxis::Sequence)})));
  }
  return plan;
}

/// Normalisation over the last dimension: leading dimensions are
/// independent; the normalised one stays whole, and so do the parameters
/// beyond their leading (task) dimensions.
OpPlan layerNormPlan(nn::LayerNormOp op, const RuleContext &ctx) {
  SmallVector<int> dims = ctx.shardingOf(op.getInput()).dims;
  dims.back() = kReplicated;
  int64_t leading = ctx.globalTypeOf(op.getWeight()).getRank() - 1;
  SmallVector<int> params(ArrayRef<int>(dims).take_front(leading));
  params.push_back(kReplicated);
  OpPlan plan;
  plan.operands = {{dims, false}, {params, false}, {params, false}};
  plan.results.push_back({dims, 0});
  return plan;
}

/// Table lookups keep the positions' distribution; the table's leading
/// (task) dimensions follow the positions', its rows and features stay
/// whole.
OpPlan embeddingPlan(nn::EmbeddingOp op, const RuleContext &ctx) {
  SmallVector<int> ids = ctx.shardingOf(op.getIds()).dims;
  int64_t leading = ctx.globalTypeOf(op.getTable()).getRank() - 2;
  SmallVector<int> table(ArrayRef<int>(ids).take_front(leading));
  table.append({kReplicated, kReplicated});
  SmallVector<int> result = ids;
  result.push_back(kReplicated);
  OpPlan plan;
  plan.operands = {{ids, false}, {table, false}};
  plan.results.push_back({result, 0});
  return plan;
}

/// The scatter-add into the table sums over positions: split positions
/// beyond the table's leading dimensions give a partial table.
OpPlan embeddingBackwardPlan(nn::EmbeddingBackwardOp op,
                             const RuleContext &ctx) {
  const Sharding &ids = ctx.shardingOf(op.getIds());
  const Sharding &grad = ctx.shardingOf(op.getGrad());
  SmallVector<int> positions;
  for (auto [a, b] : llvm::zip(ids.dims, grad.dims))
    positions.push_back(joinAxes(a, b));
  dedupeAxes(positions);
  SmallVector<int> gradDims = positions;
  gradDims.push_back(kReplicated);
  int64_t leading = cast<RankedTensorType>(op.getType()).getRank() - 2;
  SmallVector<int> result(ArrayRef<int>(positions).take_front(leading));
  result.append({kReplicated, kReplicated});
  OpPlan plan;
  plan.operands = {{positions, false}, {gradDims, false}};
  plan.results.push_back(
      {result, splitMask(ArrayRef<int>(positions).drop_front(leading))});
  return plan;
}

/// Routing is per group: the leading (group) dimensions may be split, the
/// tokens and experts of a group stay whole.
OpPlan moeDispatchPlan(nn::MoeDispatchOp op, const RuleContext &ctx) {
  SmallVector<int> dims = ctx.shardingOf(op.getProbs()).dims;
  dims[dims.size() - 1] = dims[dims.size() - 2] = kReplicated;
  OpPlan plan;
  plan.operands.push_back({dims, false});
  dims.push_back(kReplicated);
  plan.results.push_back({dims, 0});
  return plan;
}

OpPlan oneHotPlan(nn::OneHotOp op, const RuleContext &ctx) {
  SmallVector<int> dims = ctx.shardingOf(op.getLabels()).dims;
  OpPlan plan;
  plan.operands.push_back({dims, false});
  dims.push_back(kReplicated);
  plan.results.push_back({dims, 0});
  return plan;
}

} // namespace

OpPlan metac::partition::planOp(Operation *op, const RuleContext &ctx) {
  return llvm::TypeSwitch<Operation *, OpPlan>(op)
      // A conversion passes a pending sum on, so the sum is taken in the
      // converted type: a bf16 program's gradients, converted to f32 where
      // its parameters enter, are summed in f32.
      .Case<nn::NegOp, nn::ScaleOp, nn::StopGradientOp, nn::ConvertOp>(
          [&](Operation *op) {
            return unaryPlan(op->getOperand(0), true, ctx);
          })
      .Case<nn::ExpOp, nn::LogOp, nn::SqrtOp, nn::RsqrtOp, nn::ErfOp,
            nn::ReluOp, nn::StepOp, nn::TanhOp, nn::SigmoidOp, nn::GeluOp>(
          [&](Operation *op) {
            return unaryPlan(op->getOperand(0), false, ctx);
          })
      .Case<nn::AddOp, nn::SubOp, nn::MulOp, nn::DivOp>(
          [&](Operation *op) { return binaryPlan(op, ctx); })
      .Case([&](nn::LinearOp op) { return linearPlan(op, ctx); })
      .Case([&](nn::MatmulOp op) { return matmulPlan(op, ctx); })
      .Case([&](nn::BroadcastOp op) { return broadcastPlan(op, ctx); })
      .Case([&](nn::ReduceSumOp op) {
        return reducePlan(op, op.getDimensions(), false, ctx);
      })
      .Case([&](nn::ReduceMeanOp op) {
        return reducePlan(op, op.getDimensions(), true, ctx);
      })
      .Case([&](nn::TransposeOp op) { return transposePlan(op, ctx); })
      .Case([&](nn::ReshapeOp op) { return reshapePlan(op, ctx); })
      .Case([&](nn::MSELossOp op) {
        int64_t rank = ctx.globalTypeOf(op.getPrediction()).getRank();
        return lossPlan(op, op.getBatchRank(), rank, ctx);
      })
      .Case<nn::CrossEntropyLossOp, nn::AccuracyOp>([&](auto op) {
        int64_t rank = ctx.globalTypeOf(op.getLabels()).getRank();
        return lossPlan(op, op.getBatchRank(), rank, ctx);
      })
      .Case<nn::SoftmaxOp, nn::LogSoftmaxOp>([&](Operation *op) {
        return softmaxPlan(op, op->getAttrOfType<IntegerAttr>("axis").getInt(),
                           ctx);
      })
      .Case([&](nn::OneHotOp op) { return oneHotPlan(op, ctx); })
      .Case([&](nn::MoeDispatchOp op) { return moeDispatchPlan(op, ctx); })
      .Case<nn::AttentionOp, nn::AttentionBackwardOp,
            nn::AttentionDoubleBackwardOp>(
          [&](Operation *op) { return attentionPlan(op, ctx); })
      .Case([&](nn::LayerNormOp op) { return layerNormPlan(op, ctx); })
      .Case([&](nn::EmbeddingOp op) { return embeddingPlan(op, ctx); })
      .Case([&](nn::EmbeddingBackwardOp op) {
        return embeddingBackwardPlan(op, ctx);
      })
      .Case<nn::Conv2DOp>([&](Operation *op) { return conv2dPlan(op, ctx); })
      .Case<nn::Conv2DBackwardInputOp>(
          [&](Operation *op) { return conv2dBackwardInputPlan(op, ctx); })
      .Case<nn::Conv2DBackwardWeightOp>(
          [&](Operation *op) { return conv2dBackwardWeightPlan(op, ctx); })
      .Case<nn::MaxPool2DOp, nn::AvgPool2DOp, nn::MaxPool2DBackwardOp,
            nn::MaxPool2DGatherOp, nn::AvgPool2DBackwardOp>(
          [&](Operation *op) { return pool2dPlan(op, ctx); })
      .Case<nn::BatchNormOp>(
          [&](Operation *op) { return batchNormPlan(op, ctx); })
      .Default([&](Operation *op) { return replicatedPlan(op, ctx); });
}
