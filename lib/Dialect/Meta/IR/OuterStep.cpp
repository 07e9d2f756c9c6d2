//===- OuterStep.cpp - meta.outer_step's state per parameter --------------===//
//
// Which state belongs to which parameter, and how an offloaded update
// stages it: shared by the lowering, which emits the copies, and the
// planner, which costs them.
//
//===----------------------------------------------------------------------===//

#include "metac/Dialect/Meta/IR/MetaOps.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace metac::meta;

SmallVector<Value, 2> OuterStepOp::getStateOf(unsigned i) {
  size_t n = getParams().size();
  if (!isa<SGDAttr>(getOptimizer()))
    return {getState()[i], getState()[n + i]};
  if (!cast<SGDAttr>(getOptimizer()).getMomentum().isZero())
    return {getState()[i]};
  return {};
}

/// Bytes of `type` rounded to whole cache lines, as staged.
static int64_t stagedBytes(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  int64_t size =
      tensor.getNumElements() * int64_t(tensor.getElementTypeBitWidth() / 8);
  return (size + 63) / 64 * 64;
}

SmallVector<unsigned> OuterStepOp::getStagingOrder() {
  unsigned n = getParams().size();
  SmallVector<unsigned> order(n);
  SmallVector<int64_t> bytes(n, 0);
  bool state = (*this)->hasAttr("metac.offload");
  bool params = (*this)->hasAttr("metac.offload_params");
  for (unsigned i = 0; i < n; ++i) {
    order[i] = i;
    if (state)
      for (Value v : getStateOf(i))
        bytes[i] += stagedBytes(v.getType());
    if (params)
      bytes[i] += stagedBytes(getParams()[i].getType());
  }
  llvm::stable_sort(
      order, [&](unsigned a, unsigned b) { return bytes[a] > bytes[b]; });
  return order;
}

bool OuterStepOp::prefetchesOffloadedState() {
  if (!(*this)->hasAttr("metac.offload"))
    return false;
  unsigned n = getParams().size();
  int64_t slot = 0, total = 0, slots = 0;
  SmallVector<int64_t> perParam(n + 1, 0);
  SmallVector<unsigned> order = getStagingOrder();
  for (unsigned p = 0; p < n; ++p) {
    SmallVector<Value, 2> state = getStateOf(order[p]);
    slots = std::max<int64_t>(slots, int64_t(state.size()));
    for (Value v : state) {
      slot = std::max(slot, stagedBytes(v.getType()));
      perParam[p] += stagedBytes(v.getType());
    }
    total += perParam[p];
  }
  // In turn, each state crosses in and back out; prefetched, one's way in
  // shares the link's time with the previous one's way out (full duplex).
  int64_t exposed = perParam[0];
  for (unsigned i = 0; i < n; ++i)
    exposed += std::max(perParam[i], perParam[i + 1]);
  return slots > 0 && 4 * slots * slot <= total && 5 * exposed <= 4 * 2 * total;
}
