//===- Pipeline.cpp - pipeline stages with tasks as micro-batches ---------===//
//
// Runs after SPMD partitioning, which was told to split the task axis into
// `micro_batches` more (virtual) parts: the step and evaluation functions
// then compute one micro-batch (a group of tasks), and their reductions over
// tasks are partial sums ending in collectives over the task axis. This pass
// assigns every op to a stage (the stage of the layers whose parameters it
// reads, or the nearest such op), and writes one function per stage that
// runs its ops for every micro-batch in the schedule's order, sending the
// values other stages need and receiving the ones it needs at the same
// point of that order, so that no two ranks wait on each other. The
// micro-batches' partial sums are added on the stage that computes them and
// summed over the pipeline axis with the task reduction.
//
//===----------------------------------------------------------------------===//

#include "metac/Partition/Passes.h"

#include "BlockDependents.h"
#include "Pipeline.h"

#include "metac/Dialect/Meta/IR/MetaOps.h"
#include "metac/Dialect/NN/IR/NNOps.h"
#include "metac/Partition/Mesh.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/MapVector.h"

#include <deque>

using namespace mlir;
using namespace metac;
using namespace metac::partition;

namespace {

constexpr unsigned kBatchArguments = 4;

bool hasTaskAxis(Operation *op) {
  if (auto reduce = dyn_cast<shard::AllReduceOp>(op))
    return llvm::is_contained(reduce.getGridAxes(), MeshAxis::Task);
  if (auto gather = dyn_cast<shard::AllGatherOp>(op))
    return llvm::is_contained(gather.getGridAxes(), MeshAxis::Task);
  return false;
}

/// `parts` (one element type) summed over the pipeline axis by one packed
/// all-reduce: flattened, concatenated, reduced and sliced back.
SmallVector<Value> sumOverPipeline(OpBuilder &b, Location loc,
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

struct Layer {
  SmallVector<unsigned> params;
  int64_t weight;
};

/// The model's linear and convolution layers in order, each weighing its
/// weight's element count.
SmallVector<Layer> layersOf(func::FuncOp model) {
  SmallVector<Layer> layers;
  auto argumentOf = [&](Value v) -> std::optional<unsigned> {
    // A mixed-precision model converts its parameters where it starts.
    if (auto convert = v.getDefiningOp<nn::ConvertOp>())
      v = convert.getInput();
    if (auto arg = dyn_cast_or_null<BlockArgument>(v))
      if (arg.getOwner()->getParentOp() == model)
        return arg.getArgNumber();
    return std::nullopt;
  };
  model.walk([&](Operation *op) {
    if (!isa<nn::LinearOp, nn::Conv2DOp>(op))
      return;
    Layer layer{{}, 0};
    for (Value operand : op->getOperands().drop_front())
      if (std::optional<unsigned> arg = argumentOf(operand)) {
        layer.params.push_back(*arg);
        layer.weight +=
            cast<RankedTensorType>(operand.getType()).getNumElements();
      }
    if (!layer.params.empty())
      layers.push_back(layer);
  });
  return layers;
}

using ParamStages = DenseMap<unsigned, int64_t>;

/// The ways to cut `layers` into `stages` contiguous, non-empty groups
/// (all of them when there are few, else the one balancing parameter
/// counts): the stage of every parameter of those layers.
SmallVector<ParamStages> cutCandidates(ArrayRef<Layer> layers, int64_t stages) {
  int64_t n = layers.size();
  SmallVector<ParamStages> candidates;
  auto assign = [&](ArrayRef<int64_t> firstOfStage) {
    ParamStages stageOf;
    int64_t stage = 0;
    for (int64_t i = 0; i < n; ++i) {
      while (stage + 1 < stages && i >= firstOfStage[stage + 1])
        ++stage;
      for (unsigned arg : layers[i].params)
        stageOf[arg] = stage;
    }
    candidates.push_back(std::move(stageOf));
  };
  // Number of cuts: (n - 1) choose (stages - 1).
  double count = 1;
  for (int64_t k = 1; k < stages; ++k)
    count = count * (n - k) / k;
  if (count <= 16) {
    SmallVector<int64_t> first(stages, 0);
    std::function<void(int64_t, int64_t)> place = [&](int64_t stage,
                                                      int64_t from) {
      if (stage == stages) {
        assign(first);
        return;
      }
      for (int64_t i = from; i <= n - (stages - stage); ++i) {
        first[stage] = i;
        place(stage + 1, i + 1);
      }
    };
    first[0] = 0;
    place(1, 1);
    return candidates;
  }
  int64_t total = 0;
  for (const Layer &layer : layers)
    total += layer.weight;
  SmallVector<int64_t> first{0};
  int64_t before = 0;
  for (int64_t i = 0; i < n && static_cast<int64_t>(first.size()) < stages;
       ++i) {
    if (i > first.back() &&
        before * stages >= total * static_cast<int64_t>(first.size()) &&
        n - i >= stages - static_cast<int64_t>(first.size()))
      first.push_back(i);
    before += layers[i].weight;
  }
  while (static_cast<int64_t>(first.size()) < stages)
    first.push_back(n - (stages - first.size()));
  // More cuts than that: the balanced cut and its neighbours (one layer
  // moved across one boundary); the stage cost is close to unimodal in the
  // cut, and each trial re-assigns every op of the step.
  assign(first);
  for (int64_t boundary = 1; boundary < stages; ++boundary)
    for (int64_t delta : {-1, 1}) {
      SmallVector<int64_t> moved(first);
      moved[boundary] += delta;
      int64_t next = boundary + 1 < stages ? moved[boundary + 1] : n;
      if (moved[boundary] > moved[boundary - 1] && moved[boundary] < next)
        assign(moved);
    }
  return candidates;
}

class PipelineSplitter {
public:
  PipelineSplitter(func::FuncOp function, shard::GridOp grid, int64_t stages,
                   int64_t micro, const DenseMap<unsigned, int64_t> &paramStage,
                   bool concat, bool oneFOneB)
      : function(function), grid(grid), stages(stages), micro(micro),
        paramStage(paramStage), concat(concat), oneFOneB(oneFOneB) {}

  /// Assigns every op a stage (and checks the function can be split).
  LogicalResult analyze() {
    if (failed(analyzeRegion()))
      return failure();
    assignStages();
    return success();
  }
  /// What does not depend on the cut: the per-task region, the globals
  /// and the tail of reductions.
  LogicalResult analyzeRegion();
  /// analyze() with the region of `other` (the same function): trying a
  /// cut costs only the stage assignment.
  void analyzeLike(const PipelineSplitter &other) {
    region = other.region;
    tail = other.tail;
    globals = other.globals;
    owners = other.owners;
    assignStages();
  }
  /// The largest estimated work of a stage, after analyze().
  double maxStageCost();
  /// Replaces the function by its stage functions, after analyze().
  void build();

private:
  void assignStages();
  func::FuncOp buildStage(int64_t stage);
  SmallVector<int64_t> consumersOf(Value result);
  /// Returns whether it sent anything.
  bool emitSends(OpBuilder &b, Operation *op, IRMapping &mapping);
  void receiveUpTo(OpBuilder &b, Value value, int64_t mb,
                   SmallVectorImpl<IRMapping> &mappings);
  void receiveAll(OpBuilder &b, SmallVectorImpl<IRMapping> &mappings);

  func::FuncOp function;
  shard::GridOp grid;
  int64_t stages, micro;
  const DenseMap<unsigned, int64_t> &paramStage;
  bool concat;
  bool oneFOneB;

  SetVector<Operation *> region, tail;
  SmallVector<Operation *> globals;
  SmallVector<Operation *> owners;
  DenseMap<Operation *, int64_t> stageOf;
  /// The order every stage runs (op, micro-batch) pairs in.
  SmallVector<std::pair<Operation *, int64_t>> schedule;
  /// A value of one micro-batch sent to this stage by `producer`.
  struct Transfer {
    int64_t producer;
    Value value;
    int64_t mb;
  };
  /// The transfers this stage still has to receive, in the order of the
  /// schedule (so in each producer's send order).
  std::deque<Transfer> incoming;
};

void PipelineSplitter::assignStages() {
  // Seeds: ops that read a parameter (through broadcasts and transposes of
  // it) take its layer's stage.
  DenseMap<Value, std::optional<int64_t>> paramStageOf;
  std::function<std::optional<int64_t>(Value)> stageOfValue =
      [&](Value v) -> std::optional<int64_t> {
    auto it = paramStageOf.find(v);
    if (it != paramStageOf.end())
      return it->second;
    std::optional<int64_t> result;
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      auto found = paramStage.find(arg.getArgNumber());
      if (found != paramStage.end())
        result = found->second;
    } else if (Operation *def = v.getDefiningOp();
               def && !region.contains(def)) {
      for (Value operand : def->getOperands())
        if ((result = stageOfValue(operand)))
          break;
    }
    return paramStageOf[v] = result;
  };
  std::deque<Operation *> queue;
  for (Operation *op : region)
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (def && region.contains(def))
        continue;
      if (std::optional<int64_t> stage = stageOfValue(operand)) {
        stageOf[op] = *stage;
        queue.push_back(op);
        break;
      }
    }
  // The others: the stage of the nearest seeded op (breadth first over
  // uses and definitions inside the region).
  while (!queue.empty()) {
    Operation *op = queue.front();
    queue.pop_front();
    int64_t stage = stageOf[op];
    auto visit = [&](Operation *next) {
      if (next && region.contains(next) && !stageOf.count(next)) {
        stageOf[next] = stage;
        queue.push_back(next);
      }
    };
    for (Value operand : op->getOperands())
      visit(operand.getDefiningOp());
    for (Operation *user : op->getUsers())
      visit(user);
  }
  for (Operation *op : region)
    stageOf.try_emplace(op, 0);

