//===- NNBuilder.cpp - nn ops with their result types inferred ------------===//

#include "metac/Dialect/NN/IR/NNBuilder.h"

#include "metac/Dialect/NN/IR/NNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace metac::nn;

static RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

static RankedTensorType withShape(Value v, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, tensorType(v).getElementType());
}

SmallVector<int64_t> metac::nn::complementDims(int64_t rank,
                                               ArrayRef<int64_t> kept) {
  SmallVector<int64_t> dims;
  for (int64_t i = 0; i < rank; ++i)
    if (!llvm::is_contained(kept, i))
      dims.push_back(i);
  return dims;
}

Value NNBuilder::constant(RankedTensorType type, double value) {
  auto element = cast<FloatType>(type.getElementType());
  llvm::APFloat v(value);
  bool lost;
  v.convert(element.getFloatSemantics(), llvm::APFloat::rmNearestTiesToEven,
            &lost);
  return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(type, v));
}

Value NNBuilder::zerosLike(Value v) { return constant(tensorType(v), 0.0); }
Value NNBuilder::onesLike(Value v) { return constant(tensorType(v), 1.0); }

Value NNBuilder::add(Value x, Value y) { return AddOp::create(b, loc, x, y); }
Value NNBuilder::sub(Value x, Value y) { return SubOp::create(b, loc, x, y); }
Value NNBuilder::mul(Value x, Value y) { return MulOp::create(b, loc, x, y); }
Value NNBuilder::div(Value x, Value y) { return DivOp::create(b, loc, x, y); }
Value NNBuilder::neg(Value x) { return NegOp::create(b, loc, x); }
Value NNBuilder::exp(Value x) { return ExpOp::create(b, loc, x); }
Value NNBuilder::erf(Value x) { return ErfOp::create(b, loc, x); }
Value NNBuilder::rsqrt(Value x) { return RsqrtOp::create(b, loc, x); }
Value NNBuilder::step(Value x) { return StepOp::create(b, loc, x); }

Value NNBuilder::scale(Value x, double factor) {
  return ScaleOp::create(b, loc, x, b.getF64FloatAttr(factor));
}

Value NNBuilder::convert(Value x, Type element) {
  auto type = cast<RankedTensorType>(x.getType());
  if (type.getElementType() == element)
    return x;
  return ConvertOp::create(b, loc, type.clone(element), x);
}

Value NNBuilder::softmax(Value x, int64_t axis) {
  return SoftmaxOp::create(b, loc, x, b.getI64IntegerAttr(axis));
}

Value NNBuilder::reshape(Value x, ArrayRef<int64_t> shape) {
  if (tensorType(x).getShape() == shape)
    return x;
  return ReshapeOp::create(b, loc, withShape(x, shape), x);
}

Value NNBuilder::transpose(Value x, ArrayRef<int64_t> permutation) {
  ArrayRef<int64_t> in = tensorType(x).getShape();
  SmallVector<int64_t> shape;
  for (int64_t p : permutation)
    shape.push_back(in[p]);
  return TransposeOp::create(b, loc, withShape(x, shape), x,
                             b.getDenseI64ArrayAttr(permutation));
}

Value NNBuilder::transposeLastTwo(Value x) {
  int64_t rank = tensorType(x).getRank();
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(perm[rank - 1], perm[rank - 2]);
  return transpose(x, perm);
}

static SmallVector<int64_t> reducedShape(Value x, ArrayRef<int64_t> dims) {
  SmallVector<int64_t> shape;
  for (auto [i, d] : llvm::enumerate(tensorType(x).getShape()))
    if (!llvm::is_contained(dims, static_cast<int64_t>(i)))
      shape.push_back(d);
  return shape;
}

Value NNBuilder::reduceSum(Value x, ArrayRef<int64_t> dims) {
  if (dims.empty())
    return x;
  return ReduceSumOp::create(b, loc, withShape(x, reducedShape(x, dims)), x,
                             b.getDenseI64ArrayAttr(dims));
}

Value NNBuilder::reduceMean(Value x, ArrayRef<int64_t> dims) {
  if (dims.empty())
    return x;
  return ReduceMeanOp::create(b, loc, withShape(x, reducedShape(x, dims)), x,
                              b.getDenseI64ArrayAttr(dims));
}

Value NNBuilder::broadcast(Value x, ArrayRef<int64_t> shape,
                           ArrayRef<int64_t> dims) {
  if (dims.empty())
    return x;
  return BroadcastOp::create(b, loc, withShape(x, shape), x,
                             b.getDenseI64ArrayAttr(dims));
}

Value NNBuilder::attention(Value q, Value k, Value v, double scale,
                           bool causal) {
  auto qt = cast<RankedTensorType>(q.getType());
  SmallVector<int64_t> shape(qt.getShape().drop_back());
  shape.push_back(cast<RankedTensorType>(v.getType()).getShape().back());
  return AttentionOp::create(
      b, loc, RankedTensorType::get(shape, qt.getElementType()), q, k, v,
      b.getF64FloatAttr(scale), causal ? b.getUnitAttr() : UnitAttr(),
      DenseI16ArrayAttr());
}

/// The operand of attention (or of its backward: "grad") that an attention
/// derivative's `wrt` names.
static Value attentionOperand(StringRef wrt, Value q, Value k, Value v,
                              Value dy) {
  return wrt == "query" ? q : wrt == "key" ? k : wrt == "value" ? v : dy;
}

Value NNBuilder::attentionBackward(Value q, Value k, Value v, Value dy,
                                   double scale, bool causal, StringRef wrt) {
  return AttentionBackwardOp::create(
      b, loc, attentionOperand(wrt, q, k, v, dy).getType(), q, k, v, dy,
      b.getF64FloatAttr(scale), causal ? b.getUnitAttr() : UnitAttr(),
      b.getStringAttr(wrt), DenseI16ArrayAttr());
}

Value NNBuilder::attentionDoubleBackward(Value q, Value k, Value v, Value dy,
                                         Value g, double scale, bool causal,
                                         StringRef from, StringRef wrt) {
  return AttentionDoubleBackwardOp::create(
      b, loc, attentionOperand(wrt, q, k, v, dy).getType(), q, k, v, dy, g,
      b.getF64FloatAttr(scale), causal ? b.getUnitAttr() : UnitAttr(),
      b.getStringAttr(from), b.getStringAttr(wrt), DenseI16ArrayAttr());
}

Value NNBuilder::matmul(Value x, Value y, bool transposeA, bool transposeB) {
  ArrayRef<int64_t> a = tensorType(x).getShape(), c = tensorType(y).getShape();
  size_t r = a.size();
  SmallVector<int64_t> shape(a.drop_back(2));
  shape.push_back(transposeA ? a[r - 1] : a[r - 2]);
  shape.push_back(transposeB ? c[r - 2] : c[r - 1]);
  return MatmulOp::create(b, loc, withShape(x, shape), x, y, transposeA,
                          transposeB);
}

Value NNBuilder::linear(Value x, Value weight, Value bias) {
  ArrayRef<int64_t> in = tensorType(x).getShape();
  ArrayRef<int64_t> w = tensorType(weight).getShape();
  SmallVector<int64_t> shape(in.drop_back());
  shape.push_back(w[w.size() - 2]);
  return LinearOp::create(b, loc, withShape(x, shape), x, weight, bias);
}
