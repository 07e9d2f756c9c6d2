//===- CollectiveCost.cpp - α–β time of collectives on a cluster ----------===//

#include "metac/Planner/CollectiveCost.h"

#include "llvm/ADT/DenseSet.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

using namespace metac::planner;

llvm::StringRef metac::planner::stringifyCollective(Collective kind) {
  switch (kind) {
  case Collective::AllReduce:
    return "all_reduce";
  case Collective::AllGather:
    return "all_gather";
  case Collective::ReduceScatter:
    return "reduce_scatter";
  case Collective::Broadcast:
    return "broadcast";
  case Collective::SendRecv:
    return "send_recv";
  case Collective::AllToAll:
    return "all_to_all";
  }
  return "";
}

GroupPlacement metac::planner::placeGroup(llvm::ArrayRef<int64_t> sizes,
                                          unsigned axesMask,
                                          int64_t devicesPerNode) {
  // Strides of the row-major rank layout; the group of rank 0 is every
  // combination of coordinates along the masked axes.
  std::vector<int64_t> stride(sizes.size(), 1);
  for (int i = int(sizes.size()) - 2; i >= 0; --i)
    stride[i] = stride[i + 1] * sizes[i + 1];
  std::vector<int64_t> ranks{0};
  for (size_t axis = 0; axis < sizes.size(); ++axis) {
    if (!(axesMask & (1u << axis)) || sizes[axis] == 1)
      continue;
    std::vector<int64_t> grown;
    for (int64_t r : ranks)
      for (int64_t c = 0; c < sizes[axis]; ++c)
        grown.push_back(r + c * stride[axis]);
    ranks = std::move(grown);
  }
  llvm::DenseSet<int64_t> nodes;
  for (int64_t r : ranks)
    nodes.insert(r / std::max<int64_t>(devicesPerNode, 1));
  GroupPlacement group;
  group.size = int64_t(ranks.size());
  group.nodes = int64_t(nodes.size());
  group.perNode = (group.size + group.nodes - 1) / group.nodes;
  return group;
}

namespace {

struct Link {
  double alpha, beta;
};

/// The links of `level`, else of the other level, else a slow default (a
/// description always has one: the reader checks it).
Link linkOf(const ClusterDescription &cluster, LinkLevel level) {
  const LinkDescription *link = cluster.link(level);
  if (!link)
    link = cluster.link(level == LinkLevel::Node ? LinkLevel::Cluster
                                                 : LinkLevel::Node);
  if (!link || link->bandwidth <= 0)
    return {1e-5, 1e9};
  return {link->latency, link->bandwidth};
}

/// Ring of `g` devices moving `factor` · S over links `l` in `steps` steps.
double ring(double steps, double bytesPerStep, Link l) {
  return steps * (l.alpha + bytesPerStep / l.beta);
}

double flat(Collective kind, double bytes, int64_t g, Link l,
            llvm::StringRef &algorithm) {
  double n = double(g);
  double log2g = std::ceil(std::log2(n));
  switch (kind) {
  case Collective::AllReduce: {
    double ringTime = ring(2 * (n - 1), bytes / n, l);
    double treeTime = 2 * log2g * l.alpha + 2 * bytes / l.beta;
    algorithm = ringTime <= treeTime ? "ring" : "tree";
    return std::min(ringTime, treeTime);
  }
  case Collective::AllGather:
  case Collective::ReduceScatter:
    algorithm = "ring";
    return ring(n - 1, bytes / n, l);
  case Collective::Broadcast:
    algorithm = "tree";
    return log2g * l.alpha + bytes / l.beta;
  case Collective::SendRecv:
    algorithm = "direct";
    return l.alpha + bytes / l.beta;
  case Collective::AllToAll:
    // n - 1 pairwise exchanges of one part each.
    algorithm = "pairwise";
    return ring(n - 1, bytes / n, l);
  }
  return 0;
}

/// A calibrated fit for `kind` over exactly `group.size` devices on the
/// same level, if the description has one.
const CollectiveFit *findFit(const ClusterDescription &cluster, Collective kind,
                             const GroupPlacement &group) {
  LinkLevel level = group.crossesNodes() ? LinkLevel::Cluster : LinkLevel::Node;
  int64_t size = kind == Collective::SendRecv ? 2 : group.size;
  for (const CollectiveFit &fit : cluster.collectiveFits)
    if (fit.collective == stringifyCollective(kind) && fit.group == size &&
        fit.placement == level)
      return &fit;
  return nullptr;
}

/// nccl-tests' bus-bandwidth factor: busbw = bytes / time * factor.
double busFactor(Collective kind, double n) {
  switch (kind) {
  case Collective::AllReduce:
    return 2 * (n - 1) / n;
  case Collective::AllGather:
  case Collective::ReduceScatter:
  case Collective::AllToAll:
    return (n - 1) / n;
  case Collective::Broadcast:
  case Collective::SendRecv:
    return 1;
  }
  return 1;
}

/// The time from a measured table of `kind` over the group, if one
/// matches: the bus bandwidth interpolated in log(bytes); below the
/// smallest size, the smallest size's time (a latency floor); above the
/// largest, the largest's bandwidth.
std::optional<double> fromTable(const ClusterDescription &cluster,
                                Collective kind, double bytes,
                                const GroupPlacement &group) {
  LinkLevel level = group.crossesNodes() ? LinkLevel::Cluster : LinkLevel::Node;
  int64_t size = kind == Collective::SendRecv ? 2 : group.size;
  for (const CollectiveTable &t : cluster.collectives) {
    if (t.collective != stringifyCollective(kind) || t.group != size ||
        t.placement != level || t.bytes.empty())
      continue;
    double factor = busFactor(kind, double(size));
    auto timeAt = [&](size_t i, double b) {
      return b * factor / t.busBandwidth[i];
    };
    if (bytes <= t.bytes.front())
      return timeAt(0, t.bytes.front());
    if (bytes >= t.bytes.back())
      return timeAt(t.bytes.size() - 1, bytes);
    size_t i = 1;
    while (t.bytes[i] < bytes)
      ++i;
    double w = std::log(bytes / t.bytes[i - 1]) /
               std::log(t.bytes[i] / t.bytes[i - 1]);
    double busbw = std::exp(std::log(t.busBandwidth[i - 1]) * (1 - w) +
                            std::log(t.busBandwidth[i]) * w);
    return bytes * factor / busbw;
  }
  return std::nullopt;
}

} // namespace

