//===- NNToRuntime.cpp - step functions to metart calls -------------------===//

#include "metac/Conversion/Passes.h"

#include "CollectiveCalls.h"
#include "DeviceLaunches.h"
#include "RuntimeCallEmitter.h"
#include "StepLowering.h"

#include "metac/Dialect/Meta/IR/MetaOps.h"
#include "metac/Dialect/NN/IR/NNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"

namespace metac {
#define GEN_PASS_DEF_CONVERTNNTORUNTIME
#include "metac/Conversion/Passes.h.inc"
} // namespace metac

using namespace mlir;
using namespace metac;
using metac::lowering::axesMask;
using metac::lowering::byteSize;
using metac::lowering::RuntimeCallEmitter;
using metac::lowering::StepLowering;

namespace {

/// metart_unary_op and metart_binary_op codes.
std::optional<int64_t> unaryCode(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<int64_t>>(op)
      .Case([](nn::NegOp) { return 0; })
      .Case([](nn::ExpOp) { return 1; })
      .Case([](nn::LogOp) { return 2; })
      .Case([](nn::SqrtOp) { return 3; })
      .Case([](nn::RsqrtOp) { return 4; })
      .Case([](nn::ErfOp) { return 5; })
      .Case([](nn::ReluOp) { return 6; })
      .Case([](nn::StepOp) { return 7; })
      .Case([](nn::TanhOp) { return 8; })
      .Case([](nn::SigmoidOp) { return 9; })
      .Case([](nn::GeluOp) { return 10; })
      .Default([](Operation *) { return std::nullopt; });
}

std::optional<int64_t> binaryCode(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<int64_t>>(op)
      .Case([](nn::AddOp) { return 0; })
      .Case([](nn::SubOp) { return 1; })
      .Case([](nn::MulOp) { return 2; })
      .Case([](nn::DivOp) { return 3; })
      .Default([](Operation *) { return std::nullopt; });
}

/// The buffers of a carried value's site (meta-carry-buffers: 1 where the
/// loaded value's reads end before the store).
int32_t carryBuffers(Operation *op) {
  auto buffers = op->getAttrOfType<IntegerAttr>("metac.carry_buffers");
  return buffers ? int32_t(buffers.getInt()) : 2;
}

/// The position of an attention operand named by an attention derivative's
/// `wrt` or `from` among the runtime call's q, k, v (and dy) arguments.
unsigned attentionSlot(StringRef name) {
  return llvm::StringSwitch<unsigned>(name)
      .Case("query", 0)
      .Case("key", 1)
      .Case("value", 2)
      .Default(3);
}

} // namespace

