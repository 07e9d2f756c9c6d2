//===- Preemption.h - a scheduler's SIGTERM ends with a checkpoint -*- C++
//-*-===//
//
// Schedulers (Slurm, Kubernetes, torchrun's agent) stop a job with SIGTERM
// and kill it a grace period later. While a training run that writes
// checkpoints is armed, SIGTERM and SIGINT only request a stop: the ranks
// agree on it at the end of the meta-iteration in flight, write a
// checkpoint and exit with 128 + the signal. Under MPI the watchdog owns
// SIGTERM (comm/Watchdog.cpp) and requests the stop here.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_PREEMPTION_H
#define METART_SRC_PREEMPTION_H

namespace metart::preemption {

/// Arms preemption: SIGINT, and SIGTERM where `handleSigterm` (no watchdog
/// owns it), request a stop instead of ending the process.
void arm(bool handleSigterm);
/// Restores the handlers that were there before arm.
void disarm();
bool armed();
/// Requests a stop for `signal` (async-signal-safe; the first request
/// stands).
void request(int signal);
/// The signal that requested a stop on this rank, or 0.
int requested();
/// Records the signal the ranks agreed on (the largest any saw)...
void agree(int signal);
/// ... which the process's exit code follows (else this rank's request).
int agreed();

} // namespace metart::preemption

#endif // METART_SRC_PREEMPTION_H
