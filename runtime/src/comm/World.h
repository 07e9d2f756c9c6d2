//===- World.h - the processes of the job -----------------------*- C++ -*-===//
//
// The world is process-wide: which launcher started the job, this rank and
// the world's size, and every rank's pid and host (gathered at start-up so
// that the watchdog can name a peer that died). MPI is initialised only
// when a launcher started the job, so single-process programs never touch
// it.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_COMM_WORLD_H
#define METART_SRC_COMM_WORLD_H

#include "metart/metart.h"

#include <string>
#include <vector>

namespace metart::comm {

/// A rank's process, as the others see it.
struct Peer {
  int pid = 0;
  std::string host;
};

/// The processes of the job.
struct World {
  bool initialized = false;
  /// Whether MPI was initialised (an MPI launcher started the job), or
  /// the ranks met over TCP (torchrun, srun without MPI: Tcp.h).
  bool mpi = false;
  bool tcp = false;
  int rank = 0, size = 1, localRank = 0;
  /// Parameter servers after the mesh's ranks (Servers.h): the mesh has
  /// `size - servers` ranks.
  int servers = 0;
  /// Every rank's process, indexed by rank.
  std::vector<Peer> peers;
};

/// The world of this process (rank 0 of 1 before `initWorld`).
const World &world();
/// The world to fill in, for WorldLifetime.cpp alone.
World &worldForSetUp();

/// Joins the world (idempotent); on failure `error` says why.
metart_status initWorld(std::string &error);

/// The launcher's name ("mpirun", "srun", ...) when one started this
/// process, or null.
const char *detectLauncher();

} // namespace metart::comm

#endif // METART_SRC_COMM_WORLD_H
