//===- CostModel.cpp - predicted time and memory of a meta-iteration ------===//

#include "metac/Planner/CostModel.h"

#include "CoreSharing.h"
#include "StateCost.h"
#include "metac/Dialect/Meta/IR/Compression.h"
#include "metac/Dialect/Meta/IR/MetaOps.h"
#include "metac/Dialect/NN/IR/NNOps.h"
#include "metac/Partition/Mesh.h"
#include "metac/Planner/CacheResidency.h"
#include "metac/Planner/CollectiveCost.h"
#include "metac/Planner/OpCost.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/ScopeExit.h"

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

uint64_t byteSize(Type type) { return tensorBytes(type); }

uint64_t elementsOf(Type type) {
  auto t = dyn_cast<RankedTensorType>(type);
  return t && t.hasStaticShape() ? uint64_t(t.getNumElements()) : 0;
}

/// The element type of `op`'s first result, if a tensor.
Type elementTypeOf(Operation *op) {
  if (op->getNumResults())
    if (auto t = dyn_cast<RankedTensorType>(op->getResult(0).getType()))
      return t.getElementType();
  return {};
}

/// `peak`'s rate for `element`, f32's where that type has none.
double rateFor(const PeakFlops &peak, Type element) {
  double r = peak.f32;
  if (element && element.isF64())
    r = peak.f64;
  else if (element && element.isBF16())
    r = peak.bf16;
  else if (element && element.isF16())
    r = peak.fp16;
  return r > 0 ? r : peak.f32;
}

/// The rate of one GEMM of `flops` on `device`: the calibrated table
/// (interpolated in log-log by the GEMM's FLOPs), else the peak. A
/// per-task linear layer's GEMM (`perTask`) reads the per-task table up to
/// its largest entry.
double gemmRate(double flops, Type element, const DeviceDescription &device,
                bool hot = false, bool perTask = false) {
  const std::vector<GemmRate> &perTaskTable =
      hot && !device.gemmPerTaskHotRates.empty() ? device.gemmPerTaskHotRates
                                                 : device.gemmPerTaskRates;
  bool ownTable =
      perTask && !perTaskTable.empty() && flops <= perTaskTable.back().flops;
  const std::vector<GemmRate> &table = ownTable ? perTaskTable
                                       : hot && !device.gemmHotRates.empty()
                                           ? device.gemmHotRates
                                           : device.gemmRates;
  if (table.empty())
    return rateFor(device.peakFlops, element);
  // Below the smallest measured GEMM a call costs no less than it: a
  // GEMM's fixed part (the call, packing, set-up) does not shrink with it.
  if (flops <= table.front().flops)
    return rateFor(table.front().rate, element) * flops / table.front().flops;
  if (flops >= table.back().flops)
    return rateFor(table.back().rate, element);
  auto upper =
      std::upper_bound(table.begin(), table.end(), flops,
                       [](double f, const GemmRate &r) { return f < r.flops; });
  const GemmRate &hi = *upper, &lo = *(upper - 1);
  double t = std::log(flops / lo.flops) / std::log(hi.flops / lo.flops);
  return std::exp(std::log(rateFor(lo.rate, element)) * (1 - t) +
                  std::log(rateFor(hi.rate, element)) * t);
}

double dim(Value v, int64_t fromBack) {
  auto shape = cast<RankedTensorType>(v.getType()).getShape();
  return double(shape.end()[-fromBack]);
}

double trailingElements(Value v, unsigned count) {
  auto shape = cast<RankedTensorType>(v.getType()).getShape();
  double product = 1;
  for (int64_t d : shape.take_back(std::min<size_t>(count, shape.size())))
    product *= d;
  return product;
}

/// The (block of 64 queries, tile of 64 keys) pairs the runtime's
/// attention kernels visit for queries `q` over keys `k`.
double attentionTiles(Value q, Value k) {
  double attentions = elementsOf(q.getType()) / trailingElements(q, 2);
  return attentions * std::ceil(dim(q, 2) / 64.0) * std::ceil(dim(k, 2) / 64.0);
}

