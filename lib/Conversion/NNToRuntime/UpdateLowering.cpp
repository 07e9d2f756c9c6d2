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
  // visits the device for its update only, through a staging area that
  // holds the largest parameter's state. Where a second such area costs
  // at most a quarter of the state it offloads, the next parameter's state
  // crosses into it while one parameter is updated in the other (on CUDA
  // on a second stream); otherwise one area serves every parameter in turn.
  bool offload = op->hasAttr("metac.offload");
  // --offload=params: each parameter visits the device for its update,
  // prefetched the same way into scratch memory.
  bool offloadParams = op->hasAttr("metac.offload_params");
  auto roundUp = [](int64_t bytes) { return (bytes + 63) / 64 * 64; };
  int64_t slot = 0, slots = 0;
  for (size_t i = 0; i < n; ++i) {
    SmallVector<Value, 2> state = op.getStateOf(i);
    slots = std::max<int64_t>(slots, int64_t(state.size()));
    for (Value v : state)
      slot = std::max(slot, roundUp(byteSize(v.getType())));
  }
  bool prefetchState = op.prefetchesOffloadedState();
  int64_t areaBytes = (prefetchState ? 2 : 1) * slots * slot;
  Value area;
  if (offload && areaBytes > 0)
    area = emit.descriptor(RankedTensorType::get(
        {areaBytes}, IntegerType::get(op.getContext(), 8)));
  // (host, device, bytes) of a staged operand.
  using Copy = std::tuple<Value, Value, int64_t>;
  auto copyIn = [&](Value host, Value device, int64_t bytes, bool ahead) {
    emit.checkedCall(
        ahead ? "metart_copy_device_start" : "metart_copy_device",
        {ctx, emit.dataOf(device), emit.dataOf(host), emit.i64(bytes)});
    return Copy{host, device, bytes};
  };
  auto waitFor = [&](ArrayRef<Copy> copies) {
    for (auto [host, device, bytes] : copies)
      emit.checkedCall("metart_copy_wait", {ctx, emit.dataOf(device)});
  };
  // Parameters are staged largest first, so that each one's state
  // crosses in while a similar amount goes back.
  SmallVector<unsigned> order = op.getStagingOrder();
  // The state of the parameter staged at position `p`.
  auto bringState = [&](size_t p, bool ahead) {
    SmallVector<Copy, 2> copies;
    SmallVector<Value, 2> states = op.getStateOf(order[p]);
    for (auto [k, state] : llvm::enumerate(states)) {
      int64_t at = (prefetchState ? int64_t(p % 2) : 0) * slots * slot +
                   int64_t(k) * slot;
      Value device = emit.descriptor(cast<RankedTensorType>(state.getType()),
                                     emit.offsetBytes(emit.dataOf(area), at));
      copies.push_back(
          copyIn(operand(state), device, byteSize(state.getType()), ahead));
    }
    return copies;
  };
  auto bringParam = [&](size_t p, bool ahead) {
    Value param = op.getParams()[order[p]];
    Value device = emit.descriptor(cast<RankedTensorType>(param.getType()));
    return SmallVector<Copy, 2>{
        copyIn(operand(param), device, byteSize(param.getType()), ahead)};
  };
  // The staged state and parameter of the parameter at position p
  // (brought now, or waited for where the previous update started them),
  // and the next one's started.
  SmallVector<Copy, 2> state, nextState, params, nextParams;
  auto stage = [&](size_t p) {
    if (offload && !prefetchState) {
      state = bringState(p, false);
    } else if (offload) {
      state = p == 0 ? bringState(0, false) : nextState;
      if (p > 0)
        waitFor(state);
      if (p + 1 < n)
        nextState = bringState(p + 1, true);
    }
    if (offloadParams) {
      params = p == 0 ? bringParam(0, false) : nextParams;
      if (p > 0)
        waitFor(params);
      if (p + 1 < n)
        nextParams = bringParam(p + 1, true);
    }
  };
  auto paramOf = [&](size_t i) {
    return offloadParams ? std::get<1>(params[0]) : operand(op.getParams()[i]);
  };
  auto stateOf = [&](size_t i, unsigned k) {
    return offload ? std::get<1>(state[k]) : operand(op.getStateOf(i)[k]);
  };
  // Copied back (and the parameter's copy freed) after its update.
  auto unstage = [&]() {
    for (auto [host, device, bytes] : llvm::concat<Copy>(state, params))
      emit.checkedCall(
          "metart_copy_device",
          {ctx, emit.dataOf(host), emit.dataOf(device), emit.i64(bytes)});
    for (auto [host, device, bytes] : params)
      emit.call("metart_scratch_free",
                {ctx, emit.dataOf(device), emit.i64(bytes)});
  };
  if (auto sgd = dyn_cast<meta::SGDAttr>(optimizer)) {
    bool momentum = !sgd.getMomentum().isZero();
    for (size_t p = 0; p < n; ++p) {
      size_t i = order[p];
      stage(p);
      emit.checkedCall("metart_sgd_update",
                       {ctx, paramOf(i), operand(op.getGrads()[i]),
                        momentum ? stateOf(i, 0) : emit.null(),
                        emit.f64(sgd.getLr().convertToDouble()),
                        emit.f64(sgd.getMomentum().convertToDouble()),
                        emit.f64(sgd.getWeightDecay().convertToDouble()),
                        gate});
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
    for (size_t p = 0; p < n; ++p) {
      size_t i = order[p];
      stage(p);
      emit.checkedCall("metart_adam_update",
                       {ctx, paramOf(i), operand(op.getGrads()[i]),
                        stateOf(i, 0), stateOf(i, 1), counter, emit.f64(h[0]),
                        emit.f64(h[1]), emit.f64(h[2]), emit.f64(h[3]),
                        emit.f64(h[4]), emit.i32(decoupled), gate});
      unstage();
    }
  }
  if (area)
    emit.call("metart_scratch_free",
              {ctx, emit.dataOf(area), emit.i64(areaBytes)});
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
