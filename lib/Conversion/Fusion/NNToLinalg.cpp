//===- NNToLinalg.cpp - nn ops of a fusion group as linalg.generic --------===//

#include "NNToLinalg.h"

#include "metac/Dialect/NN/IR/NNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace metac;

namespace {

/// The scalar formula of an elementwise op on `args` (one element of each
/// operand), as the runtime computes it.
Value scalarOf(OpBuilder &b, Location loc, Operation *op, ValueRange args) {
  Value x = args[0];
  Type type = x.getType();
  auto constant = [&](double v) -> Value {
    return arith::ConstantOp::create(b, loc, type, b.getFloatAttr(type, v));
  };
  auto binary = [&](auto tag) -> Value {
    using Op = decltype(tag);
    return Op::create(b, loc, x, args[1]);
  };
  return llvm::TypeSwitch<Operation *, Value>(op)
      .Case([&](nn::NegOp) { return arith::NegFOp::create(b, loc, x); })
      .Case([&](nn::ExpOp) { return math::ExpOp::create(b, loc, x); })
      .Case([&](nn::LogOp) { return math::LogOp::create(b, loc, x); })
      .Case([&](nn::SqrtOp) { return math::SqrtOp::create(b, loc, x); })
      .Case([&](nn::RsqrtOp) {
        return arith::DivFOp::create(b, loc, constant(1),
                                     math::SqrtOp::create(b, loc, x));
      })
      .Case([&](nn::ErfOp) { return math::ErfOp::create(b, loc, x); })
      .Case([&](nn::TanhOp) { return math::TanhOp::create(b, loc, x); })
      .Case([&](nn::ReluOp) {
        // x < 0 ? 0 : x, so that NaN propagates (as the runtime's).
        Value negative = arith::CmpFOp::create(
            b, loc, arith::CmpFPredicate::OLT, x, constant(0));
        return arith::SelectOp::create(b, loc, negative, constant(0), x);
      })
      .Case([&](nn::StepOp) {
        Value positive = arith::CmpFOp::create(
            b, loc, arith::CmpFPredicate::OGT, x, constant(0));
        return arith::SelectOp::create(b, loc, positive, constant(1),
                                       constant(0));
      })
      .Case([&](nn::SigmoidOp) {
        Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
        return arith::DivFOp::create(
            b, loc, constant(1), arith::AddFOp::create(b, loc, constant(1), e));
      })
      .Case([&](nn::GeluOp) {
        // x * erfc(-x / sqrt(2)) / 2, precise for negative x.
        Value scaled =
            arith::MulFOp::create(b, loc, arith::NegFOp::create(b, loc, x),
                                  constant(0.70710678118654752440));
        Value half = arith::MulFOp::create(b, loc, x, constant(0.5));
        return arith::MulFOp::create(b, loc, half,
                                     math::ErfcOp::create(b, loc, scaled));
      })
      .Case([&](nn::ScaleOp scale) {
        return arith::MulFOp::create(
            b, loc, x, constant(scale.getFactor().convertToDouble()));
      })
      .Case([&](nn::AddOp) { return binary(arith::AddFOp()); })
      .Case([&](nn::SubOp) { return binary(arith::SubFOp()); })
      .Case([&](nn::MulOp) { return binary(arith::MulFOp()); })
      .Case([&](nn::DivOp) { return binary(arith::DivFOp()); })
      .Default([](Operation *) -> Value { return nullptr; });
}

Value emptyOf(OpBuilder &b, Location loc, Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return tensor::EmptyOp::create(b, loc, tensor.getShape(),
                                 tensor.getElementType());
}

/// `identity` over `rank` dimensions without `dropped` (sorted).
AffineMap withoutDims(OpBuilder &b, int64_t rank, ArrayRef<int64_t> dropped) {
  SmallVector<AffineExpr> kept;
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(dropped, d))
      kept.push_back(b.getAffineDimExpr(d));
  return AffineMap::get(rank, 0, kept, b.getContext());
}

