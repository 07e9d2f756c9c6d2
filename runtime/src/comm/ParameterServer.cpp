//===- ParameterServer.cpp - joining the job, and a server's work ---------===//
//
// join() splits the world into the mesh's ranks and the servers. A server
// holds its slice of the flat parameter vector and the optimizer's state
// for it, and per update: sums the pushes (synchronous or stale: every
// worker's push of an iteration, in worker order, so that the sum does not
// depend on timing; asynchronous: one push, scaled to its worker's mean),
// agrees with the other servers on the gradient's norms (the guard's
// verdict and clipping need the whole gradient), applies the optimizer
// with the runtime's own kernels, and replies with its slice.
//
//===----------------------------------------------------------------------===//

#include "../Preemption.h"
#include "MpiTransport.h"
#include "ServerState.h"
#include "Servers.h"
#include "Watchdog.h"
#include "World.h"
#include "metart/metart.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <vector>

using namespace metart;
using namespace metart::comm;
using namespace metart::comm::servers;

State &servers::state() {
  static State s;
  return s;
}

bool servers::active() { return state().active; }
bool servers::isServer() { return state().server >= 0; }
bool servers::stale() {
  return state().active &&
         (state().desc.asynchronous || state().desc.staleness > 0);
}

static size_t dtypeBytes(int32_t dtype) { return dtype == METART_F64 ? 8 : 4; }

int32_t servers::stateKinds(const metart_servers_desc &desc) {
  if (desc.optimizer != METART_OPTIMIZER_SGD)
    return 2;
  return desc.momentum != 0 ? 1 : 0;
}

bool servers::hasStepCount(const metart_servers_desc &desc) {
  return desc.optimizer != METART_OPTIMIZER_SGD;
}

metart_status servers::join(int64_t workers, const metart_servers_desc &desc,
                            const metart_param_spec *params, int64_t numParams,
                            int64_t iterations, int64_t checkpointEvery,
                            bool preemptible, std::string &error) {
  World &w = worldForSetUp();
  State &s = state();
  if (!w.mpi) {
    error = w.tcp ? "parameter servers need MPI: this job's ranks met over "
                    "TCP (torchrun, or srun without MPI)"
                  : "parameter servers are ranks of their own: launch " +
                        std::to_string(workers + desc.count) +
                        " processes with mpirun, " + std::to_string(workers) +
                        " for the mesh and " + std::to_string(desc.count) +
                        " for the servers";
    return METART_ERROR_UNSUPPORTED;
  }
  if (w.size != workers + desc.count) {
    error = "the mesh's " + std::to_string(workers) + " rank" +
            (workers == 1 ? "" : "s") + " and " + std::to_string(desc.count) +
            " parameter server" + (desc.count == 1 ? "" : "s") + " need " +
            std::to_string(workers + desc.count) + " processes, the job has " +
            std::to_string(w.size);
    return METART_ERROR_INVALID_ARGUMENT;
  }
  Layout &l = s.layout;
  l.workers = workers;
  l.servers = desc.count;
  for (int64_t i = 0; i < numParams; ++i) {
    const metart_param_spec &p = params[i];
    if (p.dtype != params[0].dtype ||
        (p.dtype != METART_F32 && p.dtype != METART_F64)) {
      error = "parameter servers hold f32 or f64 parameters of one type; '" +
              std::string(p.name) + "' differs";
      return METART_ERROR_UNSUPPORTED;
    }
    int64_t size = 1;
    for (int32_t d = 0; d < p.rank; ++d)
      size *= p.shape[d];
    l.offsets.push_back(l.total);
    l.sizes.push_back(size);
    l.total += size;
  }
  l.dtype = static_cast<metart_dtype>(numParams ? params[0].dtype : METART_F32);
  l.elementBytes = dtypeBytes(l.dtype);
  if (l.total < desc.count) {
    error = std::to_string(desc.count) + " parameter servers for " +
            std::to_string(l.total) + " parameter elements: each needs one";
    return METART_ERROR_INVALID_ARGUMENT;
  }
  s.desc = desc;
  s.iterations = iterations;
  s.checkpointEvery = checkpointEvery;
  s.preemptible = preemptible && !desc.asynchronous;
  s.server = w.rank >= workers ? w.rank - workers : -1;
  // Collective over the world: every rank, servers included.
  MPI_Comm side = MPI_COMM_NULL;
  if (mpiFailed(MPI_Comm_dup(MPI_COMM_WORLD, &s.exchange), "MPI_Comm_dup",
                error) ||
      mpiFailed(
          MPI_Comm_split(MPI_COMM_WORLD, s.server >= 0 ? 1 : 0, w.rank, &side),
          "MPI_Comm_split", error))
    return METART_ERROR_BACKEND;
  MPI_Comm_set_errhandler(s.exchange, MPI_ERRORS_RETURN);
  if (s.server >= 0)
    s.servers = side;
  else
    meshWorld() = side;
  w.servers = static_cast<int>(desc.count);
  s.active = true;
  return METART_OK;
}

