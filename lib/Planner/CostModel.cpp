//===- CostModel.cpp - predicted time and memory of a meta-iteration ------===//

#include "metac/Planner/CostModel.h"

#include "metac/Dialect/Meta/IR/MetaOps.h"
#include "metac/Dialect/NN/IR/NNOps.h"
#include "metac/Partition/Mesh.h"
#include "metac/Planner/CollectiveCost.h"
#include "metac/Planner/OpCost.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/Hashing.h"

#include <algorithm>
#include <cmath>
#include <deque>

using namespace mlir;
using namespace metac;
using namespace metac::planner;

namespace {

constexpr uint64_t kAlignment = 64;

uint64_t roundUp(uint64_t bytes) {
  return (bytes + kAlignment - 1) / kAlignment * kAlignment;
}

uint64_t byteSize(Type type) {
  auto t = dyn_cast<RankedTensorType>(type);
  if (!t || !t.hasStaticShape())
    return 0;
  return uint64_t(t.getNumElements()) *
         std::max<unsigned>(t.getElementTypeBitWidth() / 8, 1);
}

uint64_t elementsOf(Type type) {
  auto t = dyn_cast<RankedTensorType>(type);
  return t && t.hasStaticShape() ? uint64_t(t.getNumElements()) : 0;
}

/// Ops the lowering turns into no call and no buffer: they share their
/// operand's buffer.
bool isView(Operation *op) {
  return isa<nn::ReshapeOp, nn::StopGradientOp, tensor::ExtractSliceOp,
             shard::SendOp>(op);
}

} // namespace

ScratchUse metac::planner::replayScratch(func::FuncOp function) {
  ScratchUse use;
  if (!function.getBody().hasOneBlock())
    return use;
  // The same liveness as convert-nn-to-runtime: a buffer dies after the
  // last reader of it or of a view of it; sends keep theirs to the end;
  // returned buffers are never freed.
  Block &body = function.getBody().front();
  DenseMap<Operation *, unsigned> position;
  for (Operation &op : body)
    position[&op] = position.size();
  DenseMap<Value, Value> buffer;
  DenseMap<Value, unsigned> death;
  DenseMap<Value, bool> returned;
  for (Operation &op : body) {
    bool view = isView(&op);
    for (Value result : op.getResults()) {
      if (!isa<RankedTensorType>(result.getType()) ||
          isa<meta::OuterStepOp>(op))
        continue;
      Value base = view ? buffer.lookup(op.getOperand(0)) : result;
      if (!base)
        continue;
      buffer[result] = base;
      unsigned last = position[&op];
      for (Operation *user : result.getUsers()) {
        last = std::max(last, position[user]);
        if (isa<shard::SendOp>(user))
          last = position.size();
        if (isa<func::ReturnOp>(user))
          returned[base] = true;
      }
      death[base] = std::max(death.lookup(base), last);
    }
  }
  DenseMap<unsigned, SmallVector<Value>> dying;
  for (auto [base, at] : death)
    if (!returned.lookup(base))
      dying[at].push_back(base);
  std::map<uint64_t, int64_t> freeBlocks;
  uint64_t held = 0;
  for (Operation &op : body) {
    if (isa<func::ReturnOp>(op))
      break;
    if (!isView(&op) && !isa<meta::OuterStepOp>(op))
      for (Value result : op.getResults()) {
        uint64_t bytes = roundUp(byteSize(result.getType()));
        if (bytes == 0)
          continue;
        ++use.blocks;
        auto reusable = freeBlocks.find(bytes);
        if (reusable != freeBlocks.end() && reusable->second > 0) {
          --reusable->second;
          ++use.reused;
          continue;
        }
        held += bytes;
        use.peakBytes = std::max(use.peakBytes, held);
      }
    auto it = dying.find(position[&op]);
    if (it == dying.end())
      continue;
    for (Value base : it->second)
      if (uint64_t bytes = roundUp(byteSize(base.getType())))
        ++freeBlocks[bytes];
  }
  return use;
}

