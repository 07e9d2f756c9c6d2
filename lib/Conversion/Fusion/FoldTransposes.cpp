//===- FoldTransposes.cpp - transposes into the products that read them ---===//
//
// Reverse-mode autodiff transposes weights and products for the backward
// GEMMs (dx = dy W, dW = dy^T x) and transposes them back for the double
// backward; each nn.transpose is a copy through memory. BLAS and oneDNN
// read either operand transposed for free, so a transpose of the last two
// dimensions is folded into the product that reads it:
//
//   transpose(transpose(x, p), q)      -> transpose(x, p o q), or x
//   linear(x, transpose(w))            -> matmul(x, w)        (no bias)
//   matmul(transpose(a), b, ta, tb)    -> matmul(a, b, !ta, tb)
//   transpose(matmul(a, b, ta, tb))    -> matmul(b, a, !tb, !ta)
//
// Transposes left without users are erased. Runs after partitioning (the
// sharding rules see the ops autodiff wrote) in the `optimized` phase.
//
//===----------------------------------------------------------------------===//

#include "metac/Conversion/Passes.h"

#include "metac/Dialect/NN/IR/NNOps.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace metac {
#define GEN_PASS_DEF_FOLDNNTRANSPOSES
#include "metac/Conversion/Passes.h.inc"
} // namespace metac

using namespace mlir;
using namespace metac;

namespace {

/// Whether `permutation` swaps the last two dimensions and keeps the rest.
bool swapsLastTwo(ArrayRef<int64_t> permutation) {
  int64_t rank = permutation.size();
  if (rank < 2)
    return false;
  for (int64_t i = 0; i + 2 < rank; ++i)
    if (permutation[i] != i)
      return false;
  return permutation[rank - 2] == rank - 1 && permutation[rank - 1] == rank - 2;
}

/// The value `v` is a transpose of the last two dimensions of, or null.
Value untransposed(Value v) {
  auto transpose = v.getDefiningOp<nn::TransposeOp>();
  if (!transpose || !swapsLastTwo(transpose.getPermutation()))
    return nullptr;
  return transpose.getInput();
}

struct ComposeTransposes : OpRewritePattern<nn::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(nn::TransposeOp op,
                                PatternRewriter &rewriter) const override {
    auto inner = op.getInput().getDefiningOp<nn::TransposeOp>();
    if (!inner)
      return failure();
    ArrayRef<int64_t> p = inner.getPermutation(), q = op.getPermutation();
    // Result dimension i is the inner result's q[i], the input's p[q[i]].
    SmallVector<int64_t> composed;
    bool identity = true;
    for (auto [i, d] : llvm::enumerate(q)) {
      composed.push_back(p[d]);
      identity &= p[d] == static_cast<int64_t>(i);
    }
    if (identity)
      rewriter.replaceOp(op, inner.getInput());
    else
      rewriter.replaceOpWithNewOp<nn::TransposeOp>(op, op.getType(),
                                                   inner.getInput(), composed);
    return success();
  }
};

struct LinearOfTranspose : OpRewritePattern<nn::LinearOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(nn::LinearOp op,
                                PatternRewriter &rewriter) const override {
    // y = x t^T with t = w^T is x w: a product when x's leading dimensions
    // are the weight's batch dimensions and one row dimension.
    Value weight = untransposed(op.getWeight());
    auto xType = cast<RankedTensorType>(op.getInput().getType());
    auto wType = cast<RankedTensorType>(op.getWeight().getType());
    if (!weight || op.getBias() || xType.getRank() != wType.getRank())
      return failure();
    rewriter.replaceOpWithNewOp<nn::MatmulOp>(op, op.getType(), op.getInput(),
                                              weight, false, false);
    return success();
  }
};

struct MatmulOfTranspose : OpRewritePattern<nn::MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(nn::MatmulOp op,
                                PatternRewriter &rewriter) const override {
    Value lhs = untransposed(op.getLhs()), rhs = untransposed(op.getRhs());
    if (!lhs && !rhs)
      return failure();
    bool transposeLhs = op.getTransposeLhs(),
         transposeRhs = op.getTransposeRhs();
    if (lhs)
      transposeLhs = !transposeLhs;
    if (rhs)
      transposeRhs = !transposeRhs;
    rewriter.replaceOpWithNewOp<nn::MatmulOp>(
        op, op.getType(), lhs ? lhs : op.getLhs(), rhs ? rhs : op.getRhs(),
        transposeLhs, transposeRhs);
    return success();
  }
};

struct TransposeOfMatmul : OpRewritePattern<nn::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(nn::TransposeOp op,
                                PatternRewriter &rewriter) const override {
    // (op(a) op(b))^T = op(b)^T op(a)^T; a product used elsewhere too would
    // be computed twice.
    auto product = op.getInput().getDefiningOp<nn::MatmulOp>();
    if (!product || !product->hasOneUse() || !swapsLastTwo(op.getPermutation()))
      return failure();
    rewriter.replaceOpWithNewOp<nn::MatmulOp>(
        op, op.getType(), product.getRhs(), product.getLhs(),
        !product.getTransposeRhs(), !product.getTransposeLhs());
    return success();
  }
};

struct FoldNNTransposes : metac::impl::FoldNNTransposesBase<FoldNNTransposes> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ComposeTransposes, LinearOfTranspose, MatmulOfTranspose,
                 TransposeOfMatmul>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
