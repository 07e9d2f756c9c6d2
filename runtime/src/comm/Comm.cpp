//===- Comm.cpp - the collectives of the C API ----------------------------===//
//
// Each entry point checks its operands against the group of its mask,
// counts the call, and either copies locally (a group of one: no
// communicator, or an axis of size 1) or hands contiguous buffers to the
// transport. Collectives along a dimension other than the first reorder
// blocks around the transport, which only knows the first.
//
//===----------------------------------------------------------------------===//

#include "metart/comm.h"
#include "../Context.h"
#include "../Tensor.h"
#include "Communicator.h"
#include "Trace.h"
#include "Watchdog.h"

#include <chrono>

using namespace metart;
using namespace metart::comm;

namespace {

/// Checks `mask` and finds this rank's group: its position and size.
bool groupOf(Checker &check, const metart_context *c, int32_t mask,
             int64_t &rank, int64_t &size) {
  if (!check.ok())
    return false;
  if (mask < 0 || mask >= kNumMasks)
    return check.reject("axes mask ", mask, " is not in [0, 15]");
  rank = c->comm ? c->comm->groupRank[mask] : 0;
  size = c->comm ? c->comm->groupSize[mask] : 1;
  return true;
}

/// Checks that `dim` is a dimension of `t`.
bool dimensionOf(Checker &check, const char *name, const metart_tensor &t,
                 int64_t dim) {
  if (!check.ok())
    return false;
  if (dim < 0 || dim >= t.rank)
    return check.reject("dim ", dim, " is not a dimension of ", name, " ",
                        describe(t));
  return true;
}

/// `t`'s shape with dimension `dim` multiplied by `factor` (or divided when
/// `divide`).
SmallShape scaledShape(const metart_tensor &t, int64_t dim, int64_t factor,
                       bool divide) {
  SmallShape shape;
  for (int i = 0; i < t.rank; ++i)
    shape.push_back(i != dim ? t.shape[i]
                    : divide ? t.shape[i] / factor
                             : t.shape[i] * factor);
  return shape;
}

size_t bytesOf(const metart_tensor &t) {
  return numElements(t) * dtypeSize(t.dtype);
}

/// Elements before `dim` (blocks) and from `dim` on divided by `parts`
/// (block length), for a tensor whose dimension `dim` splits in `parts`.
void blocksOf(const metart_tensor &t, int64_t dim, int64_t parts,
              int64_t &outer, int64_t &inner) {
  ShapeRef shape = shapeOf(t);
  outer = shape.takeFront(dim).product();
  inner = shape.dropFront(dim).product() / parts;
}

/// y viewed as [b, a, block bytes] = x viewed as [a, b, block bytes].
KernelStatus swapBlocks(Backend &backend, const void *x, void *y, int64_t a,
                        int64_t b, size_t block) {
  const char *in = static_cast<const char *>(x);
  char *out = static_cast<char *>(y);
  for (int64_t i = 0; i < a; ++i)
    for (int64_t j = 0; j < b; ++j)
      if (KernelStatus s =
              backend.copy(out + (j * a + i) * block, in + (i * b + j) * block,
                           block, CopyKind::DeviceToDevice);
          s.failed())
        return s;
  return KernelStatus::ok();
}

/// Device memory for the duration of one call.
struct Temporary {
  metart_context *c;
  void *data = nullptr;
  explicit Temporary(metart_context *c) : c(c) {}
  ~Temporary() { metart_buffer_free(c, data); }
  KernelStatus allocate(size_t bytes) {
    if (metart_buffer_alloc(c, bytes, &data))
      return {METART_ERROR_OUT_OF_MEMORY, metart_context_last_error(c)};
    return KernelStatus::ok();
  }
};

/// Runs one collective over `mask` that moves `bytes` when its group has
/// more than one rank: counts it, times it, and lets the watchdog see it in
/// flight. `body` gets the transport, or null for a group of one.
template <typename Body>
metart_status collective(Checker &check, metart_context *c, const char *what,
                         int32_t mask, int64_t groupSize, size_t bytes,
                         Body body) {
  if (!check.ok())
    return check.result();
  Transport *transport = groupSize > 1 ? c->comm->transport.get() : nullptr;
  watchdog::Guard guard(what, mask);
  auto begin = std::chrono::steady_clock::now();
  if (transport)
    transport->startTimer();
  KernelStatus status = body(transport);
  if (metart::trace::enabled())
    metart::trace::record(what, mask, transport ? bytes : 0, begin,
                          std::chrono::steady_clock::now());
  if (transport)
    transport->stopTimer(mask, c->commStats);
  else
    c->commStats.addSeconds(mask, std::chrono::duration<double>(
                                      std::chrono::steady_clock::now() - begin)
                                      .count());
  c->commStats.addCall(mask, transport ? bytes : 0);
  return check.finish(status);
}

/// Copies x to y unless they are the same memory.
KernelStatus copyLocal(metart_context *c, const metart_tensor &x,
                       const metart_tensor &y) {
  if (x.data == y.data)
    return KernelStatus::ok();
  return c->backend->copy(y.data, x.data, bytesOf(x), CopyKind::DeviceToDevice);
}

/// Checks x and y: valid tensors of one element type, not overlapping
/// unless they are the same memory.
bool operands(Checker &check, const metart_tensor *x, const metart_tensor *y) {
  return check.tensor("x", x) && check.tensor("y", y) &&
         check.sameDtype("y", *y, "x", *x) &&
         check.disjoint("x", *x, "y", *y, /*allowSame=*/true);
}

/// Whether the bytes of x and y overlap.
bool overlaps(const metart_tensor &x, const metart_tensor &y) {
  auto a = reinterpret_cast<uintptr_t>(x.data);
  auto b = reinterpret_cast<uintptr_t>(y.data);
  return a < b + bytesOf(y) && b < a + bytesOf(x);
}

} // namespace

