//===- AutoPlan.cpp - the driver's use of the planner ---------------------===//

#include "AutoPlan.h"

#include "metac/Dialect/Meta/IR/MetaOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace metac;
using namespace metac::driver;
using namespace metac::planner;

namespace {

bool wantsPlanner(meta::TrainOp train, const PlanRequest &request) {
  return request.allTrainings || train->hasAttr("meta.plan_auto");
}

/// The cluster description for `train`: --cluster, else the spec's
/// (`quiet`: without reporting why there is none).
std::optional<ClusterDescription> clusterFor(meta::TrainOp train,
                                             const PlanRequest &request,
                                             bool quiet = false) {
  std::string path = request.clusterFile;
  if (path.empty())
    if (auto spec = train->getAttrOfType<StringAttr>("meta.plan_cluster")) {
      llvm::SmallString<256> resolved(spec.getValue());
      if (llvm::sys::path::is_relative(resolved)) {
        resolved = request.specDirectory;
        llvm::sys::path::append(resolved, spec.getValue());
      }
      path = std::string(resolved);
    }
  if (path.empty()) {
    if (quiet)
      return std::nullopt;
    train.emitError() << "automatic planning of '" << train.getSymName()
                      << "' needs a cluster description: give "
                         "--cluster=FILE or write parallel { auto, cluster = "
                         "\"FILE\" }";
    return std::nullopt;
  }
  std::string errors;
  llvm::raw_string_ostream os(errors);
  std::optional<ClusterDescription> cluster =
      readClusterDescriptionFile(path, os);
  if (!cluster && !quiet) {
    llvm::errs() << errors;
    train.emitError() << "cannot plan '" << train.getSymName()
                      << "': the cluster description '" << path
                      << "' is not valid (see above)";
  }
  return cluster;
}

llvm::Expected<PlanResult> plan(ModuleOp module, meta::TrainOp train,
                                const ClusterDescription &cluster,
                                const PlanRequest &request) {
  return planTraining(module, train.getSymName(), cluster, request.options);
}

std::string mib(double bytes) {
  if (bytes >= double(1ull << 30))
    return llvm::formatv("{0:F2} GiB", bytes / double(1ull << 30)).str();
  return llvm::formatv("{0:F2} MiB", bytes / double(1 << 20)).str();
}

std::string axesBytes(const IterationEstimate &e) {
  std::string text;
  for (auto &[axes, bytes] : e.bytesPerAxes) {
    if (!text.empty())
      text += ", ";
    text += axes + " " + mib(bytes);
  }
  return text.empty() ? "-" : text;
}

/// Why the winner wins: against the runner-up, the parts of the time that
/// differ most; and the faster plans that memory excluded.
void explain(const PlanResult &result, llvm::raw_ostream &os) {
  const PlanCandidate &best = result.ranked.front();
  const IterationEstimate &b = best.estimate;
  os << "chosen: " << best.describe() << ", "
     << llvm::formatv("{0:F3}", b.seconds() * 1e3) << " ms per meta-iteration, "
     << mib(double(b.peakBytes())) << " per device";
  if (result.ranked.size() > 1) {
    const PlanCandidate &next = result.ranked[1];
    const IterationEstimate &n = next.estimate;
    os << llvm::formatv(", {0:F2}x faster than {1}", n.seconds() / b.seconds(),
                        next.describe());
    struct Part {
      const char *what;
      double delta;
    } parts[] = {{"compute", n.computeSeconds - b.computeSeconds},
                 {"communication", n.commSeconds - b.commSeconds},
                 {"pipeline bubble", n.bubbleSeconds - b.bubbleSeconds},
                 {"batch drawing", n.driverSeconds - b.driverSeconds}};
    llvm::sort(parts, [](const Part &x, const Part &y) {
      return std::abs(x.delta) > std::abs(y.delta);
    });
    // The parts that make most of the difference (a tenth of it or more).
    double gap = std::abs(n.seconds() - b.seconds());
    os << " (";
    for (int i = 0; i < 4; ++i) {
      if (i > 0 && std::abs(parts[i].delta) < 0.1 * gap)
        break;
      os << (i ? ", " : "")
         << llvm::formatv("{0:F3} ms {1} {2}", std::abs(parts[i].delta) * 1e3,
                          parts[i].delta >= 0 ? "less" : "more", parts[i].what);
    }
    os << ")";
  }
  os << "\n";
  for (const PlanCandidate &r : result.rejected)
    if (r.estimate.peakBytes() > 0 && r.estimate.seconds() < b.seconds()) {
      os << "  faster but set aside: " << r.describe() << " ("
         << llvm::formatv("{0:F3}", r.estimate.seconds() * 1e3)
         << " ms): " << r.rejection << "\n";
      break;
    }
}

void printTable(StringRef train, const ClusterDescription &cluster,
                const PlanResult &result, llvm::raw_ostream &os) {
  size_t exact = result.ranked.size();
  for (const PlanCandidate &p : result.rejected)
    exact += p.exact;
  os << llvm::formatv("plans for '{0}' on '{1}' ({2} devices): {3} plans, "
                      "{4} partitioned and costed, {5} fit; in {6:F2} s\n",
                      train, cluster.name, result.devices,
                      result.ranked.size() + result.rejected.size() +
                          result.screened.size(),
                      exact, result.ranked.size(), result.planningSeconds);
  os << llvm::formatv("{0,4}  {1,-40} {2,10} {3,9} {4,9} {5,9} {6,9} {7,12}  "
                      "{8}\n",
                      "#", "plan", "ms/iter", "compute", "comm", "bubble",
                      "driver", "peak/device", "communicated per rank");
  int index = 0;
  for (const PlanCandidate &p : result.ranked) {
    const IterationEstimate &e = p.estimate;
    os << llvm::formatv(
        "{0,4}  {1,-40} {2,10:F3} {3,9:F3} {4,9:F3} {5,9:F3} {6,9:F3} "
        "{7,12}  {8}\n",
        ++index, p.describe(), e.seconds() * 1e3, e.computeSeconds * 1e3,
        e.commSeconds * 1e3, e.bubbleSeconds * 1e3, e.driverSeconds * 1e3,
        mib(double(e.peakBytes())), axesBytes(e));
  }
  if (!result.screened.empty()) {
    os << result.screened.size()
       << " more plans fit by the screening estimate (slower; not "
          "partitioned), the best:\n";
    for (const PlanCandidate &p :
         ArrayRef<PlanCandidate>(result.screened).take_front(3))
      os << "  " << p.describe() << ": about "
         << llvm::formatv("{0:F3}", p.estimate.seconds() * 1e3) << " ms, "
         << mib(double(p.estimate.peakBytes())) << "\n";
  }
  if (!result.rejected.empty()) {
    os << "set aside (" << result.rejected.size() << "):\n";
    size_t shown = 0;
    for (const PlanCandidate &p : result.rejected)
      if (shown++ < 12)
        os << "  " << p.describe() << ": " << p.rejection << "\n";
    if (shown > 12)
      os << "  ... and " << shown - 12 << " more (--format=json lists all)\n";
  }
  if (!result.ranked.empty())
    explain(result, os);
}

llvm::json::Object toJson(const PlanCandidate &p, bool fits) {
  const IterationEstimate &e = p.estimate;
  llvm::json::Object axes, axesSeconds;
  for (auto &[name, bytes] : e.bytesPerAxes)
    axes[name] = bytes;
  for (auto &[name, seconds] : e.secondsPerAxes)
    axesSeconds[name] = seconds * 1e3;
  llvm::json::Object o{{"mesh", p.meshString()},
                       {"micro_batches", p.microBatches},
                       {"schedule", p.schedule.empty() ? "none" : p.schedule},
                       {"offload", p.offload.empty() ? "none" : p.offload},
                       {"fits", fits},
                       {"exact", p.exact},
                       {"predicted_ms", e.seconds() * 1e3},
                       {"compute_ms", e.computeSeconds * 1e3},
                       {"comm_ms", e.commSeconds * 1e3},
                       {"bubble_ms", e.bubbleSeconds * 1e3},
                       {"driver_ms", e.driverSeconds * 1e3},
                       {"peak_bytes", int64_t(e.peakBytes())},
                       {"persistent_bytes", int64_t(e.persistentBytes)},
                       {"scratch_bytes", int64_t(e.scratchBytes)},
                       {"flops_per_rank", e.rankFlops},
                       {"calls", e.calls},
                       {"bytes_per_axes", std::move(axes)},
                       {"comm_ms_per_axes", std::move(axesSeconds)}};
  llvm::json::Object ops;
  for (auto &[name, entry] : e.perOp)
    ops[name] =
        llvm::json::Object{{"calls", entry.first}, {"ms", entry.second * 1e3}};
  o["ops"] = std::move(ops);
  if (!fits)
    o["rejected"] = p.rejection;
  return o;
}

} // namespace

