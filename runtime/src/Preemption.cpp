//===- Preemption.cpp - a scheduler's SIGTERM ends with a checkpoint ------===//

#include "Preemption.h"

#include <atomic>
#include <csignal>

using namespace metart;

namespace {

volatile std::sig_atomic_t requestedSignal = 0;
std::atomic<bool> isArmed{false};
bool ownsSigterm = false;
struct sigaction previousInt, previousTerm;

void onSignal(int signal) { requestedSignal = signal; }

} // namespace

void preemption::arm(bool handleSigterm) {
  if (isArmed.exchange(true))
    return;
  requestedSignal = 0;
  struct sigaction action = {};
  action.sa_handler = onSignal;
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

void preemption::request(int signal) { requestedSignal = signal; }

int preemption::requested() { return requestedSignal; }