LogicalResult StepLowering::lower() {
  if (!step.getBody().hasOneBlock())
    return step.emitError("only straight-line step functions can be lowered");
  emit.beginFunction(name);
  emit.call("metart_scratch_reset", {emit.context()});
  for (auto [i, arg] : llvm::enumerate(step.getArguments()))
    descriptors[arg] = emit.arrayElement(emit.inputs(), i);
  // Scratch buffers are given back after their last reader, so later ops
  // of the same size reuse them: memory follows what is live, not what the
  // whole step computes (long inner loops, CG iterations, micro-batches).
  Block &body = step.getBody().front();
  DenseMap<Operation *, unsigned> position;
  for (Operation &op : body)
    position[&op] = position.size();
  // Views share their operand's buffer; the buffer dies with its last view.
  DenseMap<Value, Value> buffer;
  DenseMap<Value, unsigned> death;
  for (Operation &op : body) {
    // The outer update is in place: its results are its operands' buffers
    // (under ZeRO, scratch slices of the parameters that the update's
    // all-gathers read afterwards), which live on while the results do.
    if (auto update = dyn_cast<meta::OuterStepOp>(op)) {
      for (auto [result, operand] : llvm::zip(
               update.getResults(),
               llvm::concat<Value>(update.getParams(), update.getState()))) {
        Value base = buffer.lookup(operand);
        if (!base)
          continue;
        buffer[result] = base;
        for (Operation *user : result.getUsers())
          death[base] = std::max(death.lookup(base), position[user]);
      }
      continue;
    }
    bool view = isa<nn::ReshapeOp, nn::StopGradientOp, tensor::ExtractSliceOp,
                    shard::SendOp, meta::WaitOp>(op);
    for (Value result : op.getResults()) {
      if (!isa<RankedTensorType>(result.getType()) ||
          isa<meta::CarryLoadOp>(op))
        continue;
      // Parameters pulled from servers land in the step's own buffers.
      if (auto server = dyn_cast<meta::ServerStepOp>(op);
          server && llvm::is_contained(server.getNewParams(), result))
        continue;
      Value base = view ? buffer.lookup(op.getOperand(0)) : result;
      if (!base)
        continue;
      buffer[result] = base;
      unsigned last = position[&op];
      for (Operation *user : result.getUsers()) {
        last = std::max(last, position[user]);
        // A send does not wait for its receiver: what it sends must stay
        // until the step's closing collective completes it.
        if (isa<shard::SendOp>(user))
          last = position.size();
        // An asynchronous collective reads its operand until its wait.
        if (user->hasAttr("metac.async"))
          for (Operation *wait : user->getUsers())
            last = std::max(last, position[wait]);
      }
      death[base] = std::max(death.lookup(base), last);
    }
  }
  DenseMap<unsigned, SmallVector<Value>> dying;
  for (auto [base, at] : death)
    dying[at].push_back(base);
  // --offload=params: the leading arguments are parameters in host
  // buffers. Views of them stay views of host memory; every other op that
  // reads one gets a copy in scratch device memory for its own duration,
  // prefetched: started before the op ahead of it (on CUDA on a second
  // stream, so the copy crosses while that op computes) and waited for
  // before its own.
  DenseSet<Value> onHost;
  if (auto n = step->getAttrOfType<IntegerAttr>("meta.offload_params"))
    for (int64_t i = 0,
                 e = std::min<int64_t>(n.getInt(), step.getNumArguments());
         i < e; ++i)
      onHost.insert(step.getArgument(i));
  auto isHostView = [&](Operation &op) {
    return isa<nn::ReshapeOp, nn::StopGradientOp, tensor::ExtractSliceOp>(op) &&
           onHost.contains(op.getOperand(0));
  };
  // The parameters on the host that `op` reads from a device copy.
  auto fetchedBy = [&](Operation &op) {
    SmallVector<Value> values;
    if (isa<func::ReturnOp, meta::OuterStepOp>(op) || isHostView(op))
      return values;
    for (Value v : op.getOperands())
      if (onHost.contains(v) && !llvm::is_contained(values, v))
        values.push_back(v);
    return values;
  };
  // The next op's device copies made ahead: (copy, whether it is in
  // flight rather than this op's, kept).
  DenseMap<Value, std::pair<Value, bool>> ahead;
  Value ctx = emit.context();
  for (Operation &op : body) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      lowerReturn(ret);
      continue;
    }
    // (value, its host descriptor)
    SmallVector<std::pair<Value, Value>> fetched;
    for (Value v : fetchedBy(op)) {
      Value host = descriptors.lookup(v);
      Value device;
      if (auto a = ahead.find(v); a != ahead.end()) {
        device = a->second.first;
        if (a->second.second)
          emit.checkedCall("metart_copy_wait", {ctx, emit.dataOf(device)});
      } else {
        device = emit.descriptor(cast<RankedTensorType>(v.getType()));
        emit.checkedCall("metart_copy_device",
                         {ctx, emit.dataOf(device), emit.dataOf(host),
                          emit.i64(byteSize(v.getType()))});
      }
      descriptors[v] = device;
      fetched.push_back({v, host});
    }
    ahead.clear();
    // Not across an update or a pull, which write the parameters.
    Operation *next = op.getNextNode();
    if (next && !isa<meta::OuterStepOp, meta::ServerStepOp>(op))
      for (Value v : fetchedBy(*next)) {
        if (llvm::any_of(fetched, [&](auto &f) { return f.first == v; })) {
          ahead[v] = {descriptors[v], false};
          continue;
        }
        Value device = emit.descriptor(cast<RankedTensorType>(v.getType()));
        emit.checkedCall("metart_copy_device_start",
                         {ctx, emit.dataOf(device),
                          emit.dataOf(descriptors.lookup(v)),
                          emit.i64(byteSize(v.getType()))});
        ahead[v] = {device, true};
      }
    bool hostView = isHostView(op);
    if (failed(lowerOp(&op)))
      return failure();
    if (hostView)
      onHost.insert(op.getResult(0));
    for (auto [v, host] : fetched) {
      Value device = descriptors[v];
      descriptors[v] = host;
      if (!ahead.contains(v))
        emit.call("metart_scratch_free",
                  {ctx, emit.dataOf(device), emit.i64(byteSize(v.getType()))});
    }
    auto it = dying.find(position[&op]);
    if (it == dying.end())
      continue;
    // In program order, so the IR is the same from run to run.
    SmallVector<Value> bases = it->second;
    llvm::sort(bases, [&](Value a, Value b) {
      Operation *x = a.getDefiningOp(), *y = b.getDefiningOp();
      if (x != y)
        return position[x] < position[y];
      return cast<OpResult>(a).getResultNumber() <
             cast<OpResult>(b).getResultNumber();
    });
    for (Value base : bases) {
      Value d = descriptors.lookup(base);
      if (!d)
        continue;
      emit.call("metart_scratch_free", {emit.context(), emit.dataOf(d),
                                        emit.i64(byteSize(base.getType()))});
    }
  }
  emit.finishFunction();
  return success();
}