Value elementwise(OpBuilder &b, Location loc, Operation *op,
                  ValueRange operands, Type type) {
  int64_t rank = cast<RankedTensorType>(type).getRank();
  SmallVector<AffineMap> maps(operands.size() + 1,
                              b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{type}, operands, ValueRange{emptyOf(b, loc, type)},
      maps, iterators, [&](OpBuilder &nested, Location at, ValueRange args) {
        linalg::YieldOp::create(nested, at,
                                scalarOf(nested, at, op, args.drop_back()));
      });
  return generic.getResult(0);
}

Value broadcast(OpBuilder &b, Location loc, nn::BroadcastOp op, Value operand,
                Type type) {
  int64_t rank = cast<RankedTensorType>(type).getRank();
  SmallVector<AffineMap> maps = {withoutDims(b, rank, op.getDimensions()),
                                 b.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{type}, ValueRange{operand},
      ValueRange{emptyOf(b, loc, type)}, maps, iterators,
      [](OpBuilder &nested, Location at, ValueRange args) {
        linalg::YieldOp::create(nested, at, args[0]);
      });
  return generic.getResult(0);
}

/// The sum over `dims`, divided by the number of summed elements when
/// `mean` (as the runtime divides, not multiplies by the reciprocal).
Value reduce(OpBuilder &b, Location loc, Value operand, Type type,
             ArrayRef<int64_t> dims, bool mean) {
  auto inputType = cast<RankedTensorType>(operand.getType());
  Type element = inputType.getElementType();
  int64_t rank = inputType.getRank();
  Value zero =
      arith::ConstantOp::create(b, loc, element, b.getFloatAttr(element, 0.0));
  Value init =
      linalg::FillOp::create(b, loc, zero, emptyOf(b, loc, type)).getResult(0);
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank),
                                 withoutDims(b, rank, dims)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  int64_t count = 1;
  for (int64_t d : dims) {
    iterators[d] = utils::IteratorType::reduction;
    count *= inputType.getDimSize(d);
  }
  Value sum = linalg::GenericOp::create(
                  b, loc, TypeRange{type}, ValueRange{operand},
                  ValueRange{init}, maps, iterators,
                  [](OpBuilder &nested, Location at, ValueRange args) {
                    // Reassociable, so that LLVM vectorises the sum with
                    // several partial sums (the runtime's order differs as
                    // well).
                    linalg::YieldOp::create(
                        nested, at,
                        arith::AddFOp::create(nested, at, args[1], args[0],
                                              arith::FastMathFlags::reassoc)
                            .getResult());
                  })
                  .getResult(0);
  if (!mean)
    return sum;
  int64_t resultRank = cast<RankedTensorType>(type).getRank();
  SmallVector<AffineMap> same(2, b.getMultiDimIdentityMap(resultRank));
  SmallVector<utils::IteratorType> parallel(resultRank,
                                            utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, ValueRange{sum},
             ValueRange{emptyOf(b, loc, type)}, same, parallel,
             [&](OpBuilder &nested, Location at, ValueRange args) {
               Value n = arith::ConstantOp::create(
                   nested, at, element,
                   nested.getFloatAttr(element, double(count)));
               linalg::YieldOp::create(
                   nested, at,
                   arith::DivFOp::create(nested, at, args[0], n).getResult());
             })
      .getResult(0);
}

} // namespace

Value fusion::buildLinalg(OpBuilder &b, Operation *op, ValueRange operands,
                          Type type) {
  Location loc = op->getLoc();
  if (auto spread = dyn_cast<nn::BroadcastOp>(op))
    return broadcast(b, loc, spread, operands[0], type);
  if (auto sum = dyn_cast<nn::ReduceSumOp>(op))
    return reduce(b, loc, operands[0], type, sum.getDimensions(), false);
  if (auto mean = dyn_cast<nn::ReduceMeanOp>(op))
    return reduce(b, loc, operands[0], type, mean.getDimensions(), true);
  return elementwise(b, loc, op, operands, type);
}