  // Refinement: an op that reads no parameter moves to the neighbouring
  // stage that transfers the fewest bytes (a weight gradient, as large as
  // the weight, belongs where the weight is updated, not where the
  // activations it is made of come from).
  DenseSet<Operation *> seeded;
  for (Operation *op : region)
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp();
          (!def || !region.contains(def)) && stageOfValue(operand))
        seeded.insert(op);
  auto bytes = [](Value v) {
    auto type = cast<RankedTensorType>(v.getType());
    return type.getNumElements() * type.getElementTypeBitWidth() / 8;
  };
  auto transferred = [&](Operation *op, int64_t stage) {
    int64_t total = 0;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp();
          def && region.contains(def) && stageOf[def] != stage)
        total += bytes(operand);
    for (Value result : op->getResults()) {
      SmallVector<int64_t> consumers;
      for (Operation *user : result.getUsers())
        if (region.contains(user) && stageOf[user] != stage &&
            !llvm::is_contained(consumers, stageOf[user]))
          consumers.push_back(stageOf[user]);
      total += bytes(result) * consumers.size();
    }
    return total;
  };
  for (int pass = 0; pass < 4; ++pass)
    for (Operation *op : region) {
      if (seeded.contains(op))
        continue;
      // The distinct neighbouring stages (an op with many users would
      // otherwise be costed once per user).
      SmallVector<int64_t, 4> candidates;
      auto consider = [&](Operation *neighbour) {
        if (neighbour && region.contains(neighbour) &&
            !llvm::is_contained(candidates, stageOf[neighbour]))
          candidates.push_back(stageOf[neighbour]);
      };
      for (Value operand : op->getOperands())
        consider(operand.getDefiningOp());
      for (Operation *user : op->getUsers())
        consider(user);
      int64_t best = stageOf[op];
      int64_t bestCost = transferred(op, best);
      for (int64_t candidate : candidates) {
        int64_t cost = transferred(op, candidate);
        if (cost < bestCost) {
          best = candidate;
          bestCost = cost;
        }
      }
      stageOf[op] = best;
    }
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
void PipelineSplitter::receiveUpTo(OpBuilder &b, Value value, int64_t mb,
                                   SmallVectorImpl<IRMapping> &mappings) {
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
    mappings[pending.mb].map(pending.value, received);
    if (pending.value == value && pending.mb == mb)
      return;
  }
}