LogicalResult StepLowering::lowerConstant(arith::ConstantOp op) {
  auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
  if (!dense)
    return op.emitOpError("only dense tensor constants can be lowered");
  Value d = result(op);
  if (dense.isSplat()) {
    Attribute v = dense.getSplatValue<Attribute>();
    double value = isa<FloatAttr>(v) ? cast<FloatAttr>(v).getValueAsDouble()
                                     : cast<IntegerAttr>(v).getInt();
    emit.checkedCall("metart_fill", {emit.context(), d, emit.f64(value)});
    return success();
  }
  ArrayRef<char> raw = dense.getRawData();
  Value source = emit.bytes(StringRef(raw.data(), raw.size()));
  emit.checkedCall("metart_copy_to_device",
                   {emit.context(), emit.dataOf(d), source,
                    emit.i64(byteSize(op.getType()))});
  return success();
}

void StepLowering::lowerReturn(func::ReturnOp op) {
  for (auto [i, v] : llvm::enumerate(op.getOperands())) {
    Value destination = emit.arrayElement(emit.outputs(), i);
    emit.checkedCall("metart_copy_device",
                     {emit.context(), emit.dataOf(destination),
                      emit.dataOf(operand(v)),
                      emit.i64(byteSize(v.getType()))});
  }
}

/// Concatenation along dimension 0 (how collective buckets are packed):
/// the operands' bytes one after the other.
LogicalResult StepLowering::lowerConcat(tensor::ConcatOp op) {
  if (op.getDim() != 0)
    return op.emitOpError("is lowered only along dimension 0");
  Value destination = emit.dataOf(result(op));
  int64_t offset = 0;
  for (Value input : op.getInputs()) {
    int64_t bytes = byteSize(input.getType());
    emit.checkedCall("metart_copy_device",
                     {emit.context(), emit.offsetBytes(destination, offset),
                      emit.dataOf(operand(input)), emit.i64(bytes)});
    offset += bytes;
  }
  return success();
}

/// A contiguous slice (a range of dimension 0, unit strides) is a view of
/// its source's data: how collective buckets are unpacked.
LogicalResult StepLowering::lowerSlice(tensor::ExtractSliceOp op) {
  auto source = cast<RankedTensorType>(op.getSource().getType());
  auto type = cast<RankedTensorType>(op.getType());
  ArrayRef<int64_t> offsets = op.getStaticOffsets();
  ArrayRef<int64_t> sizes = op.getStaticSizes();
  bool contiguous =
      source.getRank() == type.getRank() &&
      llvm::all_of(op.getStaticStrides(), [](int64_t s) { return s == 1; });
  for (int64_t d = 1; contiguous && d < source.getRank(); ++d)
    contiguous = offsets[d] == 0 && sizes[d] == source.getDimSize(d);
  if (!contiguous || ShapedType::isDynamic(offsets[0]))
    return op.emitOpError("is lowered only as a static range of dimension 0");
  int64_t rowBytes =
      byteSize(source) / std::max<int64_t>(source.getDimSize(0), 1);
  descriptors[op.getResult()] = emit.descriptor(
      type, emit.offsetBytes(emit.dataOf(operand(op.getSource())),
                             offsets[0] * rowBytes));
  return success();
}

/// One call for the first of an attention's backward ops, computing its
/// siblings' cotangents too (one pass over the tiles); the siblings, when
/// their turn comes, are done.
void StepLowering::lowerAttentionBackward(nn::AttentionBackwardOp op) {
  if (descriptors.contains(op.getResult()))
    return;
  Value outputs[3];
  for (nn::AttentionBackwardOp sibling : op.getSiblings())
    outputs[attentionSlot(sibling.getWrt())] = result(sibling);
  Value ctx = emit.context();
  auto optional = [&](Value d) { return d ? d : emit.null(); };
  SmallVector<Value> args = {ctx,
                             operand(op.getQuery()),
                             operand(op.getKey()),
                             operand(op.getValue()),
                             operand(op.getGrad()),
                             emit.f64(op.getScale().convertToDouble()),
                             emit.i32(op.getCausal())};
  if (auto ring = op.getRingAxes())
    args.push_back(emit.i32(axesMask(*ring)));
  args.append(
      {optional(outputs[0]), optional(outputs[1]), optional(outputs[2])});
  emit.checkedCall(op.getRingAxes() ? "metart_nn_ring_attention_backward"
                                    : "metart_nn_attention_backward",
                   args);
}

