//===- Planner.cpp - choose a parallel plan for a cluster -----------------===//

#include "metac/Planner/Planner.h"

#include "metac/Dialect/Meta/IR/MetaOps.h"
#include "metac/Dialect/Meta/Transforms/TaskAssignment.h"
#include "metac/Pipelines/Pipelines.h"

#include "Screening.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Threading.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <numeric>

using namespace mlir;
using namespace metac;
using namespace metac::planner;
using partition::MeshAxis;

namespace {

SmallVector<int64_t> divisors(int64_t n) {
  SmallVector<int64_t> result;
  for (int64_t d = 1; d <= n; ++d)
    if (n % d == 0)
      result.push_back(d);
  return result;
}

/// What a plan must divide: tasks per meta-batch, and the samples per task
/// of every batch argument of the step and evaluation functions.
struct ProblemSizes {
  int64_t metaBatch = 1;
  SmallVector<int64_t> samples;
  /// The greatest common divisor of the mixture-of-experts layers' expert
  /// counts (0: no such layer, so no expert axis).
  int64_t experts = 0;
  /// The positions per sequence of sequence tasks (0: other tasks, so no
  /// sequence axis).
  int64_t positions = 0;
};

/// The task batch a step or evaluation function ends with: four
/// arguments, per class of a mixed meta-batch's step.
unsigned batchArguments(func::FuncOp f) {
  if (auto classes = f->getAttrOfType<DenseI64ArrayAttr>("meta.task_classes"))
    return 4 * classes.size();
  return 4;
}

ProblemSizes problemSizes(meta::TrainOp train, SymbolTable &symbols) {
  ProblemSizes sizes;
  sizes.metaBatch = train.getMetaBatch();
  SmallVector<StringRef> functions;
  if (auto step = train->getAttrOfType<FlatSymbolRefAttr>("meta.step"))
    functions.push_back(step.getValue());
  if (auto evals = train->getAttrOfType<ArrayAttr>("meta.eval"))
    for (auto e : evals.getAsRange<FlatSymbolRefAttr>())
      functions.push_back(e.getValue());
  for (StringRef name : functions)
    if (auto f = symbols.lookup<func::FuncOp>(name))
      for (BlockArgument arg : f.getArguments().take_back(batchArguments(f)))
        if (auto t = dyn_cast<RankedTensorType>(arg.getType()))
          if (t.getRank() > 1)
            sizes.samples.push_back(t.getDimSize(1));
  auto tasks = symbols.lookup<meta::TasksOp>(train.getTasks());
  if (tasks && tasks.getKind() == "sequence")
    sizes.positions = tasks.getInputType().getDimSize(0);
  if (auto model = symbols.lookup<func::FuncOp>(train.getModel()))
    for (unsigned arg = 0, e = model.getNumArguments(); arg < e; ++arg)
      if (auto name = model.getArgAttrOfType<StringAttr>(arg, "meta.param"))
        if (name.getValue().ends_with(".experts.w1"))
          sizes.experts =
              std::gcd(sizes.experts,
                       cast<RankedTensorType>(model.getArgument(arg).getType())
                           .getDimSize(0));
  return sizes;
}

/// Every plan of `devices` devices that divides the problem, before any is
/// partitioned.
std::vector<PlanCandidate> enumerate(int64_t devices,
                                     const ProblemSizes &problem,
                                     const ClusterDescription &cluster) {
  std::vector<PlanCandidate> plans;
  int64_t perNode = std::max<int64_t>(cluster.devicesPerNode, 1);
  for (int64_t task : divisors(devices)) {
    if (problem.metaBatch % task)
      continue;
    for (int64_t data : divisors(devices / task)) {
      if (llvm::any_of(problem.samples,
                       [&](int64_t n) { return n % data != 0; }))
        continue;
      // The expert axis splits the samples as the data axis does (with it:
      // each data rank's samples), and the experts of every MoE layer
      // (also inside pipeline stages).
      for (int64_t expert : divisors(devices / task / data)) {
        if (expert > 1 &&
            (problem.experts == 0 || problem.experts % expert != 0 ||
             llvm::any_of(problem.samples,
                          [&](int64_t n) { return n % (data * expert) != 0; })))
          continue;
        // The sequence axis splits the positions of sequence tasks (also
        // inside pipeline stages).
        for (int64_t sequence : divisors(devices / task / data / expert)) {
          if (sequence > 1 &&
              (problem.positions == 0 || problem.positions % sequence != 0))
            continue;
          int64_t rest = devices / task / data / expert / sequence;
          for (int64_t tensor : divisors(rest)) {
            // The tensor axis talks on every layer: it stays inside a node.
            if (tensor > 1 && perNode % tensor)
              continue;
            int64_t pipeline = rest / tensor;
            PlanCandidate plan;
            plan.mesh.sizes = {task, data, tensor, pipeline, expert, sequence};
            if (pipeline == 1) {
              plans.push_back(plan);
              continue;
            }
            // Micro-batches are groups of a rank's tasks: at least one per
            // stage; more shrink the bubble and cost more transfers.
            int64_t localTasks = problem.metaBatch / task;
            for (int64_t micro : {pipeline, 2 * pipeline, 4 * pipeline}) {
              if (micro > localTasks || localTasks % micro)
                continue;
              for (StringRef schedule : {"gpipe", "1f1b"}) {
                plan.microBatches = micro;
                plan.schedule = schedule.str();
                plans.push_back(plan);
              }
            }
          }
        }
      }
    }
  }
  return plans;
}

} // namespace

