//===- ServerClient.h - a worker's side of the parameter servers -*- C++
//-*-===//
//
// What the worker's step (ServerClient.cpp) and its checkpoints and stop
// (ServerCheckpoint.cpp) share: the links to the servers and the copies
// between the parameter tensors and the flat vector the servers slice.
// Only the MPI files of the parameter servers include it.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_COMM_SERVERCLIENT_H
#define METART_SRC_COMM_SERVERCLIENT_H

#include "ServerState.h"

#include <deque>
#include <string>
#include <vector>

namespace metart::comm::servers {

/// A worker's state: its calls, the largest lag it saw, and per server the
/// pushes in flight (their buffers), the newest reply and its version.
struct Client {
  int64_t calls = 0;
  int64_t largestLag = 0;
  int64_t lastVersion = 0; // the oldest of the servers' last replies
  std::vector<char> gradient, flatParams;
  struct Link {
    std::deque<std::pair<std::vector<char>, MPI_Request>> pushes;
    std::vector<char> reply;
    int64_t version = -1;
    /// Replies taken so far (their bytes are what this rank received).
    int64_t taken = 0;
  };
  std::vector<Link> links;
};

Client &client();
/// Double `i` of a message's header.
double headerOf(const std::vector<char> &message, size_t i);
/// Takes replies from server `s` until one of at least `version` (any one
/// when `next`), then (not asynchronous) the newer ones already there.
bool pull(State &st, Client::Link &link, int64_t s, int64_t version, bool next,
          std::string &error);
/// Waits until the server has taken every push of `link`.
bool completePushes(Client::Link &link, std::string &error);
/// The tensors, one per parameter, copied into the flat vector `flat`...
metart_status flatten(metart_context *c, const Layout &l,
                      const metart_tensor *const *tensors,
                      std::vector<char> &flat, std::string &error);
/// ... and back.
metart_status unflatten(metart_context *c, const Layout &l,
                        const std::vector<char> &flat,
                        const metart_tensor *const *tensors,
                        std::string &error);

} // namespace metart::comm::servers

#endif // METART_SRC_COMM_SERVERCLIENT_H