/// How the runtime computes a product: `calls` BLAS GEMMs (one per task
/// of a per-task weight, per batch entry of a matmul, per image of a
/// convolution) and, for convolutions, the bytes of the columns that
/// im2col / col2im write and read around them (0 for 1x1 convolutions,
/// which read the image directly).
struct ProductShape {
  double calls = 1, columnBytes = 0;
  /// A linear layer with one weight per task (its own GEMM table).
  bool perTask = false;
  /// One GEMM's m, n and k (0: unknown), for the GEMM grid.
  double m = 0, n = 0, k = 0;
  void setGemm(double gm, double gn, double gk) {
    m = gm;
    n = gn;
    k = gk;
  }
  /// The smallest of m, n, k and the product of the other two.
  std::pair<double, double> thinAndArea() const {
    double dims[3] = {m, n, k};
    std::sort(dims, dims + 3);
    return {dims[0], dims[1] * dims[2]};
  }
};

ProductShape productShapeOf(Operation *op) {
  ProductShape shape;
  double elementBytes = 4;
  if (Type element = elementTypeOf(op))
    elementBytes = std::max<unsigned>(element.getIntOrFloatBitWidth() / 8, 1);
  auto convolution = [&](Value image, Value weight, Value output) {
    double images = elementsOf(image.getType()) / trailingElements(image, 3);
    double taps = trailingElements(weight, 3);
    double positions = trailingElements(output, 2);
    shape.calls = std::max(images, 1.0);
    // Output channels by taps by positions, whichever product it is.
    shape.setGemm(dim(weight, 4), taps, positions);
    bool direct = dim(weight, 1) == 1 && dim(weight, 2) == 1 &&
                  trailingElements(image, 2) == positions;
    if (!direct)
      shape.columnBytes = 2 * images * taps * positions * elementBytes;
  };
  // An attention kernel's GEMMs: a block of 64 queries by a tile of 64 keys
  // over the head dimension.
  auto attentionGemm = [&](Value query, Value key) {
    shape.setGemm(std::min(64.0, dim(query, 2)), std::min(64.0, dim(key, 2)),
                  dim(query, 1));
  };
  if (auto o = dyn_cast<nn::LinearOp>(op)) {
    auto weight = cast<RankedTensorType>(o.getWeight().getType());
    if (weight.getRank() > 2) {
      shape.calls = double(weight.getNumElements()) /
                    (dim(o.getWeight(), 1) * dim(o.getWeight(), 2));
      shape.perTask = true;
    }
    double in = dim(o.getWeight(), 1), out = dim(o.getWeight(), 2);
    shape.setGemm(elementsOf(o.getInput().getType()) / in / shape.calls, out,
                  in);
  } else if (auto o = dyn_cast<nn::MatmulOp>(op)) {
    shape.calls = elementsOf(o.getResult().getType()) /
                  trailingElements(o.getResult(), 2);
    shape.setGemm(dim(o.getResult(), 2), dim(o.getResult(), 1),
                  o.getTransposeLhs() ? dim(o.getLhs(), 2)
                                      : dim(o.getLhs(), 1));
  } else if (auto o = dyn_cast<nn::AttentionOp>(op)) {
    attentionGemm(o.getQuery(), o.getKey());
    // Two GEMMs per tile of 64 keys per block of 64 queries.
    double blocks =
        elementsOf(o.getResult().getType()) /
        double(
            cast<RankedTensorType>(o.getResult().getType()).getShape().back()) /
        64.0;
    double tiles = std::ceil(
        double(
            cast<RankedTensorType>(o.getKey().getType()).getShape().end()[-2]) /
        64.0);
    shape.calls = 2 * std::max(blocks, 1.0) * tiles * double(ringRanksOf(o));
  } else if (auto o = dyn_cast<nn::AttentionBackwardOp>(op)) {
    attentionGemm(o.getQuery(), o.getKey());
    // Per block of 64 queries and tile of 64 keys the call makes seven
    // GEMMs (scores and dP for the statistics, then the probabilities, dv,
    // dP, dq, dk), shared out as the FLOPs are (OpCost.cpp): 5/3 to
    // value's op, 8/3 to query's and key's.
    shape.calls = (o.getWrt() == "value" ? 5.0 / 3 : 8.0 / 3) *
                  attentionTiles(o.getQuery(), o.getKey()) *
                  double(ringRanksOf(o));
  } else if (auto o = dyn_cast<nn::AttentionDoubleBackwardOp>(op)) {
    attentionGemm(o.getQuery(), o.getKey());
    // Per block and tile the call makes 7 GEMMs for a value cotangent
    // (scores, dy gv^T twice; q-bar, k-bar, dy-bar) and 11 for a query's or
    // key's (scores, dP and dS-bar twice; q-bar, k-bar twice with one of
    // them, v-bar, dy-bar), shared by its 3 or 4 ops as the FLOPs are.
    shape.calls = (o.getFrom() == "value" ? 7.0 / 3 : 11.0 / 4) *
                  attentionTiles(o.getQuery(), o.getKey()) *
                  double(ringRanksOf(o));
  } else if (auto o = dyn_cast<nn::Conv2DOp>(op)) {
    convolution(o.getInput(), o.getWeight(), o.getResult());
  } else if (auto o = dyn_cast<nn::Conv2DBackwardInputOp>(op)) {
    convolution(o.getResult(), o.getWeight(), o.getGrad());
  } else if (auto o = dyn_cast<nn::Conv2DBackwardWeightOp>(op)) {
    convolution(o.getInput(), o.getResult(), o.getGrad());
  }
  shape.calls = std::max(shape.calls, 1.0);
  return shape;
}

