//===- Tcp.h - a world joined over TCP --------------------------*- C++ -*-===//
//
// Jobs that torchrun or Slurm's srun (without an MPI plugin) start: the
// launcher gives each process its rank and the world's size in the
// environment, not through MPI, and Open MPI cannot join such processes
// into one job (its singletons cannot connect). The ranks meet instead at
// the address the environment names (torchrun: MASTER_ADDR and
// MASTER_PORT, plus one under torchrun's agent, whose store holds that
// port;
// Slurm: the first node of SLURM_STEP_NODELIST and MASTER_PORT, else a
// port from 20000 up picked by the job and step ids): rank 0 listens there,
// every rank tells it the port it listens on, rank 0 sends every rank the
// table, and each pair of ranks connects once (the higher rank to the lower). A
// message to a peer is queued and written by that peer's writer thread
// (so that two ranks sending to each other never block), each with its
// length, which the receiver checks.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_COMM_TCP_H
#define METART_SRC_COMM_TCP_H

#include <cstddef>
#include <string>
#include <vector>

namespace metart::comm::tcp {

/// The launcher whose environment asks for a TCP world ("torchrun",
/// "srun"), or null.
const char *launcher();
/// Meets the other ranks (waiting up to METART_RENDEZVOUS_TIMEOUT seconds,
/// default 120, for them); `localRank` is the launcher's (LOCAL_RANK,
/// SLURM_LOCALID), or -1.
bool init(int &rank, int &size, int &localRank, std::string &error);
/// Queues `bytes` bytes for world rank `peer` (copied: returns at once).
bool send(int peer, const void *data, size_t bytes, std::string &error);
/// Receives exactly the `bytes` bytes that `peer` sent next.
bool recv(int peer, void *data, size_t bytes, std::string &error);
/// `bytes` bytes from every rank, in rank order.
bool allGatherWorld(const void *mine, size_t bytes, std::vector<char> &all);
void barrierWorld();
/// Writes what is queued and closes the connections.
void finalize();
/// Closes the connections at once (the peers see them end) and exits.
[[noreturn]] void abort(int code);

} // namespace metart::comm::tcp

#endif // METART_SRC_COMM_TCP_H
