//===- Attach.cpp - communicators on contexts -----------------------------===//
//
// Attaching lays the world out as the mesh (row-major: the last axis varies
// fastest), checks that the mesh has as many ranks as the job has
// processes before anything runs, and creates the transport of the
// context's backend: NCCL on a CUDA device when the build has it
// (bootstrapped over MPI or, without an MPI launcher, TCP), MPI or TCP
// otherwise (MPI staged through host memory for a device).
//
//===----------------------------------------------------------------------===//

#include "../Checker.h"
#include "../Context.h"
#include "../Tensor.h"
#include "CommQueue.h"
#include "Communicator.h"
#include "Placement.h"
#include "TcpTransport.h"
#include "Watchdog.h"
#include "World.h"
#include "metart/comm.h"

#include <cstdio>
#include <sstream>

using namespace metart;
using namespace metart::comm;

void CommunicatorDeleter::operator()(Communicator *c) const { delete c; }

void Communicator::layOut(int64_t rank) {
  for (int axis = METART_NUM_AXES - 1; axis >= 0; --axis) {
    coords[axis] = rank % mesh[axis];
    rank /= mesh[axis];
  }
  for (int mask = 0; mask < kNumMasks; ++mask) {
    groupRank[mask] = 0;
    groupSize[mask] = 1;
    for (int axis = 0; axis < METART_NUM_AXES; ++axis)
      if (mask & (1 << axis)) {
        groupRank[mask] = groupRank[mask] * mesh[axis] + coords[axis];
        groupSize[mask] *= mesh[axis];
      }
  }
}

static std::string describeMesh(const int64_t *mesh) {
  static const char *const names[] = {"task",     "data",   "tensor",
                                      "pipeline", "expert", "sequence"};
  std::ostringstream os;
  for (int axis = 0; axis < METART_NUM_AXES; ++axis)
    os << (axis ? " x " : "") << names[axis] << "=" << mesh[axis];
  return os.str();
}

extern "C" metart_status
metart_comm_attach(metart_context *c, const int64_t mesh[METART_NUM_AXES]) {
  Checker check(c, "metart_comm_attach");
  if (!check.ok())
    return check.result();
  if (!mesh)
    return check.invalid("mesh is null");
  auto comm = std::make_unique<Communicator>();
  int64_t ranks = 1;
  for (int axis = 0; axis < METART_NUM_AXES; ++axis) {
    if (mesh[axis] < 0 || mesh[axis] > (int64_t(1) << 24))
      return check.invalid("mesh axis ", axis, " has size ", mesh[axis]);
    comm->mesh[axis] = mesh[axis] ? mesh[axis] : 1;
    ranks *= comm->mesh[axis];
  }
  std::string error;
  if (metart_status s = initWorld(error))
    return check.fail(s, error);
  const World &w = world();
  int meshRanks = w.size - w.servers;
  if (ranks != meshRanks)
    return check.invalid("mesh ", describeMesh(comm->mesh), " has ", ranks,
                         " rank", ranks == 1 ? "" : "s", " but the job has ",
                         meshRanks, " process", meshRanks == 1 ? "" : "es",
                         w.servers ? " besides its parameter servers" : "");
  comm->layOut(w.rank);
  if (meshRanks > 1) {
    Backend &backend = *c->backend;
    // CPU ranks sharing cores: one core each, pipeline stages spread.
    if (backend.hostMemory())
      if (std::string error = pinOversubscribedRank(comm->mesh); !error.empty())
        std::fprintf(stderr, "metart: warning: rank %d left unpinned: %s\n",
                     w.rank, error.c_str());
    std::unique_ptr<Transport> transport;
    watchdog::Guard guard("metart_comm_attach", 0);
    KernelStatus s{METART_ERROR_UNSUPPORTED, "built without MPI"};
    if (w.tcp)
      s = createTcpTransport(*comm, backend, !backend.hostMemory(), transport);
#ifdef METART_HAVE_MPI
    else
      s = createMpiTransport(*comm, backend, !backend.hostMemory(), transport);
#endif
#ifdef METART_HAVE_NCCL
    if (!s.failed() && !backend.hostMemory()) {
      std::unique_ptr<Transport> host = std::move(transport);
      s = createNcclTransport(*comm, backend, std::move(host), transport);
    }
#else
    if (!s.failed() && w.tcp && !backend.hostMemory())
      s = {METART_ERROR_UNSUPPORTED,
           "ranks on GPUs that torchrun or srun started without MPI need "
           "NCCL: this runtime was built without it"};
#endif
    if (s.failed())
      return check.finish(s);
    comm->transport = std::move(transport);
  }
  // What was started on the old communicator runs on it first; the call
  // sites' state belongs to the old groups.
  c->commQueue.reset();
  c->compression.reset();
  c->comm.reset(comm.release());
  return METART_OK;
}

extern "C" int metart_comm_attached(const metart_context *c) {
  return c && c->comm;
}

extern "C" metart_status metart_comm_mesh(const metart_context *c,
                                          int64_t out_mesh[METART_NUM_AXES],
                                          int64_t out_coords[METART_NUM_AXES]) {
  if (!c) {
    setLastError(nullptr, "metart_comm_mesh: the context is null");
    return METART_ERROR_INVALID_ARGUMENT;
  }
  Communicator single;
  const Communicator &comm = c->comm ? *c->comm : single;
  for (int axis = 0; axis < METART_NUM_AXES; ++axis) {
    if (out_mesh)
      out_mesh[axis] = comm.mesh[axis];
    if (out_coords)
      out_coords[axis] = comm.coords[axis];
  }
  return METART_OK;
}

extern "C" metart_status metart_comm_group(const metart_context *c,
                                           int32_t axes_mask, int64_t *out_rank,
                                           int64_t *out_size) {
  Checker check(const_cast<metart_context *>(c), "metart_comm_group");
  if (!check.ok())
    return check.result();
  if (axes_mask < 0 || axes_mask >= kNumMasks)
    return check.invalid("axes mask ", axes_mask, " is not in [0, ",
                         kNumMasks - 1, "]");
  if (out_rank)
    *out_rank = c->comm ? c->comm->groupRank[axes_mask] : 0;
  if (out_size)
    *out_size = c->comm ? c->comm->groupSize[axes_mask] : 1;
  return METART_OK;
}

extern "C" metart_status metart_barrier(metart_context *c, int32_t axes_mask) {
  Checker check(c, "metart_barrier");
  if (!check.ok())
    return check.result();
  if (axes_mask < 0 || axes_mask >= kNumMasks)
    return check.invalid("axes mask ", axes_mask, " is not in [0, ",
                         kNumMasks - 1, "]");
  if (!c->comm || c->comm->groupSize[axes_mask] == 1)
    return check.finish(c->backend->synchronize());
  watchdog::Guard guard("barrier", axes_mask);
  // After the collectives started before it (a stale sum may still run on
  // the communication thread): one thread at a time in the transport, and
  // the same order on every rank.
  auto run = [&] { return c->comm->transport->barrier(axes_mask); };
  return check.finish(c->commQueue ? c->commQueue->run(run) : run());
}
