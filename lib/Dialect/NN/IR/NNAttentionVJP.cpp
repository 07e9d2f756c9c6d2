//===- NNAttentionVJP.cpp - the derivative of fused attention -------------===//
//
// With P = softmax(scale q k^T + mask) and y = P v, and dy the cotangent:
//   dv = P^T dy,  dP = dy v^T,  dS = P (dP - rowsum(dP P)),
//   dq = scale dS k,  dk = scale dS^T q.
// P is recomputed from q and k (FlashAttention's backward keeps only the
// output and the softmax statistics; here the nn ops recompute it), and
// every op of the derivative is differentiable: second-order MAML
// differentiates this derivative like the rest of the program.
//
//===----------------------------------------------------------------------===//

#include "metac/Dialect/NN/IR/NNBuilder.h"
#include "metac/Dialect/NN/IR/NNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace metac::nn;

LogicalResult AttentionOp::buildVJP(OpBuilder &b, ValueRange dys,
                                    SmallVectorImpl<Value> &dx) {
  NNBuilder nn(b, getLoc());
  Value dy = dys[0], q = getQuery(), k = getKey(), v = getValue();
  double scale = getScale().convertToDouble();
  auto qt = cast<RankedTensorType>(q.getType());
  int64_t rank = qt.getRank();
  int64_t length = qt.getShape()[rank - 2];
  int64_t keys = cast<RankedTensorType>(k.getType()).getShape()[rank - 2];
  SmallVector<int64_t> scoreShape(qt.getShape().drop_back(2));
  scoreShape.append({length, keys});

  Value scores = nn.scale(nn.matmul(q, k, false, true), scale);
  if (getCausal()) {
    // Later keys get a large negative score: the softmax gives them 0, as
    // the fused kernel, which skips them.
    Type element = qt.getElementType();
    SmallVector<Attribute> mask;
    for (int64_t i = 0; i < length; ++i)
      for (int64_t j = 0; j < keys; ++j)
        mask.push_back(b.getFloatAttr(element, j > i ? -1e9 : 0.0));
    auto maskType = RankedTensorType::get({length, keys}, element);
    Value m = arith::ConstantOp::create(b, getLoc(), maskType,
                                        DenseElementsAttr::get(maskType, mask));
    SmallVector<int64_t> lead;
    for (int64_t d = 0; d < rank - 2; ++d)
      lead.push_back(d);
    if (!lead.empty())
      m = nn.broadcast(m, scoreShape, lead);
    scores = nn.add(scores, m);
  }
  Value p = nn.softmax(scores, rank - 1);
  Value dv = nn.matmul(p, dy, /*transposeA=*/true, false);
  Value dp = nn.matmul(dy, v, false, /*transposeB=*/true);
  Value rows = nn.reduceSum(nn.mul(dp, p), {rank - 1});
  Value ds = nn.mul(p, nn.sub(dp, nn.broadcast(rows, scoreShape, {rank - 1})));
  dx.push_back(nn.scale(nn.matmul(ds, k), scale));
  dx.push_back(nn.scale(nn.matmul(ds, q, /*transposeA=*/true, false), scale));
  dx.push_back(dv);
  return success();
}