bool isProduct(Operation *op) {
  return isa<nn::LinearOp, nn::MatmulOp, nn::AttentionOp,
             nn::AttentionBackwardOp, nn::AttentionDoubleBackwardOp,
             nn::Conv2DOp, nn::Conv2DBackwardInputOp,
             nn::Conv2DBackwardWeightOp>(op);
}

/// The kind of runtime kernel `op` becomes, as calibrated (KernelFit).
StringRef kernelKind(Operation *op) {
  if (isProduct(op))
    return "product";
  if (isa<nn::ExpOp, nn::LogOp, nn::SigmoidOp>(op))
    return "transcendental";
  if (isa<nn::ErfOp, nn::GeluOp, nn::TanhOp>(op))
    return "erf";
  if (isa<nn::TransposeOp>(op))
    return "transpose";
  if (isa<nn::BroadcastOp, nn::OneHotOp, nn::EmbeddingOp>(op))
    return "broadcast";
  if (isa<nn::MaxPool2DOp, nn::AvgPool2DOp, nn::MaxPool2DBackwardOp,
          nn::MaxPool2DGatherOp, nn::AvgPool2DBackwardOp>(op))
    return "window";
  if (isa<nn::ReduceSumOp, nn::ReduceMeanOp, nn::SoftmaxOp, nn::LogSoftmaxOp,
          nn::LayerNormOp, nn::BatchNormOp, nn::MSELossOp,
          nn::CrossEntropyLossOp, nn::AccuracyOp, nn::EmbeddingBackwardOp,
          nn::MoeDispatchOp>(op))
    return "reduce";
  if (isa<meta::OuterStepOp, meta::UpdateGuardOp>(op))
    return "optimizer";
  if (isa<tensor::ConcatOp, arith::ConstantOp, shard::AllSliceOp>(op))
    return "copy";
  return "elementwise";
}

/// One step of a rank's program, as the simulation sees it.
struct Event {
  /// Wait: a `meta.wait`, where the rank blocks until its started
  /// collectives (Collective with `async`) are done.
  enum Kind { Compute, Collective, Send, Recv, Wait } kind = Compute;
  double seconds = 0;
  /// A collective started by `metart_all_reduce_start` (--overlap): it runs
  /// on the communication thread, after those started before it, while
  /// the rank computes on.
  bool async = false;
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
    /// The call's time with its operands from memory and from cache, and
    /// its fixed part (launch, dispatch).
    double seconds, hotSeconds, launch;
  };
  const Cached &costOf(Operation *op);
  /// One call of `op` (its operands from cache when `hot`); sets `launch`
  /// to its fixed part.
  double priceCall(Operation *op, const OpCost &cost, bool hot, double &launch);
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
  entry.launch = 0;
  entry.seconds = entry.hotSeconds =
      priceCall(op, entry.cost, false, entry.launch);
  // Operands in cache are never slower: where the two measurements say
  // otherwise, that is noise.
  if (entry.seconds > 0)
    entry.hotSeconds =
        std::min(entry.seconds, priceCall(op, entry.cost, true, entry.launch));
  return entry;
}

