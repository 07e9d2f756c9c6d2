//===- ModelLayers.cpp - the builtins of models that have parameters ------===//
//
// linear, conv2d, pooling, batch and layer norm, embedding and attention,
// and the dispatch of every builtin call: each checks its arguments, creates
// its parameters (PyTorch's names and initialisations) and builds its nn op.
//
//===----------------------------------------------------------------------===//

#include "ModelGenerator.h"

#include "metac/Dialect/NN/IR/NNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/DenseSet.h"

#include <cmath>

using namespace mlir;
using namespace metac;
using namespace metac::frontend;

Value ModelGenerator::genBuiltin(const CallExpr &call, Scope &scope) {
  StringRef callee = call.callee;
  if (callee == "attention")
    return genAttention(call, scope);
  if (callee == "matmul")
    return genMatmul(call, scope);
  if (callee == "moe")
    return genMoe(call, scope);
  if (isUnary(callee))
    return genUnary(call, scope);
  if (!checkArguments(call, 1, 3,
                      {"name", "bias", "kernel", "stride", "padding", "eps",
                       "axis", "dims", "shape", "permutation", "start",
                       "step"}))
    return nullptr;
  Value x = genTensor(*call.args[0], scope, "an argument");
  if (!x)
    return nullptr;
  if (callee == "linear")
    return genLinear(call, scope, x);
  if (callee == "conv2d")
    return genConv2D(call, scope, x);
  if (callee == "max_pool2d" || callee == "avg_pool2d")
    return genPool2D(call, x);
  if (callee == "batch_norm" || callee == "layer_norm")
    return genNorm(call, scope, x);
  if (callee == "embedding")
    return genEmbedding(call, scope, x);
  if (callee == "positions")
    return genPositions(call, x);
  if (!requireFloat(x, call))
    return nullptr;
  if (callee == "softmax" || callee == "log_softmax")
    return genSoftmax(call, x);
  if (callee == "flatten" || callee == "reshape")
    return genReshape(call, x);
  if (callee == "transpose")
    return genTranspose(call, x);
  return genReduction(call, x);
}

/// Output size of a sliding window, or nullopt when it does not fit.
static std::optional<int64_t> windowSize(int64_t size, int64_t kernel,
                                         int64_t stride, int64_t padding) {
  int64_t padded = size + 2 * padding;
  if (padded < kernel)
    return std::nullopt;
  return (padded - kernel) / stride + 1;
}

/// `linear(x, out, name, bias)`: x W^T + b over the last dimension.
Value ModelGenerator::genLinear(const CallExpr &call, Scope &scope, Value x) {
  RankedTensorType xt = cast<RankedTensorType>(x.getType());
  Type element = xt.getElementType();
  ArrayRef<int64_t> xs = xt.getShape();
  Location l = loc(call.getLoc());
  if (!onlyKeywords(call, 2, {"name", "bias"}) || !requireFloat(x, call) ||
      !requireRank(x, call, 1, "[..., features]"))
    return nullptr;
  auto out = intValue(*call.args[1], "the output size of 'linear'", 1);
  auto bias = boolValue(keyword(call, "bias"), "'bias'", true);
  auto name = layerName(call, scope);
  if (!out || !bias || !name)
    return nullptr;
  int64_t in = xs.back();
  // Stop at the weight's error: the bias would repeat it.
  Value w = createParam(*name, "weight", {*out, in}, element, "uniform_fan_in",
                        in, call.getLoc());
  if (!w)
    return nullptr;
  Value b = *bias ? createParam(*name, "bias", {*out}, element,
                                "uniform_fan_in", in, call.getLoc())
                  : Value();
  if (*bias && !b)
    return nullptr;
  SmallVector<int64_t> shape(xs.drop_back());
  shape.push_back(*out);
  return finish(nn::LinearOp::create(
      builder, l, RankedTensorType::get(shape, element), x, w, b));
}