extern "C" metart_status metart_all_reduce(metart_context *c,
                                           const metart_tensor *x,
                                           const metart_tensor *y,
                                           int32_t axes_mask,
                                           int32_t reduction) {
  return metart_all_reduce_algorithm(c, x, y, axes_mask, reduction,
                                     METART_ALLREDUCE_LIBRARY,
                                     x ? x->dtype : METART_F32);
}

extern "C" metart_status metart_all_reduce_algorithm(
    metart_context *c, const metart_tensor *x, const metart_tensor *y,
    int32_t axes_mask, int32_t reduction, int32_t algorithm, int32_t wire) {
  bool plain = algorithm == METART_ALLREDUCE_LIBRARY && x && wire == x->dtype;
  Checker check(c, plain ? "metart_all_reduce" : "metart_all_reduce_algorithm");
  int64_t rank = 0, size = 1;
  bool compressed = false;
  if (operands(check, x, y) && check.shape("y", *y, shapeOf(*x)) &&
      groupOf(check, c, axes_mask, rank, size)) {
    compressed = wire != x->dtype;
    if (reduction != METART_REDUCE_SUM && reduction != METART_REDUCE_MAX)
      check.invalid("unknown reduction ", reduction);
    else if (algorithm < METART_ALLREDUCE_LIBRARY ||
             algorithm > METART_ALLREDUCE_HIERARCHICAL)
      check.invalid("unknown all-reduce algorithm ", algorithm);
    else if (compressed &&
             ((x->dtype != METART_F32 && x->dtype != METART_F64) ||
              (wire != METART_BF16 && wire != METART_F16)))
      check.invalid("compresses f32 or f64 into bf16 or f16 only, got ",
                    x->dtype, " into ", wire);
  }
  int64_t count = check.ok() ? numElements(*x) : 0;
  size_t wireBytes =
      check.ok() ? count * dtypeSize(compressed ? wire : x->dtype) : 0;
  return collective(
      check, c, "all_reduce", axes_mask, size, check.ok() ? wireBytes : 0,
      [&](Transport *t) -> KernelStatus {
        if (!t)
          return copyLocal(c, *x, *y);
        auto how = static_cast<AllReduceAlgorithm>(algorithm);
        auto op = static_cast<Reduction>(reduction);
        if (!compressed)
          return t->allReduceWith(axes_mask, x->data, y->data, count,
                                  dtypeOf(*x), op, how);
        // Rounded to the wire's type, reduced there, widened back.
        auto narrow = static_cast<metart_dtype>(wire);
        Temporary onWire(c);
        if (KernelStatus s = onWire.allocate(wireBytes); s.failed())
          return s;
        if (KernelStatus s = c->backend->convert(dtypeOf(*x), narrow, count,
                                                 x->data, onWire.data);
            s.failed())
          return s;
        if (KernelStatus s = t->allReduceWith(
                axes_mask, onWire.data, onWire.data, count, narrow, op, how);
            s.failed())
          return s;
        return c->backend->convert(narrow, dtypeOf(*x), count, onWire.data,
                                   y->data);
      });
}

