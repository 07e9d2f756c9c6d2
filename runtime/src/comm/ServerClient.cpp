//===- ServerClient.cpp - a worker's pushes and pulls ---------------------===//
//
// metart_server_step on a mesh rank: copies its partial gradient to host
// memory, sends each server its slice (without waiting: a push completes
// when the server takes it), then takes the servers' replies until its
// parameters are recent enough (the iteration it pushed, less the
// staleness bound; asynchronous: the reply to this push), keeping the
// newest of those already there, and copies them into the parameters.
//
//===----------------------------------------------------------------------===//

#include "ServerClient.h"
#include "../Context.h"
#include "Communicator.h"
#include "ServerState.h"
#include "Servers.h"
#include "Watchdog.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <limits>
#include <vector>

using namespace metart;
using namespace metart::comm;
using namespace metart::comm::servers;

Client &servers::client() {
  static Client c;
  return c;
}

double servers::headerOf(const std::vector<char> &reply, size_t i) {
  double h;
  std::memcpy(&h, reply.data() + i * sizeof(double), sizeof(double));
  return h;
}

bool servers::pull(State &st, Client::Link &link, int64_t s, int64_t version,
                   bool next, std::string &error) {
  int source = static_cast<int>(st.layout.workers + s);
  link.reply.resize(st.layout.replyBytes(s));
  // A server that died or hangs stops this rank with a message, as a
  // collective that makes no progress does.
  watchdog::Guard guard("parameter server pull", kServerMask);
  auto take = [&]() {
    if (mpiFailed(MPI_Recv(link.reply.data(),
                           static_cast<int>(link.reply.size()), MPI_BYTE,
                           source, kReplyTag, st.exchange, MPI_STATUS_IGNORE),
                  "a worker's MPI_Recv of a reply", error))
      return false;
    link.version = static_cast<int64_t>(headerOf(link.reply, 0));
    ++link.taken;
    return true;
  };
  if (next) {
    if (!take())
      return false;
  } else {
    while (link.version < version)
      if (!take())
        return false;
  }
  if (st.desc.asynchronous)
    return true;
  for (;;) {
    int waiting = 0;
    if (mpiFailed(MPI_Iprobe(source, kReplyTag, st.exchange, &waiting,
                             MPI_STATUS_IGNORE),
                  "a worker's MPI_Iprobe", error))
      return false;
    if (!waiting)
      return true;
    if (!take())
      return false;
  }
}

bool servers::completePushes(Client::Link &link, std::string &error) {
  for (auto &push : link.pushes)
    if (mpiFailed(MPI_Wait(&push.second, MPI_STATUS_IGNORE),
                  "a worker's MPI_Wait of a push", error))
      return false;
  link.pushes.clear();
  return true;
}

metart_status servers::flatten(metart_context *c, const Layout &l,
                               const metart_tensor *const *tensors,
                               std::vector<char> &flat, std::string &error) {
  for (int64_t i = 0; i < l.numParams(); ++i)
    if (metart_status s = metart_copy_to_host(
            c, flat.data() + l.offsets[i] * l.elementBytes, tensors[i]->data,
            l.sizes[i] * l.elementBytes)) {
      error = metart_context_last_error(c);
      return s;
    }
  return METART_OK;
}

metart_status servers::unflatten(metart_context *c, const Layout &l,
                                 const std::vector<char> &flat,
                                 const metart_tensor *const *tensors,
                                 std::string &error) {
  for (int64_t i = 0; i < l.numParams(); ++i)
    if (metart_status s = metart_copy_to_device(
            c, tensors[i]->data, flat.data() + l.offsets[i] * l.elementBytes,
            l.sizes[i] * l.elementBytes)) {
      error = metart_context_last_error(c);
      return s;
    }
  return METART_OK;
}

