//===- ServerState.h - a process's place in a parameter-server job -*- C++
//-*-===//
//
// What join() learns and serve(), step() and finish() share: the layout,
// the pacing, and the MPI communicators (a duplicate of the world for the
// pushes and replies; the servers' own, which agrees on gradient norms).
// Only the MPI files of the parameter servers include it.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_COMM_SERVERSTATE_H
#define METART_SRC_COMM_SERVERSTATE_H

#include "ServerLayout.h"
#include "metart/train.h"

#include <mpi.h>

#include <string>
#include <vector>

namespace metart::comm::servers {

struct State {
  bool active = false;
  int64_t server = -1; // this rank's index among the servers, or -1
  Layout layout;
  metart_servers_desc desc{};
  int64_t iterations = 0;
  int64_t checkpointEvery = 0;
  bool preemptible = false;
  /// The first iteration (a resumed run's), and the state the first worker
  /// sends the servers with the initial parameters (flat per kind, then
  /// the step count; empty: zeros).
  int64_t start = 0;
  std::vector<std::vector<char>> initialState;
  double initialCount = 0;
  MPI_Comm exchange = MPI_COMM_NULL; // pushes and replies (the world's ranks)
  MPI_Comm servers = MPI_COMM_NULL;  // the servers alone
};

State &state();

/// An MPI call's failure, named.
inline bool mpiFailed(int code, const char *what, std::string &error) {
  if (code == MPI_SUCCESS)
    return false;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  error = std::string(what) + " failed: " + std::string(text, length);
  return true;
}

} // namespace metart::comm::servers

#endif // METART_SRC_COMM_SERVERSTATE_H
