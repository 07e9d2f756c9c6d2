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
#include "PipelineSplitter.h"

#include "metac/Dialect/Meta/IR/MetaOps.h"
#include "metac/Dialect/NN/IR/NNOps.h"
#include "metac/Partition/Mesh.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace metac;
using namespace metac::partition;
using namespace metac::partition::pipeline;

namespace {

bool hasTaskAxis(Operation *op) {
  if (auto reduce = dyn_cast<shard::AllReduceOp>(op))
    return llvm::is_contained(reduce.getGridAxes(), MeshAxis::Task);
  if (auto gather = dyn_cast<shard::AllGatherOp>(op))
    return llvm::is_contained(gather.getGridAxes(), MeshAxis::Task);
  return false;
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

} // namespace

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

LogicalResult PipelineSplitter::build() {
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
      order.push_back({op, mb});
  int64_t segments = 0;
  for (auto &[op, k] : segment)
    segments = std::max(segments, k + 1);
  // PipeDream (the step only): the late half of the segments finishes the
  // previous call's meta-iteration next to the early half of this one's.
  bool pipedream = schedule == meta::PipelineSchedule::PipeDream && !concat;
  if (pipedream && failed(planCarries(segment, segments)))
    return failure();
  int64_t early = (segments + 1) / 2;
  // GPipe: micro-batch mb enters in slot mb, so all m are in flight at
  // once. 1F1B-style: they enter in groups of p (one per stage), a group
  // as the previous one drains, so about p are in flight and a stage keeps
  // only their activations.
  int64_t stride = std::max<int64_t>(1, segments + 1 - stages);
  auto start = [&](int64_t mb) {
    if (schedule != meta::PipelineSchedule::OneFOneB)
      return mb;
    return (mb / stages) * stride + mb % stages;
  };
  auto slot = [&](Operation *op, int64_t mb) {
    return segment[op] - (late.contains(op) ? early : 0) + start(mb);
  };
  llvm::stable_sort(order, [&](const std::pair<Operation *, int64_t> &a,
                               const std::pair<Operation *, int64_t> &b) {
    int64_t slotA = slot(a.first, a.second);
    int64_t slotB = slot(b.first, b.second);
    if (slotA != slotB)
      return slotA < slotB;
    if (a.first != b.first)
      return position[a.first] < position[b.first];
    return a.second < b.second;
  });
  for (int64_t stage = 0; stage < stages; ++stage)
    if (!buildStage(stage))
      return failure();
  function.erase();
  return success();
}

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
      meta::PipelineSchedule schedule = plan.getSchedule();
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
                                 false, schedule);
      if (failed(prototype.analyzeRegion()))
        return failure();
      for (const ParamStages &candidate : candidates) {
        PipelineSplitter trial(step, grid, plan.getPipeline(),
                               plan.getMicroBatches(), candidate, false,
                               schedule);
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
                                  schedule);
        if (failed(splitter.analyze()) || failed(splitter.build()))
          return failure();
      }
      train->setAttr("meta.pipeline_stages",
                     IntegerAttr::get(IntegerType::get(module.getContext(), 64),
                                      plan.getPipeline()));
    }
  }
  return success();
}