/// `conv2d(x, out, kernel, stride, padding, name, bias)` on [..., C, H, W].
Value ModelGenerator::genConv2D(const CallExpr &call, Scope &scope, Value x) {
  RankedTensorType xt = cast<RankedTensorType>(x.getType());
  Type element = xt.getElementType();
  ArrayRef<int64_t> xs = xt.getShape();
  Location l = loc(call.getLoc());
  if (!onlyKeywords(call, 2, {"name", "bias", "kernel", "stride", "padding"}) ||
      !requireFloat(x, call) || !requireRank(x, call, 3, "[C, H, W]"))
    return nullptr;
  auto out = intValue(*call.args[1], "the output channels of 'conv2d'", 1);
  if (!keyword(call, "kernel")) {
    diags.error(call.getLoc()) << "'conv2d' needs a kernel size (kernel = k)";
    return nullptr;
  }
  auto kernel = intPair(keyword(call, "kernel"), "'kernel'", 1, 1);
  auto stride = intPair(keyword(call, "stride"), "'stride'", 1, 1);
  auto padding = intPair(keyword(call, "padding"), "'padding'", 0, 0);
  auto bias = boolValue(keyword(call, "bias"), "'bias'", true);
  if (!out || !kernel || !stride || !padding || !bias)
    return nullptr;
  int64_t rank = xs.size(), channels = xs[rank - 3];
  SmallVector<int64_t> shape(xs.drop_back(3));
  shape.push_back(*out);
  for (int i = 0; i < 2; ++i) {
    auto size =
        windowSize(xs[rank - 2 + i], (*kernel)[i], (*stride)[i], (*padding)[i]);
    if (!size) {
      diags.error(call.getLoc())
          << "'conv2d' kernel [" << (*kernel)[0] << ", " << (*kernel)[1]
          << "] does not fit the input " << formatType(xt) << " with padding ["
          << (*padding)[0] << ", " << (*padding)[1] << "]";
      return nullptr;
    }
    shape.push_back(*size);
  }
  auto name = layerName(call, scope);
  if (!name)
    return nullptr;
  int64_t fanIn = channels * (*kernel)[0] * (*kernel)[1];
  Value w =
      createParam(*name, "weight", {*out, channels, (*kernel)[0], (*kernel)[1]},
                  element, "uniform_fan_in", fanIn, call.getLoc());
  if (!w)
    return nullptr;
  Value b = *bias ? createParam(*name, "bias", {*out}, element,
                                "uniform_fan_in", fanIn, call.getLoc())
                  : Value();
  if (*bias && !b)
    return nullptr;
  return finish(
      nn::Conv2DOp::create(builder, l, RankedTensorType::get(shape, element), x,
                           w, b, builder.getDenseI64ArrayAttr(*stride),
                           builder.getDenseI64ArrayAttr(*padding)));
}

/// `max_pool2d` and `avg_pool2d(x, kernel, stride, padding)`; the stride
/// defaults to the kernel.
Value ModelGenerator::genPool2D(const CallExpr &call, Value x) {
  RankedTensorType xt = cast<RankedTensorType>(x.getType());
  Type element = xt.getElementType();
  ArrayRef<int64_t> xs = xt.getShape();
  Location l = loc(call.getLoc());
  StringRef callee = call.callee;
  if (!checkArguments(call, 1, 2, {"kernel", "stride", "padding"}) ||
      !requireFloat(x, call) || !requireRank(x, call, 3, "[C, H, W]"))
    return nullptr;
  const Expr *kernelExpr =
      call.args.size() > 1 ? call.args[1].get() : keyword(call, "kernel");
  if (!kernelExpr) {
    diags.error(call.getLoc()) << "'" << callee << "' needs a kernel size";
    return nullptr;
  }
  auto kernel = intPair(kernelExpr, "the pooling kernel", 1, 1);
  if (!kernel)
    return nullptr;
  auto stride = keyword(call, "stride")
                    ? intPair(keyword(call, "stride"), "'stride'", 1, 1)
                    : kernel;
  auto padding = intPair(keyword(call, "padding"), "'padding'", 0, 0);
  if (!stride || !padding)
    return nullptr;
  int64_t rank = xs.size();
  SmallVector<int64_t> shape(xs.drop_back(2));
  for (int i = 0; i < 2; ++i) {
    if ((*padding)[i] * 2 > (*kernel)[i]) {
      diags.error(call.getLoc()) << "'" << callee
                                 << "' padding must be at most half the "
                                    "kernel";
      return nullptr;
    }
    auto size =
        windowSize(xs[rank - 2 + i], (*kernel)[i], (*stride)[i], (*padding)[i]);
    if (!size) {
      diags.error(call.getLoc())
          << "'" << callee << "' kernel [" << (*kernel)[0] << ", "
          << (*kernel)[1] << "] does not fit the input " << formatType(xt);
      return nullptr;
    }
    shape.push_back(*size);
  }
  auto type = RankedTensorType::get(shape, element);
  auto k = builder.getDenseI64ArrayAttr(*kernel);
  auto s = builder.getDenseI64ArrayAttr(*stride);
  auto p = builder.getDenseI64ArrayAttr(*padding);
  if (callee == "max_pool2d")
    return finish(nn::MaxPool2DOp::create(builder, l, type, x, k, s, p));
  return finish(nn::AvgPool2DOp::create(builder, l, type, x, k, s, p));
}

