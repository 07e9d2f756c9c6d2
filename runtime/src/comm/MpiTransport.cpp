//===- MpiTransport.cpp - collectives through MPI -------------------------===//
//
// Every call returns MPI's error as a KernelStatus (the groups use
// MPI_ERRORS_RETURN) rather than aborting inside MPI.
//
//===----------------------------------------------------------------------===//

#include "MpiTransport.h"
#include "../Precision.h"
#include "../Tensor.h"
#include "AllReduceAlgorithms.h"

#include <climits>
#include <cstdlib>
#include <cstring>

using namespace metart;
using namespace metart::comm;

namespace {

MPI_Datatype mpiType(metart_dtype dtype) {
  switch (dtype) {
  case METART_F32:
    return MPI_FLOAT;
  case METART_F64:
    return MPI_DOUBLE;
  case METART_I32:
    return MPI_INT32_T;
  case METART_BF16:
  case METART_F16:
    return MPI_UINT16_T; // reduced by the operations of reduce16() below
  default:
    return MPI_INT64_T;
  }
}

/// MPI has no 16-bit float types: bf16 and f16 travel as 16-bit integers
/// and reduce with user operations that add (or compare) in f32 and round
/// each partial result, as NCCL's bf16 and f16 reductions do.
template <float (*toFloat)(uint16_t), uint16_t (*fromFloat)(float), bool max>
void reduce16(void *in, void *inout, int *length, MPI_Datatype *) {
  const auto *a = static_cast<const uint16_t *>(in);
  auto *b = static_cast<uint16_t *>(inout);
  for (int i = 0; i < *length; ++i) {
    float x = toFloat(a[i]), y = toFloat(b[i]);
    // Written so that NaN propagates, as MPI_MAX and MPI_SUM do on floats.
    b[i] = fromFloat(max ? (x > y || x != x ? x : y) : x + y);
  }
}

/// The operation for `reduction` over `dtype`. The 16-bit ones are created
/// once, after MPI_Init (a transport exists only then), and live until
/// MPI_Finalize frees them.
MPI_Op mpiOp(Reduction reduction, metart_dtype dtype) {
  bool max = reduction == Reduction::Max;
  if (dtype != METART_BF16 && dtype != METART_F16)
    return max ? MPI_MAX : MPI_SUM;
  static MPI_Op ops[2][2] = {{MPI_OP_NULL, MPI_OP_NULL},
                             {MPI_OP_NULL, MPI_OP_NULL}};
  MPI_Op &op = ops[dtype == METART_F16][max];
  if (op == MPI_OP_NULL) {
    MPI_User_function *fn =
        dtype == METART_BF16 ? (max ? reduce16<bf16ToFloat, floatToBf16, true>
                                    : reduce16<bf16ToFloat, floatToBf16, false>)
                             : (max ? reduce16<f16ToFloat, floatToF16, true>
                                    : reduce16<f16ToFloat, floatToF16, false>);
    MPI_Op_create(fn, /*commute=*/1, &op);
  }
  return op;
}

KernelStatus check(int code, const char *call) {
  if (code == MPI_SUCCESS)
    return KernelStatus::ok();
  char text[MPI_MAX_ERROR_STRING] = "";
  int length = 0;
  MPI_Error_string(code, text, &length);
  return {METART_ERROR_BACKEND, std::string(call) + " failed: " + text};
}

KernelStatus checkCount(int64_t count) {
  if (count <= INT_MAX)
    return KernelStatus::ok();
  return {METART_ERROR_UNSUPPORTED,
          "more than 2^31 - 1 elements in one MPI call"};
}

} // namespace

MpiTransport::~MpiTransport() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized)
    (void)completeSends();
  for (MPI_Comm *list : {groups, nodeGroups, crossGroups})
    for (int mask = 0; mask < kNumMasks; ++mask)
      if (list[mask] != MPI_COMM_NULL && !finalized)
        MPI_Comm_free(&list[mask]);
}

