//===- WorldLifetime.cpp - joining and leaving the job --------------------===//
//
// Detects the launcher from its environment, joins MPI when there is one
// (torchrun's and srun's ranks without MPI meet over TCP instead, Tcp.h),
// gathers every rank's pid and host for the watchdog and starts it, and
// leaves at exit (the last barrier under the watchdog's eye). Without a
// launcher the world is this process alone and MPI is never touched.
//
//===----------------------------------------------------------------------===//

#include "../Context.h"
#include "Mpi.h"
#include "Tcp.h"
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
  int launcherLocal = -1;
  if (!detectLauncher() && tcp::launcher()) {
    // torchrun, or srun without an MPI plugin: the ranks meet over TCP.
    if (!tcp::init(w.rank, w.size, launcherLocal, error))
      return METART_ERROR_BACKEND;
    if (w.size > 1) {
      w.tcp = true;
      std::atexit(finalizeAtExit);
    }
  } else if (!detectLauncher()) {
    w.peers = {Peer{static_cast<int>(getpid()), host}};
    w.initialized = true;
    return METART_OK;
  } else if (!mpi::available()) {
    error = std::string("started by ") + detectLauncher() +
            " but this runtime was built without MPI";
    return METART_ERROR_UNSUPPORTED;
  } else {
    if (!mpi::init(w.rank, w.size, error))
      return METART_ERROR_BACKEND;
    w.mpi = true;
    std::atexit(finalizeAtExit);
  }

  PeerRecord mine = {static_cast<int32_t>(getpid()), {}};
  std::memcpy(mine.host, host, sizeof(host));
  std::vector<char> all;
  bool gathered = w.tcp   ? tcp::allGatherWorld(&mine, sizeof(mine), all)
                  : w.mpi ? mpi::allGatherWorld(&mine, sizeof(mine), all)
                          : (all.assign(reinterpret_cast<char *>(&mine),
                                        reinterpret_cast<char *>(&mine + 1)),
                             true);
  if (!gathered) {
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
  int local = launcherLocal >= 0 ? launcherLocal : localRankFromEnvironment();
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
  if ((!world().mpi && !world().tcp) || finalized)
    return;
  finalized = true;
  {
    // Every rank gets here before any stops watching the others.
    watchdog::Guard guard("the final barrier", 0);
    world().tcp ? tcp::barrierWorld() : mpi::barrierWorld();
  }
  watchdog::stop();
  world().tcp ? tcp::finalize() : mpi::finalize();
}

extern "C" void metart_world_abort(int code) {
  if ((world().mpi || world().tcp) && !finalized) {
    watchdog::stop();
    if (world().tcp)
      tcp::abort(code);
    mpi::abort(code);
  }
  std::exit(code);
}