/// As the backward: one call for the ops of one `from` and cotangent.
void StepLowering::lowerAttentionDoubleBackward(
    nn::AttentionDoubleBackwardOp op) {
  if (descriptors.contains(op.getResult()))
    return;
  Value outputs[4], cotangents[3];
  for (nn::AttentionDoubleBackwardOp sibling : op.getSiblings())
    outputs[attentionSlot(sibling.getWrt())] = result(sibling);
  cotangents[attentionSlot(op.getFrom())] = operand(op.getCotangent());
  auto optional = [&](Value d) { return d ? d : emit.null(); };
  SmallVector<Value> args = {emit.context(),
                             operand(op.getQuery()),
                             operand(op.getKey()),
                             operand(op.getValue()),
                             operand(op.getGrad()),
                             optional(cotangents[0]),
                             optional(cotangents[1]),
                             optional(cotangents[2]),
                             emit.f64(op.getScale().convertToDouble()),
                             emit.i32(op.getCausal())};
  if (auto ring = op.getRingAxes())
    args.push_back(emit.i32(axesMask(*ring)));
  args.append({optional(outputs[0]), optional(outputs[1]), optional(outputs[2]),
               optional(outputs[3])});
  emit.checkedCall(op.getRingAxes() ? "metart_nn_ring_attention_double_backward"
                                    : "metart_nn_attention_double_backward",
                   args);
}

/// `void @<kernel>_thunk(ptr arguments, i64 chunk)`: calls the generated
/// kernel on slice `chunk` of the pointers of the array (the form
/// metart_run_host_kernel calls): each sliced operand advanced by `chunk`
/// slices, replicated inputs as they are.
LLVM::LLVMFuncOp StepLowering::thunkOf(nn::FusedOp op) {
  auto module = op->getParentOfType<ModuleOp>();
  std::string name = (*op.getKernel() + kFusedKernelThunkSuffix).str();
  if (auto existing = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return existing;
  auto kernel = module.lookupSymbol<LLVM::LLVMFuncOp>(*op.getKernel());
  int64_t chunks = op.getChunks().value_or(1);
  SmallVector<int64_t> sliceBytes;
  for (auto [index, input] : llvm::enumerate(op.getInputs())) {
    bool whole = op.getReplicated() && (*op.getReplicated())[index];
    sliceBytes.push_back(whole ? 0 : byteSize(input.getType()) / chunks);
  }
  for (Value result : op.getResults())
    sliceBytes.push_back(byteSize(result.getType()) / chunks);
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  Location loc = op.getLoc();
  Type ptr = emit.ptrType(), i64 = b.getI64Type(), i8 = b.getI8Type();
  auto thunk = LLVM::LLVMFuncOp::create(
      b, loc, name,
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(b.getContext()),
                                  {ptr, i64}));
  Block *entry = thunk.addEntryBlock(b);
  b.setInsertionPointToStart(entry);
  Value chunk = entry->getArgument(1);
  SmallVector<Value> pointers;
  for (auto [i, bytes] : llvm::enumerate(sliceBytes)) {
    Value address =
        LLVM::GEPOp::create(b, loc, ptr, ptr, entry->getArgument(0),
                            ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
    Value pointer = LLVM::LoadOp::create(b, loc, ptr, address);
    if (bytes > 0) {
      Value offset = LLVM::MulOp::create(
          b, loc, chunk,
          LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(bytes)));
      pointer = LLVM::GEPOp::create(b, loc, ptr, i8, pointer,
                                    ArrayRef<LLVM::GEPArg>{offset});
    }
    pointers.push_back(pointer);
  }
  LLVM::CallOp::create(b, loc, kernel, pointers);
  LLVM::ReturnOp::create(b, loc, ValueRange{});
  return thunk;
}