bool metac::driver::needsPlanner(ModuleOp module, const PlanRequest &request) {
  bool needed = false;
  module.walk(
      [&](meta::TrainOp train) { needed |= wantsPlanner(train, request); });
  return needed;
}

bool metac::driver::plansFit(ModuleOp module, const PlanRequest &given) {
  // Whether recomputation is needed: without offloading, which the final
  // planning tries only when no recomputation fits either.
  PlanRequest request = given;
  request.options.offloadToFit = false;
  for (auto train : module.getOps<meta::TrainOp>()) {
    if (!wantsPlanner(train, request))
      continue;
    std::optional<ClusterDescription> cluster =
        clusterFor(train, request, /*quiet=*/true);
    if (!cluster)
      return false;
    llvm::Expected<PlanResult> result = plan(module, train, *cluster, request);
    if (!result) {
      llvm::consumeError(result.takeError());
      return false;
    }
  }
  return true;
}

LogicalResult metac::driver::applyAutomaticPlans(ModuleOp module,
                                                 const PlanRequest &request) {
  for (auto train : llvm::to_vector(module.getOps<meta::TrainOp>())) {
    if (!wantsPlanner(train, request))
      continue;
    std::optional<ClusterDescription> cluster = clusterFor(train, request);
    if (!cluster)
      return failure();
    llvm::Expected<PlanResult> result = plan(module, train, *cluster, request);
    if (!result)
      return train.emitError()
             << "automatic planning of '" << train.getSymName()
             << "' failed: " << llvm::toString(result.takeError());
    const PlanCandidate &best = result->ranked.front();
    Builder b(train.getContext());
    const auto &s = best.mesh.sizes;
    meta::PipelineSchedule schedule =
        meta::symbolizePipelineSchedule(best.schedule)
            .value_or(meta::PipelineSchedule::GPipe);
    train.setPlanAttr(meta::PlanAttr::get(b.getContext(), s[0], s[1], s[2],
                                          s[3], s[4], s[5], best.microBatches,
                                          schedule));
    if (!best.balance.empty())
      train->setAttr("meta.balance", b.getStringAttr(best.balance));
    // Host memory the plan needed to fit (read by meta-offload).
    if (!best.offload.empty())
      train->setAttr("meta.offload", b.getStringAttr(best.offload));
    const IterationEstimate &e = best.estimate;
    SmallVector<NamedAttribute> chosen{
        b.getNamedAttr("cluster", b.getStringAttr(cluster->name)),
        b.getNamedAttr("devices", b.getI64IntegerAttr(result->devices)),
        b.getNamedAttr("plans_costed",
                       b.getI64IntegerAttr(result->ranked.size() +
                                           result->rejected.size())),
        b.getNamedAttr("predicted_ms", b.getF64FloatAttr(e.seconds() * 1e3)),
        b.getNamedAttr("peak_bytes",
                       b.getI64IntegerAttr(int64_t(e.peakBytes())))};
    // Recomputation the plan needed to fit (meta-autodiff's `remat`).
    if (request.remat != 0)
      chosen.push_back(
          b.getNamedAttr("remat", b.getI64IntegerAttr(request.remat)));
    if (!best.offload.empty())
      chosen.push_back(
          b.getNamedAttr("offload", b.getStringAttr(best.offload)));
    train->setAttr("meta.auto_plan", b.getDictionaryAttr(chosen));
    train->removeAttr("meta.plan_auto");
  }
  return success();
}

LogicalResult metac::driver::printPlans(ModuleOp module,
                                        const PlanRequest &request, bool json,
                                        llvm::raw_ostream &os) {
  llvm::json::Array all;
  for (auto train : llvm::to_vector(module.getOps<meta::TrainOp>())) {
    std::optional<ClusterDescription> cluster = clusterFor(train, request);
    if (!cluster)
      return failure();
    llvm::Expected<PlanResult> result = plan(module, train, *cluster, request);
    if (!result)
      return train.emitError() << "cannot plan '" << train.getSymName()
                               << "': " << llvm::toString(result.takeError());
    if (!json) {
      printTable(train.getSymName(), *cluster, *result, os);
      continue;
    }
    for (const PlanCandidate &p : result->ranked)
      all.push_back(toJson(p, true));
    for (const PlanCandidate &p : result->screened)
      all.push_back(toJson(p, true));
    for (const PlanCandidate &p : result->rejected)
      all.push_back(toJson(p, false));
  }
  if (json)
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(all))) << "\n";
  return success();
}
