//===- Mpi.h - the MPI calls the rest of the runtime needs ------*- C++ -*-===//
//
// What World.cpp and the transports need from MPI, behind functions so that
// only the files that implement them include mpi.h, and so that a build
// without MPI (METART_HAVE_MPI unset) still links: there, the world is
// always one process.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_COMM_MPI_H
#define METART_SRC_COMM_MPI_H

#include <string>
#include <vector>

namespace metart::comm::mpi {

/// Whether this build has MPI.
bool available();
/// MPI_Init_thread (serialized) and the rank and size of MPI_COMM_WORLD.
bool init(int &rank, int &size, std::string &error);
/// Gathers `bytes` bytes from every rank of the world, in rank order.
bool allGatherWorld(const void *mine, size_t bytes, std::vector<char> &all);
void barrierWorld();
void finalize();
[[noreturn]] void abort(int code);

} // namespace metart::comm::mpi

#endif // METART_SRC_COMM_MPI_H
