//===- MixedPrecision.cpp - models that compute in bf16 or f16 ------------===//
//
// A meta.train with `precision = bf16` (or fp16) gets a model that converts
// its f32 parameters and input to the 16-bit type where it starts, computes
// every op in it and converts its results back to f32 where it ends. The
// parameters stay f32 (the master weights), and so do everything outside
// the model: the losses, the inner SGD updates and the outer optimizer.
// Differentiation then gives f32 gradients, since the derivative of a
// conversion converts the cotangent back, while the activations the
// unrolled inner loop keeps for its reverse sweeps take half the bytes.
//
//===----------------------------------------------------------------------===//

#include "metac/Dialect/Meta/Transforms/Passes.h"

#include "metac/Dialect/Meta/IR/MetaOps.h"
#include "metac/Dialect/NN/IR/NNBuilder.h"
#include "metac/Dialect/NN/IR/NNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/TypeUtilities.h"

namespace metac::meta {
#define GEN_PASS_DEF_METAMIXEDPRECISION
#include "metac/Dialect/Meta/Transforms/Passes.h.inc"
} // namespace metac::meta

using namespace mlir;
using namespace metac;
using namespace metac::meta;

namespace {

constexpr llvm::StringLiteral kPrecisionAttr = "meta.precision";

bool isFloatTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isa<FloatType>(tensor.getElementType());
}

/// `attr`'s values rounded to `element`.
DenseElementsAttr convertConstant(DenseElementsAttr attr, Type element) {
  const llvm::fltSemantics &semantics =
      cast<FloatType>(element).getFloatSemantics();
  SmallVector<APFloat> values;
  for (APFloat v : attr.getValues<APFloat>()) {
    bool lost = false;
    v.convert(semantics, APFloat::rmNearestTiesToEven, &lost);
    values.push_back(v);
  }
  return DenseElementsAttr::get(attr.getType().clone(element), values);
}

/// Rewrites `model` to compute in `low`.
LogicalResult lowerPrecision(func::FuncOp model, Type low) {
  if (!model.getBody().hasOneBlock())
    return model.emitOpError("is not straight-line code: mixed precision "
                             "rewrites straight-line models only");
  Block &body = model.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&body);
  nn::NNBuilder nn(b, model.getLoc());
  for (BlockArgument arg : body.getArguments()) {
    if (!isFloatTensor(arg.getType()) || arg.use_empty())
      continue;
    Value converted = nn.convert(arg, low);
    arg.replaceAllUsesExcept(converted, converted.getDefiningOp());
  }
  for (Operation &op : llvm::make_early_inc_range(body)) {
    // The entry conversions just made.
    if (isa<nn::ConvertOp>(op) && isa<BlockArgument>(op.getOperand(0)))
      continue;
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      b.setInsertionPoint(ret);
      for (auto [operand, type] :
           llvm::zip(ret->getOpOperands(), model.getResultTypes()))
        if (isFloatTensor(type))
          operand.set(nn::NNBuilder(b, ret.getLoc())
                          .convert(operand.get(), getElementTypeOrSelf(type)));
      continue;
    }
    if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
      if (dense && isa<FloatType>(dense.getElementType())) {
        b.setInsertionPoint(constant);
        auto lowered = arith::ConstantOp::create(b, constant.getLoc(),
                                                 convertConstant(dense, low));
        constant.replaceAllUsesWith(lowered.getResult());
        constant.erase();
      }
      continue;
    }
    if (!isa<nn::NNDialect>(op.getDialect()))
      return op.emitOpError("cannot be computed in ")
             << low << " (mixed precision rewrites nn ops and constants)";
    for (Value result : op.getResults())
      if (isFloatTensor(result.getType()))
        result.setType(cast<RankedTensorType>(result.getType()).clone(low));
  }
  return success();
}

struct MetaMixedPrecisionPass
    : public metac::meta::impl::MetaMixedPrecisionBase<MetaMixedPrecisionPass> {
  using MetaMixedPrecisionBase::MetaMixedPrecisionBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = module.getContext();
    if (!precision.empty() && precision != "f32" && precision != "bf16" &&
        precision != "fp16") {
      module.emitError("unknown precision '")
          << precision << "' (expected f32, bf16 or fp16)";
      return signalPassFailure();
    }
    if (!lossScale.empty() && lossScale != "dynamic" && lossScale != "off") {
      module.emitError("unknown loss scaling '")
          << lossScale << "' (expected dynamic or off)";
      return signalPassFailure();
    }
    for (TrainOp train : module.getOps<TrainOp>()) {
      if (!precision.empty())
        train.setPrecision(precision);
      if (!lossScale.empty()) {
        train.setLossScale(lossScale);
        if (lossScale == "dynamic" && train.getOnNonfinite() == "ignore") {
          train.emitOpError("cannot scale its loss dynamically: "
                            "on_nonfinite = ignore leaves out the check that "
                            "adjusts the scale");
          return signalPassFailure();
        }
      }
      StringRef wanted = train.getPrecision().value_or("f32");
      if (wanted == "f32")
        continue;
      auto model = module.lookupSymbol<func::FuncOp>(train.getModel());
      if (!model)
        continue; // the train op's verifier reports it
      if (auto done = model->getAttrOfType<StringAttr>(kPrecisionAttr)) {
        if (done.getValue() == wanted)
          continue;
        train.emitOpError("computes model '")
            << train.getModel() << "' in " << wanted
            << ", but another training program computes it in "
            << done.getValue();
        return signalPassFailure();
      }
      Type low = wanted == "bf16" ? Type(BFloat16Type::get(ctx))
                                  : Type(Float16Type::get(ctx));
      if (failed(lowerPrecision(model, low)))
        return signalPassFailure();
      model->setAttr(kPrecisionAttr, StringAttr::get(ctx, wanted));
    }
  }
};

} // namespace
