//===- Placement.h - oversubscribed ranks pinned to cores -------*- C++ -*-===//
//
// When a job's ranks outnumber the cores they may run on (every rank on
// this host, a multiple of the cores), each rank is pinned to one core,
// the ranks ordered pipeline stage first, so that every core hosts the
// same mix of stages. Left to the kernel, ranks polling for messages look
// as busy as computing ones, two computing stages can share a core while
// the other core only polls, and the same pipeline ran 1.2 to 1.7 s per
// meta-iteration from run to run; pinned this way it runs at the best of
// those, every time. The cost model mirrors the rule (one core per rank's
// position), so it is stated in one place: here.
//
//===----------------------------------------------------------------------===//

#ifndef METART_COMM_PLACEMENT_H
#define METART_COMM_PLACEMENT_H

#include "metart/comm.h"

#include <cstdint>
#include <string>
#include <vector>

namespace metart::comm {

/// The core index (0 .. cores - 1) of the rank at `rank` of a one-host job
/// of `ranks` ranks laid out row-major over `mesh` (pipeline last), or -1
/// when the ranks are not pinned (no more ranks than cores, or not a
/// multiple of them).
int64_t pinnedCoreIndex(const int64_t mesh[METART_NUM_AXES], int64_t rank,
                        int64_t ranks, int64_t cores);

/// The CPUs this process could run on before any pinning (its affinity
/// mask when first asked: pinning asks first, so a later mesh is placed
/// over the same cores).
const std::vector<int> &coresBeforePinning();

/// Pins this process's threads to its core by `pinnedCoreIndex` when every
/// rank of the world runs on this host and METART_BIND is not `none`.
/// Returns a description of what failed, or "".
std::string pinOversubscribedRank(const int64_t mesh[METART_NUM_AXES]);

} // namespace metart::comm

#endif // METART_COMM_PLACEMENT_H