double Estimator::priceCall(Operation *op, const OpCost &c, bool hot,
                            double &launch) {
  if (c.flops <= 0 && c.bytes <= 0)
    return 0;
  StringRef kind = kernelKind(op);
  const KernelFit *fit = device.kernel(kind);
  // Kinds newer than a description fall back on their nearest kin.
  if (kind == "erf" && !fit)
    fit = device.kernel("transcendental");
  if ((kind == "transcendental" || kind == "erf") && !fit)
    fit = device.kernel("elementwise");
  if (kind == "window" && !fit)
    fit = device.kernel("reduce");
  double memory =
      device.memoryBandwidth > 0 ? c.bytes / device.memoryBandwidth : 0;
  double compute = 0;
  if (isProduct(op)) {
    // GEMM by GEMM, as the runtime calls BLAS; a convolution's columns
    // move at the transpose kernel's rate (im2col is a strided gather).
    ProductShape shape = productShapeOf(op);
    double perCall = c.flops / shape.calls;
    auto [thin, area] = shape.thinAndArea();
    Type element = elementTypeOf(op);
    double rate =
        device.gemmGrid.rate(thin, area, element && element.isF64(), hot);
    if (!(rate > 0))
      rate = gemmRate(perCall, element, device, hot, shape.perTask);
    compute = shape.calls * perCall / rate;
    if (shape.columnBytes > 0) {
      const KernelFit *gather = device.kernel("transpose");
      double rate = gather ? gather->beta : device.memoryBandwidth;
      compute += rate > 0 ? shape.columnBytes / rate : 0;
    }
  } else {
    double rate = rateFor(device.peakFlops, elementTypeOf(op));
    compute = rate > 0 ? c.flops / rate : 0;
  }
  if (!fit) {
    launch = device.launchOverhead;
    return device.launchOverhead + std::max(compute, memory);
  }
  // Calibrated: the kind's own cost per call and per byte (products: per
  // call, then their GEMMs).
  launch = fit->alpha;
  double seconds = kind == "product"
                       ? fit->alpha + std::max(compute, c.bytes / fit->beta)
                       : fit->secondsFor(c.bytes, hot);
  // A softmax is a reduction that also takes an exponential of every
  // element.
  if (isa<nn::SoftmaxOp, nn::LogSoftmaxOp>(op))
    if (const KernelFit *exp = device.kernel("transcendental"))
      seconds += exp->secondsFor(
          2 * double(byteSize(op->getResult(0).getType())), hot);
  // Elementwise loops large enough are split over the runtime's threads:
  // waking them is a fixed cost of its own.
  if ((kind == "elementwise" || kind == "transcendental" || kind == "erf") &&
      device.parallelMinElements > 0 && op->getNumResults() &&
      int64_t(elementsOf(op->getResult(0).getType())) >=
          device.parallelMinElements) {
    launch += device.parallelDispatch;
    seconds += device.parallelDispatch;
  }
  return seconds;
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
  // --offload=optimizer: the per-parameter state lives in host memory; the
  // device holds a staging area instead, at the update (counted at the
  // scratch peak: the update ends the step, where the gradients are live).
  OffloadedState offloaded = offloadedState(function);
  // A prefetched state takes a second area. --offload=params: an op's
  // device copies of the parameters and those prefetched for the next op.
  uint64_t staging = (offloaded.prefetchedState ? 2 : 1) * offloaded.slots *
                         roundUp(offloaded.largestBytes) +
                     offloaded.paramCopyBytes;
  for (BlockArgument arg : function.getArguments())
    if (!offloaded.values.contains(arg) && !offloaded.params.contains(arg))
      program.persistentBytes += roundUp(byteSize(arg.getType()));
  program.scratchBytes = replayScratch(function).peakBytes + staging;
  // pipedream: two buffers per value carried to the next call, or one
  // where its reads end before its store (meta-carry-buffers).
  function.walk([&](meta::CarryStoreOp store) {
    auto buffers = store->getAttrOfType<IntegerAttr>("metac.carry_buffers");
    program.persistentBytes += (buffers ? buffers.getInt() : 2) *
                               roundUp(byteSize(store.getValue().getType()));
  });
  // Where both are calibrated, an op runs between its speed on operands
  // from memory and on operands in cache, by the share it finds in cache.
  bool hotTables =
      !device.gemmHotRates.empty() || !device.gemmPerTaskHotRates.empty() ||
      llvm::any_of(device.kernelFits,
                   [](const KernelFit &k) { return !k.hotSeconds.empty(); });
  DenseMap<Operation *, double> inCache;
  if (hotTables)
    inCache = cacheResidency(function, device.cacheBytes);
  Event compute;
  auto flush = [&] {
    if (compute.seconds > 0)
      program.events.push_back(compute);
    compute = Event();
  };
  // The compute of the op before: an offloaded parameter's copy crosses
  // while it runs (prefetched).
  double previousSeconds = 0;
  // The last op of a ring attention call whose rotations are in flight.
  Operation *rotatingUntil = nullptr;
  function.walk([&](Operation *op) {
    double overlapped = previousSeconds;
    previousSeconds = 0;
    auto collective = [&](Collective kind, ArrayRef<int16_t> axes, double bytes,
                          StringRef algorithm = "") {
      flush();
      Event e;
      e.kind = Event::Collective;
      e.mask = maskOf(axes);
      e.bytes = bytes;
      GroupPlacement group = placeGroup(
          mesh, e.mask, std::max<int64_t>(cluster.devicesPerNode, 1));
      e.seconds =
          estimateCollective(kind, bytes, group, cluster, algorithm).seconds;
      // A stale sum is waited for `staleness` iterations later: within the
      // iteration it only occupies the communication thread.
      e.async = op->hasAttr("metac.async") || op->hasAttr("metac.staleness");
      program.events.push_back(e);
      ++program.calls;
    };
    if (isa<meta::WaitOp>(op)) {
      flush();
      Event e;
      e.kind = Event::Wait;
      program.events.push_back(e);
      return;
    }
    if (auto o = dyn_cast<shard::AllReduceOp>(op)) {
      // meta-select-allreduce's choice (--allreduce), when it made one.
      auto algorithm = o->getAttrOfType<StringAttr>("metac.allreduce");
      double bytes = double(byteSize(o.getInput().getType()));
      auto type = cast<RankedTensorType>(o.getType());
      double elements = double(type.getNumElements());
      std::optional<meta::Compression> compression;
      if (auto text = o->getAttrOfType<StringAttr>("metac.compress"))
        compression = meta::parseCompression(text.getValue());
      using Kind = meta::Compression::Kind;
      // top-k: every rank's index-value pairs, all-gathered.
      if (compression && compression->kind == Kind::TopK) {
        double k = std::max(1.0, std::round(compression->parameter * elements));
        int64_t group = placeGroup(mesh, maskOf(o.getGridAxes()),
                                   std::max<int64_t>(cluster.devicesPerNode, 1))
                            .size;
        return collective(Collective::AllGather, o.getGridAxes(),
                          8.0 * k * double(group));
      }
      // PowerSGD: two all-reduces of the factors P and Q, when smaller.
      if (compression && compression->kind == Kind::PowerSGD &&
          type.getRank() >= 2) {
        double rows = double(type.getDimSize(0)), cols = elements / rows;
        double rank = compression->parameter;
        if ((rows + cols) * rank < elements) {
          collective(Collective::AllReduce, o.getGridAxes(), 4 * rows * rank,
                     algorithm ? algorithm.getValue() : StringRef());
          return collective(Collective::AllReduce, o.getGridAxes(),
                            4 * cols * rank,
                            algorithm ? algorithm.getValue() : StringRef());
        }
      }
      // bf16, fp16: 16 bits per element on the wire.
      if (compression &&
          (compression->kind == Kind::BF16 || compression->kind == Kind::FP16))
        bytes = 2.0 * elements;
      return collective(Collective::AllReduce, o.getGridAxes(), bytes,
                        algorithm ? algorithm.getValue() : StringRef());
    }
    if (auto update = dyn_cast<meta::OuterStepOp>(op))
      compute.seconds += offloadTransferSeconds(update, device);
    compute.seconds +=
        std::max(0.0, offloadedReadSeconds(op, offloaded, device) - overlapped);
    if (auto o = dyn_cast<meta::ServerStepOp>(op)) {
      flush();
      ServerTraffic traffic = serverTraffic(o, mesh, cluster);
      Event e;
      e.kind = Event::Collective;
      e.mask = maskOf({0, 1});
      e.bytes = traffic.bytes;
      e.seconds = traffic.seconds;
      // A rank that may compute on stale parameters does not wait here.
      e.async = o.getAsynchronous() || o.getStaleness() > 0;
      program.events.push_back(e);
      ++program.calls;
      return;
    }
    if (auto o = dyn_cast<shard::AllGatherOp>(op))
      return collective(Collective::AllGather, o.getGridAxes(),
                        double(byteSize(o.getResult().getType())));
    if (auto o = dyn_cast<shard::ReduceScatterOp>(op))
      return collective(Collective::ReduceScatter, o.getGridAxes(),
                        double(byteSize(o.getInput().getType())));
    if (auto o = dyn_cast<shard::AllToAllOp>(op))
      return collective(Collective::AllToAll, o.getGridAxes(),
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
    // Ring attention moves its operands into the zigzag layout and its
    // cotangents home around its computation (blocking), and rotates the
    // next block while it computes on this one: started on the
    // communication thread, waited for after the computation.
    if (double bytes = ringExchangeBytes(op); bytes > 0) {
      ArrayRef<int16_t> axes =
          op->getAttrOfType<DenseI16ArrayAttr>("ring_axes").asArrayRef();
      double rotations = ringRotationBytes(op);
      if (bytes > rotations)
        collective(Collective::SendRecv, axes, bytes - rotations);
      if (rotations > 0) {
        collective(Collective::SendRecv, axes, rotations);
        program.events.back().async = true;
        // The call's compute is shared by its sibling ops: the wait
        // follows the last one.
        rotatingUntil = op;
        if (auto o = dyn_cast<nn::AttentionBackwardOp>(op))
          rotatingUntil = o.getSiblings().back();
        if (auto o = dyn_cast<nn::AttentionDoubleBackwardOp>(op))
          rotatingUntil = o.getSiblings().back();
      }
    }
    auto waitForRotations = llvm::make_scope_exit([&] {
      if (op != rotatingUntil)
        return;
      rotatingUntil = nullptr;
      flush();
      Event e;
      e.kind = Event::Wait;
      program.events.push_back(e);
    });
    const Cached &c = costOf(op);
    program.flops += c.cost.flops;
    if (c.seconds > 0) {
      double cached = inCache.lookup(op);
      double seconds = c.seconds + cached * (c.hotSeconds - c.seconds);
      compute.seconds += seconds;
      previousSeconds = seconds;
      ++program.calls;
      ++program.computeCalls;
      program.launchSeconds += c.launch;
      auto &entry = program.perOp[op->getName().getStringRef().str()];
      ++entry.first;
      entry.second += seconds;
    }
  });
  flush();
  return program;
}

llvm::Expected<IterationEstimate>
Estimator::simulate(std::vector<RankProgram> &stages, func::FuncOp anyStage) {
  // The stages run side by side in one clock. Every stage stands for the
  // world's ranks of its pipeline position (the other axes' ranks run the
  // same program at the same time). Ranks share the processors of their
  // node: with more ranks than processors (processor_share < 1) a rank
  // computes at 1 / (the ranks running on its core) of full speed where
  // the runtime pins them, and at processors / running ranks of the node
  // where it leaves them to the kernel (CoreSharing.h). A rank waiting
  // for a message still runs as MPI polls for it, weighing waiting_share
  // of a computing rank (calibrated); a rank done with its step gives its
  // share to the others.
  // Communication takes the time the description gives it.
  size_t n = stages.size();
  int64_t world = 1;
  for (int64_t size : mesh)
    world *= size;
  int64_t perNode = std::max<int64_t>(cluster.devicesPerNode, 1);
  int64_t localRanks = std::min(world, perNode);
  double ranksPerStage = double(localRanks) / double(n);
  double processors = device.processorShare * double(perNode);
  // Which stages share each core, when the runtime pins ranks to cores.
  std::vector<std::vector<int64_t>> stagesOnCore =
      device.pinnedRanks ? pinnedStages(localRanks, world, n, processors)
                         : std::vector<std::vector<int64_t>>();
  enum class State { Idle, Computing, Busy, Waiting, Blocked, Meeting, Done };
  std::vector<State> state(n, State::Idle);
  std::vector<double> remaining(n, 0), until(n, 0);
  std::vector<double> clock(n, 0), compute(n, 0), comm(n, 0), bubble(n, 0);
  // When each stage's communication thread is done with what was started.
  std::vector<double> commFree(n, 0);
  std::vector<size_t> next(n, 0);
  std::map<std::pair<int64_t, int64_t>, std::deque<std::pair<double, double>>>
      channels;
  unsigned pipelineBit = 1u << 3;
  auto account = [&](const Event &e) {
    std::string name = partition::getMeshAxesName(e.mask);
    bytesPerAxes[name] += e.bytes / double(n);
    secondsPerAxes[name] += e.seconds / double(n);
    callsPerAxes[name] += 1.0 / double(n);
  };
  double now = 0;
  // Starts stage `s`'s next events until one takes time or waits.
  auto start = [&](size_t s) {
    std::vector<Event> &events = stages[s].events;
    while (state[s] == State::Idle) {
      if (next[s] == events.size()) {
        state[s] = State::Done;
        clock[s] = now;
        return;
      }
      Event &e = events[next[s]];
      switch (e.kind) {
      case Event::Compute:
        state[s] = State::Computing;
        remaining[s] = e.seconds;
        break;
      case Event::Collective:
        if ((e.mask & pipelineBit) && n > 1) {
          state[s] = State::Meeting;
          break;
        }
        account(e);
        if (e.async) {
          // Queued behind the collectives started before it; the rank
          // goes on. Its time counts where a wait blocks for it.
          commFree[s] = std::max(commFree[s], now) + e.seconds;
          break;
        }
        // A blocking collective runs after the started ones.
        comm[s] += std::max(0.0, commFree[s] - now) + e.seconds;
        state[s] = State::Busy;
        until[s] = std::max(now, commFree[s]) + e.seconds;
        break;
      case Event::Wait:
        if (commFree[s] > now) {
          comm[s] += commFree[s] - now;
          state[s] = State::Busy;
          until[s] = commFree[s];
        }
        break;
      case Event::Send:
        account(e);
        channels[{int64_t(s), e.peer}].push_back(
            {now + device.launchOverhead + e.seconds, e.seconds});
        comm[s] += device.launchOverhead;
        state[s] = State::Busy;
        until[s] = now + device.launchOverhead;
        break;
      case Event::Recv: {
        auto &queue = channels[{e.peer, int64_t(s)}];
        if (queue.empty()) {
          state[s] = State::Blocked;
          break;
        }
        auto [arrival, transfer] = queue.front();
        queue.pop_front();
        double wait = std::max(0.0, arrival - now);
        double inTransfer = std::min(wait, transfer);
        comm[s] += inTransfer + device.launchOverhead;
        bubble[s] += wait - inTransfer;
        state[s] = State::Busy;
        until[s] = std::max(now, arrival) + device.launchOverhead;
        break;
      }
      }
      if (state[s] == State::Idle)
        ++next[s];
    }
  };
  for (size_t s = 0; s < n; ++s)
    start(s);
  for (;;) {
    // Receives whose send has been posted since, and meetings that every
    // stage has reached, go on now.
    bool changed = true;
    while (changed) {
      changed = false;
      for (size_t s = 0; s < n; ++s) {
        if (state[s] != State::Blocked)
          continue;
        const Event &e = stages[s].events[next[s]];
        if (channels[{e.peer, int64_t(s)}].empty())
          continue;
        state[s] = State::Idle;
        start(s);
        changed = true;
      }
      bool allMeeting = true, anyMeeting = false;
      for (size_t s = 0; s < n; ++s) {
        allMeeting &= state[s] == State::Meeting || state[s] == State::Done;
        anyMeeting |= state[s] == State::Meeting;
      }
      if (allMeeting && anyMeeting) {
        for (size_t s = 0; s < n; ++s) {
          if (state[s] != State::Meeting)
            continue;
          const Event &e = stages[s].events[next[s]];
          account(e);
          comm[s] += e.seconds;
          state[s] = State::Busy;
          until[s] = now + e.seconds;
        }
        changed = true;
      }
    }
    bool done = true;
    double step = HUGE_VAL;
    std::vector<double> demand(n, 0);
    for (size_t s = 0; s < n; ++s) {
      done &= state[s] == State::Done;
      if (state[s] == State::Computing)
        demand[s] = 1;
      else if (state[s] != State::Done)
        demand[s] = device.waitingShare;
      if (state[s] == State::Busy)
        step = std::min(step, until[s] - now);
    }
    if (done)
      break;
    std::vector<double> rate =
        stageRates(demand, stagesOnCore, ranksPerStage, processors,
                   device.processorShare < 1);
    for (size_t s = 0; s < n; ++s)
      if (state[s] == State::Computing)
        step = std::min(step, remaining[s] / rate[s]);
    if (step == HUGE_VAL)
      return llvm::createStringError(
          "the pipeline stages of '" + anyStage.getSymName().str() +
          "' wait on each other forever (a receive without its send)");
    step = std::max(step, 0.0);
    for (size_t s = 0; s < n; ++s) {
      if (state[s] == State::Computing) {
        compute[s] += step;
        remaining[s] -= step * rate[s];
        if (remaining[s] <= 1e-15) {
          state[s] = State::Idle;
          ++next[s];
        }
      } else if (state[s] == State::Blocked || state[s] == State::Meeting) {
        bubble[s] += step;
      }
    }
    now += step;
    for (size_t s = 0; s < n; ++s) {
      if (state[s] == State::Busy && until[s] <= now + 1e-15) {
        state[s] = State::Idle;
        ++next[s];
      }
      if (state[s] == State::Idle)
        start(s);
    }
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
  // The ops' times as the slowest stage lives them: slowed down by the
  // ranks it shares its processors with.
  double work = 0;
  for (const Event &e : stages[slowest].events)
    if (e.kind == Event::Compute)
      work += e.seconds;
  double slowdown = work > 0 ? compute[slowest] / work : 1;
  estimate.calls = stages[slowest].calls;
  estimate.launchSeconds = stages[slowest].launchSeconds * slowdown;
  estimate.callsPerAxes = callsPerAxes;
  estimate.perOp = stages[slowest].perOp;
  for (auto &[name, entry] : estimate.perOp)
    entry.second *= slowdown;
  estimate.bytesPerAxes = bytesPerAxes;
  estimate.secondsPerAxes = secondsPerAxes;
  return estimate;
}

} // namespace

llvm::Expected<IterationEstimate>
metac::planner::estimateStep(SymbolTable &symbols, meta::TrainOp train,
                             FlatSymbolRefAttr step,
                             const ClusterDescription &cluster) {
  std::array<int64_t, partition::kNumMeshAxes> mesh{1, 1, 1, 1, 1, 1};
  if (meta::PlanAttr plan = train.getPlanAttr())
    mesh = plan.getMeshSizes();
  int64_t world = 1;
  for (int64_t size : mesh)
    world *= size;
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
  unsigned batchArguments = 4;
  if (auto classes =
          first->getAttrOfType<DenseI64ArrayAttr>("meta.task_classes"))
    batchArguments = 4 * classes.size();
  for (BlockArgument arg : first.getArguments().take_back(batchArguments))
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
        placeGroup(mesh, (1u << partition::kNumMeshAxes) - 1,
                   std::max<int64_t>(cluster.devicesPerNode, 1));
    estimate->driverSeconds +=
        estimateCollective(Collective::AllReduce, 8, everyone, cluster).seconds;
  }
  return estimate;
}
