//===- UnrollAdapt.cpp - inner loops as straight-line gradient steps ------===//

#include "metac/Dialect/Meta/Transforms/Passes.h"

#include "metac/Dialect/NN/IR/NNBuilder.h"

#include "mlir/IR/IRMapping.h"

namespace metac::meta {
#define GEN_PASS_DEF_METAUNROLLADAPT
#include "metac/Dialect/Meta/Transforms/Passes.h.inc"
} // namespace metac::meta

using namespace mlir;
using namespace metac;
using namespace metac::meta;

namespace {

void unroll(AdaptOp adapt) {
  OpBuilder b(adapt);
  Location loc = adapt.getLoc();
  nn::NNBuilder nn(b, loc);
  double lr = adapt.getInnerLr().convertToDouble();
  Type lossType =
      cast<YieldOp>(adapt.getBody().front().back()).getLoss().getType();
  SmallVector<Value> params(adapt.getParams());
  for (int64_t step = 0, e = adapt.getSteps(); step < e; ++step) {
    SmallVector<Type> types{lossType};
    llvm::append_range(types, ValueRange(params).getTypes());
    auto grad = GradOp::create(b, loc, types, params,
                               /*first_order=*/adapt.getOrder() == 1);
    IRMapping mapping;
    adapt.getBody().cloneInto(&grad.getBody(), mapping);
    for (auto [p, g] : llvm::zip(params, grad.getGradients()))
      p = nn.sub(p, nn.scale(g, lr));
  }
  adapt.replaceAllUsesWith(params);
  adapt.erase();
}

struct MetaUnrollAdaptPass
    : public metac::meta::impl::MetaUnrollAdaptBase<MetaUnrollAdaptPass> {
  void runOnOperation() override {
    SmallVector<AdaptOp> loops;
    getOperation()->walk<WalkOrder::PostOrder>(
        [&](AdaptOp adapt) { loops.push_back(adapt); });
    for (AdaptOp adapt : loops)
      unroll(adapt);
  }
};

} // namespace
