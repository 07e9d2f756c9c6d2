//===- Servers.h - parameter servers ----------------------------*- C++ -*-===//
//
// A job with parameter servers has the mesh's ranks first (the workers,
// which run the compiled step) and `count` server ranks after them, which
// hold the meta-parameters and the outer optimizer's state as slices of
// one flat vector and run no compiled code. metart_run joins every rank
// before attaching the mesh (the mesh's communicators then split from the
// workers alone); a server then serves until the workers' last
// meta-iteration, a worker's step pushes and pulls (metart_server_step)
// and its driver collects the final parameters (finish). Over MPI only.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_COMM_SERVERS_H
#define METART_SRC_COMM_SERVERS_H

#include "metart/train.h"

#include <string>

namespace metart::comm::servers {

/// Splits the world into `workers` mesh ranks and desc.count servers; every
/// rank calls it once, before attaching a mesh. `iterations` is the number
/// of meta-iterations every worker runs.
/// `checkpointEvery` (0: none): the servers send the first worker their
/// state after every update whose count it divides (gathered checkpoints).
/// `preemptible`: the run writes checkpoints, so SIGTERM or SIGINT on a
/// server only waits for the workers' stop (see `stop`).
metart_status join(int64_t workers, const metart_servers_desc &desc,
                   const metart_param_spec *params, int64_t numParams,
                   int64_t iterations, int64_t checkpointEvery,
                   bool preemptible, std::string &error);
/// The optimizer's state buffers per parameter that the servers keep (2
/// for Adam, 1 for SGD with momentum, else 0), and whether a step count.
int32_t stateKinds(const metart_servers_desc &desc);
bool hasStepCount(const metart_servers_desc &desc);
/// Whether this process joined a job with parameter servers.
bool active();
/// Whether it is one of the servers.
bool isServer();
/// Whether the workers may hold different parameters at a time (a
/// staleness bound or asynchronous updates): they then never agree on a
/// verdict per iteration.
bool stale();
/// A server's whole job: serves until every worker's last meta-iteration.
metart_status serve(std::string &error);
/// A worker's first push and pull (metart_server_step's work).
metart_status step(metart_context *c, const metart_tensor *const *params,
                   const metart_tensor *const *grads, int64_t count,
                   const metart_tensor *loss, const metart_tensor *lossOut,
                   const metart_tensor *norms, std::string &error);
/// Before a worker's first step: the iteration it starts at (a resumed
/// run's) and, on the first worker, the optimizer state the servers start
/// from, in the trainer's order (per kind, per parameter, then the step
/// count; null: zeros). Copies what it needs.
metart_status prepare(metart_context *c, int64_t start,
                      const metart_tensor *const *state, int64_t stateCount,
                      std::string &error);
/// On the first worker, at a checkpoint after update `version`: the
/// servers' parameters of that version into `params` and their optimizer
/// state into `state` (whole tensors, the trainer's order).
metart_status fetchState(metart_context *c, const metart_tensor *const *params,
                         int64_t count, const metart_tensor *const *state,
                         int64_t stateCount, int64_t version,
                         std::string &error);
/// Preempted after update `version`: every worker takes the replies up to
/// it, and the first tells the servers to stop there (sending their state
/// first when `wantState`, for a checkpoint not yet written).
metart_status stop(metart_context *c, int64_t version, bool wantState,
                   std::string &error);
/// After a worker's last step: the servers' final parameters into
/// `params` (the same on every worker) and, when not null, their last
/// summed meta-loss into `loss` (host double).
metart_status finish(metart_context *c, const metart_tensor *const *params,
                     int64_t count, double *loss, std::string &error);
/// The largest number of updates by which a worker's parameters lagged
/// the iterations it had pushed, over its steps so far.
int64_t largestLag();

} // namespace metart::comm::servers

#endif // METART_SRC_COMM_SERVERS_H