extern "C" metart_status metart_all_gather(metart_context *c,
                                           const metart_tensor *x,
                                           const metart_tensor *y,
                                           int32_t axes_mask, int64_t dim) {
  Checker check(c, "metart_all_gather");
  int64_t rank = 0, size = 1;
  // x may lie inside y (a rank's updated part of a tensor it gathers, as
  // ZeRO's gather of the parameters is): it is copied aside first.
  if (check.tensor("x", x) && check.tensor("y", y) &&
      check.sameDtype("y", *y, "x", *x) &&
      groupOf(check, c, axes_mask, rank, size) &&
      dimensionOf(check, "x", *x, dim))
    check.shape("y", *y, scaledShape(*x, dim, size, false));
  return collective(
      check, c, "all_gather", axes_mask, size, check.ok() ? bytesOf(*y) : 0,
      [&](Transport *t) -> KernelStatus {
        if (!t)
          return copyLocal(c, *x, *y);
        const void *source = x->data;
        Temporary aside(c);
        if (overlaps(*x, *y)) {
          if (KernelStatus s = aside.allocate(bytesOf(*x)); s.failed())
            return s;
          if (KernelStatus s = c->backend->copy(
                  aside.data, x->data, bytesOf(*x), CopyKind::DeviceToDevice);
              s.failed())
            return s;
          source = aside.data;
        }
        int64_t outer = 0, inner = 0;
        blocksOf(*x, dim, 1, outer, inner);
        if (outer == 1)
          return t->allGather(axes_mask, source, y->data, numElements(*x),
                              dtypeOf(*x));
        // Gathered in group order [size, outer, inner], wanted [outer,
        // size, inner].
        Temporary gathered(c);
        if (KernelStatus s = gathered.allocate(bytesOf(*y)); s.failed())
          return s;
        if (KernelStatus s = t->allGather(axes_mask, source, gathered.data,
                                          numElements(*x), dtypeOf(*x));
            s.failed())
          return s;
        return swapBlocks(*c->backend, gathered.data, y->data, size, outer,
                          inner * dtypeSize(x->dtype));
      });
}

extern "C" metart_status metart_all_slice(metart_context *c,
                                          const metart_tensor *x,
                                          const metart_tensor *y,
                                          int32_t axes_mask, int64_t dim) {
  Checker check(c, "metart_all_slice");
  int64_t rank = 0, size = 1;
  if (operands(check, x, y) && groupOf(check, c, axes_mask, rank, size) &&
      dimensionOf(check, "x", *x, dim)) {
    if (x->shape[dim] % size)
      check.invalid("x ", describe(*x), " does not split in ", size,
                    " along dim ", dim);
    else
      check.shape("y", *y, scaledShape(*x, dim, size, true));
  }
  // Nothing moves: every rank holds x already.
  return collective(check, c, "all_slice", axes_mask, 1, 0,
                    [&](Transport *) -> KernelStatus {
                      if (size == 1)
                        return copyLocal(c, *x, *y);
                      int64_t outer = 0, inner = 0;
                      blocksOf(*x, dim, size, outer, inner);
                      size_t block = inner * dtypeSize(x->dtype);
                      const char *in = static_cast<const char *>(x->data);
                      char *out = static_cast<char *>(y->data);
                      for (int64_t o = 0; o < outer; ++o)
                        if (KernelStatus s = c->backend->copy(
                                out + o * block, in + (o * size + rank) * block,
                                block, CopyKind::DeviceToDevice);
                            s.failed())
                          return s;
                      return KernelStatus::ok();
                    });
}

extern "C" metart_status metart_reduce_scatter(metart_context *c,
                                               const metart_tensor *x,
                                               const metart_tensor *y,
                                               int32_t axes_mask, int64_t dim,
                                               int32_t reduction) {
  return metart_reduce_scatter_algorithm(c, x, y, axes_mask, dim, reduction,
                                         METART_ALLREDUCE_LIBRARY);
}