namespace {

/// The replies' parameters into `params`, their summed loss and norms.
metart_status land(metart_context *c, State &st, Client &cl,
                   const metart_tensor *const *params, int64_t count,
                   double &loss, std::vector<double> &norms,
                   std::string &error) {
  const Layout &l = st.layout;
  size_t header = l.replyHeader() * sizeof(double);
  norms.assign(count, 0.0);
  for (int64_t s = 0; s < l.servers; ++s) {
    const std::vector<char> &r = cl.links[s].reply;
    std::memcpy(cl.flatParams.data() + l.begin(s) * l.elementBytes,
                r.data() + header, l.length(s) * l.elementBytes);
    for (int64_t i = 0; i < count; ++i)
      norms[i] += headerOf(r, 2 + i);
  }
  loss = headerOf(cl.links[0].reply, 1);
  return unflatten(c, l, cl.flatParams, params, error);
}

/// A host double as a 0-d tensor's value (f32 or f64).
metart_status storeScalar(metart_context *c, const metart_tensor *t,
                          double value, std::string &error) {
  float f = static_cast<float>(value);
  metart_status s = t->dtype == METART_F64
                        ? metart_copy_to_device(c, t->data, &value, 8)
                        : metart_copy_to_device(c, t->data, &f, 4);
  if (s)
    error = metart_context_last_error(c);
  return s;
}

} // namespace

int64_t servers::largestLag() { return client().largestLag; }