namespace {

/// The rate of `op`'s arithmetic on `device`: the calibrated GEMM table
/// for products (interpolated in log-log by the call's FLOPs), else the
/// peak of its element type.
double rateOf(Operation *op, double flops, const DeviceDescription &device) {
  Type element;
  if (op->getNumResults())
    if (auto t = dyn_cast<RankedTensorType>(op->getResult(0).getType()))
      element = t.getElementType();
  const PeakFlops &peak = device.peakFlops;
  auto pick = [&](const PeakFlops &p) {
    double r = p.f32;
    if (element && element.isF64())
      r = p.f64;
    else if (element && element.isBF16())
      r = p.bf16;
    else if (element && element.isF16())
      r = p.fp16;
    return r > 0 ? r : p.f32;
  };
  bool product = isa<nn::LinearOp, nn::MatmulOp, nn::Conv2DOp,
                     nn::Conv2DBackwardInputOp, nn::Conv2DBackwardWeightOp>(op);
  const std::vector<GemmRate> &table = device.gemmRates;
  if (!product || table.empty())
    return pick(peak);
  if (flops <= table.front().flops)
    return pick(table.front().rate);
  if (flops >= table.back().flops)
    return pick(table.back().rate);
  auto upper =
      std::upper_bound(table.begin(), table.end(), flops,
                       [](double f, const GemmRate &r) { return f < r.flops; });
  const GemmRate &hi = *upper, &lo = *(upper - 1);
  double t = std::log(flops / lo.flops) / std::log(hi.flops / lo.flops);
  return std::exp(std::log(pick(lo.rate)) * (1 - t) +
                  std::log(pick(hi.rate)) * t);
}

/// The kind of runtime kernel `op` becomes, as calibrated (KernelFit).
StringRef kernelKind(Operation *op) {
  if (isa<nn::LinearOp, nn::MatmulOp, nn::Conv2DOp, nn::Conv2DBackwardInputOp,
          nn::Conv2DBackwardWeightOp>(op))
    return "product";
  if (isa<nn::TransposeOp>(op))
    return "transpose";
  if (isa<nn::BroadcastOp, nn::OneHotOp, nn::EmbeddingOp>(op))
    return "broadcast";
  if (isa<nn::ReduceSumOp, nn::ReduceMeanOp, nn::SoftmaxOp, nn::LogSoftmaxOp,
          nn::LayerNormOp, nn::BatchNormOp, nn::MSELossOp,
          nn::CrossEntropyLossOp, nn::AccuracyOp, nn::EmbeddingBackwardOp,
          nn::MaxPool2DOp, nn::AvgPool2DOp, nn::MaxPool2DBackwardOp,
          nn::MaxPool2DGatherOp, nn::AvgPool2DBackwardOp>(op))
    return "reduce";
  if (isa<meta::OuterStepOp, meta::UpdateGuardOp>(op))
    return "optimizer";
  if (isa<tensor::ConcatOp, arith::ConstantOp, shard::AllSliceOp>(op))
    return "copy";
  return "elementwise";
}

/// One step of a rank's program, as the simulation sees it.
struct Event {
  enum Kind { Compute, Collective, Send, Recv } kind = Compute;
  double seconds = 0;
  /// Collectives: the mesh axes they span; transfers: the other stage.
  unsigned mask = 0;
  int64_t peer = 0;
  double bytes = 0;
};

struct RankProgram {
  std::vector<Event> events;
  std::map<std::string, std::pair<int64_t, double>> perOp;
  double flops = 0, launchSeconds = 0;
  int64_t calls = 0, computeCalls = 0;
  uint64_t persistentBytes = 0, scratchBytes = 0;
};

class Estimator {
public:
  Estimator(const ClusterDescription &cluster, ArrayRef<int64_t> mesh)
      : cluster(cluster), device(cluster.device), mesh(mesh) {}

  RankProgram build(func::FuncOp function, int64_t stage);
  llvm::Expected<IterationEstimate> simulate(std::vector<RankProgram> &stages,
                                             func::FuncOp anyStage);

private:
  struct Cached {
    OpCost cost;
    /// The call's time, and its fixed part (launch, dispatch).
    double seconds, launch;
  };
  const Cached &costOf(Operation *op);
  unsigned maskOf(ArrayRef<int16_t> axes) {
    unsigned mask = 0;
    for (int16_t a : axes)
      mask |= 1u << a;
    return mask;
  }
  double transferSeconds(int64_t from, int64_t to, double bytes);