MPI_Comm &metart::comm::meshWorld() {
  static MPI_Comm base = MPI_COMM_WORLD;
  return base;
}

KernelStatus MpiTransport::create(const Communicator &comm) {
  int rank = 0;
  MPI_Comm_rank(meshWorld(), &rank);
  for (int mask = 1; mask < kNumMasks; ++mask) {
    // Every rank knows the mesh, so all skip the same groups of one.
    if (comm.groupSize[mask] == 1)
      continue;
    // Ranks that agree outside the mask share a color; the world rank as
    // key orders the group by coordinates on the masked axes (row-major).
    int color = 0;
    for (int axis = 0; axis < METART_NUM_AXES; ++axis)
      if (!(mask & (1 << axis)))
        color = color * comm.mesh[axis] + comm.coords[axis];
    if (KernelStatus s =
            check(MPI_Comm_split(meshWorld(), color, rank, &groups[mask]),
                  "MPI_Comm_split");
        s.failed())
      return s;
    MPI_Comm_set_errhandler(groups[mask], MPI_ERRORS_RETURN);
  }
  return KernelStatus::ok();
}

KernelStatus MpiTransport::stage(std::vector<char> &host, const void *device,
                                 size_t bytes, bool load, void *&out) {
  if (!deviceMemory) {
    out = const_cast<void *>(device);
    return KernelStatus::ok();
  }
  host.resize(bytes);
  out = host.data();
  if (load)
    return backend.copy(host.data(), device, bytes, CopyKind::DeviceToHost);
  return KernelStatus::ok();
}

KernelStatus MpiTransport::unstage(void *device, const void *host,
                                   size_t bytes) {
  if (!deviceMemory)
    return KernelStatus::ok();
  return backend.copy(device, host, bytes, CopyKind::HostToDevice);
}

KernelStatus MpiTransport::allReduce(int mask, const void *x, void *y,
                                     int64_t count, metart_dtype dtype,
                                     Reduction reduction) {
  // The sends whose peers are in this group must be complete first.
  if (KernelStatus s = progressSends(mask); s.failed())
    return s;
  if (KernelStatus s = checkCount(count); s.failed())
    return s;
  size_t bytes = count * dtypeSize(dtype);
  void *in = nullptr, *out = nullptr;
  if (KernelStatus s = stage(stagedIn, x, bytes, true, in); s.failed())
    return s;
  if (KernelStatus s = stage(stagedOut, y, bytes, false, out); s.failed())
    return s;
  const void *send = in == out ? MPI_IN_PLACE : in;
  if (KernelStatus s =
          check(MPI_Allreduce(send, out, int(count), mpiType(dtype),
                              mpiOp(reduction, dtype), groups[mask]),
                "MPI_Allreduce");
      s.failed())
    return s;
  return unstage(y, out, bytes);
}

KernelStatus MpiTransport::allReduceWith(int mask, const void *x, void *y,
                                         int64_t count, metart_dtype dtype,
                                         Reduction reduction,
                                         AllReduceAlgorithm algorithm) {
  if (algorithm == AllReduceAlgorithm::Library)
    return allReduce(mask, x, y, count, dtype, reduction);
  if (KernelStatus s = progressSends(mask); s.failed())
    return s;
  size_t bytes = count * dtypeSize(dtype);
  void *in = nullptr, *out = nullptr;
  if (KernelStatus s = stage(stagedIn, x, bytes, true, in); s.failed())
    return s;
  if (KernelStatus s = stage(stagedOut, y, bytes, false, out); s.failed())
    return s;
  // The algorithms work in place.
  if (in != out && bytes)
    std::memcpy(out, in, bytes);
  KernelStatus status = KernelStatus::ok();
  bool nodes = false;
  if (algorithm == AllReduceAlgorithm::Hierarchical)
    if (KernelStatus s = splitNodes(mask, nodes); s.failed())
      return s;
  if (algorithm == AllReduceAlgorithm::Tree)
    status = treeAllReduce(groups[mask], out, count, dtype, reduction, scratch);
  else if (nodes)
    status = hierarchicalAllReduce(nodeGroups[mask], crossGroups[mask], out,
                                   count, dtype, reduction, scratch);
  else
    status = ringAllReduce(groups[mask], out, count, dtype, reduction, scratch);
  if (status.failed())
    return status;
  return unstage(y, out, bytes);
}