/// Receives every pending transfer.
void PipelineSplitter::receiveAll(OpBuilder &b,
                                  SmallVectorImpl<IRMapping> &mappings) {
  if (!incoming.empty())
    receiveUpTo(b, incoming.back().value, incoming.back().mb, mappings);
}

func::FuncOp PipelineSplitter::buildStage(int64_t stage) {
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
  SmallVector<IRMapping> mappings(micro, base);
  for (unsigned i = firstBatch; i < source.getNumArguments(); ++i) {
    auto type = cast<RankedTensorType>(source.getArgument(i).getType());
    for (int64_t mb = 0; mb < micro; ++mb) {
      SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0)),
          sizes, strides(type.getRank(), b.getIndexAttr(1));
      offsets[0] = b.getIndexAttr(mb * type.getDimSize(0));
      for (int64_t size : type.getShape())
        sizes.push_back(b.getIndexAttr(size));
      mappings[mb].map(source.getArgument(i),
                       tensor::ExtractSliceOp::create(b, loc, type,
                                                      entry->getArgument(i),
                                                      offsets, sizes, strides));
    }
  }

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
  for (auto [op, mb] : schedule) {
    int64_t producer = stageOf[op];
    if (producer != stage) {
      // Expected from the producer, in the order of the schedule.
      for (Value result : op->getResults())
        if (llvm::is_contained(consumersOf(result), stage))
          incoming.push_back({producer, result, mb});
      continue;
    }
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (def && region.contains(def) && stageOf[def] != stage &&
          !mappings[mb].contains(operand))
        receiveUpTo(b, operand, mb, mappings);
    }
    bool collective =
        isa<shard::AllReduceOp, shard::AllGatherOp, shard::ReduceScatterOp>(op);
    if (collective && sentSinceCollective)
      receiveAll(b, mappings);
    b.clone(*op, mappings[mb]);
    if (collective)
      sentSinceCollective = false;
    if (emitSends(b, op, mappings[mb]))
      sentSinceCollective = true;
  }
  // Whatever was sent and not needed (none in practice) is still received,
  // so the next step's messages match.
  receiveAll(b, mappings);

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
      for (int64_t mb = 0; mb < micro; ++mb)
        parts.push_back(mappings[mb].lookup(point));
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
  return stageFunction;
}