/// On a host backend, one call of the group's generated host kernel; on
/// CUDA, its generated device kernels' launches where it has them;
/// otherwise its ops one by one, writing the group's results where the
/// kernels would have.
LogicalResult StepLowering::lowerFused(nn::FusedOp op) {
  SmallVector<Value> results;
  for (Value r : op.getResults()) {
    Value d = emit.descriptor(cast<RankedTensorType>(r.getType()));
    descriptors[r] = d;
    results.push_back(d);
  }
  auto device = op->getAttrOfType<DictionaryAttr>(kDeviceKernelAttr);
  if (!op.getKernel() && !device)
    return lowerFusedByOps(op, results);
  OpBuilder &b = emit.builder();
  Location loc = op.getLoc();
  Block *current = b.getInsertionBlock();
  Region *region = current->getParent();
  Block *join = b.createBlock(region, std::next(current->getIterator()));
  Block *byOps = b.createBlock(join);
  Block *deviceCheck = device ? b.createBlock(byOps) : byOps;
  b.setInsertionPointToEnd(current);
  SmallVector<Value> buffers;
  for (Value input : op.getInputs())
    buffers.push_back(emit.dataOf(operand(input)));
  for (Value d : results)
    buffers.push_back(emit.dataOf(d));
  // Tries `mode` when `query` answers yes, else falls through to `next`.
  auto branch = [&](StringRef query, Block *next, ValueRange arguments) {
    b.setInsertionPointToEnd(current);
    Value yes =
        LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::ne,
                             emit.callI32(query, arguments), emit.i32(0));
    Block *taken = b.createBlock(next);
    b.setInsertionPointToEnd(current);
    LLVM::CondBrOp::create(b, loc, yes, taken, next);
    return taken;
  };
  if (op.getKernel()) {
    b.setInsertionPointToEnd(
        branch("metart_context_is_host", deviceCheck, {emit.context()}));
    Value thunk = LLVM::AddressOfOp::create(b, loc, thunkOf(op));
    emit.checkedCall("metart_run_host_kernel",
                     {emit.context(), thunk, emit.pointerArray(buffers),
                      emit.i64(op.getChunks().value_or(1))});
    LLVM::BrOp::create(b, loc, join);
  } else {
    b.setInsertionPointToEnd(current);
    LLVM::BrOp::create(b, loc, deviceCheck);
  }
  if (device) {
    // The runtime launches the group's kernels where its backend runs them
    // and their module loads (a GPU too old for the PTX: op by op).
    current = deviceCheck;
    auto [ptx, firstEntry] = lowering::deviceModuleOf(op, device);
    if (!ptx)
      return op.emitOpError("has a malformed ") << kDeviceKernelAttr;
    b.setInsertionPointToEnd(current);
    Value code = emit.cString(ptx.getValue());
    Value entry = emit.cString(firstEntry.getValue());
    b.setInsertionPointToEnd(branch("metart_device_kernel_ready", byOps,
                                    {emit.context(), code, entry}));
    if (failed(lowering::emitDeviceLaunches(op, device, emit, buffers)))
      return failure();
    LLVM::BrOp::create(b, loc, join);
  }
  b.setInsertionPointToEnd(byOps);
  if (failed(lowerFusedByOps(op, results)))
    return failure();
  LLVM::BrOp::create(b, loc, join);
  b.setInsertionPointToEnd(join);
  return success();
}

LogicalResult StepLowering::lowerFusedByOps(nn::FusedOp op,
                                            ArrayRef<Value> results) {
  Block &body = op.getBody().front();
  for (auto [argument, input] : llvm::zip(body.getArguments(), op.getInputs()))
    descriptors[argument] = operand(input);
  auto yield = cast<nn::YieldOp>(body.getTerminator());
  // Yielded values are computed into the group's results.
  for (auto [value, d] : llvm::zip(yield.getValues(), results))
    if (!isa<BlockArgument>(value))
      descriptors[value] = d;
  for (Operation &inner : body.without_terminator())
    if (failed(lowerOp(&inner)))
      return failure();
  for (auto [value, d] : llvm::zip(yield.getValues(), results))
    if (isa<BlockArgument>(value))
      emit.checkedCall("metart_copy_device",
                       {emit.context(), emit.dataOf(d),
                        emit.dataOf(operand(value)),
                        emit.i64(byteSize(value.getType()))});
  // The group's intermediate values die with it.
  for (Operation &inner : body.without_terminator()) {
    Value value = inner.getResult(0);
    if (llvm::is_contained(yield.getValues(), value))
      continue;
    emit.call("metart_scratch_free",
              {emit.context(), emit.dataOf(operand(value)),
               emit.i64(byteSize(value.getType()))});
  }
  return success();
}