KernelStatus MpiTransport::reduceScatterWith(int mask, const void *x, void *y,
                                             int64_t count, metart_dtype dtype,
                                             Reduction reduction,
                                             AllReduceAlgorithm algorithm) {
  if (algorithm == AllReduceAlgorithm::Library)
    return reduceScatter(mask, x, y, count, dtype, reduction);
  if (KernelStatus s = progressSends(mask); s.failed())
    return s;
  int rank = 0, size = 1;
  MPI_Comm_rank(groups[mask], &rank);
  MPI_Comm_size(groups[mask], &size);
  size_t bytes = count * dtypeSize(dtype);
  void *in = nullptr, *out = nullptr;
  if (KernelStatus s = stage(stagedIn, x, bytes * size, true, in); s.failed())
    return s;
  if (KernelStatus s = stage(stagedOut, y, bytes, false, out); s.failed())
    return s;
  // The ring works in place on the whole buffer; x is the caller's.
  whole.assign(static_cast<const char *>(in),
               static_cast<const char *>(in) + bytes * size);
  if (KernelStatus s = ringReduceScatterToRank(
          groups[mask], whole.data(), count, dtype, reduction, scratch);
      s.failed())
    return s;
  std::memcpy(out, whole.data() + bytes * rank, bytes);
  return unstage(y, out, bytes);
}

KernelStatus MpiTransport::splitNodes(int mask, bool &usable) {
  if (nodesSplit[mask]) {
    usable = nodesUsable[mask];
    return KernelStatus::ok();
  }
  MPI_Comm group = groups[mask];
  int rank = 0, size = 1;
  MPI_Comm_rank(group, &rank);
  MPI_Comm_size(group, &size);
  int code = MPI_SUCCESS;
  const char *perNode = std::getenv("METART_RANKS_PER_NODE");
  long ranksPerNode = perNode ? std::strtol(perNode, nullptr, 10) : 0;
  if (ranksPerNode > 0)
    code = MPI_Comm_split(group, int(rank / ranksPerNode), rank,
                          &nodeGroups[mask]);
  else
    code = MPI_Comm_split_type(group, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL,
                               &nodeGroups[mask]);
  if (code != MPI_SUCCESS)
    return check(code, "MPI_Comm_split_type");
  int nodeRank = 0, nodeSize = 1;
  MPI_Comm_rank(nodeGroups[mask], &nodeRank);
  MPI_Comm_size(nodeGroups[mask], &nodeSize);
  if (KernelStatus s =
          check(MPI_Comm_split(group, nodeRank, rank, &crossGroups[mask]),
                "MPI_Comm_split");
      s.failed())
    return s;
  // Blocks must line up across nodes: every node the same size.
  int sizes[2] = {nodeSize, -nodeSize};
  if (KernelStatus s =
          check(MPI_Allreduce(MPI_IN_PLACE, sizes, 2, MPI_INT, MPI_MAX, group),
                "MPI_Allreduce");
      s.failed())
    return s;
  nodesSplit[mask] = true;
  nodesUsable[mask] = usable = sizes[0] == -sizes[1];
  return KernelStatus::ok();
}

KernelStatus
MpiTransport::exchange(int mask, const void *x, size_t inBytes, void *y,
                       size_t outBytes, const char *what,
                       const std::function<int(void *, void *)> &call) {
  // The sends whose peers are in this group must be complete first.
  if (KernelStatus s = progressSends(mask); s.failed())
    return s;
  void *in = nullptr, *out = nullptr;
  if (KernelStatus s = stage(stagedIn, x, inBytes, true, in); s.failed())
    return s;
  if (KernelStatus s = stage(stagedOut, y, outBytes, false, out); s.failed())
    return s;
  if (KernelStatus s = check(call(in, out), what); s.failed())
    return s;
  return unstage(y, out, outBytes);
}

