//===- UpdateLowering.cpp - outer updates and their guard to metart calls -===//
//
// The outer update (in place, optionally staging offloaded state and
// parameters through scratch device memory), the parameter servers' step
// and the update guard.
//
//===----------------------------------------------------------------------===//

#include "StepLowering.h"

using namespace mlir;
using namespace metac;
using namespace metac::lowering;

LogicalResult StepLowering::lowerOuterStep(meta::OuterStepOp op) {
  // The update is in place: nothing after it may read the old values.
  for (Value v : llvm::concat<Value>(op.getParams(), op.getState()))
    for (Operation *user : v.getUsers())
      if (user != op && op->isBeforeInBlock(user))
        return op.emitOpError("updates parameters in place, but they are "
                              "used after it");
  Value ctx = emit.context();
  size_t n = op.getParams().size();
  Attribute optimizer = op.getOptimizer();
  // The guard's verdict stays on the device: every update reads it there.
  Value gate = op.getGate() ? operand(op.getGate()) : emit.null();
  // --offload=optimizer: a parameter's state lives in host memory and
  // visits the device for its update only, through one staging area that
  // holds the largest parameter's state and serves every parameter in turn.
  bool offload = op->hasAttr("metac.offload");
  // --offload=params: each parameter visits the device for its update.
  bool offloadParams = op->hasAttr("metac.offload_params");
  int64_t slot = 0;
  for (Value state : op.getState())
    if (cast<RankedTensorType>(state.getType()).getRank() > 0 ||
        !cast<RankedTensorType>(state.getType()).getElementType().isInteger(64))
      slot = std::max(slot, byteSize(state.getType()));
  slot = (slot + 63) / 64 * 64;
  Value area;
  if (offload)
    area = emit.descriptor(RankedTensorType::get(
        {2 * slot}, IntegerType::get(op.getContext(), 8)));
  // (host, device, bytes) of the state of this parameter's update.
  SmallVector<std::tuple<Value, Value, int64_t>> staged;
  auto stateOf = [&](Value state) {
    if (!offload)
      return operand(state);
    Value device = emit.descriptor(
        cast<RankedTensorType>(state.getType()),
        emit.offsetBytes(emit.dataOf(area), slot * int64_t(staged.size())));
    int64_t bytes = byteSize(state.getType());
    emit.checkedCall("metart_copy_device",
                     {ctx, emit.dataOf(device), emit.dataOf(operand(state)),
                      emit.i64(bytes)});
    staged.push_back({operand(state), device, bytes});
    return device;
  };
  // A parameter copied to scratch device memory, copied back and freed
  // after its update.
  SmallVector<std::tuple<Value, Value, int64_t>> stagedParams;
  auto paramOf = [&](Value param) {
    if (!offloadParams)
      return operand(param);
    int64_t bytes = byteSize(param.getType());
    Value device = emit.descriptor(cast<RankedTensorType>(param.getType()));
    emit.checkedCall("metart_copy_device",
                     {ctx, emit.dataOf(device), emit.dataOf(operand(param)),
                      emit.i64(bytes)});
    stagedParams.push_back({operand(param), device, bytes});
    return device;
  };
  auto unstage = [&]() {
    for (auto [host, device, bytes] : staged)
      emit.checkedCall(
          "metart_copy_device",
          {ctx, emit.dataOf(host), emit.dataOf(device), emit.i64(bytes)});
    staged.clear();
    for (auto [host, device, bytes] : stagedParams) {
      emit.checkedCall(
          "metart_copy_device",
          {ctx, emit.dataOf(host), emit.dataOf(device), emit.i64(bytes)});
      emit.call("metart_scratch_free",
                {ctx, emit.dataOf(device), emit.i64(bytes)});
    }
    stagedParams.clear();
  };
  if (auto sgd = dyn_cast<meta::SGDAttr>(optimizer)) {
    bool momentum = !sgd.getMomentum().isZero();
    for (size_t i = 0; i < n; ++i) {
      emit.checkedCall(
          "metart_sgd_update",
          {ctx, paramOf(op.getParams()[i]), operand(op.getGrads()[i]),
           momentum ? stateOf(op.getState()[i]) : emit.null(),
           emit.f64(sgd.getLr().convertToDouble()),
           emit.f64(sgd.getMomentum().convertToDouble()),
           emit.f64(sgd.getWeightDecay().convertToDouble()), gate});
      unstage();
    }
  } else {
    bool decoupled = isa<meta::AdamWAttr>(optimizer);
    auto hyper = [&](auto adam) {
      return SmallVector<double>{
          adam.getLr().convertToDouble(), adam.getBeta1().convertToDouble(),
          adam.getBeta2().convertToDouble(), adam.getEps().convertToDouble(),
          adam.getWeightDecay().convertToDouble()};
    };
    SmallVector<double> h = decoupled ? hyper(cast<meta::AdamWAttr>(optimizer))
                                      : hyper(cast<meta::AdamAttr>(optimizer));
    // The step count stays in a device tensor<i64> that the runtime counts
    // and Adam reads there: no host round trip, so a recorded
    // meta-iteration (a CUDA graph) replays with the current count.
    Value counter = operand(op.getState().back());
    emit.checkedCall("metart_increment", {ctx, counter, gate});
    for (size_t i = 0; i < n; ++i) {
      Value first = stateOf(op.getState()[i]);
      Value second = stateOf(op.getState()[n + i]);
      emit.checkedCall(
          "metart_adam_update",
          {ctx, paramOf(op.getParams()[i]), operand(op.getGrads()[i]), first,
           second, counter, emit.f64(h[0]), emit.f64(h[1]), emit.f64(h[2]),
           emit.f64(h[3]), emit.f64(h[4]), emit.i32(decoupled), gate});
      unstage();
    }
  }
  if (offload)
    emit.call("metart_scratch_free",
              {ctx, emit.dataOf(area), emit.i64(2 * slot)});
  for (auto [r, v] : llvm::zip(
           op.getResults(), llvm::concat<Value>(op.getParams(), op.getState())))
    descriptors[r] = operand(v);
  return success();
}