metart_status servers::step(metart_context *c,
                            const metart_tensor *const *params,
                            const metart_tensor *const *grads, int64_t count,
                            const metart_tensor *loss,
                            const metart_tensor *lossOut,
                            const metart_tensor *norms, std::string &error) {
  State &st = state();
  const Layout &l = st.layout;
  Client &cl = client();
  if (!st.active || st.server >= 0) {
    error = "the process is not a mesh rank of a job with parameter servers";
    return METART_ERROR_INVALID_ARGUMENT;
  }
  if (count != l.numParams()) {
    error = "expects the " + std::to_string(l.numParams()) +
            " parameters the servers hold, got " + std::to_string(count);
    return METART_ERROR_INVALID_ARGUMENT;
  }
  for (int64_t i = 0; i < count; ++i)
    if (params[i]->dtype != l.dtype || grads[i]->dtype != l.dtype) {
      error = "expects parameters and gradients of the servers' type";
      return METART_ERROR_INVALID_ARGUMENT;
    }
  auto begin = std::chrono::steady_clock::now();
  cl.links.resize(l.servers);
  cl.gradient.resize(l.total * l.elementBytes);
  cl.flatParams.resize(l.total * l.elementBytes);
  if (metart_status s = flatten(c, l, grads, cl.gradient, error))
    return s;
  double myLoss = 0;
  {
    double d = 0;
    float f = 0;
    metart_status s = loss->dtype == METART_F64
                          ? metart_copy_to_host(c, &d, loss->data, 8)
                          : metart_copy_to_host(c, &f, loss->data, 4);
    if (s) {
      error = metart_context_last_error(c);
      return s;
    }
    myLoss = loss->dtype == METART_F64 ? d : f;
  }
  int rank = 0;
  MPI_Comm_rank(st.exchange, &rank);
  int64_t bytes = 0;
  // The first worker's first step starts from the initial parameters: the
  // servers take theirs from it.
  if (cl.calls == 0 && rank == 0) {
    if (metart_status s = flatten(c, l, params, cl.flatParams, error))
      return s;
    int32_t kinds = stateKinds(st.desc);
    for (int64_t s = 0; s < l.servers; ++s) {
      std::vector<char> message(l.stateBytes(s, kinds), 0);
      double header[kStateHeader] = {static_cast<double>(st.start),
                                     st.initialCount};
      std::memcpy(message.data(), header, sizeof(header));
      char *at = message.data() + sizeof(header);
      size_t slice = l.length(s) * l.elementBytes;
      std::memcpy(at, cl.flatParams.data() + l.begin(s) * l.elementBytes,
                  slice);
      for (const std::vector<char> &kind : st.initialState)
        std::memcpy(at += slice, kind.data() + l.begin(s) * l.elementBytes,
                    slice);
      if (mpiFailed(MPI_Send(message.data(), static_cast<int>(message.size()),
                             MPI_BYTE, static_cast<int>(l.workers + s),
                             kInitTag, st.exchange),
                    "a worker's MPI_Send of the initial parameters", error))
        return METART_ERROR_BACKEND;
    }
    st.initialState.clear();
  }
  size_t inFlight =
      st.desc.asynchronous ? 1 : static_cast<size_t>(st.desc.staleness + 1);
  for (int64_t s = 0; s < l.servers; ++s) {
    Client::Link &link = cl.links[s];
    while (link.pushes.size() >= inFlight) {
      if (mpiFailed(MPI_Wait(&link.pushes.front().second, MPI_STATUS_IGNORE),
                    "a worker's MPI_Wait of a push", error))
        return METART_ERROR_BACKEND;
      link.pushes.pop_front();
    }
    std::vector<char> push(l.pushBytes(s));
    double header[kPushHeader] = {myLoss, static_cast<double>(cl.calls),
                                  static_cast<double>(loss->dtype)};
    std::memcpy(push.data(), header, sizeof(header));
    std::memcpy(push.data() + sizeof(header),
                cl.gradient.data() + l.begin(s) * l.elementBytes,
                l.length(s) * l.elementBytes);
    MPI_Request request;
    if (mpiFailed(MPI_Isend(push.data(), static_cast<int>(push.size()),
                            MPI_BYTE, static_cast<int>(l.workers + s), kPushTag,
                            st.exchange, &request),
                  "a worker's MPI_Isend of a push", error))
      return METART_ERROR_BACKEND;
    bytes += static_cast<int64_t>(push.size());
    link.pushes.emplace_back(std::move(push), request);
  }
  // Parameters of at least this version: the updates of the iterations up
  // to this one, less the staleness bound.
  int64_t needed = st.start + cl.calls + 1 - st.desc.staleness;
  std::vector<int64_t> takenBefore;
  for (const Client::Link &link : cl.links)
    takenBefore.push_back(link.taken);
  int64_t oldest = std::numeric_limits<int64_t>::max();
  for (int64_t s = 0; s < l.servers; ++s) {
    Client::Link &link = cl.links[s];
    if ((st.desc.asynchronous || needed > 0 || link.version >= 0) &&
        !pull(st, link, s, needed, st.desc.asynchronous, error))
      return METART_ERROR_BACKEND;
    oldest = std::min(oldest, link.version);
    bytes +=
        (link.taken - takenBefore[s]) * static_cast<int64_t>(l.replyBytes(s));
  }
  ++cl.calls;
  double summedLoss = myLoss * static_cast<double>(l.workers);
  std::vector<double> summedNorms(count, 0.0);
  if (oldest >= 0) {
    if (metart_status s =
            land(c, st, cl, params, count, summedLoss, summedNorms, error))
      return s;
    // How many updates the parameters this step computed on lagged: the
    // iterations pushed less the version pulled; asynchronous, the other
    // workers' updates applied between this worker's pull and its push.
    int64_t lag = st.desc.asynchronous ? oldest - 1 - cl.lastVersion
                                       : st.start + cl.calls - oldest;
    cl.largestLag = std::max(cl.largestLag, lag);
    cl.lastVersion = oldest;
  }
  if (metart_status s = storeScalar(c, lossOut, summedLoss, error))
    return s;
  if (metart_status s = metart_copy_to_device(
          c, norms->data, summedNorms.data(), count * sizeof(double))) {
    error = metart_context_last_error(c);
    return s;
  }
  int mask = 1;
  if (c->comm)
    mask = (c->comm->mesh[METART_AXIS_TASK] > 1 ? 1 : 0) |
           (c->comm->mesh[METART_AXIS_DATA] > 1 ? 2 : 0);
  c->commStats.addCall(mask ? mask : 1, bytes);
  c->commStats.addSeconds(
      mask ? mask : 1,
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
          .count());
  return METART_OK;
}

metart_status servers::finish(metart_context *c,
                              const metart_tensor *const *params, int64_t count,
                              double *loss, std::string &error) {
  State &st = state();
  Client &cl = client();
  if (!st.active || st.server >= 0 || cl.calls == 0)
    return METART_OK;
  const Layout &l = st.layout;
  for (int64_t s = 0; s < l.servers; ++s) {
    Client::Link &link = cl.links[s];
    if (!pull(st, link, s, st.iterations, st.desc.asynchronous, error))
      return METART_ERROR_BACKEND;
    if (!completePushes(link, error))
      return METART_ERROR_BACKEND;
  }
  double summed = 0;
  std::vector<double> norms;
  if (metart_status s = land(c, st, cl, params, count, summed, norms, error))
    return s;
  if (loss)
    *loss = summed;
  return METART_OK;
}