/// `batch_norm` (transductive: statistics of the batch it is applied to)
/// and `layer_norm`, each with a learned scale and shift.
Value ModelGenerator::genNorm(const CallExpr &call, Scope &scope, Value x) {
  RankedTensorType xt = cast<RankedTensorType>(x.getType());
  Type element = xt.getElementType();
  ArrayRef<int64_t> xs = xt.getShape();
  Location l = loc(call.getLoc());
  StringRef callee = call.callee;
  if (!onlyKeywords(call, 1, {"name", "eps"}) || !requireFloat(x, call) ||
      !requireRank(x, call, 1,
                   callee == "batch_norm" ? "[C, ...]" : "[..., D]"))
    return nullptr;
  double eps = 1e-5;
  if (const Expr *e = keyword(call, "eps")) {
    auto v = numberValue(*e, "'eps'");
    if (!v)
      return nullptr;
    if (!(*v >= 0)) {
      diags.error(e->getLoc()) << "'eps' must be >= 0";
      return nullptr;
    }
    eps = *v;
  }
  auto name = layerName(call, scope);
  if (!name)
    return nullptr;
  bool batch = callee == "batch_norm";
  int64_t features = batch ? xs.front() : xs.back();
  Value w = createParam(*name, "weight", {features}, element, "ones", 0,
                        call.getLoc());
  if (!w)
    return nullptr;
  Value b = createParam(*name, "bias", {features}, element, "zeros", 0,
                        call.getLoc());
  if (!b)
    return nullptr;
  if (!batch)
    return finish(nn::LayerNormOp::create(builder, l, xt, x, w, b,
                                          builder.getF64FloatAttr(eps)));
  // Per sample, channels lead; statistics cover the spatial dimensions
  // (and, once vectorised, the sample axis).
  SmallVector<int64_t> reduce;
  for (int64_t d = 1; d < xt.getRank(); ++d)
    reduce.push_back(d);
  return finish(nn::BatchNormOp::create(
      builder, l, xt, x, w, b, builder.getI64IntegerAttr(0),
      builder.getDenseI64ArrayAttr(reduce), builder.getF64FloatAttr(eps)));
}

/// `embedding(ids, vocab, dim)`: rows of a learned table.
Value ModelGenerator::genEmbedding(const CallExpr &call, Scope &scope,
                                   Value x) {
  RankedTensorType xt = cast<RankedTensorType>(x.getType());
  Type element = xt.getElementType();
  ArrayRef<int64_t> xs = xt.getShape();
  Location l = loc(call.getLoc());
  if (!onlyKeywords(call, 3, {"name"}))
    return nullptr;
  if (!isa<IntegerType>(element)) {
    diags.error(call.getLoc())
        << "'embedding' needs integer ids, got " << formatType(xt);
    return nullptr;
  }
  auto vocab = intValue(*call.args[1], "the vocabulary size", 1);
  auto dim = intValue(*call.args[2], "the embedding size", 1);
  auto name = layerName(call, scope);
  if (!vocab || !dim || !name)
    return nullptr;
  Value table = createParam(*name, "weight", {*vocab, *dim}, paramElementType,
                            "normal", 0, call.getLoc());
  if (!table)
    return nullptr;
  SmallVector<int64_t> shape(xs);
  shape.push_back(*dim);
  return finish(nn::EmbeddingOp::create(
      builder, l, RankedTensorType::get(shape, paramElementType), x, table));
}