KernelStatus MpiTransport::allGather(int mask, const void *x, void *y,
                                     int64_t count, metart_dtype dtype) {
  int size = 0;
  MPI_Comm_size(groups[mask], &size);
  if (KernelStatus s = checkCount(count * size); s.failed())
    return s;
  size_t bytes = count * dtypeSize(dtype);
  return exchange(mask, x, bytes, y, bytes * size, "MPI_Allgather",
                  [&](void *in, void *out) {
                    return MPI_Allgather(in, int(count), mpiType(dtype), out,
                                         int(count), mpiType(dtype),
                                         groups[mask]);
                  });
}

KernelStatus MpiTransport::allToAll(int mask, const void *x, void *y,
                                    int64_t count, metart_dtype dtype) {
  int size = 0;
  MPI_Comm_size(groups[mask], &size);
  if (KernelStatus s = checkCount(count * size); s.failed())
    return s;
  size_t bytes = count * size * dtypeSize(dtype);
  return exchange(
      mask, x, bytes, y, bytes, "MPI_Alltoall", [&](void *in, void *out) {
        return MPI_Alltoall(in, int(count), mpiType(dtype), out, int(count),
                            mpiType(dtype), groups[mask]);
      });
}

KernelStatus MpiTransport::reduceScatter(int mask, const void *x, void *y,
                                         int64_t count, metart_dtype dtype,
                                         Reduction reduction) {
  // The sends whose peers are in this group must be complete first.
  if (KernelStatus s = progressSends(mask); s.failed())
    return s;
  int size = 0;
  MPI_Comm_size(groups[mask], &size);
  if (KernelStatus s = checkCount(count * size); s.failed())
    return s;
  size_t bytes = count * dtypeSize(dtype);
  void *in = nullptr, *out = nullptr;
  if (KernelStatus s = stage(stagedIn, x, bytes * size, true, in); s.failed())
    return s;
  if (KernelStatus s = stage(stagedOut, y, bytes, false, out); s.failed())
    return s;
  if (KernelStatus s =
          check(MPI_Reduce_scatter_block(in, out, int(count), mpiType(dtype),
                                         mpiOp(reduction, dtype), groups[mask]),
                "MPI_Reduce_scatter_block");
      s.failed())
    return s;
  return unstage(y, out, bytes);
}

KernelStatus MpiTransport::broadcast(int mask, void *y, int64_t count,
                                     metart_dtype dtype, int root) {
  // The sends whose peers are in this group must be complete first.
  if (KernelStatus s = progressSends(mask); s.failed())
    return s;
  if (KernelStatus s = checkCount(count); s.failed())
    return s;
  size_t bytes = count * dtypeSize(dtype);
  void *buffer = nullptr;
  if (KernelStatus s = stage(stagedOut, y, bytes, true, buffer); s.failed())
    return s;
  if (KernelStatus s = check(
          MPI_Bcast(buffer, int(count), mpiType(dtype), root, groups[mask]),
          "MPI_Bcast");
      s.failed())
    return s;
  return unstage(y, buffer, bytes);
}

KernelStatus MpiTransport::broadcastHostBytes(int mask, void *data,
                                              size_t bytes, int root) {
  if (KernelStatus s = checkCount(static_cast<int64_t>(bytes)); s.failed())
    return s;
  return check(MPI_Bcast(data, int(bytes), MPI_BYTE, root, groups[mask]),
               "MPI_Bcast");
}