/// An all-reduce by the algorithm `--allreduce` forces, on the links the
/// group crosses.
CollectiveTime forcedAllReduce(llvm::StringRef algorithm, double bytes,
                               const GroupPlacement &group,
                               const ClusterDescription &cluster) {
  Link node = linkOf(cluster, LinkLevel::Node);
  Link net = linkOf(cluster, LinkLevel::Cluster);
  Link slowest = group.crossesNodes() ? Link{std::max(node.alpha, net.alpha),
                                             std::min(node.beta, net.beta)}
                                      : node;
  double n = double(group.size);
  CollectiveTime time;
  time.algorithm = algorithm;
  if (algorithm == "tree") {
    double log2n = std::ceil(std::log2(n));
    time.seconds = 2 * log2n * slowest.alpha + 2 * log2n * bytes / slowest.beta;
  } else if (algorithm == "hierarchical" && group.crossesNodes()) {
    double g = double(group.perNode), nodes = double(group.nodes);
    time.seconds = (g > 1 ? 2 * ring(g - 1, bytes / g, node) : 0) +
                   ring(2 * (nodes - 1), bytes / (g * nodes), net);
  } else {
    time.seconds = ring(2 * (n - 1), bytes / n, slowest);
  }
  return time;
}

CollectiveTime metac::planner::estimateCollective(
    Collective kind, double bytes, const GroupPlacement &group,
    const ClusterDescription &cluster, llvm::StringRef allReduce) {
  CollectiveTime time;
  if (group.size <= 1 && kind != Collective::SendRecv) {
    time.algorithm = "none";
    return time;
  }
  if (kind == Collective::AllReduce && !allReduce.empty() &&
      allReduce != "library")
    return forcedAllReduce(allReduce, bytes, group, cluster);
  if (std::optional<double> measured = fromTable(cluster, kind, bytes, group)) {
    time.seconds = *measured;
    time.algorithm = "measured";
    return time;
  }
  if (const CollectiveFit *fit = findFit(cluster, kind, group)) {
    time.seconds = fit->alpha + bytes / fit->beta;
    time.algorithm = "calibrated";
    return time;
  }
  Link node = linkOf(cluster, LinkLevel::Node);
  if (!group.crossesNodes()) {
    time.seconds = flat(kind, bytes, group.size, node, time.algorithm);
    return time;
  }
  Link net = linkOf(cluster, LinkLevel::Cluster);
  // A flat algorithm over every device runs at the slowest link's pace.
  Link slowest{std::max(node.alpha, net.alpha), std::min(node.beta, net.beta)};
  llvm::StringRef flatAlgorithm;
  double flatTime = flat(kind, bytes, group.size, slowest, flatAlgorithm);
  if (kind == Collective::SendRecv) {
    time.seconds = net.alpha + bytes / net.beta;
    time.algorithm = "direct";
    return time;
  }
  // Hierarchical: inside each node first (on its fast links), then across
  // nodes on each device's share (every device has its own rail), then
  // inside again.
  double g = double(group.perNode), nodes = double(group.nodes);
  double hier = std::numeric_limits<double>::infinity();
  llvm::StringRef ignored;
  switch (kind) {
  case Collective::AllReduce:
    hier = (g > 1 ? 2 * ring(g - 1, bytes / g, node) : 0) +
           flat(Collective::AllReduce, bytes / g, group.nodes, net, ignored);
    break;
  case Collective::AllGather:
  case Collective::ReduceScatter:
    hier = (g > 1 ? ring(g - 1, bytes / (g * nodes), node) : 0) +
           ring(nodes - 1, bytes / (g * nodes), net);
    break;
  case Collective::Broadcast:
    hier = flat(kind, bytes, group.nodes, net, ignored) +
           (g > 1 ? flat(kind, bytes, group.perNode, node, ignored) : 0);
    break;
  case Collective::SendRecv:
  case Collective::AllToAll: // every pair exchanges: no two-level form
    break;
  }
  if (hier < flatTime) {
    time.seconds = hier;
    time.algorithm = "hierarchical";
  } else {
    time.seconds = flatTime;
    time.algorithm = flatAlgorithm;
  }
  return time;
}