/// Multi-head self-attention over the sequence of `x` ([S, D] per sample):
/// projections q, k, v of D features split into `heads` heads, softmax of
/// q k^T / sqrt(D / heads) (positions after the query masked out when
/// `causal`), the heads' weighted values joined and projected by o. Built
/// from nn ops, so it is differentiated (twice) like the rest. Parameters
/// `<name>.{q,k,v,o}.{weight,bias}` as four linear layers.
Value ModelGenerator::genAttention(const CallExpr &call, Scope &scope) {
  Location l = loc(call.getLoc());
  if (!checkArguments(call, 2, 2,
                      {"name", "causal", "bias", "fused", "projections"}))
    return nullptr;
  // The projections' names under the layer's (a checkpoint's, such as
  // BERT's "self.query", ..., "output.dense").
  SmallVector<std::string> projections{"q", "k", "v", "o"};
  if (const Expr *e = keyword(call, "projections")) {
    auto *list = dyn_cast<ListExpr>(e);
    if (!list || list->elements.size() != 4) {
      diags.error(e->getLoc()) << "'projections' must be a list of four "
                                  "names (query, key, value, output)";
      return nullptr;
    }
    for (auto [i, element] : llvm::enumerate(list->elements)) {
      auto *str = dyn_cast<StringExpr>(element.get());
      if (!str || !isLayerName(str->value)) {
        diags.error(element->getLoc())
            << "a projection name must be a non-empty string of letters, "
               "digits, '_' and '.'";
        return nullptr;
      }
      projections[i] = str->value;
    }
    if (llvm::SmallDenseSet<StringRef, 4>(projections.begin(),
                                          projections.end())
            .size() != 4) {
      diags.error(e->getLoc()) << "'projections' names a projection twice";
      return nullptr;
    }
  }
  Value x = genTensor(*call.args[0], scope, "an argument");
  if (!x || !requireFloat(x, call) ||
      !requireRank(x, call, 2, "[sequence, features]"))
    return nullptr;
  RankedTensorType xt = cast<RankedTensorType>(x.getType());
  Type element = xt.getElementType();
  auto heads = intValue(*call.args[1], "the number of heads", 1);
  auto causal = boolValue(keyword(call, "causal"), "'causal'", false);
  auto bias = boolValue(keyword(call, "bias"), "'bias'", true);
  auto fused = boolValue(keyword(call, "fused"), "'fused'", false);
  auto name = layerName(call, scope);
  if (!heads || !causal || !bias || !fused || !name)
    return nullptr;
  ArrayRef<int64_t> xs = xt.getShape();
  int64_t rank = xs.size(), length = xs[rank - 2], features = xs[rank - 1];
  if (features % *heads != 0) {
    diags.error(call.getLoc()) << "'attention' cannot split " << features
                               << " features into " << *heads << " heads";
    return nullptr;
  }
  int64_t width = features / *heads;
  SmallVector<int64_t> lead(xs.drop_back(2));
  auto typeOf = [&](ArrayRef<int64_t> tail) {
    SmallVector<int64_t> shape(lead);
    shape.append(tail.begin(), tail.end());
    return RankedTensorType::get(shape, element);
  };
  auto project = [&](StringRef which, Value input) -> Value {
    Value w =
        createParam(*name, (which + ".weight").str(), {features, features},
                    element, "uniform_fan_in", features, call.getLoc());
    if (!w)
      return nullptr;
    Value b =
        *bias ? createParam(*name, (which + ".bias").str(), {features}, element,
                            "uniform_fan_in", features, call.getLoc())
              : Value();
    if (*bias && !b)
      return nullptr;
    return finish(nn::LinearOp::create(
        builder, l, cast<RankedTensorType>(input.getType()), input, w, b));
  };
  // [..., S, D] -> [..., heads, S, width]
  SmallVector<int64_t> perm;
  for (int64_t d = 0; d < rank - 2; ++d)
    perm.push_back(d);
  int64_t s = rank - 2;
  SmallVector<int64_t> toHeads(perm);
  toHeads.append({s + 1, s, s + 2});
  auto split = [&](Value v) -> Value {
    if (!v)
      return nullptr;
    Value r = finish(
        nn::ReshapeOp::create(builder, l, typeOf({length, *heads, width}), v));
    return r ? finish(nn::TransposeOp::create(
                   builder, l, typeOf({*heads, length, width}), r,
                   builder.getDenseI64ArrayAttr(toHeads)))
             : nullptr;
  };
  // [..., heads, S, width] -> [..., S, D], projected by o.
  auto joinHeads = [&](Value context) -> Value {
    Value joined = finish(nn::TransposeOp::create(
        builder, l, typeOf({length, *heads, width}), context,
        builder.getDenseI64ArrayAttr(toHeads)));
    joined = joined ? finish(nn::ReshapeOp::create(
                          builder, l, typeOf({length, features}), joined))
                    : nullptr;
    return joined ? project(projections[3], joined) : nullptr;
  };
  Value q = split(project(projections[0], x));
  Value k = q ? split(project(projections[1], x)) : nullptr;
  Value v = k ? split(project(projections[2], x)) : nullptr;
  if (!v)
    return nullptr;
  double scale = 1.0 / std::sqrt(static_cast<double>(width));
  Value context;
  if (*fused) {
    // One op: the runtime's tiled kernel with an online softmax.
    context = finish(nn::AttentionOp::create(
        builder, l, typeOf({*heads, length, width}), q, k, v,
        builder.getF64FloatAttr(scale),
        *causal ? builder.getUnitAttr() : UnitAttr(), DenseI16ArrayAttr()));
    if (!context)
      return nullptr;
    return joinHeads(context);
  }
  Value scores = finish(nn::MatmulOp::create(
      builder, l, typeOf({*heads, length, length}), q, k, false, true));
  if (!scores)
    return nullptr;
  scores = finish(
      nn::ScaleOp::create(builder, l, scores, builder.getF64FloatAttr(scale)));
  if (scores && *causal) {
    // Later positions get a large negative score: softmax gives them 0.
    // (Built once per length and type: as one attribute per element, the
    // 20 layers of 512² of examples/transformer_1b.meta took 1.5 s.)
    auto maskType = RankedTensorType::get({length, length}, element);
    DenseElementsAttr &maskValue = causalMasks[maskType];
    if (!maskValue) {
      auto valueOf = [&](double x) {
        bool lost;
        llvm::APFloat v(x);
        v.convert(cast<FloatType>(element).getFloatSemantics(),
                  llvm::APFloat::rmNearestTiesToEven, &lost);
        return v;
      };
      llvm::APFloat masked = valueOf(-1e9), kept = valueOf(0.0);
      SmallVector<llvm::APFloat> mask;
      mask.reserve(length * length);
      for (int64_t i = 0; i < length; ++i)
        for (int64_t j = 0; j < length; ++j)
          mask.push_back(j > i ? masked : kept);
      maskValue = DenseElementsAttr::get(maskType, mask);
    }
    Value m = arith::ConstantOp::create(builder, l, maskType, maskValue);
    SmallVector<int64_t> added(perm);
    added.push_back(s);
    Value wide = finish(
        nn::BroadcastOp::create(builder, l, typeOf({*heads, length, length}), m,
                                builder.getDenseI64ArrayAttr(added)));
    scores =
        wide ? finish(nn::AddOp::create(builder, l, scores, wide)) : nullptr;
  }
  if (!scores)
    return nullptr;
  Value weights = finish(nn::SoftmaxOp::create(
      builder, l, scores, builder.getI64IntegerAttr(rank)));
  context = weights
                ? finish(nn::MatmulOp::create(builder, l,
                                              typeOf({*heads, length, width}),
                                              weights, v, false, false))
                : nullptr;
  if (!context)
    return nullptr;
  return joinHeads(context);
}