  const ClusterDescription &cluster;
  const DeviceDescription &device;
  ArrayRef<int64_t> mesh;
  /// Identical ops (name, attributes, operand and result types) cost the
  /// same: unrolled inner steps and repeated layers are costed once.
  DenseMap<llvm::hash_code, Cached> cache;
  std::map<std::string, double> bytesPerAxes, secondsPerAxes, callsPerAxes;
};

const Estimator::Cached &Estimator::costOf(Operation *op) {
  llvm::hash_code key =
      llvm::hash_combine(op->getName().getAsOpaquePointer(),
                         op->getRawDictionaryAttrs().getAsOpaquePointer(),
                         op->getPropertiesAsAttribute().getAsOpaquePointer());
  for (Type t : op->getOperandTypes())
    key = llvm::hash_combine(key, t.getAsOpaquePointer());
  for (Type t : op->getResultTypes())
    key = llvm::hash_combine(key, t.getAsOpaquePointer());
  auto [it, inserted] = cache.try_emplace(key);
  if (!inserted)
    return it->second;
  Cached &entry = it->second;
  entry.cost = estimateOpCost(op);
  // A constant becomes a fill or a copy: a call that writes its result.
  if (isa<arith::ConstantOp>(op) && op->getNumResults() &&
      isa<RankedTensorType>(op->getResult(0).getType()))
    entry.cost.bytes = double(byteSize(op->getResult(0).getType()));
  const OpCost &c = entry.cost;
  entry.seconds = 0;
  entry.launch = 0;
  if (c.flops > 0 || c.bytes > 0) {
    StringRef kind = kernelKind(op);
    double rate = rateOf(op, c.flops, device);
    double compute = rate > 0 ? c.flops / rate : 0;
    double memory =
        device.memoryBandwidth > 0 ? c.bytes / device.memoryBandwidth : 0;
    if (const KernelFit *fit = device.kernel(kind)) {
      // Calibrated: the kind's own cost per call and per byte (products:
      // per call, then the GEMM table's rate).
      entry.launch = fit->alpha;
      entry.seconds = fit->alpha + (kind == "product"
                                        ? std::max(compute, c.bytes / fit->beta)
                                        : c.bytes / fit->beta);
      // Elementwise loops large enough are split over the runtime's
      // threads: waking them is a fixed cost of its own.
      if (kind == "elementwise" && device.parallelMinElements > 0 &&
          op->getNumResults() &&
          int64_t(elementsOf(op->getResult(0).getType())) >=
              device.parallelMinElements) {
        entry.launch += device.parallelDispatch;
        entry.seconds += device.parallelDispatch;
      }
    } else {
      entry.launch = device.launchOverhead;
      entry.seconds = device.launchOverhead + std::max(compute, memory);
    }
    // Devices that share a processor run at their share of it.
    entry.launch /= device.processorShare;
    entry.seconds /= device.processorShare;
  }
  return entry;
}

double Estimator::transferSeconds(int64_t from, int64_t to, double bytes) {
  // Stages are the fastest-varying mesh axis: consecutive ranks.
  int64_t perNode = std::max<int64_t>(cluster.devicesPerNode, 1);
  GroupPlacement pair;
  pair.size = 2;
  pair.nodes = from / perNode == to / perNode ? 1 : 2;
  pair.perNode = pair.nodes == 1 ? 2 : 1;
  return estimateCollective(Collective::SendRecv, bytes, pair, cluster).seconds;
}

RankProgram Estimator::build(func::FuncOp function, int64_t stage) {
  RankProgram program;
  for (BlockArgument arg : function.getArguments())
    program.persistentBytes += roundUp(byteSize(arg.getType()));
  program.scratchBytes = replayScratch(function).peakBytes;
  Event compute;
  auto flush = [&] {
    if (compute.seconds > 0)
      program.events.push_back(compute);
    compute = Event();
  };
  function.walk([&](Operation *op) {
    auto collective = [&](Collective kind, ArrayRef<int16_t> axes,
                          double bytes) {
      flush();
      Event e;
      e.kind = Event::Collective;
      e.mask = maskOf(axes);
      e.bytes = bytes;
      GroupPlacement group = placeGroup(
          mesh, e.mask, std::max<int64_t>(cluster.devicesPerNode, 1));
      e.seconds = estimateCollective(kind, bytes, group, cluster).seconds;
      program.events.push_back(e);
      ++program.calls;
    };
    if (auto o = dyn_cast<shard::AllReduceOp>(op))
      return collective(Collective::AllReduce, o.getGridAxes(),
                        double(byteSize(o.getInput().getType())));
    if (auto o = dyn_cast<shard::AllGatherOp>(op))
      return collective(Collective::AllGather, o.getGridAxes(),
                        double(byteSize(o.getResult().getType())));
    if (auto o = dyn_cast<shard::ReduceScatterOp>(op))
      return collective(Collective::ReduceScatter, o.getGridAxes(),
                        double(byteSize(o.getInput().getType())));
    if (auto o = dyn_cast<shard::BroadcastOp>(op))
      return collective(Collective::Broadcast, o.getGridAxes(),
                        double(byteSize(o.getInput().getType())));
    if (auto o = dyn_cast<shard::SendOp>(op)) {
      flush();
      Event e;
      e.kind = Event::Send;
      e.peer = o.getDestination().front();
      e.bytes = double(byteSize(o.getInput().getType()));
      e.seconds = transferSeconds(stage, e.peer, e.bytes);
      e.mask = maskOf(o.getGridAxes());
      program.events.push_back(e);
      ++program.calls;
      return;
    }
    if (auto o = dyn_cast<shard::RecvOp>(op)) {
      flush();
      Event e;
      e.kind = Event::Recv;
      e.peer = o.getSource() ? o.getSource()->front() : 0;
      e.bytes = double(byteSize(o.getResult().getType()));
      e.mask = maskOf(o.getGridAxes());
      program.events.push_back(e);
      ++program.calls;
      return;
    }
    const Cached &c = costOf(op);
    program.flops += c.cost.flops;
    if (c.seconds > 0) {
      compute.seconds += c.seconds;
      ++program.calls;
      ++program.computeCalls;
      program.launchSeconds += c.launch;
      auto &entry = program.perOp[op->getName().getStringRef().str()];
      ++entry.first;
      entry.second += c.seconds;
    }
  });
  flush();
  return program;
}

llvm::Expected<IterationEstimate>
Estimator::simulate(std::vector<RankProgram> &stages, func::FuncOp anyStage) {
  size_t n = stages.size();
  std::vector<double> clock(n, 0), compute(n, 0), comm(n, 0), bubble(n, 0);
  std::vector<size_t> next(n, 0);
  std::map<std::pair<int64_t, int64_t>, std::deque<std::pair<double, double>>>
      channels;
  unsigned pipelineBit = 1u << 3;
  auto atMeeting = [&](size_t s) {
    return next[s] < stages[s].events.size() &&
           stages[s].events[next[s]].kind == Event::Collective &&
           (stages[s].events[next[s]].mask & pipelineBit) && n > 1;
  };
  for (;;) {
    bool progress = false;
    for (size_t s = 0; s < n; ++s) {
      std::vector<Event> &events = stages[s].events;
      while (next[s] < events.size() && !atMeeting(s)) {
        Event &e = events[next[s]];
        if (e.kind == Event::Recv) {
          auto &queue = channels[{e.peer, int64_t(s)}];
          if (queue.empty())
            break;
          auto [arrival, transfer] = queue.front();
          queue.pop_front();
          double wait = std::max(0.0, arrival - clock[s]);
          double inTransfer = std::min(wait, transfer);
          comm[s] += inTransfer + device.launchOverhead;
          bubble[s] += wait - inTransfer;
          clock[s] = std::max(clock[s], arrival) + device.launchOverhead;
        } else if (e.kind == Event::Send) {
          channels[{int64_t(s), e.peer}].push_back(
              {clock[s] + device.launchOverhead + e.seconds, e.seconds});
          clock[s] += device.launchOverhead;
          comm[s] += device.launchOverhead;
          std::string name = partition::getMeshAxesName(e.mask);
          bytesPerAxes[name] += e.bytes / double(n);
          secondsPerAxes[name] += e.seconds / double(n);
          callsPerAxes[name] += 1.0 / double(n);
        } else if (e.kind == Event::Collective) {
          clock[s] += e.seconds;
          comm[s] += e.seconds;
          std::string name = partition::getMeshAxesName(e.mask);
          bytesPerAxes[name] += e.bytes / double(n);
          secondsPerAxes[name] += e.seconds / double(n);
          callsPerAxes[name] += 1.0 / double(n);
        } else {
          clock[s] += e.seconds;
          compute[s] += e.seconds;
        }
        ++next[s];
        progress = true;
      }
    }
    bool done = true, allMeeting = true;
    for (size_t s = 0; s < n; ++s) {
      done &= next[s] == stages[s].events.size();
      allMeeting &= atMeeting(s) || next[s] == stages[s].events.size();
    }
    if (done)
      break;
    if (allMeeting) {
      double meet = *std::max_element(clock.begin(), clock.end());
      for (size_t s = 0; s < n; ++s) {
        if (!atMeeting(s))
          continue;
        const Event &e = stages[s].events[next[s]];
        bubble[s] += meet - clock[s];
        clock[s] = meet + e.seconds;
        comm[s] += e.seconds;
        std::string name = partition::getMeshAxesName(e.mask);
        bytesPerAxes[name] += e.bytes / double(n);
        secondsPerAxes[name] += e.seconds / double(n);
        callsPerAxes[name] += 1.0 / double(n);
        ++next[s];
      }
      progress = true;
    }
    if (!progress)
      return llvm::createStringError(
          "the pipeline stages of '" + anyStage.getSymName().str() +
          "' wait on each other forever (a receive without its send)");
  }
  size_t slowest = 0;
  for (size_t s = 1; s < n; ++s)
    if (clock[s] > clock[slowest] ||
        (clock[s] == clock[slowest] && compute[s] > compute[slowest]))
      slowest = s;
  IterationEstimate estimate;
  estimate.computeSeconds = compute[slowest];
  estimate.commSeconds = comm[slowest];
  estimate.bubbleSeconds = bubble[slowest];
  for (const RankProgram &p : stages) {
    estimate.rankFlops = std::max(estimate.rankFlops, p.flops);
    estimate.totalFlops += p.flops;
    estimate.persistentBytes =
        std::max(estimate.persistentBytes, p.persistentBytes);
    estimate.scratchBytes = std::max(estimate.scratchBytes, p.scratchBytes);
  }
  estimate.calls = stages[slowest].calls;
  estimate.launchSeconds = stages[slowest].launchSeconds;
  estimate.callsPerAxes = callsPerAxes;
  estimate.perOp = stages[slowest].perOp;
  estimate.bytesPerAxes = bytesPerAxes;
  estimate.secondsPerAxes = secondsPerAxes;
  return estimate;
}

} // namespace