LogicalResult StepLowering::lowerOp(Operation *op) {
  Value ctx = emit.context();
  if (auto fused = dyn_cast<nn::FusedOp>(op))
    return lowerFused(fused);
  if (auto c = dyn_cast<arith::ConstantOp>(op))
    return lowerConstant(c);
  if (auto outer = dyn_cast<meta::OuterStepOp>(op))
    return lowerOuterStep(outer);
  if (auto server = dyn_cast<meta::ServerStepOp>(op))
    return lowerServerStep(server);
  if (auto guard = dyn_cast<meta::UpdateGuardOp>(op)) {
    lowerUpdateGuard(guard);
    return success();
  }
  if (auto concat = dyn_cast<tensor::ConcatOp>(op))
    return lowerConcat(concat);
  if (isa<tensor::EmptyOp>(op)) {
    // Contents undefined: only a buffer (for a receive to fill).
    result(op);
    return success();
  }
  if (auto send = dyn_cast<shard::SendOp>(op)) {
    ArrayRef<int64_t> destination = send.getDestination();
    if (destination.size() != 1)
      return send.emitOpError("is lowered only to a peer on one axis");
    emit.checkedCall("metart_send",
                     {ctx, operand(send.getInput()),
                      emit.i32(lowering::axesMask(send.getGridAxes())),
                      emit.i64(destination[0])});
    descriptors[send.getResult()] = operand(send.getInput());
    return success();
  }
  if (auto recv = dyn_cast<shard::RecvOp>(op)) {
    std::optional<ArrayRef<int64_t>> source = recv.getSource();
    if (!source || source->size() != 1)
      return recv.emitOpError("is lowered only from a peer on one axis");
    emit.checkedCall("metart_recv",
                     {ctx, result(op),
                      emit.i32(lowering::axesMask(recv.getGridAxes())),
                      emit.i64((*source)[0])});
    return success();
  }
  if (auto load = dyn_cast<meta::CarryLoadOp>(op)) {
    // A view of the site's buffer (not scratch: never given back).
    Value d =
        emit.descriptor(cast<RankedTensorType>(load.getType()), emit.null());
    descriptors[load.getResult()] = d;
    emit.checkedCall("metart_carry_view", {ctx, d, emit.i64(load.getSite()),
                                           emit.i32(carryBuffers(op))});
    return success();
  }
  if (auto store = dyn_cast<meta::CarryStoreOp>(op)) {
    emit.checkedCall("metart_carry_store",
                     {ctx, operand(store.getValue()), emit.i64(store.getSite()),
                      emit.i32(carryBuffers(op))});
    return success();
  }
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op))
    return lowerSlice(slice);
  if (auto backward = dyn_cast<nn::AttentionBackwardOp>(op)) {
    lowerAttentionBackward(backward);
    return success();
  }
  if (auto second = dyn_cast<nn::AttentionDoubleBackwardOp>(op)) {
    lowerAttentionDoubleBackward(second);
    return success();
  }
  if (auto wait = dyn_cast<meta::WaitOp>(op)) {
    // The started collective's result, complete from here on.
    Value started = operand(wait.getStarted());
    emit.checkedCall("metart_collective_wait", {ctx, started});
    descriptors[wait.getResult()] = started;
    return success();
  }
  if (isa<nn::ReshapeOp, nn::StopGradientOp>(op)) {
    // Row-major reshapes and stop-gradients share their operand's data.
    descriptors[op->getResult(0)] =
        emit.descriptor(cast<RankedTensorType>(op->getResult(0).getType()),
                        emit.dataOf(operand(op->getOperand(0))));
    return success();
  }
  auto args = [&](std::initializer_list<Value> values) {
    return SmallVector<Value>(values);
  };
  auto opt = [&](Value v) { return v ? operand(v) : emit.null(); };
  auto arr = [&](ArrayRef<int64_t> a) { return emit.i64Array(a); };
  if (std::optional<int64_t> code = unaryCode(op)) {
    Value x = operand(op->getOperand(0));
    emit.checkedCall("metart_nn_unary", {ctx, emit.i32(*code), x, result(op)});
    return success();
  }
  if (std::optional<int64_t> code = binaryCode(op)) {
    Value a = operand(op->getOperand(0)), c = operand(op->getOperand(1));
    emit.checkedCall("metart_nn_binary",
                     {ctx, emit.i32(*code), a, c, result(op)});
    return success();
  }
  // Collectives over the axes of the mesh (CollectiveCalls.cpp).
  if (isa<shard::AllReduceOp, shard::AllGatherOp, shard::AllSliceOp,
          shard::AllToAllOp, shard::ReduceScatterOp>(op)) {
    Value input = operand(op->getOperand(0));
    lowering::RuntimeCall collective =
        lowering::collectiveCall(op, emit, ctx, input, result(op), nextSite);
    emit.checkedCall(collective.callee, collective.args);
    return success();
  }
  std::optional<std::pair<StringRef, SmallVector<Value>>> call =
      llvm::TypeSwitch<Operation *,
                       std::optional<std::pair<StringRef, SmallVector<Value>>>>(
          op)
          .Case([&](nn::ScaleOp o) {
            return std::make_pair(
                StringRef("metart_nn_scale"),
                args({ctx, operand(o.getInput()),
                      emit.f64(o.getFactor().convertToDouble()), result(o)}));
          })
          .Case([&](nn::ConvertOp o) {
            return std::make_pair(
                StringRef("metart_convert"),
                args({ctx, operand(o.getInput()), result(o)}));
          })
          .Case([&](nn::LinearOp o) {
            return std::make_pair(
                StringRef("metart_nn_linear"),
                args({ctx, operand(o.getInput()), operand(o.getWeight()),
                      opt(o.getBias()), result(o)}));
          })
          .Case([&](nn::MatmulOp o) {
            return std::make_pair(
                StringRef("metart_nn_matmul"),
                args({ctx, operand(o.getLhs()), operand(o.getRhs()),
                      emit.i32(o.getTransposeLhs()),
                      emit.i32(o.getTransposeRhs()), result(o)}));
          })
          .Case([&](nn::AttentionOp o) {
            if (auto ring = o.getRingAxes())
              return std::make_pair(
                  StringRef("metart_nn_ring_attention"),
                  args({ctx, operand(o.getQuery()), operand(o.getKey()),
                        operand(o.getValue()),
                        emit.f64(o.getScale().convertToDouble()),
                        emit.i32(o.getCausal()), emit.i32(axesMask(*ring)),
                        result(o)}));
            return std::make_pair(
                StringRef("metart_nn_attention"),
                args({ctx, operand(o.getQuery()), operand(o.getKey()),
                      operand(o.getValue()),
                      emit.f64(o.getScale().convertToDouble()),
                      emit.i32(o.getCausal()), result(o)}));
          })
          .Case([&](nn::Conv2DOp o) {
            return std::make_pair(
                StringRef("metart_nn_conv2d"),
                args({ctx, operand(o.getInput()), operand(o.getWeight()),
                      opt(o.getBias()), arr(o.getStride()), arr(o.getPadding()),
                      result(o)}));
          })
          .Case([&](nn::Conv2DBackwardInputOp o) {
            return std::make_pair(
                StringRef("metart_nn_conv2d_backward_input"),
                args({ctx, operand(o.getGrad()), operand(o.getWeight()),
                      arr(o.getStride()), arr(o.getPadding()), result(o)}));
          })
          .Case([&](nn::Conv2DBackwardWeightOp o) {
            return std::make_pair(
                StringRef("metart_nn_conv2d_backward_weight"),
                args({ctx, operand(o.getInput()), operand(o.getGrad()),
                      arr(o.getStride()), arr(o.getPadding()), result(o)}));
          })
          .Case([&](nn::MaxPool2DOp o) {
            return std::make_pair(
                StringRef("metart_nn_max_pool2d"),
                args({ctx, operand(o.getInput()), arr(o.getKernel()),
                      arr(o.getStride()), arr(o.getPadding()), result(o)}));
          })
          .Case([&](nn::AvgPool2DOp o) {
            return std::make_pair(
                StringRef("metart_nn_avg_pool2d"),
                args({ctx, operand(o.getInput()), arr(o.getKernel()),
                      arr(o.getStride()), arr(o.getPadding()), result(o)}));
          })
          .Case([&](nn::MaxPool2DBackwardOp o) {
            return std::make_pair(
                StringRef("metart_nn_max_pool2d_backward"),
                args({ctx, operand(o.getInput()), operand(o.getGrad()),
                      arr(o.getKernel()), arr(o.getStride()),
                      arr(o.getPadding()), result(o)}));
          })
          .Case([&](nn::MaxPool2DGatherOp o) {
            return std::make_pair(
                StringRef("metart_nn_max_pool2d_gather"),
                args({ctx, operand(o.getInput()), operand(o.getSource()),
                      arr(o.getKernel()), arr(o.getStride()),
                      arr(o.getPadding()), result(o)}));
          })
          .Case([&](nn::AvgPool2DBackwardOp o) {
            return std::make_pair(
                StringRef("metart_nn_avg_pool2d_backward"),
                args({ctx, operand(o.getGrad()), arr(o.getKernel()),
                      arr(o.getStride()), arr(o.getPadding()), result(o)}));
          })
          .Case([&](nn::BatchNormOp o) {
            return std::make_pair(
                StringRef("metart_nn_batch_norm"),
                args({ctx, operand(o.getInput()), operand(o.getWeight()),
                      operand(o.getBias()), emit.i64(o.getChannelDim()),
                      arr(o.getReduceDims()),
                      emit.i64(o.getReduceDims().size()),
                      emit.f64(o.getEpsilon().convertToDouble()), result(o)}));
          })
          .Case([&](nn::LayerNormOp o) {
            return std::make_pair(
                StringRef("metart_nn_layer_norm"),
                args({ctx, operand(o.getInput()), operand(o.getWeight()),
                      operand(o.getBias()),
                      emit.f64(o.getEpsilon().convertToDouble()), result(o)}));
          })
          .Case([&](nn::SoftmaxOp o) {
            return std::make_pair(StringRef("metart_nn_softmax"),
                                  args({ctx, operand(o.getInput()),
                                        emit.i64(o.getAxis()), result(o)}));
          })
          .Case([&](nn::LogSoftmaxOp o) {
            return std::make_pair(StringRef("metart_nn_log_softmax"),
                                  args({ctx, operand(o.getInput()),
                                        emit.i64(o.getAxis()), result(o)}));
          })
          .Case([&](nn::EmbeddingOp o) {
            return std::make_pair(StringRef("metart_nn_embedding"),
                                  args({ctx, operand(o.getIds()),
                                        operand(o.getTable()), result(o)}));
          })
          .Case([&](nn::EmbeddingBackwardOp o) {
            return std::make_pair(StringRef("metart_nn_embedding_backward"),
                                  args({ctx, operand(o.getIds()),
                                        operand(o.getGrad()), result(o)}));
          })
          .Case([&](nn::MoeDispatchOp o) {
            return std::make_pair(StringRef("metart_nn_moe_dispatch"),
                                  args({ctx, operand(o.getProbs()),
                                        emit.i64(o.getTopK()), result(o)}));
          })
          .Case([&](nn::OneHotOp o) {
            return std::make_pair(
                StringRef("metart_nn_one_hot"),
                args({ctx, operand(o.getLabels()), result(o)}));
          })
          .Case([&](nn::TransposeOp o) {
            return std::make_pair(StringRef("metart_nn_transpose"),
                                  args({ctx, operand(o.getInput()),
                                        arr(o.getPermutation()), result(o)}));
          })
          .Case([&](nn::BroadcastOp o) {
            return std::make_pair(
                StringRef("metart_nn_broadcast"),
                args({ctx, operand(o.getInput()), arr(o.getDimensions()),
                      emit.i64(o.getDimensions().size()), result(o)}));
          })
          .Case([&](nn::ReduceSumOp o) {
            return std::make_pair(
                StringRef("metart_nn_reduce_sum"),
                args({ctx, operand(o.getInput()), arr(o.getDimensions()),
                      emit.i64(o.getDimensions().size()), result(o)}));
          })
          .Case([&](nn::ReduceMeanOp o) {
            return std::make_pair(
                StringRef("metart_nn_reduce_mean"),
                args({ctx, operand(o.getInput()), arr(o.getDimensions()),
                      emit.i64(o.getDimensions().size()), result(o)}));
          })
          .Case([&](nn::MSELossOp o) {
            return std::make_pair(
                StringRef("metart_nn_mse_loss"),
                args({ctx, operand(o.getPrediction()), operand(o.getTarget()),
                      emit.i64(o.getBatchRank()), result(o)}));
          })
          .Case([&](nn::CrossEntropyLossOp o) {
            return std::make_pair(
                StringRef("metart_nn_cross_entropy_loss"),
                args({ctx, operand(o.getLogits()), operand(o.getLabels()),
                      emit.i64(o.getBatchRank()), result(o)}));
          })
          .Case([&](nn::AccuracyOp o) {
            return std::make_pair(
                StringRef("metart_nn_accuracy"),
                args({ctx, operand(o.getLogits()), operand(o.getLabels()),
                      emit.i64(o.getBatchRank()), result(o)}));
          })
          .Default(
              [](Operation *)
                  -> std::optional<std::pair<StringRef, SmallVector<Value>>> {
                return std::nullopt;
              });
  if (!call)
    return op->emitOpError("cannot be lowered to the runtime (is the program "
                           "past the autodiff phase?)");
  emit.checkedCall(call->first, call->second);
  return success();
}