LogicalResult PipelineSplitter::analyzeRegion() {
  Block &entry = function.getBody().front();
  if (function.getNumArguments() < kBatchArguments)
    return function.emitOpError("has no task batch to pipeline");
  auto batchArgs = entry.getArguments().take_back(kBatchArguments);
  SetVector<Operation *> batchOps =
      getDependents(entry, ValueRange(batchArgs), [](Operation *op) {
        return isa<meta::OuterStepOp, meta::UpdateGuardOp>(op);
      });
  SmallVector<Value> ownerResults;
  for (Operation *op : batchOps)
    if (hasTaskAxis(op)) {
      owners.push_back(op);
      ownerResults.push_back(op->getResult(0));
    }
  tail.insert(owners.begin(), owners.end());
  for (Operation *op : getDependents(entry, ownerResults))
    tail.insert(op);
  tail.insert(entry.getTerminator());
  for (Operation &op : entry) {
    if (tail.contains(&op))
      continue;
    if (batchOps.contains(&op))
      region.insert(&op);
    else
      globals.push_back(&op);
  }
  // The stages stream micro-batches up to the task reductions: a task
  // reduction of a value that itself follows one (tasks gathered early, as
  // sharding propagation does for some meshes) has no micro-batches.
  for (Operation *owner : owners)
    if (Operation *def = owner->getOperand(0).getDefiningOp())
      if (batchOps.contains(def) && !region.contains(def))
        return owner->emitOpError(
            "reduces over tasks a value computed after another reduction "
            "over tasks (the tasks were gathered before the end of the "
            "program), which pipelining does not support");
  // Whatever the stages share must go through the task reductions.
  for (Operation *op : tail)
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        if (region.contains(def) && !llvm::is_contained(owners, op))
          return op->emitOpError(
              "uses a per-task value outside a reduction over tasks, which "
              "pipelining does not support");
  return success();
}

/// Multiply-adds of products, one per element for the rest.
static double opCost(Operation *op) {
  if (op->getNumResults() != 1)
    return 0;
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type)
    return 0;
  double elements = type.getNumElements();
  if (auto linear = dyn_cast<nn::LinearOp>(op))
    return elements * cast<RankedTensorType>(linear.getInput().getType())
                          .getShape()
                          .back();
  if (auto matmul = dyn_cast<nn::MatmulOp>(op)) {
    auto lhs = cast<RankedTensorType>(matmul.getLhs().getType()).getShape();
    return elements * (matmul.getTransposeLhs() ? lhs.end()[-2] : lhs.back());
  }
  return elements;
}

double PipelineSplitter::maxStageCost() {
  SmallVector<double> cost(stages, 0.0);
  for (Operation *op : region)
    cost[stageOf[op]] += opCost(op);
  return *llvm::max_element(cost);
}