namespace {

/// One server: its slice, the optimizer's state for it, and the kernels'
/// context (host memory).
template <typename T> class Server {
public:
  Server(State &s)
      : s(s), l(s.layout), length(l.length(s.server)),
        pieces(l.pieces(s.server)) {}
  ~Server() {
    if (context)
      metart_context_destroy(context);
  }

  metart_status run(std::string &error);

private:
  metart_status update(std::vector<T> &gradient, double loss, int32_t lossDtype,
                       std::string &error);
  metart_status reply(int64_t worker, bool wait, std::string &error);
  /// Waits until at most `keep` replies are in flight.
  metart_status drainReplies(std::string &error, size_t keep = 0);
  /// The initial message: where to start, the parameters and the state.
  metart_status receiveInitial(std::string &error);
  /// This version's parameters and state, to the first worker (for its
  /// checkpoint).
  metart_status sendState(std::string &error);
  /// The slices of the state kinds, in order.
  std::vector<std::vector<T> *> kinds() {
    std::vector<std::vector<T> *> out;
    if (!first.empty())
      out.push_back(&first);
    if (!second.empty())
      out.push_back(&second);
    return out;
  }
  /// A push from `source` (any, with MPI_ANY_SOURCE); with `tag`, also the
  /// first worker's stop, whose tag it returns.
  bool receive(int source, int64_t &from, std::string &error,
               int *tag = nullptr);
  metart_tensor view(std::vector<T> &v, const Piece &p, int64_t *shape) {
    *shape = p.count;
    return {v.data() + p.local, l.dtype, 1, shape};
  }

  State &s;
  const Layout &l;
  int64_t length;
  std::vector<Piece> pieces;
  metart_context *context = nullptr;
  std::vector<T> params, first, second;
  int64_t counter = 0;
  std::vector<char> incoming;
  int64_t version = 0;
  double lastLoss = 0;
  std::vector<double> partialNorms;
  /// Replies in flight: their buffers stay until sent.
  struct Outgoing {
    std::vector<char> bytes;
    std::vector<MPI_Request> requests;
  };
  std::deque<Outgoing> outgoing;
};

template <typename T>
bool Server<T>::receive(int source, int64_t &from, std::string &error,
                        int *tag) {
  watchdog::Guard guard("parameter server push", kServerMask);
  MPI_Status status;
  if (mpiFailed(MPI_Recv(incoming.data(), static_cast<int>(incoming.size()),
                         MPI_BYTE, source, tag ? MPI_ANY_TAG : kPushTag,
                         s.exchange, &status),
                "a server's MPI_Recv of a push", error))
    return false;
  from = status.MPI_SOURCE;
  if (tag)
    *tag = status.MPI_TAG;
  return true;
}

/// `a + b` in the loss's type (an f32 sum rounds as an f32 all-reduce's).
static double addLoss(double a, double b, int32_t dtype) {
  if (dtype == METART_F32)
    return static_cast<float>(static_cast<float>(a) + static_cast<float>(b));
  return a + b;
}

template <typename T>
metart_status Server<T>::update(std::vector<T> &gradient, double loss,
                                int32_t lossDtype, std::string &error) {
  const metart_servers_desc &d = s.desc;
  int64_t count = static_cast<int64_t>(pieces.size());
  std::vector<int64_t> shapes(2 * count);
  std::vector<metart_tensor> p(count), g(count), m(count), v(count);
  std::vector<const metart_tensor *> gradients(count);
  for (int64_t i = 0; i < count; ++i) {
    p[i] = view(params, pieces[i], &shapes[2 * i]);
    g[i] = view(gradient, pieces[i], &shapes[2 * i + 1]);
    gradients[i] = &g[i];
    if (!first.empty())
      m[i] = {first.data() + pieces[i].local, l.dtype, 1, &shapes[2 * i]};
    if (!second.empty())
      v[i] = {second.data() + pieces[i].local, l.dtype, 1, &shapes[2 * i]};
  }
  // The guard's norms of this slice's parts (metart_update_guard's).
  T lossValue = static_cast<T>(loss);
  metart_tensor lossTensor{&lossValue, l.dtype, 0, nullptr};
  std::vector<double> pieceNorms(count), gate(2, 1.0);
  int64_t normsShape = count, gateShape = 2;
  metart_tensor normsTensor{pieceNorms.data(), METART_F64, 1, &normsShape};
  metart_tensor gateTensor{gate.data(), METART_F64, 1, &gateShape};
  if (metart_status st =
          metart_update_guard(context, &lossTensor, gradients.data(), count,
                              0.0, &normsTensor, &gateTensor)) {
    error = metart_context_last_error(context);
    return st;
  }
  partialNorms.assign(l.numParams(), 0.0);
  for (int64_t i = 0; i < count; ++i)
    partialNorms[pieces[i].param] = pieceNorms[i];
  std::vector<double> norms = partialNorms;
  // Synchronous servers apply the same verdict: they agree on the norms.
  if (l.servers > 1 && !d.asynchronous &&
      mpiFailed(MPI_Allreduce(MPI_IN_PLACE, norms.data(),
                              static_cast<int>(norms.size()), MPI_DOUBLE,
                              MPI_SUM, s.servers),
                "the servers' MPI_Allreduce of the gradient norms", error))
    return METART_ERROR_BACKEND;
  bool finite = std::isfinite(loss);
  double total = 0;
  for (double n : norms) {
    finite = finite && std::isfinite(n);
    total += n;
  }
  gate[0] = finite ? 1 : 0;
  gate[1] = d.clip_norm > 0
                ? std::min(1.0, d.clip_norm / (std::sqrt(total) + 1e-6))
                : 1.0;
  const metart_tensor *gated = d.guarded ? &gateTensor : nullptr;
  metart_status st = METART_OK;
  if (d.optimizer == METART_OPTIMIZER_SGD) {
    for (int64_t i = 0; i < count && !st; ++i)
      st = metart_sgd_update(context, &p[i], &g[i],
                             first.empty() ? nullptr : &m[i], d.lr, d.momentum,
                             d.weight_decay, gated);
  } else {
    metart_tensor step{&counter, METART_I64, 0, nullptr};
    st = metart_increment(context, &step, gated);
    for (int64_t i = 0; i < count && !st; ++i)
      st = metart_adam_update(context, &p[i], &g[i], &m[i], &v[i], &step, d.lr,
                              d.beta1, d.beta2, d.eps, d.weight_decay,
                              d.optimizer == METART_OPTIMIZER_ADAMW, gated);
  }
  if (st)
    error = metart_context_last_error(context);
  (void)lossDtype;
  return st;
}

template <typename T>
metart_status Server<T>::reply(int64_t worker, bool wait, std::string &error) {
  size_t header = l.replyHeader();
  Outgoing out;
  out.bytes.resize(header * sizeof(double) + length * sizeof(T));
  std::vector<double> head(header);
  head[0] = static_cast<double>(version);
  head[1] = lastLoss;
  std::copy(partialNorms.begin(), partialNorms.end(), head.begin() + 2);
  std::memcpy(out.bytes.data(), head.data(), header * sizeof(double));
  std::memcpy(out.bytes.data() + header * sizeof(double), params.data(),
              length * sizeof(T));
  int64_t first = worker < 0 ? 0 : worker;
  int64_t last = worker < 0 ? l.workers : worker + 1;
  for (int64_t w = first; w < last; ++w) {
    MPI_Request r;
    if (mpiFailed(MPI_Isend(out.bytes.data(),
                            static_cast<int>(out.bytes.size()), MPI_BYTE,
                            static_cast<int>(w), kReplyTag, s.exchange, &r),
                  "a server's MPI_Isend of a reply", error))
      return METART_ERROR_BACKEND;
    out.requests.push_back(r);
  }
  outgoing.push_back(std::move(out));
  // Replies the slowest worker has not taken yet: at most the staleness
  // bound and the one in flight.
  return wait ? drainReplies(error)
              : drainReplies(error, static_cast<size_t>(s.desc.staleness + 2));
}

template <typename T>
metart_status Server<T>::drainReplies(std::string &error, size_t keep) {
  while (outgoing.size() > keep) {
    Outgoing &oldest = outgoing.front();
    if (mpiFailed(MPI_Waitall(static_cast<int>(oldest.requests.size()),
                              oldest.requests.data(), MPI_STATUSES_IGNORE),
                  "a server's MPI_Waitall of its replies", error))
      return METART_ERROR_BACKEND;
    outgoing.pop_front();
  }
  return METART_OK;
}

template <typename T>
metart_status Server<T>::receiveInitial(std::string &error) {
  std::vector<std::vector<T> *> slices = kinds();
  std::vector<char> message(
      l.stateBytes(s.server, static_cast<int32_t>(slices.size())));
  {
    watchdog::Guard guard("parameter server start", kServerMask);
    if (mpiFailed(MPI_Recv(message.data(), static_cast<int>(message.size()),
                           MPI_BYTE, 0, kInitTag, s.exchange,
                           MPI_STATUS_IGNORE),
                  "a server's MPI_Recv of the initial parameters", error))
      return METART_ERROR_BACKEND;
  }
  double header[kStateHeader];
  std::memcpy(header, message.data(), sizeof(header));
  s.start = static_cast<int64_t>(header[0]);
  counter = static_cast<int64_t>(header[1]);
  version = s.start;
  const char *at = message.data() + sizeof(header);
  for (std::vector<T> *v : {&params})
    std::memcpy(v->data(), at, length * sizeof(T)), at += length * sizeof(T);
  for (std::vector<T> *v : slices)
    std::memcpy(v->data(), at, length * sizeof(T)), at += length * sizeof(T);
  return METART_OK;
}

template <typename T> metart_status Server<T>::sendState(std::string &error) {
  std::vector<std::vector<T> *> slices = kinds();
  std::vector<char> message(
      l.stateBytes(s.server, static_cast<int32_t>(slices.size())));
  double header[kStateHeader] = {static_cast<double>(version),
                                 static_cast<double>(counter)};
  std::memcpy(message.data(), header, sizeof(header));
  char *at = message.data() + sizeof(header);
  std::memcpy(at, params.data(), length * sizeof(T));
  at += length * sizeof(T);
  for (std::vector<T> *v : slices)
    std::memcpy(at, v->data(), length * sizeof(T)), at += length * sizeof(T);
  if (mpiFailed(MPI_Send(message.data(), static_cast<int>(message.size()),
                         MPI_BYTE, 0, kStateTag, s.exchange),
                "a server's MPI_Send of its state", error))
    return METART_ERROR_BACKEND;
  return METART_OK;
}

template <typename T> metart_status Server<T>::run(std::string &error) {
  metart_context_options options{};
  options.backend = METART_BACKEND_CPU;
  if (metart_status st = metart_context_create(&options, &context)) {
    error = std::string("cannot create the server's context: ") +
            metart_context_last_error(nullptr);
    return st;
  }
  const metart_servers_desc &d = s.desc;
  params.resize(length);
  if (d.optimizer != METART_OPTIMIZER_SGD) {
    first.assign(length, T(0));
    second.assign(length, T(0));
  } else if (d.momentum != 0) {
    first.assign(length, T(0));
  }
  partialNorms.assign(l.numParams(), 0.0);
  incoming.resize(l.pushBytes(s.server));
  // The initial parameters and state, from the first worker's first step.
  if (metart_status st = receiveInitial(error))
    return st;
  // A scheduler's SIGTERM reaches the servers too: they wait for the
  // workers' stop, which comes after the checkpoint's iteration.
  if (s.preemptible)
    preemption::arm(!watchdog::running());
  std::vector<T> sum(length);
  auto gradientOf = [&]() {
    return reinterpret_cast<const T *>(incoming.data() +
                                       kPushHeader * sizeof(double));
  };
  auto headerOf = [&](int i) {
    double h;
    std::memcpy(&h, incoming.data() + i * sizeof(double), sizeof(double));
    return h;
  };
  if (d.asynchronous) {
    // Every push is an update by its worker's mean gradient.
    T scale = static_cast<T>(l.workers);
    for (int64_t k = 0; k < l.workers * (s.iterations - s.start); ++k) {
      int64_t from = 0;
      if (!receive(MPI_ANY_SOURCE, from, error))
        return METART_ERROR_BACKEND;
      const T *g = gradientOf();
      for (int64_t i = 0; i < length; ++i)
        sum[i] = g[i] * scale;
      int32_t lossDtype = static_cast<int32_t>(headerOf(2));
      double loss =
          lossDtype == METART_F32
              ? static_cast<float>(headerOf(0)) * static_cast<float>(l.workers)
              : headerOf(0) * static_cast<double>(l.workers);
      if (metart_status st = update(sum, loss, lossDtype, error))
        return st;
      ++version;
      lastLoss = loss;
      if (metart_status st = reply(from, false, error))
        return st;
    }
    // The final parameters, to every worker.
    return reply(-1, true, error);
  }
  for (int64_t t = s.start; t < s.iterations; ++t) {
    double loss = 0;
    int32_t lossDtype = METART_F32;
    for (int64_t w = 0; w < l.workers; ++w) {
      int64_t from = 0;
      int tag = kPushTag;
      if (!receive(static_cast<int>(w), from, error, w == 0 ? &tag : nullptr))
        return METART_ERROR_BACKEND;
      // Preempted: the workers stopped after the update just applied.
      if (tag == kStopTag) {
        if (headerOf(1) != 0)
          if (metart_status st = sendState(error))
            return st;
        return drainReplies(error);
      }
      const T *g = gradientOf();
      if (w == 0)
        std::copy(g, g + length, sum.begin());
      else
        for (int64_t i = 0; i < length; ++i)
          sum[i] += g[i];
      lossDtype = static_cast<int32_t>(headerOf(2));
      loss = w == 0 ? headerOf(0) : addLoss(loss, headerOf(0), lossDtype);
    }
    if (metart_status st = update(sum, loss, lossDtype, error))
      return st;
    ++version;
    lastLoss = loss;
    if (metart_status st = reply(-1, false, error))
      return st;
    // Before waiting for the last replies: a stale first worker takes them
    // only after its checkpoint.
    if (s.checkpointEvery > 0 && version % s.checkpointEvery == 0)
      if (metart_status st = sendState(error))
        return st;
  }
  return drainReplies(error);
}

} // namespace

metart_status servers::serve(std::string &error) {
  State &s = state();
  metart_status st = s.layout.dtype == METART_F64 ? Server<double>(s).run(error)
                                                  : Server<float>(s).run(error);
  if (st)
    error = "parameter server " + std::to_string(s.server) + ": " + error;
  return st;
}
