//===- CollectiveCalls.cpp - the runtime calls of the shard collectives ---===//

#include "CollectiveCalls.h"

#include "metac/Dialect/Meta/IR/Compression.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace metac;
using namespace metac::lowering;

namespace {

/// metart_reduction codes.
int64_t reductionCode(shard::ReductionKind kind) {
  return kind == shard::ReductionKind::Max ? 1 : 0;
}

/// metart_allreduce_algorithm codes of meta-select-allreduce's names.
int64_t allReduceAlgorithmCode(StringAttr name) {
  if (!name)
    return 0;
  return llvm::StringSwitch<int64_t>(name.getValue())
      .Case("ring", 1)
      .Case("tree", 2)
      .Case("hierarchical", 3)
      .Default(0);
}

/// The metart_dtype an all-reduce's data travels in: its own, or the one
/// meta-select-allreduce's `metac.compress` names.
int64_t wireDtype(shard::AllReduceOp op, StringAttr compress) {
  if (compress && compress.getValue() == "bf16")
    return 4;
  if (compress && compress.getValue() == "fp16")
    return 5;
  return metartDtypeOf(cast<RankedTensorType>(op.getType()).getElementType());
}

RuntimeCall allReduceCall(shard::AllReduceOp o, RuntimeCallEmitter &emit,
                          Value ctx, Value input, Value output,
                          int64_t &nextSite) {
  Value mask = emit.i32(axesMask(o.getGridAxes()));
  // meta-select-allreduce's choices, when it made some.
  auto algorithm = o->getAttrOfType<StringAttr>("metac.allreduce");
  auto compress = o->getAttrOfType<StringAttr>("metac.compress");
  bool async = o->hasAttr("metac.async");
  // Bounded staleness: this iteration's sum starts, the one of `lag`
  // iterations ago comes back.
  if (auto lag = o->getAttrOfType<IntegerAttr>("metac.staleness"))
    return {"metart_all_reduce_stale",
            {ctx, input, output, mask, emit.i64(lag.getInt()),
             emit.i64(nextSite++)}};
  // top-k and PowerSGD: lossy, with a residual per call site.
  if (std::optional<meta::Compression> c =
          compress ? meta::parseCompression(compress.getValue()) : std::nullopt;
      c && c->withErrorFeedback())
    return {async ? "metart_all_reduce_compressed_start"
                  : "metart_all_reduce_compressed",
            {ctx, input, output, mask,
             emit.i32(c->kind == meta::Compression::Kind::TopK ? 1 : 2),
             emit.f64(c->parameter), emit.i64(nextSite++)}};
  Value reduction = emit.i32(reductionCode(o.getReduction()));
  // Started here, completed at its meta.wait; or by a chosen algorithm or
  // wire type; or as the library likes.
  if (async || algorithm || compress)
    return {async ? "metart_all_reduce_start" : "metart_all_reduce_algorithm",
            {ctx, input, output, mask, reduction,
             emit.i32(allReduceAlgorithmCode(algorithm)),
             emit.i32(wireDtype(o, compress))}};
  return {"metart_all_reduce", {ctx, input, output, mask, reduction}};
}

RuntimeCall reduceScatterCall(shard::ReduceScatterOp o,
                              RuntimeCallEmitter &emit, Value ctx, Value input,
                              Value output) {
  SmallVector<Value> args = {ctx,
                             input,
                             output,
                             emit.i32(axesMask(o.getGridAxes())),
                             emit.i64(o.getScatterAxis().getSExtValue()),
                             emit.i32(reductionCode(o.getReduction()))};
  auto algorithm = o->getAttrOfType<StringAttr>("metac.allreduce");
  if (!algorithm && !o->hasAttr("metac.async"))
    return {"metart_reduce_scatter", args};
  args.push_back(emit.i32(allReduceAlgorithmCode(algorithm)));
  return {o->hasAttr("metac.async") ? "metart_reduce_scatter_start"
                                    : "metart_reduce_scatter_algorithm",
          args};
}

} // namespace

int64_t lowering::axesMask(ArrayRef<shard::GridAxis> axes) {
  int64_t mask = 0;
  for (shard::GridAxis axis : axes)
    mask |= int64_t(1) << axis;
  return mask;
}

RuntimeCall lowering::collectiveCall(Operation *op, RuntimeCallEmitter &emit,
                                     Value ctx, Value input, Value output,
                                     int64_t &nextSite) {
  return llvm::TypeSwitch<Operation *, RuntimeCall>(op)
      .Case([&](shard::AllReduceOp o) {
        return allReduceCall(o, emit, ctx, input, output, nextSite);
      })
      .Case([&](shard::ReduceScatterOp o) {
        return reduceScatterCall(o, emit, ctx, input, output);
      })
      .Case([&](shard::AllGatherOp o) {
        return RuntimeCall{"metart_all_gather",
                           {ctx, input, output,
                            emit.i32(axesMask(o.getGridAxes())),
                            emit.i64(o.getGatherAxis().getSExtValue())}};
      })
      .Case([&](shard::AllToAllOp o) {
        return RuntimeCall{"metart_all_to_all",
                           {ctx, input, output,
                            emit.i32(axesMask(o.getGridAxes())),
                            emit.i64(o.getSplitAxis().getSExtValue()),
                            emit.i64(o.getConcatAxis().getSExtValue())}};
      })
      .Case([&](shard::AllSliceOp o) {
        return RuntimeCall{"metart_all_slice",
                           {ctx, input, output,
                            emit.i32(axesMask(o.getGridAxes())),
                            emit.i64(o.getSliceAxis().getSExtValue())}};
      })
      .Default([](Operation *) -> RuntimeCall {
        llvm_unreachable("collectiveCall takes the five shard collectives");
      });
}
