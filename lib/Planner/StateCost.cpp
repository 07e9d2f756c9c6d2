//===- StateCost.cpp - offloaded state and parameter servers --------------===//

#include "StateCost.h"

#include "metac/Dialect/NN/IR/NNOps.h"
#include "metac/Planner/CollectiveCost.h"
#include "metac/Planner/OpCost.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <algorithm>

using namespace mlir;
using namespace metac;
using namespace metac::planner;

/// The per-parameter state of `update` (the step count is shared).
static SmallVector<Value> perParameterState(meta::OuterStepOp update) {
  SmallVector<Value> out;
  for (unsigned i = 0, e = update.getParams().size(); i < e; ++i)
    llvm::append_range(out, update.getStateOf(i));
  return out;
}

static uint64_t roundUp(uint64_t bytes) { return (bytes + 63) / 64 * 64; }

/// The parameters in host memory that `op` reads from device copies (as
/// the lowering copies them: not views of them, not the update).
static SmallVector<Value> copiedBy(Operation &op, const OffloadedState &state) {
  SmallVector<Value> values;
  if (isa<func::ReturnOp, meta::OuterStepOp, nn::ReshapeOp, nn::StopGradientOp,
          tensor::ExtractSliceOp>(op))
    return values;
  for (Value v : op.getOperands())
    if (state.params.contains(v) && !llvm::is_contained(values, v))
      values.push_back(v);
  return values;
}

OffloadedState planner::offloadedState(func::FuncOp function) {
  OffloadedState result;
  function.walk([&](meta::OuterStepOp update) {
    if (!update->hasAttr("metac.offload"))
      return;
    for (Value state : perParameterState(update)) {
      result.values.insert(state);
      result.largestBytes =
          std::max(result.largestBytes, tensorBytes(state.getType()));
    }
    // Adam's two moments, SGD's one momentum buffer.
    result.slots = update.getState().size() > update.getParams().size() ? 2 : 1;
    result.prefetchedState = update.prefetchesOffloadedState();
  });
  // --offload=params: the leading arguments, and the views of them.
  if (auto n = function->getAttrOfType<IntegerAttr>("meta.offload_params")) {
    for (int64_t i = 0,
                 e = std::min<int64_t>(n.getInt(), function.getNumArguments());
         i < e; ++i) {
      Value param = function.getArgument(i);
      result.params.insert(param);
    }
    function.walk([&](Operation *op) {
      if (isa<nn::ReshapeOp, nn::StopGradientOp, tensor::ExtractSliceOp>(op) &&
          result.params.contains(op->getOperand(0)))
        result.params.insert(op->getResult(0));
    });
  }
  if (result.params.empty() || !function.getBody().hasOneBlock())
    return result;
  // The lowering keeps an op's copies while the next op's are prefetched
  // (not across an update or a pull), and reuses a copy the op before
  // made: what crosses is what the op before did not read.
  SmallVector<Value> previous;
  for (Operation &op : function.getBody().front()) {
    SmallVector<Value> reads = copiedBy(op, result);
    // While the op before runs: its copies and this op's.
    uint64_t held = 0;
    double crossing = 0;
    for (Value v : previous)
      held += roundUp(tensorBytes(v.getType()));
    for (Value v : reads)
      if (!llvm::is_contained(previous, v)) {
        held += roundUp(tensorBytes(v.getType()));
        crossing += double(tensorBytes(v.getType()));
      }
    result.paramCopyBytes = std::max(result.paramCopyBytes, held);
    if (crossing > 0)
      result.crossingBytes[&op] = crossing;
    previous = isa<meta::OuterStepOp, meta::ServerStepOp>(op)
                   ? SmallVector<Value>()
                   : reads;
  }
  return result;
}

double planner::offloadedReadSeconds(Operation *op, const OffloadedState &state,
                                     const DeviceDescription &device) {
  return state.crossingBytes.lookup(op) / device.hostBandwidthOrDefault();
}

double planner::offloadTransferSeconds(meta::OuterStepOp update,
                                       const DeviceDescription &device) {
  bool state = update->hasAttr("metac.offload");
  bool params = update->hasAttr("metac.offload_params");
  bool stateAhead = update.prefetchesOffloadedState();
  // Per parameter, in the order the update stages them: the bytes
  // prefetched (in, and back out after its update), and those copied in
  // and out in turn.
  SmallVector<unsigned> order = update.getStagingOrder();
  size_t n = order.size();
  SmallVector<double> ahead(n + 1, 0.0);
  double inTurn = 0;
  for (size_t p = 0; p < n; ++p) {
    if (state)
      for (Value v : update.getStateOf(order[p])) {
        double bytes = double(tensorBytes(v.getType()));
        if (stateAhead)
          ahead[p] += bytes;
        else
          inTurn += 2 * bytes;
      }
    if (params)
      ahead[p] += double(tensorBytes(update.getParams()[order[p]].getType()));
  }
  double bytes = inTurn + ahead[0];
  for (size_t i = 0; i < n; ++i)
    bytes += std::max(ahead[i], ahead[i + 1]);
  return bytes / device.hostBandwidthOrDefault();
}

ServerTraffic planner::serverTraffic(meta::ServerStepOp step,
                                     ArrayRef<int64_t> mesh,
                                     const ClusterDescription &cluster) {
  // Each server takes every worker's push of its slice and sends each the
  // slice back, one message per worker each way over its own link (the
  // incast that makes servers scale with their count). They are ranks
  // beyond the mesh: on other nodes once the mesh fills its own.
  double bytes = 0;
  for (Value p : step.getParams())
    bytes += double(tensorBytes(p.getType()));
  int64_t workers = 1;
  for (int64_t size : mesh)
    workers *= size;
  int64_t perNode = std::max<int64_t>(cluster.devicesPerNode, 1);
  GroupPlacement pair;
  pair.size = 2;
  pair.nodes = workers + int64_t(step.getServers()) > perNode ? 2 : 1;
  pair.perNode = pair.nodes == 1 ? 2 : 1;
  double slice = bytes / double(step.getServers());
  ServerTraffic traffic;
  traffic.bytes = 2 * bytes;
  traffic.seconds =
      2 * double(workers) *
      estimateCollective(Collective::SendRecv, slice, pair, cluster).seconds;
  return traffic;
}
