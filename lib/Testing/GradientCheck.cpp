//===- GradientCheck.cpp - finite-difference checks of the autodiff -------===//

#include "metac/Testing/GradientCheck.h"

#include "metac/Dialect/Meta/IR/MetaOps.h"
#include "metac/Dialect/Meta/Transforms/Passes.h"
#include "metac/Dialect/NN/IR/NNBuilder.h"
#include "metac/Interpreter/Interpreter.h"
#include "metac/Interpreter/RandomInputs.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include <cmath>

using namespace mlir;
using namespace metac;
using namespace metac::testing;

namespace {

using BodyFn = llvm::function_ref<Value(OpBuilder &, ValueRange)>;

/// The function's body inlined at the builder, on `args`; returns its
/// results.
SmallVector<Value> inlineBody(OpBuilder &b, func::FuncOp f, ValueRange args) {
  IRMapping mapping;
  mapping.map(f.getArguments(), args);
  Block &body = f.getBody().front();
  for (Operation &op : body.without_terminator())
    b.clone(op, mapping);
  SmallVector<Value> results;
  for (Value v : body.getTerminator()->getOperands())
    results.push_back(mapping.lookupOrDefault(v));
  return results;
}

/// sum_j <weights_j, values_j> as a 0-d tensor.
Value weightedSum(OpBuilder &b, Location loc, ValueRange values,
                  ArrayRef<DenseElementsAttr> weights) {
  nn::NNBuilder nn(b, loc);
  Value total;
  for (auto [v, w] : llvm::zip(values, weights)) {
    Value product = nn.mul(v, arith::ConstantOp::create(b, loc, w));
    int64_t rank = cast<RankedTensorType>(v.getType()).getRank();
    Value term =
        nn.reduceSum(product, llvm::to_vector(llvm::seq<int64_t>(0, rank)));
    total = total ? nn.add(total, term) : term;
  }
  return total;
}

/// A meta.grad of `body` with respect to `args[differentiated]`, the other
/// arguments passed through; returns the op (value, then gradients).
meta::GradOp emitGrad(OpBuilder &b, Location loc, ValueRange args,
                      ArrayRef<unsigned> differentiated, Type lossType,
                      BodyFn body) {
  SmallVector<Value> inputs;
  SmallVector<Type> resultTypes{lossType};
  for (unsigned i : differentiated) {
    inputs.push_back(args[i]);
    resultTypes.push_back(args[i].getType());
  }
  auto grad = meta::GradOp::create(b, loc, resultTypes, inputs, false);
  // The guard puts the builder back after the op once the body is built.
  OpBuilder::InsertionGuard guard(b);
  Block *block = b.createBlock(&grad.getBody());
  SmallVector<Value> fullArgs(args);
  for (unsigned i : differentiated)
    fullArgs[i] = block->addArgument(args[i].getType(), loc);
  Value loss = body(b, fullArgs);
  meta::YieldOp::create(b, loc, loss);
  return grad;
}

/// Random weights of `type`, uniform in [-1, 1].
DenseElementsAttr randomWeights(RankedTensorType type,
                                interp::SplitMix64 &rng) {
  auto element = cast<FloatType>(type.getElementType());
  SmallVector<APFloat> values;
  for (int64_t i = 0, e = type.getNumElements(); i < e; ++i) {
    APFloat v(2 * rng.nextUnit() - 1);
    bool lost;
    v.convert(element.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    values.push_back(v);
  }
  return DenseElementsAttr::get(type, values);
}

/// Adds `name(args) -> results` to `module`, its body built by `build`.
void addFunction(
    ModuleOp module, func::FuncOp like, StringRef name,
    llvm::function_ref<SmallVector<Value>(OpBuilder &, ValueRange)> build) {
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto fn = func::FuncOp::create(
      b, like.getLoc(), name, b.getFunctionType(like.getArgumentTypes(), {}));
  Block *entry = fn.addEntryBlock();
  b.setInsertionPointToStart(entry);
  SmallVector<Value> results = build(b, entry->getArguments());
  func::ReturnOp::create(b, like.getLoc(), results);
  fn.setType(b.getFunctionType(like.getArgumentTypes(),
                               ValueRange(results).getTypes()));
}

double scalarOf(const std::vector<interp::Tensor> &results) {
  return results.front().values.front();
}

} // namespace

FailureOr<GradientCheckResult>
metac::testing::checkGradients(func::FuncOp func,
                               const GradientCheckOptions &options) {
  Location loc = func.getLoc();
  func->getContext()
      ->loadDialect<meta::MetaDialect, nn::NNDialect, arith::ArithDialect>();
  if (!func.getBody().hasOneBlock())
    return func.emitError("gradient check needs a single-block function");
  SmallVector<unsigned> differentiated;
  for (auto [i, type] : llvm::enumerate(func.getArgumentTypes()))
    if (isa<FloatType>(cast<RankedTensorType>(type).getElementType()))
      differentiated.push_back(i);
  if (differentiated.empty() || func.getNumResults() == 0)
    return func.emitError("gradient check needs float arguments and results");
  Type element =
      cast<RankedTensorType>(func.getResultTypes()[0]).getElementType();
  for (Type t : func.getResultTypes())
    if (cast<RankedTensorType>(t).getElementType() != element)
      return func.emitError("gradient check needs results of one float type");
  auto lossType = RankedTensorType::get({}, element);

  interp::SplitMix64 rng(options.seed ^ 0x5eedf00dull);
  SmallVector<DenseElementsAttr> outputWeights, gradientWeights;
  for (Type t : func.getResultTypes())
    outputWeights.push_back(randomWeights(cast<RankedTensorType>(t), rng));
  for (unsigned i : differentiated)
    gradientWeights.push_back(
        randomWeights(cast<RankedTensorType>(func.getArgumentTypes()[i]), rng));

  // The checked functions live in a copy of the module, so calls resolve.
  OwningOpRef<ModuleOp> module(cast<ModuleOp>(func->getParentOp()->clone()));
  auto f = module->lookupSymbol<func::FuncOp>(func.getSymName());
  auto loss = [&](OpBuilder &b, ValueRange args) {
    return weightedSum(b, loc, inlineBody(b, f, args), outputWeights);
  };
  auto hessianProbe = [&](OpBuilder &b, ValueRange args) {
    meta::GradOp g = emitGrad(b, loc, args, differentiated, lossType, loss);
    return weightedSum(b, loc, g.getGradients(), gradientWeights);
  };
  auto gradOf = [&](BodyFn body) {
    return [&, body](OpBuilder &b, ValueRange args) {
      meta::GradOp grad =
          emitGrad(b, loc, args, differentiated, lossType, body);
      return SmallVector<Value>(grad->getResults());
    };
  };
  addFunction(*module, f, "__gradcheck_value1",
              [&](OpBuilder &b, ValueRange a) {
                return SmallVector<Value>{loss(b, a)};
              });
  addFunction(*module, f, "__gradcheck_grad1", gradOf(loss));
  if (options.order >= 2) {
    addFunction(*module, f, "__gradcheck_value2",
                [&](OpBuilder &b, ValueRange a) {
                  return SmallVector<Value>{hessianProbe(b, a)};
                });
    addFunction(*module, f, "__gradcheck_grad2", gradOf(hessianProbe));
  }

  PassManager pm(module->getContext());
  pm.addPass(meta::createMetaAutodiff());
  pm.addPass(createCanonicalizerPass());
  if (failed(pm.run(*module)))
    return failure();

  FailureOr<std::vector<interp::Tensor>> inputs =
      interp::makeRandomInputs(func, options.seed);
  if (failed(inputs))
    return failure();

  GradientCheckResult result;
  result.passed = true;
  for (int order = 1; order <= options.order; ++order) {
    auto valueFn = module->lookupSymbol<func::FuncOp>(
        ("__gradcheck_value" + Twine(order)).str());
    auto gradFn = module->lookupSymbol<func::FuncOp>(
        ("__gradcheck_grad" + Twine(order)).str());
    FailureOr<std::vector<interp::Tensor>> analytic =
        interp::evaluate(gradFn, *inputs);
    if (failed(analytic))
      return failure();
    for (auto [k, i] : llvm::enumerate(differentiated)) {
      const interp::Tensor &g = (*analytic)[k + 1];
      for (int64_t e = 0, n = g.numElements(); e < n; ++e) {
        std::vector<interp::Tensor> probe = *inputs;
        double x = probe[i].values[e];
        double h = options.step * std::max(1.0, std::fabs(x));
        probe[i].values[e] = x + h;
        FailureOr<std::vector<interp::Tensor>> plus =
            interp::evaluate(valueFn, probe);
        probe[i].values[e] = x - h;
        FailureOr<std::vector<interp::Tensor>> minus =
            interp::evaluate(valueFn, probe);
        if (failed(plus) || failed(minus))
          return failure();
        double numeric = (scalarOf(*plus) - scalarOf(*minus)) / (2 * h);
        double error = std::fabs(g.values[e] - numeric) /
                       std::max(1.0, std::fabs(numeric));
        if (!(error <= options.tolerance))
          result.passed = false;
        if (!(error <= result.maxError[order - 1]))
          result.maxError[order - 1] = error;
        ++result.partials[order - 1];
      }
    }
  }
  return result;
}
