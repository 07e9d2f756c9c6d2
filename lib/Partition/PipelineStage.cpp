//===- PipelineStage.cpp - the function of one pipeline stage -------------===//
//
// Writes stage s's function: its ops for every micro-batch in the order
// every stage follows, the sends of the values other stages use right after
// they are computed and the receives of those it uses when it first needs
// them; then the micro-batches' partial sums, summed over the pipeline axis
// with the task reduction, and the rest of the step (the outer update).
//
//===----------------------------------------------------------------------===//

#include "PipelineSplitter.h"

#include "metac/Dialect/Meta/IR/MetaOps.h"
#include "metac/Dialect/NN/IR/NNOps.h"
#include "metac/Partition/Mesh.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "llvm/ADT/MapVector.h"

using namespace mlir;
using namespace metac;
using namespace metac::partition;
using namespace metac::partition::pipeline;

/// `parts` (one element type) summed over the pipeline axis by one packed
/// all-reduce: flattened, concatenated, reduced and sliced back.
SmallVector<Value> pipeline::sumOverPipeline(OpBuilder &b, Location loc,
                                             FlatSymbolRefAttr grid,
                                             ArrayRef<Value> parts) {
  auto reduction =
      shard::ReductionKindAttr::get(b.getContext(), shard::ReductionKind::Sum);
  auto axes = b.getDenseI16ArrayAttr({MeshAxis::Pipeline});
  if (parts.size() == 1)
    return {shard::AllReduceOp::create(b, loc, parts[0].getType(), grid, axes,
                                       parts[0], reduction)};
  SmallVector<Value> flat;
  for (Value part : parts) {
    auto type = cast<RankedTensorType>(part.getType());
    flat.push_back(nn::ReshapeOp::create(
        b, loc,
        RankedTensorType::get({type.getNumElements()}, type.getElementType()),
        part));
  }
  Value packed = tensor::ConcatOp::create(b, loc, /*dim=*/0, flat);
  Value summed = shard::AllReduceOp::create(b, loc, packed.getType(), grid,
                                            axes, packed, reduction);
  SmallVector<Value> results;
  int64_t offset = 0;
  for (Value part : parts) {
    auto type = cast<RankedTensorType>(part.getType());
    int64_t n = type.getNumElements();
    Value slice = tensor::ExtractSliceOp::create(
        b, loc, summed, ArrayRef<OpFoldResult>{b.getIndexAttr(offset)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(n)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
    results.push_back(nn::ReshapeOp::create(b, loc, type, slice));
    offset += n;
  }
  return results;
}

/// The stages that use `result` other than its own, in stage order.
SmallVector<int64_t> PipelineSplitter::consumersOf(Value result) {
  int64_t producer = stageOf[result.getDefiningOp()];
  SmallVector<int64_t> consumers;
  for (Operation *user : result.getUsers())
    if (region.contains(user) && stageOf[user] != producer &&
        !llvm::is_contained(consumers, stageOf[user]))
      consumers.push_back(stageOf[user]);
  llvm::sort(consumers);
  return consumers;
}

/// Point-to-point transfers take tensors of rank 1 or more.
static RankedTensorType wireType(Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  return type.getRank() == 0 ? RankedTensorType::get({1}, type.getElementType())
                             : type;
}

/// Emits, right after `op` ran for micro-batch `mb` on this stage, the
/// sends of its results to the stages that use them. Sends do not wait for
/// the receiver; the runtime completes them at the sender's next
/// collective.
bool PipelineSplitter::emitSends(OpBuilder &b, Operation *op,
                                 IRMapping &mapping) {
  Location loc = op->getLoc();
  bool sent = false;
  for (Value result : op->getResults())
    for (int64_t consumer : consumersOf(result)) {
      sent = true;
      Value value = mapping.lookup(result);
      if (wireType(result) != result.getType())
        value = nn::ReshapeOp::create(b, loc, wireType(result), value);
      shard::SendOp::create(b, loc, wireType(result),
                            FlatSymbolRefAttr::get(grid.getSymNameAttr()),
                            b.getDenseI16ArrayAttr({MeshAxis::Pipeline}), value,
                            b.getDenseI64ArrayAttr({consumer}), ValueRange{});
    }
  return sent;
}

/// Receives, in the order of the schedule, the pending transfers up to and
/// including (`value`, `mb`): a stage receives a value only when it needs
/// it (or needs one sent after it), so it keeps working on other
/// micro-batches meanwhile. Receiving in the schedule's order across
/// producers (not only in each producer's) means that a stage waiting for
/// a value has received everything sent before it.
void PipelineSplitter::receiveUpTo(OpBuilder &b, Value value, int64_t mb) {
  while (!incoming.empty()) {
    Transfer pending = incoming.front();
    incoming.pop_front();
    Location loc = pending.value.getLoc();
    RankedTensorType wire = wireType(pending.value);
    Value empty =
        tensor::EmptyOp::create(b, loc, wire.getShape(), wire.getElementType());
    Value received = shard::RecvOp::create(
        b, loc, wire, FlatSymbolRefAttr::get(grid.getSymNameAttr()),
        b.getDenseI16ArrayAttr({MeshAxis::Pipeline}), empty,
        b.getDenseI64ArrayAttr({pending.producer}), ValueRange{});
    if (wire != pending.value.getType())
      received =
          nn::ReshapeOp::create(b, loc, pending.value.getType(), received);
    mappingFor(pending.value.getDefiningOp(), pending.mb)
        .map(pending.value, received);
    storeIfCarried(b, current, pending.value, pending.mb, received);
    if (pending.value == value && pending.mb == mb)
      return;
  }
}

/// Receives every pending transfer.
void PipelineSplitter::receiveAll(OpBuilder &b) {
  if (!incoming.empty())
    receiveUpTo(b, incoming.back().value, incoming.back().mb);
}

Value pipeline::microBatchOf(OpBuilder &b, Location loc, RankedTensorType type,
                             Value whole, int64_t mb) {
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0)), sizes,
      strides(type.getRank(), b.getIndexAttr(1));
  offsets[0] = b.getIndexAttr(mb * type.getDimSize(0));
  for (int64_t size : type.getShape())
    sizes.push_back(b.getIndexAttr(size));
  return tensor::ExtractSliceOp::create(b, loc, type, whole, offsets, sizes,
                                        strides);
}

