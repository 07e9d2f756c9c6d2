//===- CollectiveCost.h - α–β time of collectives on a cluster --*- C++ -*-===//
//
// The time of one collective over a group of devices (ARCHITECTURE §5):
// where the group sits (devices per node, nodes spanned) decides which
// links it crosses; a calibrated fit of the cluster (metac calibrate) is
// used when one matches, otherwise the links' α (latency) and β
// (bandwidth) with the algorithm that is fastest for the message, as NCCL
// and MPI choose: ring, tree, or hierarchical (reduce-scatter inside
// nodes, ring across them on every rail, all-gather inside).
//
//===----------------------------------------------------------------------===//

#ifndef METAC_PLANNER_COLLECTIVECOST_H
#define METAC_PLANNER_COLLECTIVECOST_H

#include "metac/Planner/ClusterDescription.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace metac::planner {

enum class Collective {
  AllReduce,
  AllGather,
  ReduceScatter,
  Broadcast,
  SendRecv,
  AllToAll
};

/// The name a cluster file's `collective_fits` use for `kind`.
llvm::StringRef stringifyCollective(Collective kind);

/// Where a group of devices sits: `size` devices, `perNode` of them on
/// each of `nodes` nodes.
struct GroupPlacement {
  int64_t size = 1, perNode = 1, nodes = 1;
  bool crossesNodes() const { return nodes > 1; }
};

/// The group of rank 0 along the mesh axes in `axesMask` (bit i: axis i)
/// of a mesh of `sizes` (ranks row-major, the last axis fastest), with
/// consecutive ranks filling nodes of `devicesPerNode` devices.
GroupPlacement placeGroup(llvm::ArrayRef<int64_t> sizes, unsigned axesMask,
                          int64_t devicesPerNode);

struct CollectiveTime {
  double seconds = 0;
  /// ring, tree, hierarchical, direct or calibrated.
  llvm::StringRef algorithm;
};

/// The time of `kind` on `bytes` per rank (the operand; for all-gather the
/// gathered result) over `group`. `allReduce` forces an all-reduce's
/// algorithm (ring, tree or hierarchical: `--allreduce`, costed by its α–β
/// formula); empty or `library`: the fastest, or the measured time.
CollectiveTime estimateCollective(Collective kind, double bytes,
                                  const GroupPlacement &group,
                                  const ClusterDescription &cluster,
                                  llvm::StringRef allReduce = "");

} // namespace metac::planner

#endif // METAC_PLANNER_COLLECTIVECOST_H
