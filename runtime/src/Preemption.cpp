//===- Preemption.cpp - a scheduler's SIGTERM ends with a checkpoint ------===//

#include "Preemption.h"

#include <atomic>
#include <csignal>

using namespace metart;

namespace {

// Lock-free atomics: safe in a signal handler and between the watchdog's
// thread and the trainer's.
std::atomic<int> requestedSignal{0};
std::atomic<int> agreedSignal{0};
static_assert(std::atomic<int>::is_always_lock_free);
std::atomic<bool> isArmed{false};
bool ownsSigterm = false;
struct sigaction previousInt, previousTerm;

/// The first signal requests the stop; a second one of the same kind ends
/// the process at once, as without preemption (a user pressing Ctrl-C
/// twice, a step that never finishes).
void onSignal(int signal) {
  int none = 0;
  if (requestedSignal.compare_exchange_strong(none, signal))
    return;
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

} // namespace

void preemption::arm(bool handleSigterm) {
  if (isArmed.exchange(true))
    return;
  requestedSignal = 0;
  agreedSignal = 0;
  struct sigaction action = {};
  action.sa_handler = onSignal;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &previousInt);
  ownsSigterm = handleSigterm;
  if (ownsSigterm)
    sigaction(SIGTERM, &action, &previousTerm);
}

void preemption::disarm() {
  if (!isArmed.exchange(false))
    return;
  sigaction(SIGINT, &previousInt, nullptr);
  if (ownsSigterm)
    sigaction(SIGTERM, &previousTerm, nullptr);
}

bool preemption::armed() { return isArmed.load(); }

void preemption::request(int signal) {
  int none = 0;
  requestedSignal.compare_exchange_strong(none, signal);
}

int preemption::requested() { return requestedSignal.load(); }

void preemption::agree(int signal) { agreedSignal = signal; }

int preemption::agreed() {
  int signal = agreedSignal.load();
  return signal ? signal : requestedSignal.load();
}
