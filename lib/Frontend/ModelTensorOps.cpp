//===- ModelTensorOps.cpp - the builtins of models without parameters -----===//
//
// Elementwise functions, matmul, softmax, reshapes, transposes and
// reductions: each checks its arguments and builds its nn op.
//
//===----------------------------------------------------------------------===//

#include "ModelGenerator.h"

#include "metac/Dialect/NN/IR/NNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace metac;
using namespace metac::frontend;

/// The elementwise builtins of one tensor.
static constexpr llvm::StringLiteral kUnary[] = {
    "relu", "tanh", "sigmoid", "gelu", "exp", "log", "sqrt"};

bool ModelGenerator::isUnary(StringRef callee) {
  return llvm::is_contained(kUnary, callee);
}

/// `relu(x)`, `tanh(x)`, ...: one elementwise nn op.
Value ModelGenerator::genUnary(const CallExpr &call, Scope &scope) {
  if (!checkArguments(call, 1, 1, {}))
    return nullptr;
  Value x = genTensor(*call.args[0], scope, "an argument");
  if (!x || !requireFloat(x, call))
    return nullptr;
  Location l = loc(call.getLoc());
  StringRef callee = call.callee;
  Operation *op = nullptr;
  if (callee == "relu")
    op = nn::ReluOp::create(builder, l, x);
  else if (callee == "tanh")
    op = nn::TanhOp::create(builder, l, x);
  else if (callee == "sigmoid")
    op = nn::SigmoidOp::create(builder, l, x);
  else if (callee == "gelu")
    op = nn::GeluOp::create(builder, l, x);
  else if (callee == "exp")
    op = nn::ExpOp::create(builder, l, x);
  else if (callee == "log")
    op = nn::LogOp::create(builder, l, x);
  else
    op = nn::SqrtOp::create(builder, l, x);
  return finish(op);
}

/// `matmul(a, b)`: batched matrix products over matching leading dimensions.
Value ModelGenerator::genMatmul(const CallExpr &call, Scope &scope) {
  if (!checkArguments(call, 2, 2, {}))
    return nullptr;
  Value a = genTensor(*call.args[0], scope, "an argument");
  Value b = genTensor(*call.args[1], scope, "an argument");
  if (!a || !b || !requireFloat(a, call) || !requireFloat(b, call))
    return nullptr;
  auto ta = cast<RankedTensorType>(a.getType());
  auto tb = cast<RankedTensorType>(b.getType());
  if (ta.getRank() < 2 || ta.getRank() != tb.getRank() ||
      ta.getShape().drop_back(2) != tb.getShape().drop_back(2) ||
      ta.getShape().back() != tb.getShape()[tb.getRank() - 2] ||
      ta.getElementType() != tb.getElementType()) {
    diags.error(call.getLoc()) << "'matmul' cannot multiply " << formatType(ta)
                               << " by " << formatType(tb);
    return nullptr;
  }
  SmallVector<int64_t> shape(ta.getShape().drop_back());
  shape.push_back(tb.getShape().back());
  return finish(nn::MatmulOp::create(
      builder, loc(call.getLoc()),
      RankedTensorType::get(shape, ta.getElementType()), a, b, false, false));
}

/// `softmax` and `log_softmax` over `axis` (default: the last).
Value ModelGenerator::genSoftmax(const CallExpr &call, Value x) {
  RankedTensorType xt = cast<RankedTensorType>(x.getType());
  Location l = loc(call.getLoc());
  StringRef callee = call.callee;
  if (!onlyKeywords(call, 1, {"axis"}) ||
      !requireRank(x, call, 1, "with at least one dimension"))
    return nullptr;
  int64_t axis = xt.getRank() - 1;
  if (const Expr *e = keyword(call, "axis")) {
    auto v = intValue(*e, "'axis'", -(int64_t(1) << 31));
    auto n = v ? normaliseAxis(xt, *v, *e) : std::nullopt;
    if (!n)
      return nullptr;
    axis = *n;
  }
  auto a = builder.getI64IntegerAttr(axis);
  if (callee == "softmax")
    return finish(nn::SoftmaxOp::create(builder, l, x, a));
  return finish(nn::LogSoftmaxOp::create(builder, l, x, a));
}