llvm::Expected<PlanResult>
metac::planner::planTraining(ModuleOp module, StringRef trainName,
                             const ClusterDescription &cluster,
                             const PlannerOptions &options) {
  auto start = std::chrono::steady_clock::now();
  SymbolTable symbols(module);
  auto train = symbols.lookup<meta::TrainOp>(trainName);
  if (!train)
    return llvm::createStringError("no training named '" + trainName.str() +
                                   "'");
  PlanResult result;
  result.devices = options.only          ? options.only->mesh.numRanks()
                   : options.devices > 0 ? options.devices
                                         : cluster.numDevices();
  if (result.devices > cluster.numDevices())
    return llvm::createStringError(
        llvm::formatv("--devices={0} is more than the {1} devices of '{2}'",
                      result.devices, cluster.numDevices(), cluster.name)
            .str());
  ProblemSizes problem = problemSizes(train, symbols);
  std::vector<PlanCandidate> plans =
      options.only ? std::vector<PlanCandidate>{*options.only}
                   : enumerate(result.devices, problem, cluster);
  double budget =
      double(cluster.device.memoryBytes) * (1.0 - options.memoryMargin);
  MLIRContext *context = module.getContext();
  // The passes' dialects are loaded now: plans are costed on several
  // threads, and a context loads dialects only on one.
  {
    PipelineOptions widest;
    widest.mesh = "task=2,data=2,tensor=2,pipeline=2";
    widest.microBatches = 2;
    widest.bucketBytes = options.bucketBytes;
    widest.zero = 2;
    PassManager pm(context);
    if (succeeded(buildPipelineBetween(pm, Phase::Autodiff, Phase::Optimized,
                                       widest))) {
      DialectRegistry registry;
      pm.getDependentDialects(registry);
      for (StringRef name : registry.getDialectNames())
        context->getOrLoadDialect(name);
    }
  }
  // A copy partitioned by metac's own passes: the plan is costed as it
  // would run. Diagnostics of plans that cannot be partitioned become the
  // plan's rejection: one handler for the whole search routes them to the
  // plan being costed on the thread that emits them.
  static thread_local std::string *diagnosticSink = nullptr;
  static constexpr const char *kPassesFailed =
      "cannot be partitioned: the passes failed";
  ScopedDiagnosticHandler handler(context, [](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Error && diagnosticSink &&
        diagnosticSink->empty())
      *diagnosticSink = d.str();
    return success();
  });
  bool mixed = train->hasAttr("meta.task_mix");
  auto evaluateWith = [&](PlanCandidate &plan,
                          const std::string &balance) -> bool {
    OwningOpRef<ModuleOp> copy = module.clone();
    std::string diagnostics;
    diagnosticSink = &diagnostics;
    PipelineOptions pipeline;
    pipeline.mesh = plan.mesh.str();
    pipeline.microBatches = plan.microBatches > 1 ? plan.microBatches : 0;
    pipeline.schedule = plan.schedule;
    pipeline.bucketBytes = options.bucketBytes;
    pipeline.allReduce = options.allReduce;
    pipeline.compress = options.compress;
    pipeline.overlap = options.overlap;
    pipeline.parameterServers = options.parameterServers;
    pipeline.staleness = options.staleness;
    pipeline.asynchronous = options.asynchronous;
    pipeline.offload = plan.offload.empty() ? options.offload : plan.offload;
    pipeline.balance = balance;
    pipeline.zero = options.zero;
    pipeline.splitParams = options.splitParams;
    // A mixed meta-batch is split over the task axis when it is expanded:
    // each plan expands it again for its own.
    Phase from = Phase::Autodiff;
    if (mixed) {
      meta::dropExpansion(*copy, trainName);
      from = Phase::Meta;
    }
    PassManager pm(context);
    bool partitioned =
        succeeded(buildPipelineBetween(pm, from, Phase::Optimized, pipeline)) &&
        succeeded(pm.run(*copy));
    diagnosticSink = nullptr;
    if (!partitioned) {
      plan.rejection = diagnostics.empty()
                           ? std::string(kPassesFailed)
                           : "cannot be partitioned: " + diagnostics;
      return false;
    }
    llvm::Expected<IterationEstimate> estimate =
        estimateIteration(*copy, trainName, cluster);
    if (!estimate) {
      plan.rejection = llvm::toString(estimate.takeError());
      return false;
    }
    plan.estimate = *estimate;
    if (mixed && plan.mesh.sizes[partition::MeshAxis::Task] > 1)
      plan.balance = balance.empty() ? "cost" : balance;
    return true;
  };
  // A mixed meta-batch on a task axis: both of its splits, the faster kept
  // (per-class overheads, not FLOPs, dominate where calls are expensive).
  auto evaluate = [&](PlanCandidate &plan) -> bool {
    if (!mixed || !options.balance.empty() ||
        plan.mesh.sizes[partition::MeshAxis::Task] == 1)
      return evaluateWith(plan, options.balance);
    PlanCandidate byCount = plan;
    bool byCost = evaluateWith(plan, "cost");
    bool counted = evaluateWith(byCount, "count");
    if (counted &&
        (!byCost || byCount.estimate.seconds() < plan.estimate.seconds()))
      plan = std::move(byCount);
    return byCost || counted;
  };
  // Costs `batch`, one plan per thread of the context; true where a plan
  // was costed. (Most of a plan's passes work on the whole module, so the
  // threads are otherwise idle.)
  auto evaluateAll = [&](MutableArrayRef<PlanCandidate> batch) {
    std::vector<char> costed(batch.size(), 0);
    parallelFor(context, 0, batch.size(),
                [&](size_t i) { costed[i] = evaluate(batch[i]); });
    // A diagnostic emitted inside a pass's own parallel region can be
    // collected by another plan's region running on the same worker
    // thread, and is lost to its plan: such a plan is partitioned again
    // alone, so that its rejection says why.
    for (size_t i = 0; i < batch.size(); ++i)
      if (!costed[i] && batch[i].rejection == kPassesFailed)
        costed[i] = evaluate(batch[i]);
    return costed;
  };
  auto fits = [&](PlanCandidate &plan) {
    if (double(plan.estimate.peakBytes()) <= budget)
      return true;
    plan.rejection = llvm::formatv(
        "needs {0} bytes per device, more than {1:P0} of the {2} bytes of "
        "a device",
        plan.estimate.peakBytes(), 1.0 - options.memoryMargin,
        cluster.device.memoryBytes);
    return false;
  };
  auto exact = [&](MutableArrayRef<PlanCandidate> batch) {
    std::vector<char> costed = evaluateAll(batch);
    for (auto [plan, ok] : llvm::zip(batch, costed)) {
      if (ok && fits(plan))
        result.ranked.push_back(plan);
      else
        result.rejected.push_back(plan);
    }
  };
  if (int64_t(plans.size()) <= options.exactLimit) {
    exact(plans);
  } else {
    // Screening: exact estimates of the reference plans, then a coarse
    // estimate of every plan; the best that fit are partitioned.
    ScreeningReferences refs;
    auto smallestDivisor = [](ArrayRef<int64_t> of, int64_t limit) {
      for (int64_t r = 2; r <= limit; ++r)
        if (llvm::all_of(of, [&](int64_t n) { return n % r == 0; }))
          return r;
      return int64_t(0);
    };
    int64_t limit = std::min<int64_t>(cluster.numDevices(), 64);
    refs.size = {
        smallestDivisor({problem.metaBatch}, limit),
        smallestDivisor(problem.samples, limit),
        cluster.devicesPerNode % 2 == 0 ? 2 : 0,
        smallestDivisor({problem.metaBatch}, limit),
        problem.experts > 0 ? smallestDivisor(
                                  [&] {
                                    SmallVector<int64_t> of = problem.samples;
                                    of.push_back(problem.experts);
                                    return of;
                                  }(),
                                  limit)
                            : 0,
        problem.positions > 0 ? smallestDivisor({problem.positions}, limit)
                              : 0};
    // The one-device plan first, then a two-way split of each axis.
    std::vector<PlanCandidate> references(1);
    SmallVector<unsigned> axes;
    for (unsigned a = 0; a < partition::kNumMeshAxes; ++a) {
      if (refs.size[a] < 2)
        continue;
      PlanCandidate ref;
      ref.mesh.sizes[a] = refs.size[a];
      if (a == MeshAxis::Pipeline) {
        ref.microBatches = refs.size[a];
        ref.schedule = "gpipe";
      }
      references.push_back(ref);
      axes.push_back(a);
    }
    std::vector<char> costed = evaluateAll(references);
    if (!costed[0])
      return llvm::createStringError(
          "'" + trainName.str() +
          "' cannot be compiled for one device: " + references[0].rejection);
    refs.single = references[0].estimate;
    for (auto [i, a] : llvm::enumerate(axes))
      if (costed[i + 1])
        refs.axis[a] = references[i + 1].estimate;
    std::vector<PlanCandidate> screened;
    for (PlanCandidate &plan : plans) {
      std::optional<IterationEstimate> coarse = screenPlan(plan, refs, cluster);
      plan.exact = false;
      if (!coarse) {
        plan.rejection = "cannot be partitioned (a two-way split of one of "
                         "its axes does not partition)";
        result.rejected.push_back(plan);
        continue;
      }
      plan.estimate = *coarse;
      // The screen's memory is coarse: a tenth of slack before a plan is
      // set aside without being partitioned.
      if (double(coarse->peakBytes()) > 1.1 * budget) {
        fits(plan);
        plan.rejection = "screened: " + plan.rejection;
        result.rejected.push_back(plan);
        continue;
      }
      screened.push_back(plan);
    }
    llvm::stable_sort(screened,
                      [](const PlanCandidate &a, const PlanCandidate &b) {
                        return a.estimate.seconds() < b.estimate.seconds();
                      });
    size_t next = 0;
    int64_t tried = 0;
    // Best screened first, one at a time, until `finalists` fit or the next
    // screened plan is slower, by more than the screen's error, than the
    // best plan costed exactly (the screen errs by about a fifth on the
    // plans it was checked against; docs/planning.md).
    double bestExact = std::numeric_limits<double>::infinity();
    // In rounds of one plan per thread (the same rounds on every run).
    int64_t width = std::max<int64_t>(1, context->getNumThreads());
    while (next < screened.size() &&
           int64_t(result.ranked.size()) < options.finalists &&
           tried < 4 * options.finalists &&
           screened[next].estimate.seconds() < 1.3 * bestExact) {
      std::vector<PlanCandidate> round;
      while (next < screened.size() && int64_t(round.size()) < width &&
             screened[next].estimate.seconds() < 1.3 * bestExact) {
        round.push_back(screened[next++]);
        round.back().exact = true;
        ++tried;
      }
      size_t before = result.ranked.size();
      exact(round);
      for (size_t i = before; i < result.ranked.size(); ++i)
        bestExact = std::min(bestExact, result.ranked[i].estimate.seconds());
    }
    result.screened.assign(screened.begin() + next, screened.end());
  }
  // Nothing fits and the request left offloading open: the plans that
  // came closest, again with the optimizer's state, the parameters or both
  // in host memory (not under pipeline stages, which offload refuses). The
  // ranking then weighs the host transfers against the other plans' time.
  if (result.ranked.empty() && !options.only && options.offload.empty() &&
      options.offloadToFit) {
    std::vector<PlanCandidate> closest;
    for (const PlanCandidate &plan : result.rejected)
      if (plan.estimate.peakBytes() > 0 &&
          plan.mesh.sizes[partition::MeshAxis::Pipeline] == 1 &&
          StringRef(plan.rejection).contains("needs "))
        closest.push_back(plan);
    llvm::stable_sort(closest,
                      [](const PlanCandidate &a, const PlanCandidate &b) {
                        return a.estimate.peakBytes() < b.estimate.peakBytes();
                      });
    closest.resize(std::min<size_t>(closest.size(), options.finalists));
    std::vector<PlanCandidate> offloaded;
    for (const PlanCandidate &plan : closest)
      for (StringRef what : {"optimizer", "params", "all"}) {
        PlanCandidate moved = plan;
        moved.offload = what.str();
        moved.rejection.clear();
        moved.exact = true;
        offloaded.push_back(moved);
      }
    exact(offloaded);
  }
  auto faster = [](const PlanCandidate &a, const PlanCandidate &b) {
    if (a.estimate.seconds() != b.estimate.seconds())
      return a.estimate.seconds() < b.estimate.seconds();
    return a.estimate.peakBytes() < b.estimate.peakBytes();
  };
  llvm::stable_sort(result.ranked, faster);
  llvm::stable_sort(result.rejected,
                    [](const PlanCandidate &a, const PlanCandidate &b) {
                      return a.estimate.peakBytes() < b.estimate.peakBytes();
                    });
  result.planningSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  // A hand plan is reported whether or not it fits.
  if (result.ranked.empty() && !options.only) {
    // Name the least memory a plan would need, if any could be costed.
    for (const PlanCandidate &plan : result.rejected)
      if (plan.estimate.peakBytes() > 0)
        return llvm::createStringError(llvm::formatv(
            "no plan of {0} devices of '{1}' fits '{2}' in memory: the "
            "smallest peak is {3} bytes per device ({4}), and a device has "
            "{5} bytes, {6:P0} of which the planner uses",
            result.devices, cluster.name, trainName, plan.estimate.peakBytes(),
            plan.describe(), cluster.device.memoryBytes,
            1.0 - options.memoryMargin));
    return llvm::createStringError(llvm::formatv(
        "no plan of {0} devices can partition '{1}'{2}", result.devices,
        trainName,
        result.rejected.empty() ? std::string()
                                : ": " + result.rejected.front().describe() +
                                      " " + result.rejected.front().rejection));
  }
  return result;
}
