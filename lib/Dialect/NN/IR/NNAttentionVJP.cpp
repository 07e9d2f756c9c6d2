//===- NNAttentionVJP.cpp - derivatives of fused attention ----------------===//
//
// With S = scale q k^T (+ a causal mask), P = softmax(S), y = P v and dy the
// output's cotangent:
//   dv = P^T dy,  dP = dy v^T,  D = rowsum(P dP),
//   dS = P (dP - D),  dq = scale dS k,  dk = scale dS^T q.
// The first derivative is three nn.attention_backward ops, their derivative
// nn.attention_double_backward ops (the formulas are in the runtime's kernel
// and the interpreter): both computed in tiles, without S x T tensors, and
// what the unrolled inner loop keeps for the outer backward is q, k, v and
// dy, never P. The ops of one attention that share their operands become
// one runtime call (getSiblings).
//
//===----------------------------------------------------------------------===//

#include "metac/Dialect/NN/IR/NNBuilder.h"
#include "metac/Dialect/NN/IR/NNOps.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace metac::nn;

namespace {

/// The ops in `op`'s block with its operands for which `sameCall` holds,
/// one per `wrt` (the first kept), in program order; just `op` when an
/// earlier op with its `wrt` takes its place (a duplicate CSE left), so
/// that it gets a call of its own.
template <typename Op, unsigned N, typename SameCall>
SmallVector<Op, N> siblingsOf(Op op, SameCall sameCall) {
  SmallVector<Op, N> siblings;
  for (Operation *user : op->getOperand(0).getUsers()) {
    auto other = dyn_cast<Op>(user);
    if (!other || other->getBlock() != op->getBlock() ||
        !llvm::equal(other->getOperands(), op->getOperands()) ||
        !sameCall(other))
      continue;
    auto same = llvm::find_if(
        siblings, [&](Op s) { return s.getWrt() == other.getWrt(); });
    if (same == siblings.end())
      siblings.push_back(other);
    else if (other->isBeforeInBlock(*same))
      *same = other;
  }
  if (!llvm::is_contained(siblings, op))
    return {op};
  llvm::sort(siblings, [](Op a, Op b) { return a->isBeforeInBlock(b); });
  return siblings;
}

} // namespace

SmallVector<AttentionBackwardOp, 3> AttentionBackwardOp::getSiblings() {
  return siblingsOf<AttentionBackwardOp, 3>(
      *this, [&](AttentionBackwardOp other) {
        return other.getScale() == getScale() &&
               other.getCausal() == getCausal() &&
               other.getRingAxesAttr() == getRingAxesAttr();
      });
}

SmallVector<AttentionDoubleBackwardOp, 4>
AttentionDoubleBackwardOp::getSiblings() {
  return siblingsOf<AttentionDoubleBackwardOp, 4>(
      *this, [&](AttentionDoubleBackwardOp other) {
        return other.getScale() == getScale() &&
               other.getCausal() == getCausal() &&
               other.getFrom() == getFrom() &&
               other.getRingAxesAttr() == getRingAxesAttr();
      });
}

LogicalResult AttentionOp::buildVJP(OpBuilder &b, ValueRange dys,
                                    SmallVectorImpl<Value> &dx) {
  NNBuilder nn(b, getLoc());
  double scale = getScale().convertToDouble();
  for (StringRef wrt : {"query", "key", "value"}) {
    Value d = nn.attentionBackward(getQuery(), getKey(), getValue(), dys[0],
                                   scale, getCausal(), wrt);
    // Ring attention's derivative is ring attention's too.
    if (DenseI16ArrayAttr axes = getRingAxesAttr())
      d.getDefiningOp()->setAttr(getRingAxesAttrName(), axes);
    dx.push_back(d);
  }
  return success();
}

LogicalResult AttentionBackwardOp::buildVJP(OpBuilder &b, ValueRange dys,
                                            SmallVectorImpl<Value> &dx) {
  NNBuilder nn(b, getLoc());
  double scale = getScale().convertToDouble();
  for (StringRef wrt : {"query", "key", "value", "grad"}) {
    // dv = P^T dy does not depend on v.
    if (getWrt() == "value" && wrt == "value") {
      dx.push_back(Value());
      continue;
    }
    Value d =
        nn.attentionDoubleBackward(getQuery(), getKey(), getValue(), getGrad(),
                                   dys[0], scale, getCausal(), getWrt(), wrt);
    if (DenseI16ArrayAttr axes = getRingAxesAttr())
      d.getDefiningOp()->setAttr(getRingAxesAttrName(), axes);
    dx.push_back(d);
  }
  return success();
}

LogicalResult AttentionDoubleBackwardOp::buildVJP(OpBuilder &b, ValueRange,
                                                  SmallVectorImpl<Value> &) {
  return emitOpError("has no derivative: a third derivative through fused "
                     "attention needs `fused = false`");
}
