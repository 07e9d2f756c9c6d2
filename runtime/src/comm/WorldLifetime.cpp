//===- WorldLifetime.cpp - joining and leaving the job --------------------===//
//
// Detects the launcher from its environment, joins MPI when there is one,
// gathers every rank's pid and host for the watchdog and starts it, and
// leaves at exit (the last barrier under the watchdog's eye). Without a
// launcher the world is this process alone and MPI is never touched.
//
//===----------------------------------------------------------------------===//

#include "../Context.h"
#include "Mpi.h"
#include "Watchdog.h"
#include "World.h"
#include "metart/comm.h"

#include <cstdlib>
#include <cstring>
#include <unistd.h>

using namespace metart;
using namespace metart::comm;

namespace {

bool finalized = false;

/// The local rank the launcher gives, or -1.
int localRankFromEnvironment() {
  for (const char *name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                           "SLURM_LOCALID", "LOCAL_RANK"})
    if (const char *value = std::getenv(name); value && *value)
      return std::atoi(value);
  return -1;
}

/// What each rank tells the others at start-up.
struct PeerRecord {
  int32_t pid;
  char host[124];
};

void finalizeAtExit() { metart_world_finalize(); }

} // namespace

metart_status comm::initWorld(std::string &error) {
  World &w = worldForSetUp();
  if (w.initialized)
    return METART_OK;
  char host[124] = "";
  gethostname(host, sizeof(host) - 1);
  if (!detectLauncher()) {
    const char *torchSize = std::getenv("WORLD_SIZE");
    if (torchSize && std::atoi(torchSize) > 1) {
      error = "WORLD_SIZE=" + std::string(torchSize) +
              " (a torchrun-style launch) is not supported yet: launch the "
              "job with mpirun or srun";
      return METART_ERROR_UNSUPPORTED;
    }
    w.peers = {Peer{static_cast<int>(getpid()), host}};
    w.initialized = true;
    return METART_OK;
  }
  if (!mpi::available()) {
    error = std::string("started by ") + detectLauncher() +
            " but this runtime was built without MPI";
    return METART_ERROR_UNSUPPORTED;
  }
  if (!mpi::init(w.rank, w.size, error))
    return METART_ERROR_BACKEND;
  w.mpi = true;
  std::atexit(finalizeAtExit);

  PeerRecord mine = {static_cast<int32_t>(getpid()), {}};
  std::memcpy(mine.host, host, sizeof(host));
  std::vector<char> all;
  if (!mpi::allGatherWorld(&mine, sizeof(mine), all)) {
    error = "cannot exchange the ranks' process ids";
    return METART_ERROR_BACKEND;
  }
  int sameHostBefore = 0;
  for (int r = 0; r < w.size; ++r) {
    PeerRecord record;
    std::memcpy(&record, all.data() + r * sizeof(record), sizeof(record));
    record.host[sizeof(record.host) - 1] = 0;
    w.peers.push_back(Peer{record.pid, record.host});
    if (r < w.rank && w.peers.back().host == host)
      ++sameHostBefore;
  }
  int local = localRankFromEnvironment();
  w.localRank = local >= 0 ? local : sameHostBefore;
  w.initialized = true;
  if (w.size > 1)
    watchdog::start();
  return METART_OK;
}

extern "C" metart_status metart_world_init(void) {
  std::string error;
  metart_status status = initWorld(error);
  if (status)
    setLastError(nullptr, "metart_world_init: " + error);
  return status;
}

extern "C" void metart_world_finalize(void) {
  if (!world().mpi || finalized)
    return;
  finalized = true;
  {
    // Every rank gets here before any stops watching the others.
    watchdog::Guard guard("the final barrier", 0);
    mpi::barrierWorld();
  }
  watchdog::stop();
  mpi::finalize();
}

extern "C" void metart_world_abort(int code) {
  if (world().mpi && !finalized) {
    watchdog::stop();
    mpi::abort(code);
  }
  std::exit(code);
}
