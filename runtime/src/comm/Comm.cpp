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
#include "../Checker.h"
#include "../Context.h"
#include "../Tensor.h"
#include "CommQueue.h"
#include "Communicator.h"
#include "Compression.h"
#include "Execute.h"
#include "Servers.h"
#include "Trace.h"
#include "Watchdog.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

using namespace metart;
using namespace metart::comm;

namespace {

/// Checks `mask` and finds this rank's group: its position and size.
bool groupOf(Checker &check, const metart_context *c, int32_t mask,
             int64_t &rank, int64_t &size) {
  if (!check.ok())
    return false;
  if (mask < 0 || mask >= kNumMasks)
    return check.reject("axes mask ", mask, " is not in [0, ", kNumMasks - 1,
                        "]");
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

/// Runs one blocking collective over `mask` (see `execute`), after the
/// asynchronous ones started before it. `body` gets the transport, or null
/// for a group of one.
template <typename Body>
metart_status collective(Checker &check, metart_context *c, const char *what,
                         int32_t mask, int64_t groupSize, size_t bytes,
                         Body body) {
  if (!check.ok())
    return check.result();
  Transport *transport = groupSize > 1 ? c->comm->transport.get() : nullptr;
  auto run = [&] { return execute(c, what, mask, transport, bytes, body); };
  KernelStatus status = c->commQueue ? c->commQueue->run(run) : run();
  return check.finish(status);
}

/// Starts one collective over `mask` that completes in
/// metart_collective_wait(y): on the communication thread when the
/// transport allows it; on the transport's side stream when it has one and
/// the body only calls the transport (`transportOnly`: no kernel of the
/// backend's, which would run on the compute stream); else now.
/// `body(transport, scratch)` gets `scratchBytes` of device memory,
/// allocated and freed on this thread.
template <typename Body>
metart_status
startCollective(Checker &check, metart_context *c, const char *what,
                int32_t mask, int64_t groupSize, size_t bytes, const void *key,
                size_t scratchBytes, bool transportOnly, Body body) {
  if (!check.ok())
    return check.result();
  if (!c->commQueue)
    c->commQueue = std::make_unique<CommQueue>();
  Transport *transport = groupSize > 1 ? c->comm->transport.get() : nullptr;
  if (transport && transportOnly && transport->runsOnSideStream()) {
    auto bound = [&](Transport *t) { return body(t, nullptr); };
    KernelStatus status = transport->forkSideStream();
    if (!status.failed())
      status = c->commQueue->run(
          [&] { return execute(c, what, mask, transport, bytes, bound); });
    if (KernelStatus joined = transport->joinSideStream(key); !status.failed())
      status = joined;
    if (status.failed())
      return check.finish(status);
    if (!c->commQueue->finished(key, status, mask, 0))
      return check.invalid("a collective into this y was started and not "
                           "waited for");
    return check.finish(status);
  }
  void *scratch = nullptr;
  if (transport && scratchBytes &&
      metart_buffer_alloc(c, scratchBytes, &scratch))
    return check.finish(
        {METART_ERROR_OUT_OF_MEMORY, metart_context_last_error(c)});
  auto bound = [body, scratch](Transport *t) { return body(t, scratch); };
  if (!transport || !transport->runsOnAnyThread()) {
    KernelStatus status = c->commQueue->run(
        [&] { return execute(c, what, mask, transport, bytes, bound); });
    metart_buffer_free(c, scratch);
    if (status.failed())
      return check.finish(status);
    if (!c->commQueue->finished(key, status, mask, 0))
      return check.invalid("a collective into this y was started and not "
                           "waited for");
    return check.finish(status);
  }
  auto task = [c, what, mask, transport, bytes, bound]() mutable {
    return execute(c, what, mask, transport, bytes, bound);
  };
  auto release = [c, scratch] { metart_buffer_free(c, scratch); };
  if (!c->commQueue->start(key, mask, task, release)) {
    release();
    return check.invalid("a collective into this y was started and not "
                         "waited for");
  }
  return check.finish(KernelStatus::ok());
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

namespace {

/// A checked all-reduce, by value: a communication thread may run it after
/// the caller's descriptors are gone.
struct AllReduceCall {
  metart_tensor x, y;
  int32_t mask = 0, reduction = 0, algorithm = 0;
  metart_dtype wire = METART_F32;
  int64_t count = 0, groupSize = 1;
  bool compressed = false;
  /// What travels: count elements of the wire's type.
  size_t wireBytes = 0;
};

bool checkAllReduce(Checker &check, metart_context *c, const metart_tensor *x,
                    const metart_tensor *y, int32_t mask, int32_t reduction,
                    int32_t algorithm, int32_t wire, AllReduceCall &call) {
  int64_t rank = 0;
  if (!operands(check, x, y) || !check.shape("y", *y, shapeOf(*x)) ||
      !groupOf(check, c, mask, rank, call.groupSize))
    return false;
  call.compressed = wire != x->dtype;
  if (reduction != METART_REDUCE_SUM && reduction != METART_REDUCE_MAX)
    return check.reject("unknown reduction ", reduction);
  if (algorithm < METART_ALLREDUCE_LIBRARY ||
      algorithm > METART_ALLREDUCE_HIERARCHICAL)
    return check.reject("unknown all-reduce algorithm ", algorithm);
  if (call.compressed && ((x->dtype != METART_F32 && x->dtype != METART_F64) ||
                          (wire != METART_BF16 && wire != METART_F16)))
    return check.reject("compresses f32 or f64 into bf16 or f16 only, got ",
                        x->dtype, " into ", wire);
  call.x = *x;
  call.y = *y;
  call.mask = mask;
  call.reduction = reduction;
  call.algorithm = algorithm;
  call.wire = static_cast<metart_dtype>(wire);
  call.count = numElements(*x);
  call.wireBytes =
      call.count * dtypeSize(call.compressed ? call.wire : x->dtype);
  return true;
}

/// Runs a checked all-reduce; a compressed one needs `onWire` (wireBytes).
KernelStatus runAllReduce(metart_context *c, Transport *t,
                          const AllReduceCall &call, void *onWire) {
  if (!t)
    return copyLocal(c, call.x, call.y);
  auto how = static_cast<AllReduceAlgorithm>(call.algorithm);
  auto op = static_cast<Reduction>(call.reduction);
  if (!call.compressed)
    return t->allReduceWith(call.mask, call.x.data, call.y.data, call.count,
                            dtypeOf(call.x), op, how);
  // Rounded to the wire's type, reduced there, widened back.
  if (KernelStatus s = c->backend->convert(dtypeOf(call.x), call.wire,
                                           call.count, call.x.data, onWire);
      s.failed())
    return s;
  if (KernelStatus s = t->allReduceWith(call.mask, onWire, onWire, call.count,
                                        call.wire, op, how);
      s.failed())
    return s;
  return c->backend->convert(call.wire, dtypeOf(call.x), call.count, onWire,
                             call.y.data);
}

} // namespace

extern "C" metart_status metart_all_reduce_algorithm(
    metart_context *c, const metart_tensor *x, const metart_tensor *y,
    int32_t axes_mask, int32_t reduction, int32_t algorithm, int32_t wire) {
  bool plain = algorithm == METART_ALLREDUCE_LIBRARY && x && wire == x->dtype;
  Checker check(c, plain ? "metart_all_reduce" : "metart_all_reduce_algorithm");
  AllReduceCall call;
  checkAllReduce(check, c, x, y, axes_mask, reduction, algorithm, wire, call);
  return collective(check, c, "all_reduce", axes_mask, call.groupSize,
                    call.wireBytes, [&](Transport *t) -> KernelStatus {
                      Temporary onWire(c);
                      if (t && call.compressed)
                        if (KernelStatus s = onWire.allocate(call.wireBytes);
                            s.failed())
                          return s;
                      return runAllReduce(c, t, call, onWire.data);
                    });
}

extern "C" metart_status
metart_all_reduce_start(metart_context *c, const metart_tensor *x,
                        const metart_tensor *y, int32_t axes_mask,
                        int32_t reduction, int32_t algorithm, int32_t wire) {
  Checker check(c, "metart_all_reduce_start");
  AllReduceCall call;
  checkAllReduce(check, c, x, y, axes_mask, reduction, algorithm, wire, call);
  return startCollective(check, c, "all_reduce", axes_mask, call.groupSize,
                         call.wireBytes, call.y.data,
                         call.compressed ? call.wireBytes : 0, !call.compressed,
                         [c, call](Transport *t, void *onWire) {
                           return runAllReduce(c, t, call, onWire);
                         });
}

namespace {

/// A checked compressed all-reduce, by value (see AllReduceCall).
struct CompressedCall {
  metart_tensor x, y;
  int32_t mask = 0, method = 0;
  double parameter = 0;
  int64_t count = 0, groupSize = 1, rows = 1, cols = 1;
  /// PowerSGD on a matrix whose factors are smaller than it (else exact).
  bool factored = false;
  size_t wireBytes = 0;
  CompressionSite *site = nullptr;
};

bool checkCompressed(Checker &check, metart_context *c, const metart_tensor *x,
                     const metart_tensor *y, int32_t mask, int32_t method,
                     double parameter, int64_t site, CompressedCall &call) {
  int64_t rank = 0;
  if (!operands(check, x, y) || !check.shape("y", *y, shapeOf(*x)) ||
      !groupOf(check, c, mask, rank, call.groupSize))
    return false;
  if (x->dtype != METART_F32)
    return check.reject("compresses f32 sums only, got ", describe(*x));
  if (method == METART_COMPRESS_TOPK) {
    if (!(parameter > 0 && parameter <= 1))
      return check.reject("top-k sends a fraction in (0, 1], got ", parameter);
  } else if (method == METART_COMPRESS_POWERSGD) {
    if (!(parameter >= 1 && parameter == std::floor(parameter) &&
          parameter < 1e6))
      return check.reject("PowerSGD's rank is a whole number >= 1, got ",
                          parameter);
  } else {
    return check.reject("unknown compression ", method);
  }
  Transport *transport =
      call.groupSize > 1 ? c->comm->transport.get() : nullptr;
  if (transport && !transport->runsOnAnyThread())
    return check.reject("top-k and PowerSGD compression run on host memory "
                        "(the CPU backend) only");
  call.x = *x;
  call.y = *y;
  call.mask = mask;
  call.method = method;
  call.parameter = parameter;
  call.count = numElements(*x);
  if (x->rank >= 2 && x->shape[0] > 0) {
    call.rows = x->shape[0];
    call.cols = call.count / call.rows;
  }
  int64_t rank_ = static_cast<int64_t>(parameter);
  call.factored = method == METART_COMPRESS_POWERSGD && x->rank >= 2 &&
                  powerSgdCompresses(call.rows, call.cols, rank_);
  call.wireBytes = method == METART_COMPRESS_TOPK
                       ? topKBytes(call.count, parameter)
                   : call.factored ? powerSgdBytes(call.rows, call.cols, rank_)
                                   : call.count * sizeof(float);
  // The site's state, found here (the caller's thread): a started
  // collective must not insert into the map while another thread looks.
  if (!c->compression)
    c->compression.reset(new CompressionState());
  call.site = &c->compression->sites[site];
  return true;
}

KernelStatus runCompressed(metart_context *c, Transport *t,
                           const CompressedCall &call) {
  if (!t)
    return copyLocal(c, call.x, call.y);
  auto *x = static_cast<const float *>(call.x.data);
  auto *y = static_cast<float *>(call.y.data);
  if (call.method == METART_COMPRESS_TOPK)
    return topKAllReduce(*t, call.mask, call.groupSize, x, y, call.count,
                         call.parameter, *call.site);
  if (call.factored)
    return powerSgdAllReduce(*t, call.mask, x, y, call.rows, call.cols,
                             static_cast<int64_t>(call.parameter), *call.site);
  return t->allReduce(call.mask, x, y, call.count, METART_F32, Reduction::Sum);
}

} // namespace

extern "C" metart_status
metart_all_reduce_compressed(metart_context *c, const metart_tensor *x,
                             const metart_tensor *y, int32_t axes_mask,
                             int32_t method, double parameter, int64_t site) {
  Checker check(c, "metart_all_reduce_compressed");
  CompressedCall call;
  checkCompressed(check, c, x, y, axes_mask, method, parameter, site, call);
  return collective(check, c, "all_reduce", axes_mask, call.groupSize,
                    call.wireBytes,
                    [&](Transport *t) { return runCompressed(c, t, call); });
}

extern "C" metart_status metart_all_reduce_compressed_start(
    metart_context *c, const metart_tensor *x, const metart_tensor *y,
    int32_t axes_mask, int32_t method, double parameter, int64_t site) {
  Checker check(c, "metart_all_reduce_compressed_start");
  CompressedCall call;
  checkCompressed(check, c, x, y, axes_mask, method, parameter, site, call);
  return startCollective(
      check, c, "all_reduce", axes_mask, call.groupSize, call.wireBytes,
      call.y.data, 0, /*transportOnly=*/false,
      [c, call](Transport *t, void *) { return runCompressed(c, t, call); });
}

extern "C" metart_status
metart_all_reduce_stale(metart_context *c, const metart_tensor *x,
                        const metart_tensor *y, int32_t axes_mask,
                        int64_t staleness, int64_t site) {
  Checker check(c, "metart_all_reduce_stale");
  AllReduceCall call;
  if (checkAllReduce(check, c, x, y, axes_mask, METART_REDUCE_SUM,
                     METART_ALLREDUCE_LIBRARY, x ? x->dtype : METART_F32,
                     call)) {
    if (staleness < 0 || staleness > 1024)
      check.invalid("staleness ", staleness, " is not in [0, 1024]");
    else if (call.groupSize > 1 && staleness > 0 &&
             !c->comm->transport->runsOnAnyThread())
      check.invalid("stale-synchronous all-reduces run on host memory (the "
                    "CPU backend) only");
  }
  // Without a group or a lag: the plain sum.
  if (!check.ok() || call.groupSize == 1 || staleness == 0)
    return collective(
        check, c, "all_reduce", axes_mask, call.groupSize, call.wireBytes,
        [&](Transport *t) { return runAllReduce(c, t, call, nullptr); });
  if (!c->compression)
    c->compression.reset(new CompressionState());
  if (!c->commQueue)
    c->commQueue = std::make_unique<CommQueue>();
  StaleSite &state = c->compression->stale[site];
  size_t bytes = bytesOf(*x);
  if (state.ring.empty())
    state.ring.assign(staleness + 1, std::vector<char>(bytes));
  if (int64_t(state.ring.size()) != staleness + 1 ||
      state.ring.front().size() != bytes)
    return check.invalid("site ", site,
                         " was called with another size or "
                         "staleness before");
  // This iteration's input, summed in place while the caller goes on.
  std::vector<char> &mine = state.ring[state.calls % (staleness + 1)];
  std::memcpy(mine.data(), x->data, bytes);
  AllReduceCall inFlight = call;
  inFlight.x.data = inFlight.y.data = mine.data();
  Transport *transport = c->comm->transport.get();
  auto task = [c, axes_mask, transport, inFlight]() mutable {
    auto body = [&](Transport *t) {
      return runAllReduce(c, t, inFlight, nullptr);
    };
    return execute(c, "all_reduce", axes_mask, transport, inFlight.wireBytes,
                   body, /*counted=*/true);
  };
  if (!c->commQueue->start(mine.data(), axes_mask, task))
    return check.invalid("site ", site, " has more than ", staleness + 1,
                         " sums in flight");
  // Counted in the iteration that starts it (it may end after that
  // iteration's statistics were read).
  c->commStats.addCall(axes_mask, inFlight.wireBytes);
  ++state.calls;
  if (state.calls <= staleness) {
    std::memset(y->data, 0, bytes);
    return check.finish(KernelStatus::ok());
  }
  // The sum started `staleness` calls ago.
  std::vector<char> &old =
      state.ring[(state.calls - 1 - staleness) % (staleness + 1)];
  CommQueue::Completion done;
  if (!c->commQueue->wait(old.data(), done))
    return check.invalid("site ", site, " lost its sum in flight");
  if (!done.status.failed()) {
    c->commStats.addOverlapped(
        axes_mask, std::max(0.0, done.runSeconds - done.waitedSeconds));
    std::memcpy(y->data, old.data(), bytes);
  }
  return check.finish(done.status);
}

extern "C" int metart_has_stale_collectives(metart_context *c) {
  return (c && c->compression && !c->compression->stale.empty()) ||
         servers::stale();
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

extern "C" metart_status metart_all_to_all(metart_context *c,
                                           const metart_tensor *x,
                                           const metart_tensor *y,
                                           int32_t axes_mask, int64_t split_dim,
                                           int64_t concat_dim) {
  Checker check(c, "metart_all_to_all");
  int64_t rank = 0, size = 1;
  // A part's extent along dimension d.
  auto partDim = [&](int64_t d) {
    return d == split_dim ? x->shape[d] / size : x->shape[d];
  };
  if (operands(check, x, y) && groupOf(check, c, axes_mask, rank, size) &&
      dimensionOf(check, "x", *x, split_dim) &&
      dimensionOf(check, "x", *x, concat_dim)) {
    if (x->shape[split_dim] % size) {
      check.invalid("x ", describe(*x), " does not split in ", size,
                    " along dim ", split_dim);
    } else {
      SmallShape shape;
      for (int64_t d = 0; d < x->rank; ++d)
        shape.push_back(partDim(d) * (d == concat_dim ? size : 1));
      check.shape("y", *y, shape);
    }
  }
  return collective(
      check, c, "all_to_all", axes_mask, size, check.ok() ? bytesOf(*x) : 0,
      [&](Transport *t) -> KernelStatus {
        if (!t)
          return copyLocal(c, *x, *y);
        size_t element = dtypeSize(x->dtype), bytes = bytesOf(*x);
        int64_t count = numElements(*x) / size;
        // The parts in group order, each contiguous: x viewed as [outer,
        // size, inner] becomes [size, outer, inner].
        int64_t outer = 0, inner = 0;
        blocksOf(*x, split_dim, size, outer, inner);
        Temporary packed(c), received(c);
        if (KernelStatus s = packed.allocate(bytes); s.failed())
          return s;
        if (KernelStatus s = received.allocate(bytes); s.failed())
          return s;
        if (KernelStatus s = swapBlocks(*c->backend, x->data, packed.data,
                                        outer, size, inner * element);
            s.failed())
          return s;
        if (t->hasAllToAll()) {
          if (KernelStatus s = t->allToAll(axes_mask, packed.data,
                                           received.data, count, dtypeOf(*x));
              s.failed())
            return s;
        } else {
          // Everyone's parts, [sender, receiver, count]; this rank keeps
          // column `rank`.
          Temporary all(c);
          if (KernelStatus s = all.allocate(bytes * size); s.failed())
            return s;
          if (KernelStatus s = t->allGather(axes_mask, packed.data, all.data,
                                            numElements(*x), dtypeOf(*x));
              s.failed())
            return s;
          for (int64_t sender = 0; sender < size; ++sender)
            if (KernelStatus s = c->backend->copy(
                    static_cast<char *>(received.data) +
                        sender * count * element,
                    static_cast<const char *>(all.data) +
                        (sender * size + rank) * count * element,
                    count * element, CopyKind::DeviceToDevice);
                s.failed())
              return s;
        }
        // The received parts [size, outer, inner] concatenated along
        // concat_dim: y viewed as [outer, size, inner].
        int64_t before = 1, from = 1;
        for (int64_t d = 0; d < x->rank; ++d)
          (d < concat_dim ? before : from) *= partDim(d);
        return swapBlocks(*c->backend, received.data, y->data, size, before,
                          from * element);
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

namespace {

/// A checked reduce-scatter, by value (see AllReduceCall).
struct ReduceScatterCall {
  metart_tensor x, y;
  int32_t mask = 0, reduction = 0, algorithm = 0;
  int64_t dim = 0, groupSize = 1;
  /// x as [outer, group, inner]: a transport scatters [group, outer,
  /// inner], so outer > 1 needs x regrouped (in bytes of x).
  int64_t outer = 0, inner = 0;
};

bool checkReduceScatter(Checker &check, metart_context *c,
                        const metart_tensor *x, const metart_tensor *y,
                        int32_t mask, int64_t dim, int32_t reduction,
                        int32_t algorithm, ReduceScatterCall &call) {
  int64_t rank = 0;
  if (!operands(check, x, y) ||
      !groupOf(check, c, mask, rank, call.groupSize) ||
      !dimensionOf(check, "x", *x, dim))
    return false;
  if (x->shape[dim] % call.groupSize)
    return check.reject("x ", describe(*x), " does not split in ",
                        call.groupSize, " along dim ", dim);
  if (!check.shape("y", *y, scaledShape(*x, dim, call.groupSize, true)))
    return false;
  if (reduction != METART_REDUCE_SUM && reduction != METART_REDUCE_MAX)
    return check.reject("unknown reduction ", reduction);
  if (algorithm < METART_ALLREDUCE_LIBRARY ||
      algorithm > METART_ALLREDUCE_HIERARCHICAL)
    return check.reject("unknown reduce-scatter algorithm ", algorithm);
  if (call.groupSize > 1 && x->data == y->data)
    return check.reject("y may not be x when the group has more than one rank");
  call.x = *x;
  call.y = *y;
  call.mask = mask;
  call.reduction = reduction;
  call.algorithm = algorithm;
  call.dim = dim;
  blocksOf(*x, dim, call.groupSize, call.outer, call.inner);
  return true;
}

/// Runs a checked reduce-scatter; with outer > 1 it needs `grouped` (bytes
/// of x).
KernelStatus runReduceScatter(metart_context *c, Transport *t,
                              const ReduceScatterCall &call, void *grouped) {
  if (!t)
    return copyLocal(c, call.x, call.y);
  auto r = static_cast<Reduction>(call.reduction);
  auto how = static_cast<AllReduceAlgorithm>(call.algorithm);
  if (call.outer == 1)
    return t->reduceScatterWith(call.mask, call.x.data, call.y.data,
                                numElements(call.y), dtypeOf(call.x), r, how);
  if (KernelStatus s =
          swapBlocks(*c->backend, call.x.data, grouped, call.outer,
                     call.groupSize, call.inner * dtypeSize(call.x.dtype));
      s.failed())
    return s;
  return t->reduceScatterWith(call.mask, grouped, call.y.data,
                              numElements(call.y), dtypeOf(call.x), r, how);
}

} // namespace

extern "C" metart_status metart_reduce_scatter_algorithm(
    metart_context *c, const metart_tensor *x, const metart_tensor *y,
    int32_t axes_mask, int64_t dim, int32_t reduction, int32_t algorithm) {
  Checker check(c, algorithm == METART_ALLREDUCE_LIBRARY
                       ? "metart_reduce_scatter"
                       : "metart_reduce_scatter_algorithm");
  ReduceScatterCall call;
  checkReduceScatter(check, c, x, y, axes_mask, dim, reduction, algorithm,
                     call);
  return collective(
      check, c, "reduce_scatter", axes_mask, call.groupSize,
      check.ok() ? bytesOf(*x) : 0, [&](Transport *t) -> KernelStatus {
        Temporary grouped(c);
        if (t && call.outer > 1)
          if (KernelStatus s = grouped.allocate(bytesOf(call.x)); s.failed())
            return s;
        return runReduceScatter(c, t, call, grouped.data);
      });
}

extern "C" metart_status
metart_reduce_scatter_start(metart_context *c, const metart_tensor *x,
                            const metart_tensor *y, int32_t axes_mask,
                            int64_t dim, int32_t reduction, int32_t algorithm) {
  Checker check(c, "metart_reduce_scatter_start");
  ReduceScatterCall call;
  checkReduceScatter(check, c, x, y, axes_mask, dim, reduction, algorithm,
                     call);
  size_t bytes = check.ok() ? bytesOf(*x) : 0;
  return startCollective(check, c, "reduce_scatter", axes_mask, call.groupSize,
                         bytes, call.y.data, call.outer > 1 ? bytes : 0,
                         call.outer == 1,
                         [c, call](Transport *t, void *grouped) {
                           return runReduceScatter(c, t, call, grouped);
                         });
}

extern "C" metart_status metart_collective_wait(metart_context *c,
                                                const metart_tensor *y) {
  Checker check(c, "metart_collective_wait");
  if (!check.tensor("y", y))
    return check.result();
  CommQueue::Completion done;
  if (!c->commQueue || !c->commQueue->wait(y->data, done))
    return check.invalid("no collective into y ", describe(*y), " was started");
  // On a side stream: the compute stream waits for it from here on.
  if (c->comm && c->comm->transport && c->comm->transport->runsOnSideStream())
    if (KernelStatus s = c->comm->transport->waitSideStream(y->data);
        s.failed())
      return check.finish(s);
  // The part of its run the caller did not wait for was hidden behind
  // the caller's work.
  if (!done.status.failed())
    c->commStats.addOverlapped(
        done.tag, std::max(0.0, done.runSeconds - done.waitedSeconds));
  return check.finish(done.status);
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