/// `flatten` (one dimension per sample) and `reshape(x, shape)`.
Value ModelGenerator::genReshape(const CallExpr &call, Value x) {
  RankedTensorType xt = cast<RankedTensorType>(x.getType());
  Type element = xt.getElementType();
  Location l = loc(call.getLoc());
  StringRef callee = call.callee;
  SmallVector<int64_t> shape{xt.getNumElements()};
  if (callee == "reshape") {
    if (!checkArguments(call, 1, 2, {"shape"}))
      return nullptr;
    const Expr *e =
        call.args.size() > 1 ? call.args[1].get() : keyword(call, "shape");
    if (!e) {
      diags.error(call.getLoc()) << "'reshape' needs a shape";
      return nullptr;
    }
    auto s = intList(*e, "the shape of 'reshape'");
    if (!s)
      return nullptr;
    int64_t count = 1;
    for (int64_t d : *s) {
      if (d < 1) {
        diags.error(e->getLoc())
            << "dimension sizes must be positive, got " << d;
        return nullptr;
      }
      count = count > xt.getNumElements() ? count : count * d;
    }
    if (count != xt.getNumElements()) {
      diags.error(e->getLoc()) << "'reshape' cannot turn " << formatType(xt)
                               << " into a shape with another element count";
      return nullptr;
    }
    shape = *s;
  } else if (!onlyKeywords(call, 1, {})) {
    return nullptr;
  }
  return finish(nn::ReshapeOp::create(
      builder, l, RankedTensorType::get(shape, element), x));
}

/// `transpose(x, permutation)`; by default the last two dimensions swap.
Value ModelGenerator::genTranspose(const CallExpr &call, Value x) {
  RankedTensorType xt = cast<RankedTensorType>(x.getType());
  Type element = xt.getElementType();
  ArrayRef<int64_t> xs = xt.getShape();
  Location l = loc(call.getLoc());
  if (!checkArguments(call, 1, 2, {"permutation"}))
    return nullptr;
  SmallVector<int64_t> perm;
  if (const Expr *e = call.args.size() > 1 ? call.args[1].get()
                                           : keyword(call, "permutation")) {
    auto p = intList(*e, "the permutation");
    if (!p)
      return nullptr;
    perm = *p;
  } else {
    // Default: swap the last two dimensions.
    for (int64_t i = 0; i < xt.getRank(); ++i)
      perm.push_back(i);
    if (perm.size() < 2) {
      diags.error(call.getLoc()) << "'transpose' needs a rank >= 2 input";
      return nullptr;
    }
    std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
  }
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(p >= 0 && p < xt.getRank() ? xs[p] : 1);
  return finish(nn::TransposeOp::create(builder, l,
                                        RankedTensorType::get(shape, element),
                                        x, builder.getDenseI64ArrayAttr(perm)));
}

/// `sum` and `mean` over `dims` (default: all).
Value ModelGenerator::genReduction(const CallExpr &call, Value x) {
  RankedTensorType xt = cast<RankedTensorType>(x.getType());
  Type element = xt.getElementType();
  ArrayRef<int64_t> xs = xt.getShape();
  Location l = loc(call.getLoc());
  StringRef callee = call.callee;
  if (!checkArguments(call, 1, 2, {"dims"}))
    return nullptr;
  SmallVector<int64_t> dims;
  if (const Expr *e =
          call.args.size() > 1 ? call.args[1].get() : keyword(call, "dims")) {
    auto d = intList(*e, "the reduced dimensions");
    if (!d)
      return nullptr;
    for (int64_t v : *d) {
      auto n = normaliseAxis(xt, v, *e);
      if (!n)
        return nullptr;
      dims.push_back(*n);
    }
    llvm::sort(dims);
    if (std::adjacent_find(dims.begin(), dims.end()) != dims.end()) {
      diags.error(e->getLoc()) << "a dimension is reduced twice";
      return nullptr;
    }
  } else {
    for (int64_t i = 0; i < xt.getRank(); ++i)
      dims.push_back(i);
  }
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < xt.getRank(); ++i)
    if (!llvm::is_contained(dims, i))
      shape.push_back(xs[i]);
  auto type = RankedTensorType::get(shape, element);
  auto d = builder.getDenseI64ArrayAttr(dims);
  if (callee == "sum")
    return finish(nn::ReduceSumOp::create(builder, l, type, x, d));
  return finish(nn::ReduceMeanOp::create(builder, l, type, x, d));
}

/// `positions(x, start = 0, step = 1)`: the ids start + step * i of the
/// positions i of x's first dimension, as i64 constants (BERT's position
/// ids; with step = 0 its token types), for `embedding`.
Value ModelGenerator::genPositions(const CallExpr &call, Value x) {
  RankedTensorType xt = cast<RankedTensorType>(x.getType());
  if (!onlyKeywords(call, 1, {"start", "step"}) ||
      !requireRank(x, call, 1, "[positions, ...]"))
    return nullptr;
  std::optional<int64_t> start = 0, step = 1;
  if (const Expr *e = keyword(call, "start"))
    start = intValue(*e, "'start'", 0);
  if (const Expr *e = keyword(call, "step"))
    step = intValue(*e, "'step'", 0);
  if (!start || !step)
    return nullptr;
  int64_t length = xt.getDimSize(0);
  SmallVector<int64_t> ids;
  for (int64_t i = 0; i < length; ++i)
    ids.push_back(*start + *step * i);
  auto type = RankedTensorType::get({length}, builder.getI64Type());
  return arith::ConstantOp::create(builder, loc(call.getLoc()), type,
                                   DenseIntElementsAttr::get(type, ids));
}
