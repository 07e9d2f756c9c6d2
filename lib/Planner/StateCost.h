//===- StateCost.h - where the outer optimizer's state lives ----*- C++ -*-===//
//
// The costs of the options that move the outer optimizer's state or the
// parameters off a rank's device: offloading the state to host memory
// (--offload=optimizer), which frees its device memory at two host-link
// crossings per update; offloading the parameters (--offload=params), one
// crossing per op that reads one and two per update; and
// parameter servers (meta.server_step), which hold it on ranks of their
// own at one message per worker each way through every server's link.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_LIB_PLANNER_STATECOST_H
#define METAC_LIB_PLANNER_STATECOST_H

#include "metac/Dialect/Meta/IR/MetaOps.h"
#include "metac/Planner/ClusterDescription.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace metac::planner {

/// The state `function`'s offloaded outer updates keep in host memory, and
/// the staging area the device holds at an update instead: `slots` times
/// the largest parameter's state (before alignment).
struct OffloadedState {
  llvm::DenseSet<mlir::Value> values;
  uint64_t largestBytes = 0;
  uint64_t slots = 0;
  /// Whether the update prefetches it into a second staging area.
  bool prefetchedState = false;
  /// --offload=params: the parameter arguments (and views of them) in host
  /// memory, the most their device copies take at once (an op's and the
  /// next op's, prefetched), and per op the bytes that cross to the device
  /// for it (not those the op before read).
  llvm::DenseSet<mlir::Value> params;
  uint64_t paramCopyBytes = 0;
  llvm::DenseMap<mlir::Operation *, double> crossingBytes;
};
OffloadedState offloadedState(mlir::func::FuncOp function);

/// Seconds an offloaded update spends moving its state and parameters in
/// and out over the host link, exposed (0 for one that is not offloaded):
/// a prefetched parameter's copy in crosses while the previous one's goes
/// back (a full-duplex link), the first's in and the last's out alone.
double offloadTransferSeconds(meta::OuterStepOp update,
                              const DeviceDescription &device);

/// Seconds `op` spends copying the offloaded parameters it reads to the
/// device (0 for a view of one, or an op that reads none).
double offloadedReadSeconds(mlir::Operation *op, const OffloadedState &state,
                            const DeviceDescription &device);

/// Bytes a worker sends and receives through the servers per step, and
/// the seconds that takes on a mesh of `mesh`'s sizes.
struct ServerTraffic {
  double bytes = 0, seconds = 0;
};
ServerTraffic serverTraffic(meta::ServerStepOp step,
                            llvm::ArrayRef<int64_t> mesh,
                            const ClusterDescription &cluster);

} // namespace metac::planner

#endif // METAC_LIB_PLANNER_STATECOST_H
