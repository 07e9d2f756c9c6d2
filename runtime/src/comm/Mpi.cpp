//===- Mpi.cpp - the world's MPI calls ------------------------------------===//
//
// The only MPI calls outside the transport: initialisation, the start-up
// exchange, the last barrier and the end. Without MPI in the build they
// report that it is missing.
//
//===----------------------------------------------------------------------===//

#include "Mpi.h"

#ifdef METART_HAVE_MPI
#include <mpi.h>
#endif

#include <cstdlib>

using namespace metart::comm;

#ifdef METART_HAVE_MPI

bool mpi::available() { return true; }

bool mpi::init(int &rank, int &size, std::string &error) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    // One thread calls MPI at a time: the watchdog never does.
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) !=
        MPI_SUCCESS) {
      error = "MPI_Init_thread failed";
      return false;
    }
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return true;
}

bool mpi::allGatherWorld(const void *mine, size_t bytes,
                         std::vector<char> &all) {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  all.resize(bytes * size);
  return MPI_Allgather(mine, static_cast<int>(bytes), MPI_BYTE, all.data(),
                       static_cast<int>(bytes), MPI_BYTE,
                       MPI_COMM_WORLD) == MPI_SUCCESS;
}

void mpi::barrierWorld() { MPI_Barrier(MPI_COMM_WORLD); }

void mpi::finalize() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized)
    MPI_Finalize();
}

void mpi::abort(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);
}

#else

bool mpi::available() { return false; }
bool mpi::init(int &, int &, std::string &error) {
  error = "this runtime was built without MPI";
  return false;
}
bool mpi::allGatherWorld(const void *, size_t, std::vector<char> &) {
  return false;
}
void mpi::barrierWorld() {}
void mpi::finalize() {}
void mpi::abort(int code) { std::exit(code); }

#endif
