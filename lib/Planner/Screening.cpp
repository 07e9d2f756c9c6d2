//===- Screening.cpp - a coarse cost for plans not partitioned ------------===//

#include "Screening.h"

#include "metac/Planner/CollectiveCost.h"

#include <algorithm>

using namespace metac;
using namespace metac::planner;
using partition::MeshAxis;

namespace {

/// The fraction of `whole` that an `r`-way split divides, from the part
/// `split` one rank keeps: split = whole (f / r + 1 - f).
double dividedFraction(double whole, double split, int64_t r) {
  if (whole <= 0 || r <= 1)
    return 1;
  double f = (1 - split / whole) / (1 - 1.0 / double(r));
  return std::clamp(f, 0.0, 1.0);
}

double share(double fraction, int64_t ways) {
  return fraction / double(ways) + (1 - fraction);
}

double roofline(const IterationEstimate &e) {
  return std::max(0.0, e.computeSeconds - e.launchSeconds);
}

double totalBytes(const IterationEstimate &e) {
  double bytes = 0;
  for (auto &[axes, b] : e.bytesPerAxes)
    bytes += b;
  return bytes;
}

double totalCalls(const IterationEstimate &e) {
  double calls = 0;
  for (auto &[axes, c] : e.callsPerAxes)
    calls += c;
  return calls;
}

} // namespace

