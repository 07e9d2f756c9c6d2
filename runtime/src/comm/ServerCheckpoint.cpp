//===- ServerCheckpoint.cpp - a worker's checkpoints and stop ------------===//
//
// With parameter servers the optimizer's state is theirs: the first worker
// sends the state a resumed run starts from with the initial parameters
// (prepare), takes the servers' parameters and state of a checkpointed
// update (fetchState), and, preempted, tells them where to stop (stop).
//
//===----------------------------------------------------------------------===//

#include "../Context.h"
#include "ServerClient.h"
#include "ServerState.h"
#include "Servers.h"
#include "Watchdog.h"

#include <cstring>
#include <vector>

using namespace metart;
using namespace metart::comm;
using namespace metart::comm::servers;

namespace {
State &serverState() { return servers::state(); }
} // namespace

metart_status servers::prepare(metart_context *c, int64_t start,
                               const metart_tensor *const *state,
                               int64_t stateCount, std::string &error) {
  State &st = serverState();
  st.start = start;
  client().lastVersion = st.desc.asynchronous ? 0 : start;
  st.initialState.clear();
  st.initialCount = 0;
  if (!state || stateCount == 0)
    return METART_OK;
  const Layout &l = st.layout;
  int32_t kinds = stateKinds(st.desc);
  int64_t expected = kinds * l.numParams() + (hasStepCount(st.desc) ? 1 : 0);
  if (stateCount != expected) {
    error = "expects " + std::to_string(expected) +
            " optimizer state tensors, got " + std::to_string(stateCount);
    return METART_ERROR_INVALID_ARGUMENT;
  }
  st.initialState.assign(kinds, std::vector<char>(l.total * l.elementBytes));
  for (int32_t k = 0; k < kinds; ++k)
    if (metart_status s =
            flatten(c, l, state + k * l.numParams(), st.initialState[k], error))
      return s;
  if (hasStepCount(st.desc)) {
    int64_t count = 0;
    if (metart_status s =
            metart_copy_to_host(c, &count, state[stateCount - 1]->data, 8)) {
      error = metart_context_last_error(c);
      return s;
    }
    st.initialCount = static_cast<double>(count);
  }
  return METART_OK;
}

metart_status
servers::fetchState(metart_context *c, const metart_tensor *const *params,
                    int64_t count, const metart_tensor *const *state,
                    int64_t stateCount, int64_t version, std::string &error) {
  State &st = serverState();
  const Layout &l = st.layout;
  int32_t kinds = stateKinds(st.desc);
  int64_t expected = kinds * l.numParams() + (hasStepCount(st.desc) ? 1 : 0);
  if (count != l.numParams() || stateCount != expected) {
    error = "expects the servers' " + std::to_string(l.numParams()) +
            " parameters and " + std::to_string(expected) + " state tensors";
    return METART_ERROR_INVALID_ARGUMENT;
  }
  std::vector<std::vector<char>> flat(
      1 + kinds, std::vector<char>(l.total * l.elementBytes));
  double stepCount = 0;
  for (int64_t s = 0; s < l.servers; ++s) {
    std::vector<char> message(l.stateBytes(s, kinds));
    {
      watchdog::Guard guard("parameter server checkpoint", kServerMask);
      if (mpiFailed(MPI_Recv(message.data(), static_cast<int>(message.size()),
                             MPI_BYTE, static_cast<int>(l.workers + s),
                             kStateTag, st.exchange, MPI_STATUS_IGNORE),
                    "a worker's MPI_Recv of a server's state", error))
        return METART_ERROR_BACKEND;
    }
    double header[kStateHeader];
    std::memcpy(header, message.data(), sizeof(header));
    if (static_cast<int64_t>(header[0]) != version) {
      error = "server " + std::to_string(s) + " sent the state of update " +
              std::to_string(static_cast<int64_t>(header[0])) +
              " for the checkpoint of " + std::to_string(version);
      return METART_ERROR_BACKEND;
    }
    stepCount = header[1];
    const char *at = message.data() + sizeof(header);
    size_t slice = l.length(s) * l.elementBytes;
    for (std::vector<char> &v : flat) {
      std::memcpy(v.data() + l.begin(s) * l.elementBytes, at, slice);
      at += slice;
    }
  }
  if (metart_status s = unflatten(c, l, flat[0], params, error))
    return s;
  for (int32_t k = 0; k < kinds; ++k)
    if (metart_status s =
            unflatten(c, l, flat[1 + k], state + k * l.numParams(), error))
      return s;
  if (hasStepCount(st.desc)) {
    int64_t steps = static_cast<int64_t>(stepCount);
    if (metart_status s =
            metart_copy_to_device(c, state[stateCount - 1]->data, &steps, 8)) {
      error = metart_context_last_error(c);
      return s;
    }
  }
  return METART_OK;
}

metart_status servers::stop(metart_context *, int64_t version, bool wantState,
                            std::string &error) {
  State &st = serverState();
  Client &cl = client();
  if (!st.active || st.server >= 0)
    return METART_OK;
  const Layout &l = st.layout;
  cl.links.resize(l.servers);
  for (int64_t s = 0; s < l.servers; ++s) {
    Client::Link &link = cl.links[s];
    if (version > st.start && !pull(st, link, s, version, false, error))
      return METART_ERROR_BACKEND;
    if (!completePushes(link, error))
      return METART_ERROR_BACKEND;
  }
  int rank = 0;
  MPI_Comm_rank(st.exchange, &rank);
  if (rank != 0)
    return METART_OK;
  double message[2] = {static_cast<double>(version), wantState ? 1.0 : 0.0};
  for (int64_t s = 0; s < l.servers; ++s)
    if (mpiFailed(MPI_Send(message, sizeof(message), MPI_BYTE,
                           static_cast<int>(l.workers + s), kStopTag,
                           st.exchange),
                  "a worker's MPI_Send of the stop", error))
      return METART_ERROR_BACKEND;
  return METART_OK;
}