extern "C" metart_status metart_reduce_scatter_algorithm(
    metart_context *c, const metart_tensor *x, const metart_tensor *y,
    int32_t axes_mask, int64_t dim, int32_t reduction, int32_t algorithm) {
  Checker check(c, algorithm == METART_ALLREDUCE_LIBRARY
                       ? "metart_reduce_scatter"
                       : "metart_reduce_scatter_algorithm");
  int64_t rank = 0, size = 1;
  if (operands(check, x, y) && groupOf(check, c, axes_mask, rank, size) &&
      dimensionOf(check, "x", *x, dim)) {
    if (x->shape[dim] % size)
      check.invalid("x ", describe(*x), " does not split in ", size,
                    " along dim ", dim);
    else if (check.shape("y", *y, scaledShape(*x, dim, size, true)) &&
             reduction != METART_REDUCE_SUM && reduction != METART_REDUCE_MAX)
      check.invalid("unknown reduction ", reduction);
    else if (algorithm < METART_ALLREDUCE_LIBRARY ||
             algorithm > METART_ALLREDUCE_HIERARCHICAL)
      check.invalid("unknown reduce-scatter algorithm ", algorithm);
  }
  if (check.ok() && size > 1 && x->data == y->data)
    check.invalid("y may not be x when the group has more than one rank");
  return collective(
      check, c, "reduce_scatter", axes_mask, size, check.ok() ? bytesOf(*x) : 0,
      [&](Transport *t) -> KernelStatus {
        if (!t)
          return copyLocal(c, *x, *y);
        int64_t outer = 0, inner = 0;
        blocksOf(*x, dim, size, outer, inner);
        auto r = static_cast<Reduction>(reduction);
        auto how = static_cast<AllReduceAlgorithm>(algorithm);
        if (outer == 1)
          return t->reduceScatterWith(axes_mask, x->data, y->data,
                                      numElements(*y), dtypeOf(*x), r, how);
        // x is [outer, size, inner]; the transport scatters [size, outer,
        // inner].
        Temporary grouped(c);
        if (KernelStatus s = grouped.allocate(bytesOf(*x)); s.failed())
          return s;
        if (KernelStatus s =
                swapBlocks(*c->backend, x->data, grouped.data, outer, size,
                           inner * dtypeSize(x->dtype));
            s.failed())
          return s;
        return t->reduceScatterWith(axes_mask, grouped.data, y->data,
                                    numElements(*y), dtypeOf(*x), r, how);
      });
}

extern "C" metart_status metart_broadcast(metart_context *c,
                                          const metart_tensor *x,
                                          const metart_tensor *y,
                                          int32_t axes_mask, int64_t root) {
  Checker check(c, "metart_broadcast");
  int64_t rank = 0, size = 1;
  if (operands(check, x, y) && check.shape("y", *y, shapeOf(*x)) &&
      groupOf(check, c, axes_mask, rank, size) && (root < 0 || root >= size))
    check.invalid("root ", root, " is not a rank of the group of ", size);
  return collective(check, c, "broadcast", axes_mask, size,
                    check.ok() ? bytesOf(*x) : 0,
                    [&](Transport *t) -> KernelStatus {
                      if (!t)
                        return copyLocal(c, *x, *y);
                      if (rank == root) {
                        if (KernelStatus s = copyLocal(c, *x, *y); s.failed())
                          return s;
                      }
                      return t->broadcast(axes_mask, y->data, numElements(*y),
                                          dtypeOf(*y), int(root));
                    });
}

/// Checks the peer of a send or receive.
static bool peerOf(Checker &check, int64_t peer, int64_t rank, int64_t size) {
  if (!check.ok())
    return false;
  if (peer < 0 || peer >= size)
    return check.reject("peer ", peer, " is not a rank of the group of ", size);
  if (peer == rank)
    return check.reject("peer ", peer, " is this rank");
  return true;
}

extern "C" metart_status metart_send(metart_context *c, const metart_tensor *x,
                                     int32_t axes_mask, int64_t peer) {
  Checker check(c, "metart_send");
  int64_t rank = 0, size = 1;
  if (check.tensor("x", x) && groupOf(check, c, axes_mask, rank, size))
    peerOf(check, peer, rank, size);
  return collective(check, c, "send", axes_mask, size,
                    check.ok() ? bytesOf(*x) : 0, [&](Transport *t) {
                      return t->send(axes_mask, x->data, numElements(*x),
                                     dtypeOf(*x), int(peer));
                    });
}

extern "C" metart_status metart_recv(metart_context *c, const metart_tensor *y,
                                     int32_t axes_mask, int64_t peer) {
  Checker check(c, "metart_recv");
  int64_t rank = 0, size = 1;
  if (check.tensor("y", y) && groupOf(check, c, axes_mask, rank, size))
    peerOf(check, peer, rank, size);
  return collective(check, c, "recv", axes_mask, size,
                    check.ok() ? bytesOf(*y) : 0, [&](Transport *t) {
                      return t->recv(axes_mask, y->data, numElements(*y),
                                     dtypeOf(*y), int(peer));
                    });
}