void PipelineSplitter::build() {
  // Segments: a value that crosses stages starts a new one.
  DenseMap<Operation *, int64_t> segment, position;
  for (Operation *op : region) {
    int64_t k = 0;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp(); def && region.contains(def))
        k = std::max(k, segment[def] + (stageOf[def] != stageOf[op] ? 1 : 0));
    segment[op] = k;
    position[op] = position.size();
  }
  for (Operation *op : region)
    for (int64_t mb = 0; mb < micro; ++mb)
      schedule.push_back({op, mb});
  // GPipe: micro-batch mb enters in slot mb, so all m are in flight at
  // once. 1F1B-style: they enter in groups of p (one per stage), a group
  // as the previous one drains, so about p are in flight and a stage keeps
  // only their activations.
  int64_t segments = 0;
  for (auto &[op, k] : segment)
    segments = std::max(segments, k + 1);
  int64_t stride = std::max<int64_t>(1, segments + 1 - stages);
  auto start = [&](int64_t mb) {
    if (!oneFOneB)
      return mb;
    return (mb / stages) * stride + mb % stages;
  };
  llvm::stable_sort(schedule, [&](const std::pair<Operation *, int64_t> &a,
                                  const std::pair<Operation *, int64_t> &b) {
    int64_t slotA = segment[a.first] + start(a.second);
    int64_t slotB = segment[b.first] + start(b.second);
    if (slotA != slotB)
      return slotA < slotB;
    if (a.first != b.first)
      return position[a.first] < position[b.first];
    return a.second < b.second;
  });
  for (int64_t stage = 0; stage < stages; ++stage)
    buildStage(stage);
  function.erase();
}

} // namespace

LogicalResult metac::partition::splitPipelineStages(ModuleOp module) {
  {
    SymbolTable symbols(module);
    for (auto train : llvm::to_vector(module.getOps<meta::TrainOp>())) {
      meta::PlanAttr plan = train.getPlanAttr();
      auto gridName = train->getAttrOfType<FlatSymbolRefAttr>("meta.mesh");
      if (!plan || !gridName || plan.getPipeline() <= 1)
        continue;
      auto grid = symbols.lookup<shard::GridOp>(gridName.getValue());
      auto model = symbols.lookup<func::FuncOp>(train.getModel());
      SmallVector<Layer> layers = layersOf(model);
      if (static_cast<int64_t>(layers.size()) < plan.getPipeline())
        return train.emitError()
               << "the pipeline axis (" << plan.getPipeline()
               << " stages) needs at least as many layers; model '"
               << model.getSymName() << "' has " << layers.size();
      SmallVector<std::pair<FlatSymbolRefAttr, bool>> functions;
      functions.push_back(
          {train->getAttrOfType<FlatSymbolRefAttr>("meta.step"), false});
      if (auto evals = train->getAttrOfType<ArrayAttr>("meta.eval"))
        for (auto eval : evals.getAsRange<FlatSymbolRefAttr>())
          functions.push_back({eval, true});
      bool oneFOneB = plan.getSchedule() == meta::PipelineSchedule::OneFOneB;
      // The cut whose busiest stage has the least estimated work in the
      // step (ops go where the assignment puts them, not only the layers).
      auto step =
          symbols.lookup<func::FuncOp>(functions.front().first.getValue());
      SmallVector<ParamStages> candidates =
          cutCandidates(layers, plan.getPipeline());
      const ParamStages *best = nullptr;
      double bestCost = 0;
      PipelineSplitter prototype(step, grid, plan.getPipeline(),
                                 plan.getMicroBatches(), candidates.front(),
                                 false, oneFOneB);
      if (failed(prototype.analyzeRegion()))
        return failure();
      for (const ParamStages &candidate : candidates) {
        PipelineSplitter trial(step, grid, plan.getPipeline(),
                               plan.getMicroBatches(), candidate, false,
                               oneFOneB);
        trial.analyzeLike(prototype);
        double cost = trial.maxStageCost();
        if (!best || cost < bestCost) {
          best = &candidate;
          bestCost = cost;
        }
      }
      for (auto [name, isEval] : functions) {
        auto function = symbols.lookup<func::FuncOp>(name.getValue());
        PipelineSplitter splitter(function, grid, plan.getPipeline(),
                                  plan.getMicroBatches(), *best, isEval,
                                  oneFOneB);
        if (failed(splitter.analyze()))
          return failure();
        splitter.build();
      }
      train->setAttr("meta.pipeline_stages",
                     IntegerAttr::get(IntegerType::get(module.getContext(), 64),
                                      plan.getPipeline()));
    }
  }
  return success();
}
