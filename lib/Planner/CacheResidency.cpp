//===- CacheResidency.cpp - which bytes an op finds in cache --------------===//

#include "metac/Planner/CacheResidency.h"

#include "metac/Dialect/NN/IR/NNOps.h"
#include "metac/Planner/OpCost.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/SetVector.h"

#include <algorithm>
#include <cmath>
#include <vector>

using namespace mlir;
using namespace metac;
using namespace metac::planner;

namespace {

double bytesOf(Type type) { return double(tensorBytes(type)); }

/// Ops whose result is their operand's buffer (no call touches it).
bool isView(Operation *op) {
  return isa<nn::ReshapeOp, nn::StopGradientOp, tensor::ExtractSliceOp>(op);
}

/// Sums of bytes by touch time (a Fenwick tree): each buffer's bytes sit
/// at its latest touch, so the bytes touched after time t are the distinct
/// buffers touched since.
class TouchTimeline {
public:
  explicit TouchTimeline(size_t size) : tree(size + 1, 0) {}
  void add(size_t time, double bytes) {
    for (size_t i = time + 1; i < tree.size(); i += i & -i)
      tree[i] += bytes;
  }
  /// Bytes at times [0, time].
  double upTo(size_t time) const {
    double sum = 0;
    for (size_t i = std::min(time + 1, tree.size() - 1); i > 0; i -= i & -i)
      sum += tree[i];
    return sum;
  }

private:
  std::vector<double> tree;
};

} // namespace

double metac::planner::cachedShare(double distance, double bytes,
                                   double cacheBytes) {
  if (cacheBytes <= 0)
    return 0;
  double footprint = std::max(distance + bytes / 2, 1.0);
  if (footprint <= cacheBytes)
    return 1;
  if (footprint >= 4 * cacheBytes)
    return 0;
  return std::log(4 * cacheBytes / footprint) / std::log(4.0);
}

DenseMap<Operation *, double>
metac::planner::cacheResidency(func::FuncOp function, double cacheBytes) {
  DenseMap<Operation *, double> residency;
  if (cacheBytes <= 0 || !function.getBody().hasOneBlock())
    return residency;
  Block &body = function.getBody().front();
  // The buffer behind each value (views share their operand's).
  DenseMap<Value, Value> buffer;
  auto bufferOf = [&](Value v) {
    Value base = buffer.lookup(v);
    return base ? base : v;
  };
  size_t touches = 0;
  for (Operation &op : body)
    touches += op.getNumOperands() + op.getNumResults();
  TouchTimeline timeline(2 * touches + 1);
  DenseMap<Value, size_t> lastTouch;
  size_t now = 0;
  auto touch = [&](Value base, double bytes) {
    auto it = lastTouch.find(base);
    if (it != lastTouch.end())
      timeline.add(it->second, -bytes);
    lastTouch[base] = ++now;
    timeline.add(now, bytes);
  };
  // Twice over the body: the second pass sees the first's touches, as a
  // meta-iteration sees the previous one's.
  for (int pass = 0; pass < 2; ++pass) {
    for (Operation &op : body) {
      if (isView(&op)) {
        buffer[op.getResult(0)] = bufferOf(op.getOperand(0));
        continue;
      }
      llvm::SetVector<Value> reads;
      for (Value operand : op.getOperands())
        if (bytesOf(operand.getType()) > 0)
          reads.insert(bufferOf(operand));
      double opBytes = 0, cached = 0;
      for (Value base : reads)
        opBytes += bytesOf(base.getType());
      for (Value result : op.getResults())
        opBytes += bytesOf(result.getType());
      if (opBytes == 0)
        continue;
      for (Value base : reads) {
        double bytes = bytesOf(base.getType());
        auto it = lastTouch.find(base);
        if (it == lastTouch.end())
          continue; // never touched yet: from memory
        double distance = timeline.upTo(now) - timeline.upTo(it->second);
        cached += bytes * cachedShare(distance, bytes, cacheBytes);
      }
      // A result is written to memory the arena just freed, behind the
      // operands the op reads.
      for (Value result : op.getResults()) {
        double bytes = bytesOf(result.getType());
        cached += bytes * cachedShare(opBytes - bytes, bytes, cacheBytes);
      }
      if (pass == 1)
        residency[&op] = cached / opBytes;
      for (Value base : reads)
        touch(base, bytesOf(base.getType()));
      for (Value result : op.getResults())
        if (double bytes = bytesOf(result.getType()))
          touch(result, bytes);
    }
  }
  return residency;
}
