//===- DegenerateProducts.cpp - products of a unit dimension as maps ------===//
//
// A meta-batch's products of a one-feature layer (sinusoid's 1-40 input and
// 40-1 output layers) have one term (an outer product), one row or one
// column (dot products along the terms). A library call spends more on its
// fixed cost than on such a product, and its result is read once by a map
// that a fused kernel could have computed it in. So, as XLA's dot
// strength reduction does, these products become what they compute, over
// the batch dimensions of op(a) [.., m, k] and op(b) [.., k, n]:
//
//   k = 1:  y = broadcast(a) * broadcast(b)          (unit dims summed away)
//   m = 1:  y[.., 0, :] = sum_k broadcast(a) * b      (over the terms)
//   n = 1:  y[.., :, 0] = sum_k a * broadcast(b)
//
// A sum over a unit dimension drops it exactly, and a broadcast adds one,
// so no reshape is needed. Batched linear layers with one input or output
// feature are a product with the weight read transposed and the bias
// added. Such products join groups as they are (nn.fused's isFusible):
// the kernel generator decomposes them, while a group run op by op (CUDA)
// keeps its library call. Other batched linear layers with a bias become
// the product and a map adding the bias, before grouping, which then
// joins the activation's group (the runtime adds a per-task bias in a pass
// of its own). Unbatched products stay calls: their sums would run over the
// leading dimension, which kernels split over the threads.
//
//===----------------------------------------------------------------------===//

#include "DegenerateProducts.h"

#include "metac/Dialect/NN/IR/NNBuilder.h"
#include "metac/Dialect/NN/IR/NNOps.h"

using namespace mlir;
using namespace metac;

namespace {

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

bool isWideFloat(Value v) {
  Type element = cast<RankedTensorType>(v.getType()).getElementType();
  return element.isF32() || element.isF64();
}

/// op(a) op(b) as maps and sums; requires a unit m, n or k.
Value decompose(nn::NNBuilder &nn, Value a, Value b, bool transposeA,
                bool transposeB, RankedTensorType resultType) {
  ArrayRef<int64_t> as = shapeOf(a), bs = shapeOf(b);
  ArrayRef<int64_t> ys = resultType.getShape();
  int64_t r = as.size();
  int64_t m = ys[r - 2];
  int64_t k = transposeA ? as[r - 2] : as[r - 1];
  // Stored positions of the dimensions of each operand.
  int64_t aRows = transposeA ? r - 1 : r - 2,
          aTerms = transposeA ? r - 2 : r - 1;
  int64_t bTerms = transposeB ? r - 1 : r - 2,
          bCols = transposeB ? r - 2 : r - 1;
  if (k == 1) {
    Value rows = nn.reduceSum(a, {aTerms}); // [.., m]
    Value cols = nn.reduceSum(b, {bTerms}); // [.., n]
    return nn.mul(nn.broadcast(rows, ys, {r - 1}),
                  nn.broadcast(cols, ys, {r - 2}));
  }
  if (m == 1) {
    Value row = nn.reduceSum(a, {aRows}); // [.., k]
    // Along b's stored terms; b's columns are the new dimension.
    Value spread = nn.broadcast(row, bs, {bCols});
    Value sums = nn.reduceSum(nn.mul(spread, b), {bTerms}); // [.., n]
    return nn.broadcast(sums, ys, {r - 2});
  }
  Value col = nn.reduceSum(b, {bCols}); // [.., k]
  Value spread = nn.broadcast(col, as, {aRows});
  Value sums = nn.reduceSum(nn.mul(a, spread), {aTerms}); // [.., m]
  return nn.broadcast(sums, ys, {r - 1});
}

} // namespace

void fusion::decomposeProductsWithUnitDimension(Block &block) {
  SmallVector<Operation *> products;
  for (Operation &op : block)
    if (isa<nn::MatmulOp, nn::LinearOp>(op) && nn::FusedOp::isFusible(&op))
      products.push_back(&op);
  for (Operation *op : products) {
    OpBuilder b(op);
    nn::NNBuilder nn(b, op->getLoc());
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    Value replacement;
    if (auto product = dyn_cast<nn::MatmulOp>(op)) {
      replacement = decompose(nn, product.getLhs(), product.getRhs(),
                              product.getTransposeLhs(),
                              product.getTransposeRhs(), resultType);
    } else {
      auto linear = cast<nn::LinearOp>(op);
      replacement = decompose(nn, linear.getInput(), linear.getWeight(), false,
                              true, resultType);
      if (Value bias = linear.getBias())
        replacement = nn.add(
            replacement,
            nn.broadcast(bias, resultType.getShape(),
                         {static_cast<int64_t>(resultType.getRank()) - 2}));
    }
    op->getResult(0).replaceAllUsesWith(replacement);
    op->erase();
  }
}

void fusion::splitBatchedBiases(Block &block) {
  SmallVector<nn::LinearOp> linears;
  for (Operation &op : block)
    if (auto linear = dyn_cast<nn::LinearOp>(op))
      if (linear.getBias() && !nn::FusedOp::isFusible(linear) &&
          shapeOf(linear.getInput()).size() ==
              shapeOf(linear.getWeight()).size() &&
          isWideFloat(linear.getInput()) && isWideFloat(linear.getWeight()) &&
          isWideFloat(linear.getBias()))
        linears.push_back(linear);
  for (nn::LinearOp linear : linears) {
    OpBuilder b(linear);
    nn::NNBuilder nn(b, linear.getLoc());
    auto resultType = cast<RankedTensorType>(linear.getType());
    Value product =
        nn.matmul(linear.getInput(), linear.getWeight(), false, true);
    Value biased =
        nn.add(product,
               nn.broadcast(linear.getBias(), resultType.getShape(),
                            {static_cast<int64_t>(resultType.getRank()) - 2}));
    linear.replaceAllUsesWith(biased);
    linear.erase();
  }
}
