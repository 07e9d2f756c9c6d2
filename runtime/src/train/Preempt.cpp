//===- Preempt.cpp - a stop requested by SIGTERM or SIGINT ----------------===//
//
// A signal arrives on some ranks, at different points of a meta-iteration;
// the ranks must stop after the same one, or the checkpoint would mix
// iterations. Each rank offers the signal it saw at the end of every
// meta-iteration, the largest over all ranks wins, and all write the
// checkpoint of that iteration and stop. One f64 all-reduce per
// meta-iteration, only where a checkpoint directory makes preemption
// possible (with staleness, it makes the ranks meet once per iteration).
//
//===----------------------------------------------------------------------===//

#include "../Preemption.h"
#include "../comm/Servers.h"
#include "Trainer.h"
#include "metart/comm.h"

#include <csignal>
#include <string>

namespace metart::train {

metart_status Trainer::agreePreemption(int &signal) {
  signal = preemption::requested();
  if (metart_world_size() == 1)
    return METART_OK;
  double value = signal;
  void *data = preemptFlag.descriptor.data;
  metart_status s = metart_copy_to_device(context, data, &value, sizeof(value));
  if (!s)
    s = metart_all_reduce(context, &preemptFlag.descriptor,
                          &preemptFlag.descriptor, METART_ALL_AXES,
                          METART_REDUCE_MAX);
  if (!s)
    s = metart_copy_to_host(context, &value, data, sizeof(value));
  if (s)
    return fail(s, "agreeing on a requested stop: %s",
                metart_context_last_error(context));
  signal = static_cast<int>(value);
  // Every rank exits with the agreed signal's code.
  if (signal)
    preemption::agree(signal);
  return METART_OK;
}

metart_status Trainer::stopPreempted(int64_t iteration, int signal) {
  // Parameter servers stop after this update (sending the state a
  // checkpoint not yet written needs).
  if (program.servers.count > 0) {
    std::string why;
    if (metart_status s = comm::servers::stop(
            context, iteration, lastCheckpointIteration != iteration, why))
      return fail(s, "stopping the parameter servers: %s", why.c_str());
  }
  if (lastCheckpointIteration != iteration)
    if (metart_status s = saveCheckpoint(iteration))
      return s;
  const char *name = signal == SIGINT    ? "SIGINT"
                     : signal == SIGTERM ? "SIGTERM"
                                         : "a signal";
  return fail(METART_PREEMPTED,
              "stopped by %s after meta-iteration %lld: the checkpoint '%s' "
              "holds it; --resume=%s continues from it",
              name, static_cast<long long>(iteration), lastCheckpoint.c_str(),
              lastCheckpointDir.c_str());
}

} // namespace metart::train

int metart_preemption_signal(void) { return metart::preemption::agreed(); }