/// Sends do not wait for their receiver: a pipeline stage goes on with its
/// next micro-batch while the next stage is still busy. The data is a
/// value of the step that nothing overwrites before the send completes: in
/// the first collective whose group holds the peer, or at the latest when
/// the next step resets the scratch memory (device memory is staged into a
/// buffer the send owns).
KernelStatus MpiTransport::send(int mask, const void *x, int64_t count,
                                metart_dtype dtype, int peer) {
  if (KernelStatus s = checkCount(count); s.failed())
    return s;
  size_t bytes = count * dtypeSize(dtype);
  const void *in = x;
  std::vector<char> owned;
  if (deviceMemory) {
    owned.resize(bytes);
    if (KernelStatus s =
            backend.copy(owned.data(), x, bytes, CopyKind::DeviceToHost);
        s.failed())
      return s;
    in = owned.data();
  }
  MPI_Request request;
  if (KernelStatus s = check(MPI_Isend(in, int(count), mpiType(dtype), peer, 0,
                                       groups[mask], &request),
                             "MPI_Isend");
      s.failed())
    return s;
  pendingSends.push_back({request, mask, std::move(owned)});
  return progressSends(0);
}

KernelStatus MpiTransport::progressSends(int within) {
  for (size_t i = 0; i < pendingSends.size();) {
    int done = 0;
    // A send to a peer outside the group may wait on a rank that is in a
    // collective of its own (a pipeline stage's expert all-to-all): test it.
    bool wait = (pendingSends[i].mask & ~within) == 0;
    int code =
        wait ? MPI_Wait(&pendingSends[i].request, MPI_STATUS_IGNORE)
             : MPI_Test(&pendingSends[i].request, &done, MPI_STATUS_IGNORE);
    if (KernelStatus s = check(code, wait ? "MPI_Wait" : "MPI_Test");
        s.failed())
      return s;
    if (wait || done) {
      pendingSends.erase(pendingSends.begin() + i);
      continue;
    }
    ++i;
  }
  return KernelStatus::ok();
}

KernelStatus MpiTransport::recv(int mask, void *y, int64_t count,
                                metart_dtype dtype, int peer) {
  if (KernelStatus s = checkCount(count); s.failed())
    return s;
  if (KernelStatus s = progressSends(0); s.failed())
    return s;
  size_t bytes = count * dtypeSize(dtype);
  void *out = nullptr;
  if (KernelStatus s = stage(stagedOut, y, bytes, false, out); s.failed())
    return s;
  if (KernelStatus s = check(MPI_Recv(out, int(count), mpiType(dtype), peer, 0,
                                      groups[mask], MPI_STATUS_IGNORE),
                             "MPI_Recv");
      s.failed())
    return s;
  return unstage(y, out, bytes);
}

/// MPI_Sendrecv: both complete on return (a ring's buffers are reused at
/// once). Host memory only: ring attention runs on the CPU backend.
KernelStatus MpiTransport::sendRecv(int mask, int64_t, const void *x, void *y,
                                    int64_t count, metart_dtype dtype, int to,
                                    int from) {
  if (deviceMemory)
    return {METART_ERROR_UNSUPPORTED,
            "a ring exchange over MPI needs host memory"};
  if (KernelStatus s = checkCount(count); s.failed())
    return s;
  if (KernelStatus s = progressSends(0); s.failed())
    return s;
  MPI_Datatype type = mpiType(dtype);
  return check(MPI_Sendrecv(x, int(count), type, to, 1, y, int(count), type,
                            from, 1, groups[mask], MPI_STATUS_IGNORE),
               "MPI_Sendrecv");
}

KernelStatus MpiTransport::barrier(int mask) {
  // The sends whose peers are in this group must be complete first.
  if (KernelStatus s = progressSends(mask); s.failed())
    return s;
  if (KernelStatus s = backend.synchronize(); s.failed())
    return s;
  return check(MPI_Barrier(groups[mask]), "MPI_Barrier");
}

KernelStatus comm::createMpiTransport(const Communicator &comm,
                                      Backend &backend, bool deviceMemory,
                                      std::unique_ptr<Transport> &out) {
  auto transport = std::make_unique<MpiTransport>(backend, deviceMemory);
  if (KernelStatus s = transport->create(comm); s.failed())
    return s;
  out = std::move(transport);
  return KernelStatus::ok();
}