std::optional<IterationEstimate>
metac::planner::screenPlan(const PlanCandidate &plan,
                           const ScreeningReferences &refs,
                           const ClusterDescription &cluster) {
  const IterationEstimate &one = refs.single;
  const auto &sizes = plan.mesh.sizes;
  for (unsigned a = 0; a < partition::kNumMeshAxes; ++a)
    if (sizes[a] > 1 && !refs.axis[a])
      return std::nullopt;
  int64_t perNode = std::max<int64_t>(cluster.devicesPerNode, 1);
  IterationEstimate e;
  double work = roofline(one), scratch = double(one.scratchBytes),
         persistent = double(one.persistentBytes);
  // Task, data and tensor: each divides a measured fraction of the work and
  // of the memory; the rest is replicated.
  double batchShare = 1;
  for (unsigned a : {MeshAxis::Task, MeshAxis::Data, MeshAxis::Tensor,
                     MeshAxis::Expert, MeshAxis::Sequence}) {
    if (sizes[a] == 1)
      continue;
    const IterationEstimate &ref = *refs.axis[a];
    work *= share(dividedFraction(roofline(one), roofline(ref), refs.size[a]),
                  sizes[a]);
    scratch *= share(dividedFraction(double(one.scratchBytes),
                                     double(ref.scratchBytes), refs.size[a]),
                     sizes[a]);
    persistent *=
        share(dividedFraction(double(one.persistentBytes),
                              double(ref.persistentBytes), refs.size[a]),
              sizes[a]);
    if (a != MeshAxis::Tensor)
      batchShare /= double(sizes[a]);
  }
  double launch = one.launchSeconds;
  // Communication: the reference's collectives of the axis, at this plan's
  // group size and placement; the tensor axis's carry activations, which
  // shrink with the batch each rank holds.
  double comm = 0;
  for (unsigned a : {MeshAxis::Task, MeshAxis::Data, MeshAxis::Tensor,
                     MeshAxis::Expert, MeshAxis::Sequence}) {
    if (sizes[a] == 1)
      continue;
    const IterationEstimate &ref = *refs.axis[a];
    double calls = totalCalls(ref), bytes = totalBytes(ref);
    if (calls <= 0)
      continue;
    // What each collective carries shrinks with the batch a rank holds:
    // the tensor axis's activations with its tasks and samples, the data
    // axis's per-task inner gradients with its tasks; the task axis's
    // reductions are of the parameters.
    double perCall = bytes / calls;
    if (a == MeshAxis::Tensor)
      perCall *= batchShare;
    // The expert axis's all-to-alls carry the slots of a rank's tasks and
    // samples (those of its data group; coarse: the reference's expert
    // traffic also holds reductions that do not shrink with the data axis).
    if (a == MeshAxis::Data || a == MeshAxis::Expert || a == MeshAxis::Sequence)
      perCall /= double(sizes[MeshAxis::Task]);
    if (a == MeshAxis::Expert)
      perCall /= double(sizes[MeshAxis::Data]);
    // Pipeline stages reduce only their own layers' gradients, and run the
    // tensor axis's collectives of their layers once per micro-batch.
    int64_t stages = sizes[MeshAxis::Pipeline];
    if (a == MeshAxis::Tensor && stages > 1) {
      calls *= double(plan.microBatches) / double(stages);
      perCall /= double(plan.microBatches);
    } else if (a == MeshAxis::Data) {
      perCall /= double(stages);
    }
    // The parameters' reduction spans every batch axis (and the stages)
    // at once, which lets it use the links inside a node first.
    unsigned mask = 1u << a;
    if (a == MeshAxis::Task)
      mask = (1u << MeshAxis::Task) | (1u << MeshAxis::Data) |
             (1u << MeshAxis::Expert) | (1u << MeshAxis::Pipeline);
    GroupPlacement group = placeGroup(sizes, mask, perNode);
    Collective kind =
        a == MeshAxis::Expert ? Collective::AllToAll : Collective::AllReduce;
    double seconds =
        calls * estimateCollective(kind, perCall, group, cluster).seconds;
    comm += seconds;
    std::string name = partition::getMeshAxisName(a).str();
    e.bytesPerAxes[name] += perCall * calls;
    e.secondsPerAxes[name] += seconds;
    e.callsPerAxes[name] += calls;
  }
  double busy = work + launch, bubble = 0;
  if (int64_t p = sizes[MeshAxis::Pipeline]; p > 1) {
    const IterationEstimate &ref = *refs.axis[MeshAxis::Pipeline];
    int64_t r = refs.size[MeshAxis::Pipeline];
    int64_t m = plan.microBatches;
    // The reference streams r micro-batches through r stages.
    double f = dividedFraction(roofline(one), roofline(ref), r);
    double fl =
        dividedFraction(one.launchSeconds, ref.launchSeconds / double(r), r);
    double stageWork = work * share(f, p);
    double stageLaunch = launch * double(m) * share(fl, p);
    busy = stageWork + stageLaunch;
    // GPipe and 1F1B leave (p - 1) micro-batch slots of every stage idle.
    bubble = busy * double(p - 1) / double(m);
    scratch *= share(
        dividedFraction(double(one.scratchBytes), double(ref.scratchBytes), r),
        p);
    if (plan.schedule == "1f1b")
      scratch *= double(std::min(p, m)) / double(m);
    double calls = totalCalls(ref), bytes = totalBytes(ref);
    if (calls > 0) {
      double perCall = bytes / calls * double(r) / double(m) * batchShare;
      double sends = calls * double(m) / double(r);
      GroupPlacement pair;
      pair.size = 2;
      double seconds = sends * estimateCollective(Collective::SendRecv, perCall,
                                                  pair, cluster)
                                   .seconds;
      comm += seconds;
      e.bytesPerAxes["pipeline"] += perCall * sends;
      e.secondsPerAxes["pipeline"] += seconds;
      e.callsPerAxes["pipeline"] += sends;
    }
    launch = stageLaunch;
    work = stageWork;
  }
  e.computeSeconds = work + launch;
  e.launchSeconds = launch;
  e.commSeconds = comm;
  e.bubbleSeconds = bubble;
  e.driverSeconds = one.driverSeconds * batchShare;
  e.scratchBytes = uint64_t(scratch);
  e.persistentBytes = uint64_t(persistent);
  e.rankFlops = one.rankFlops * batchShare;
  e.totalFlops = one.totalFlops;
  return e;
}