func::FuncOp PipelineSplitter::buildStage(int64_t stage) {
  current = stage;
  sites.clear();
  OpBuilder b(function);
  Location loc = function.getLoc();
  Block &source = function.getBody().front();
  SmallVector<Type> inputs(function.getArgumentTypes());
  unsigned firstBatch = inputs.size() - kBatchArguments;
  for (unsigned i = firstBatch; i < inputs.size(); ++i) {
    auto type = cast<RankedTensorType>(inputs[i]);
    SmallVector<int64_t> shape(type.getShape());
    shape[0] *= micro;
    inputs[i] = RankedTensorType::get(shape, type.getElementType());
  }
  auto stageFunction = func::FuncOp::create(
      b, loc, (function.getSymName() + ".stage" + Twine(stage)).str(),
      FunctionType::get(b.getContext(), inputs, function.getResultTypes()));
  if (ArrayAttr args = function.getAllArgAttrs())
    stageFunction.setAllArgAttrs(args);
  Block *entry = stageFunction.addEntryBlock();
  b.setInsertionPointToStart(entry);

  IRMapping base;
  for (auto [from, to] :
       llvm::zip(source.getArguments(), entry->getArguments()))
    base.map(from, to);
  for (Operation *op : globals)
    b.clone(*op, base);

  // Micro-batch mb reads tasks [mb * n, (mb + 1) * n) of the batch.
  mappings.assign(micro, base);
  for (unsigned i = firstBatch; i < source.getNumArguments(); ++i) {
    auto type = cast<RankedTensorType>(source.getArgument(i).getType());
    for (int64_t mb = 0; mb < micro; ++mb)
      mappings[mb].map(source.getArgument(i),
                       microBatchOf(b, loc, type, entry->getArgument(i), mb));
  }
  if (carries())
    loadStash(b, stage, *entry);

  // GPipe wavefront: micro-batch mb runs its ops of segment k (the k-th
  // run of ops on one stage along the dataflow) in slot k + mb, so while a
  // stage works on one micro-batch, the next stage works on the one before.
  // Every stage follows this one order, which respects each micro-batch's
  // dependencies.
  //
  // A collective (tensor or data axis, inside the stage) waits for the
  // stage's earlier sends to be received. So that two stages never wait in
  // collectives for each other's receives, a stage that sent since its
  // last collective first receives everything sent to it before that
  // point of the order: a stage waiting in a collective then waits only
  // for stages behind it in the order, and those have received all it
  // sent (or are in a receive, which only waits for sends already made).
  incoming.clear();
  bool sentSinceCollective = false;
  for (auto [op, mb] : order) {
    int64_t producer = stageOf[op];
    if (producer != stage) {
      // Expected from the producer, in the order of the schedule.
      for (Value result : op->getResults())
        if (llvm::is_contained(consumersOf(result), stage))
          incoming.push_back({producer, result, mb});
      continue;
    }
    // A late op reads the early values of the previous call (loaded); the
    // values of its own call come from its stage or are received.
    if (late.contains(op))
      loadCarried(b, op, mb);
    IRMapping &mapping = mappingFor(op, mb);
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (def && region.contains(def) && stageOf[def] != stage &&
          !mapping.contains(operand))
        receiveUpTo(b, operand, mb);
    }
    bool collective =
        isa<shard::AllReduceOp, shard::AllGatherOp, shard::ReduceScatterOp>(op);
    if (collective && sentSinceCollective)
      receiveAll(b);
    b.clone(*op, mapping);
    if (collective)
      sentSinceCollective = false;
    if (emitSends(b, op, mapping))
      sentSinceCollective = true;
    for (Value result : op->getResults())
      storeIfCarried(b, stage, result, mb, mapping.lookup(result));
  }
  // Whatever was sent and not needed (none in practice) is still received,
  // so the next step's messages match.
  receiveAll(b);

  // The micro-batches' partial results, added (or, for per-task losses,
  // concatenated) where they were computed, zeros elsewhere; the task
  // reduction also sums over the stages.
  IRMapping tailMapping = base;
  SmallVector<std::pair<shard::AllReduceOp, Value>> reductions;
  SmallVector<std::pair<shard::AllGatherOp, Value>> gathers;
  for (Operation *owner : owners) {
    Value point = owner->getOperand(0);
    auto type = cast<RankedTensorType>(point.getType());
    Operation *def = point.getDefiningOp();
    Value combined;
    if (stageOf[def] == stage) {
      SmallVector<Value> parts;
      // Under pipedream, the previous call's micro-batches.
      for (int64_t mb = 0; mb < micro; ++mb)
        parts.push_back(carries() ? loadCarriedValue(b, point, mb)
                                  : mappings[mb].lookup(point));
      if (concat && isa<shard::AllGatherOp>(owner)) {
        combined = tensor::ConcatOp::create(b, loc, /*dim=*/0, parts);
      } else {
        combined = parts[0];
        for (Value part : ArrayRef<Value>(parts).drop_front())
          combined = nn::AddOp::create(b, loc, combined, part);
      }
    } else {
      SmallVector<int64_t> shape(type.getShape());
      if (concat && isa<shard::AllGatherOp>(owner))
        shape[0] *= micro;
      auto zerosType = RankedTensorType::get(shape, type.getElementType());
      combined = arith::ConstantOp::create(
          b, loc, zerosType,
          DenseElementsAttr::get(zerosType,
                                 b.getZeroAttr(type.getElementType())));
    }
    if (auto reduce = dyn_cast<shard::AllReduceOp>(owner))
      reductions.push_back({reduce, combined});
    else
      gathers.push_back({cast<shard::AllGatherOp>(owner), combined});
  }
  // Gathered per-task values are first summed over the stages, packed into
  // one all-reduce per element type for the reason given below.
  llvm::MapVector<Type, SmallVector<std::pair<shard::AllGatherOp, Value>>>
      gatherKinds;
  for (auto &[gather, combined] : gathers)
    gatherKinds[cast<RankedTensorType>(combined.getType()).getElementType()]
        .push_back({gather, combined});
  for (auto &[element, members] : gatherKinds) {
    SmallVector<Value> parts;
    for (auto &member : members)
      parts.push_back(member.second);
    SmallVector<Value> summed =
        sumOverPipeline(b, loc, members.front().first.getGridAttr(), parts);
    for (auto [member, sum] : llvm::zip(members, summed)) {
      shard::AllGatherOp gather = member.first;
      auto gathered = shard::AllGatherOp::create(
          b, loc, gather.getType(), gather.getGridAttr(),
          gather.getGridAxesAttr(), sum, gather.getGatherAxisAttr());
      tailMapping.map(gather.getResult(), gathered.getResult());
    }
  }
  // The reductions, each also over the pipeline axis, packed into one
  // all-reduce per kind: stages hold different values (their own partial
  // sums, zeros for the others'), so separate reductions of equal-looking
  // zeros could be merged on one stage and not on another.
  llvm::MapVector<std::pair<Attribute, Type>,
                  SmallVector<std::pair<shard::AllReduceOp, Value>>>
      kinds;
  for (auto &[reduce, combined] : reductions)
    kinds[{reduce.getGridAxesAttr(),
           cast<RankedTensorType>(combined.getType()).getElementType()}]
        .push_back({reduce, combined});
  for (auto &[kind, members] : kinds) {
    shard::AllReduceOp first = members.front().first;
    SmallVector<int16_t> axes(first.getGridAxes());
    axes.push_back(MeshAxis::Pipeline);
    SmallVector<Value> flat;
    for (auto &[reduce, combined] : members) {
      auto type = cast<RankedTensorType>(combined.getType());
      flat.push_back(nn::ReshapeOp::create(
          b, loc,
          RankedTensorType::get({type.getNumElements()}, type.getElementType()),
          combined));
    }
    Value packed = flat.size() == 1
                       ? flat.front()
                       : tensor::ConcatOp::create(b, loc, /*dim=*/0, flat);
    Value summed = shard::AllReduceOp::create(
        b, loc, packed.getType(), first.getGridAttr(),
        b.getDenseI16ArrayAttr(axes), packed, first.getReductionAttr());
    int64_t offset = 0;
    for (auto &[reduce, combined] : members) {
      auto type = cast<RankedTensorType>(combined.getType());
      int64_t n = type.getNumElements();
      Value slice = tensor::ExtractSliceOp::create(
          b, loc, summed, ArrayRef<OpFoldResult>{b.getIndexAttr(offset)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(n)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
      tailMapping.map(reduce.getResult(),
                      nn::ReshapeOp::create(b, loc, type, slice).getResult());
      offset += n;
    }
  }
  for (Operation &op : source)
    if (tail.contains(&op) && !llvm::is_contained(owners, &op))
      b.clone(op, tailMapping);
  if (carries())
    gateFirstUpdate(b, stageFunction);
  return stageFunction;
}