namespace {

struct ConvertNNToRuntimePass
    : public metac::impl::ConvertNNToRuntimeBase<ConvertNNToRuntimePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> steps;
    for (auto train : module.getOps<meta::TrainOp>()) {
      auto name = train->getAttrOfType<FlatSymbolRefAttr>("meta.step");
      if (!name) {
        train.emitOpError("has no step function (run the expand phase first)");
        return signalPassFailure();
      }
      SmallVector<StringRef> names{name.getValue()};
      // A mixed meta-batch's other groups of task ranks have their own.
      if (auto variants = train->getAttrOfType<ArrayAttr>("meta.step_variants"))
        for (auto v :
             llvm::drop_begin(variants.getAsRange<FlatSymbolRefAttr>()))
          names.push_back(v.getValue());
      if (auto evals = train->getAttrOfType<ArrayAttr>("meta.eval"))
        for (auto eval : evals.getAsRange<FlatSymbolRefAttr>())
          names.push_back(eval.getValue());
      // Pipelines have one function per stage instead.
      int64_t stages = 1;
      if (auto attr = train->getAttrOfType<IntegerAttr>("meta.pipeline_stages"))
        stages = attr.getInt();
      for (StringRef function : names)
        for (int64_t stage = 0; stage < stages; ++stage) {
          std::string symbol = stages > 1
                                   ? (function + ".stage" + Twine(stage)).str()
                                   : function.str();
          auto step = module.lookupSymbol<func::FuncOp>(symbol);
          if (!step) {
            train.emitOpError("has no function '") << symbol << "'";
            return signalPassFailure();
          }
          steps.push_back(step);
        }
    }
    // The lowered functions take the step and evaluation functions' names.
    // One emitter for the module, so constant arrays are shared.
    RuntimeCallEmitter emit(module, module.getLoc());
    int64_t sites = 0;
    for (func::FuncOp step : steps) {
      std::string name = step.getSymName().str();
      step.setSymName(name + ".tensor");
      if (failed(StepLowering(emit, step, name, sites).lower()))
        return signalPassFailure();
    }
    // What is left is LLVM dialect only.
    for (Operation &op : llvm::make_early_inc_range(*module.getBody()))
      if (!isa<LLVM::LLVMFuncOp, LLVM::GlobalOp>(op))
        op.erase();
  }
};

} // namespace