LogicalResult StepLowering::lowerServerStep(meta::ServerStepOp op) {
  // The pulled parameters overwrite the pushed ones' buffers.
  for (Value v : op.getParams())
    for (Operation *user : v.getUsers())
      if (user != op && op->isBeforeInBlock(user))
        return op.emitOpError("pulls parameters in place, but they are used "
                              "after it");
  SmallVector<Value> params, grads;
  for (auto [p, g] : llvm::zip(op.getParams(), op.getGrads())) {
    params.push_back(operand(p));
    grads.push_back(operand(g));
  }
  Value loss =
      emit.descriptor(cast<RankedTensorType>(op.getTotalLoss().getType()));
  Value norms =
      emit.descriptor(cast<RankedTensorType>(op.getNorms().getType()));
  descriptors[op.getTotalLoss()] = loss;
  descriptors[op.getNorms()] = norms;
  emit.checkedCall("metart_server_step",
                   {emit.context(), emit.pointerArray(params),
                    emit.pointerArray(grads),
                    emit.i64(static_cast<int64_t>(params.size())),
                    operand(op.getLoss()), loss, norms});
  for (auto [r, p] : llvm::zip(op.getNewParams(), op.getParams()))
    descriptors[r] = operand(p);
  return success();
}

void StepLowering::lowerUpdateGuard(meta::UpdateGuardOp op) {
  SmallVector<Value> grads;
  for (Value g : op.getGrads())
    grads.push_back(operand(g));
  double clip = op.getClipNorm() ? op.getClipNorm()->convertToDouble() : 0.0;
  Value norms =
      emit.descriptor(cast<RankedTensorType>(op.getNorms().getType()));
  Value gate = emit.descriptor(cast<RankedTensorType>(op.getGate().getType()));
  descriptors[op.getNorms()] = norms;
  descriptors[op.getGate()] = gate;
  emit.checkedCall("metart_update_guard",
                   {emit.context(), operand(op.getLoss()),
                    emit.pointerArray(grads),
                    emit.i64(static_cast<int64_t>(grads.size())),
                    emit.f64(clip), norms, gate});
}