llvm::Expected<IterationEstimate>
metac::planner::estimateIteration(ModuleOp module, StringRef trainName,
                                  const ClusterDescription &cluster) {
  SymbolTable symbols(module);
  auto train = symbols.lookup<meta::TrainOp>(trainName);
  if (!train)
    return llvm::createStringError("no training named '" + trainName.str() +
                                   "'");
  auto step = train->getAttrOfType<FlatSymbolRefAttr>("meta.step");
  if (!step)
    return llvm::createStringError(
        "training '" + trainName.str() +
        "' has no step function (compile it to the planned phase first)");
  std::array<int64_t, 4> mesh{1, 1, 1, 1};
  if (meta::PlanAttr plan = train.getPlanAttr())
    mesh = {plan.getTask(), plan.getData(), plan.getTensor(),
            plan.getPipeline()};
  int64_t world = mesh[0] * mesh[1] * mesh[2] * mesh[3];
  if (world > cluster.numDevices())
    return llvm::createStringError("the plan needs " + std::to_string(world) +
                                   " devices; '" + cluster.name + "' has " +
                                   std::to_string(cluster.numDevices()));
  int64_t stages = 1;
  if (auto attr = train->getAttrOfType<IntegerAttr>("meta.pipeline_stages"))
    stages = attr.getInt();
  Estimator estimator(cluster, mesh);
  std::vector<RankProgram> programs;
  func::FuncOp first;
  for (int64_t s = 0; s < stages; ++s) {
    std::string name = step.getValue().str();
    if (stages > 1)
      name += ".stage" + std::to_string(s);
    auto function = symbols.lookup<func::FuncOp>(name);
    if (!function)
      return llvm::createStringError("no step function '" + name + "'");
    if (!first)
      first = function;
    programs.push_back(estimator.build(function, s));
  }
  llvm::Expected<IterationEstimate> estimate =
      estimator.simulate(programs, first);
  if (!estimate)
    return estimate.takeError();
  // The trainer draws this rank's tasks (every sample of them: the data
  // axis slices them afterwards) and copies its samples to the device.
  double batchBytes = 0;
  for (BlockArgument arg : first.getArguments().take_back(4))
    batchBytes += double(byteSize(arg.getType()));
  const DeviceDescription &device = cluster.device;
  double bandwidth = device.memoryBandwidth > 0 ? device.memoryBandwidth : 1e10;
  estimate->driverSeconds = 6 * device.launchOverhead +
                            (double(mesh[1]) + 1) * batchBytes / bandwidth;
  // On a mesh, the health verdict is agreed by one small all-reduce.
  bool guarded = false;
  first.walk([&](meta::UpdateGuardOp) { guarded = true; });
  if (guarded && world > 1) {
    GroupPlacement everyone =
        placeGroup(mesh, 0xF, std::max<int64_t>(cluster.devicesPerNode, 1));
    estimate->driverSeconds +=
        estimateCollective(Collective::AllReduce, 8, everyone, cluster).seconds;
  }
  return estimate;
}
