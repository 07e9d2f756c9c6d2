//===- ServerEntry.cpp - metart_server_step -------------------------------===//
//
// The C entry point compiled steps call, its operands checked; and, in a
// build without MPI, the parameter servers' functions as errors (a job of
// one process has no servers).
//
//===----------------------------------------------------------------------===//

#include "../Checker.h"
#include "../Context.h"
#include "Servers.h"
#include "metart/comm.h"

using namespace metart;
using namespace metart::comm;

extern "C" metart_status
metart_server_step(metart_context *c, const metart_tensor *const *params,
                   const metart_tensor *const *grads, int64_t count,
                   const metart_tensor *loss, const metart_tensor *loss_out,
                   const metart_tensor *norms) {
  Checker check(c, "metart_server_step");
  if (!check.ok())
    return check.result();
  if (!params || !grads || count < 1)
    return check.invalid("expects parameters and gradients");
  for (int64_t i = 0; i < count; ++i)
    if (!check.floatTensor("a parameter", params[i]) ||
        !check.floatTensor("a gradient", grads[i]) ||
        !check.shape("a gradient", *grads[i],
                     ShapeRef(params[i]->shape, params[i]->rank)))
      return check.result();
  if (!check.floatTensor("loss", loss) ||
      !check.floatTensor("loss_out", loss_out) || !check.tensor("norms", norms))
    return check.result();
  if (norms->dtype != METART_F64 || norms->rank != 1 ||
      norms->shape[0] != count)
    return check.invalid("expects norms of f64 [", count, "]");
  // Pushes and pulls run in program order with the started collectives.
  if (c->commQueue)
    if (KernelStatus s = c->commQueue->run([] { return KernelStatus::ok(); });
        s.failed())
      return check.finish(s);
  std::string error;
  if (metart_status s =
          servers::step(c, params, grads, count, loss, loss_out, norms, error))
    return check.fail(s, error);
  return METART_OK;
}

#ifndef METART_HAVE_MPI
namespace servers = metart::comm::servers;

int32_t servers::stateKinds(const metart_servers_desc &) { return 0; }
bool servers::hasStepCount(const metart_servers_desc &) { return false; }
metart_status servers::prepare(metart_context *, int64_t,
                               const metart_tensor *const *, int64_t,
                               std::string &) {
  return METART_OK;
}
metart_status servers::fetchState(metart_context *,
                                  const metart_tensor *const *, int64_t,
                                  const metart_tensor *const *, int64_t,
                                  int64_t, std::string &error) {
  error = "built without MPI";
  return METART_ERROR_UNSUPPORTED;
}
metart_status servers::stop(metart_context *, int64_t, bool, std::string &) {
  return METART_OK;
}
metart_status servers::join(int64_t, const metart_servers_desc &,
                            const metart_param_spec *, int64_t, int64_t,
                            int64_t, bool, std::string &error) {
  error = "parameter servers need MPI: this runtime was built without it";
  return METART_ERROR_UNSUPPORTED;
}
bool servers::active() { return false; }
bool servers::isServer() { return false; }
bool servers::stale() { return false; }
metart_status servers::serve(std::string &error) {
  error = "built without MPI";
  return METART_ERROR_UNSUPPORTED;
}
metart_status servers::step(metart_context *, const metart_tensor *const *,
                            const metart_tensor *const *, int64_t,
                            const metart_tensor *, const metart_tensor *,
                            const metart_tensor *, std::string &error) {
  error = "parameter servers need MPI: this runtime was built without it";
  return METART_ERROR_UNSUPPORTED;
}
metart_status servers::finish(metart_context *, const metart_tensor *const *,
                              int64_t, double *, std::string &) {
  return METART_OK;
}
int64_t servers::largestLag() { return 0; }
#endif
