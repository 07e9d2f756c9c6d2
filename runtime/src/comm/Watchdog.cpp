//===- Watchdog.cpp - a dead rank never hangs the job ---------------------===//
//
// The thread polls the pids of the peers on this host (gathered by
// World.cpp) and the start time of the collective in flight; the SIGTERM
// handler only wakes it through a pipe, since a handler can do little
// safely. A run armed for preemption (../Preemption.h) is asked to stop
// instead, and given METART_PREEMPT_GRACE seconds to checkpoint. Whatever it
// finds, it prints one line and ends the process with _exit, after noting which
// rank it lost (see notePath): the trainer's files are written to a temporary
// and renamed, so an abrupt end leaves them loadable. Overdue device work is
// aborted first (NCCL's communicators), so that no kernel outlives the
// process waiting for a peer.
//
//===----------------------------------------------------------------------===//

#include "Watchdog.h"
#include "../Preemption.h"
#include "Stats.h"
#include "World.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <poll.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace metart::comm;

namespace {

std::atomic<bool> stopping{false};
std::thread thread;
int wakeFds[2] = {-1, -1};
/// Start of the blocking collective in flight (steady clock, ns), 0: none.
std::atomic<int64_t> inFlightSince{0};
std::atomic<const char *> inFlightWhat{""};
std::atomic<int> inFlightMask{0};
std::atomic<int64_t> currentIteration{0};
/// The device work to check; the thread holds the lock while it checks.
std::mutex watchesLock;
std::vector<watchdog::DeviceWatch *> watches;

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Whether `pid` is a live process (not gone, not a zombie).
bool alive(int pid) {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%d/stat", pid);
  FILE *f = std::fopen(path, "r");
  if (!f)
    return false;
  char line[512] = "";
  size_t n = std::fread(line, 1, sizeof(line) - 1, f);
  std::fclose(f);
  line[n] = 0;
  // The state follows the command name, which is in parentheses.
  const char *close = std::strrchr(line, ')');
  if (!close || close[1] != ' ')
    return true;
  char state = close[2];
  return state != 'Z' && state != 'X';
}

/// Where rank `rank` notes, before it stops, which rank it lost: a rank
/// that stops because of another is gone too, and the others must name the
/// first one. In the launcher's session directory of the job, which it
/// removes at the end, else per job (rank 0's pid) in /dev/shm.
std::string notePath(int rank) {
  for (const char *name :
       {"OMPI_MCA_orte_jobfam_session_dir", "PMIX_SERVER_TMPDIR"})
    if (const char *dir = std::getenv(name); dir && *dir)
      return std::string(dir) + "/metart-rank-" + std::to_string(rank) +
             ".lost";
  return "/dev/shm/metart-" + std::to_string(world().peers[0].pid) + "-" +
         std::to_string(rank) + ".lost";
}

/// The rank that rank `rank` noted as lost, or -1.
int readNote(int rank) {
  FILE *f = std::fopen(notePath(rank).c_str(), "r");
  if (!f)
    return -1;
  int lost = -1;
  if (std::fscanf(f, "%d", &lost) != 1)
    lost = -1;
  std::fclose(f);
  return lost;
}

void writeNote(int lost) {
  int fd =
      open(notePath(world().rank).c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0)
    return;
  std::string text = std::to_string(lost) + "\n";
  ssize_t ignored = write(fd, text.data(), text.size());
  (void)ignored;
  close(fd);
}

/// The rank whose loss stops this one: a peer on this host that is gone
/// without having noted a loss of its own, else the loss noted by a gone
/// peer; -1 when every peer on this host is alive.
int lostPeer() {
  const World &w = world();
  const std::string &host = w.peers[w.rank].host;
  int noted = -1;
  for (int r = 0; r < w.size; ++r) {
    if (r == w.rank || w.peers[r].host != host || alive(w.peers[r].pid))
      continue;
    int cause = readNote(r);
    if (cause < 0 || cause == w.rank)
      return r;
    if (noted < 0)
      noted = cause;
  }
  return noted;
}

[[noreturn]] void stopForLostPeer(int peer) {
  const World &w = world();
  writeNote(peer);
  std::fprintf(stderr,
               "metart: rank %d: lost rank %d (pid %d): it exited or was "
               "killed; stopping\n",
               w.rank, peer, w.peers[peer].pid);
  _exit(1);
}

void onSigterm(int) {
  char byte = 'T';
  ssize_t ignored = write(wakeFds[1], &byte, 1);
  (void)ignored;
}

/// --comm-timeout when given, else METART_COMM_TIMEOUT (read when the
/// thread starts), else 50 s; in milliseconds, 0: no limit.
std::atomic<int64_t> timeoutOverrideMs{-1};
int64_t environmentTimeoutMs = 50000;

/// `seconds` in milliseconds, at most about 31 years (0: no limit).
int64_t toMilliseconds(double seconds) {
  if (!(seconds > 0))
    return 0;
  return int64_t(std::min(seconds, 1e9) * 1000 + 0.5);
}

int64_t timeoutMs() {
  if (int64_t given = timeoutOverrideMs.load(); given >= 0)
    return given;
  return environmentTimeoutMs;
}

/// Seconds a preempted run has to write its checkpoint and exit
/// (METART_PREEMPT_GRACE, 120 by default; schedulers allow 30 s and more).
int graceSeconds() {
  const char *text = std::getenv("METART_PREEMPT_GRACE");
  if (!text || !*text)
    return 120;
  return std::atoi(text);
}

/// Ends the process when device work is overdue: aborts what waits on it,
/// for at most a few seconds (an abort that hangs too must not keep the
/// job), then exits as a blocking collective's timeout does.
void checkDevices(int rank, int64_t timeout) {
  std::lock_guard<std::mutex> lock(watchesLock);
  for (watchdog::DeviceWatch *watch : watches) {
    std::string what = watch->overdue(timeout);
    if (what.empty())
      continue;
    std::fprintf(stderr,
                 "metart: rank %d: %s did not complete within %g s "
                 "(--comm-timeout, METART_COMM_TIMEOUT): a rank of its group "
                 "is hung or was lost; aborting\n",
                 rank, what.c_str(), timeout / 1000.0);
    std::fflush(stderr);
    std::atomic<bool> aborted{false};
    std::thread([&] {
      watch->abort();
      aborted = true;
    }).detach();
    for (int i = 0; i < 20 && !aborted.load(); ++i)
      usleep(100000);
    if (!aborted.load())
      std::fprintf(stderr,
                   "metart: rank %d: the abort did not end within 2 s; "
                   "exiting without it\n",
                   rank);
    _exit(1);
  }
}

void run() {
  const World &w = world();
  int64_t preemptedAt = 0;
  while (!stopping.load()) {
    pollfd fd = {wakeFds[0], POLLIN, 0};
    bool terminated = poll(&fd, 1, 200) > 0;
    if (terminated) {
      char bytes[16];
      ssize_t ignored = read(wakeFds[0], bytes, sizeof(bytes));
      (void)ignored;
    }
    if (stopping.load())
      return;
    if (int peer = lostPeer(); peer >= 0)
      stopForLostPeer(peer);
    if (terminated) {
      // The launcher kills the others as soon as it reaped the dead one,
      // but give a peer that is going down a moment to show.
      for (int i = 0; i < 10; ++i) {
        usleep(50000);
        // Stopped meanwhile: the job ended well, its peers may be gone.
        if (stopping.load())
          return;
        if (int peer = lostPeer(); peer >= 0)
          stopForLostPeer(peer);
      }
      // A run that can checkpoint is preempted: the ranks agree at the end
      // of the meta-iteration, write a checkpoint and exit by themselves. A
      // second SIGTERM ends the process at once.
      if (metart::preemption::armed() && !preemptedAt) {
        metart::preemption::request(SIGTERM);
        preemptedAt = nowNs();
        continue;
      }
      std::fprintf(stderr,
                   "metart: rank %d: stopped by SIGTERM (the launcher stops "
                   "the job: another rank failed, on another host or with an "
                   "error); stopping\n",
                   w.rank);
      _exit(143);
    }
    if (preemptedAt &&
        nowNs() - preemptedAt > int64_t(graceSeconds()) * 1000000000) {
      std::fprintf(stderr,
                   "metart: rank %d: stopped by SIGTERM: no checkpoint within "
                   "%d s of it (METART_PREEMPT_GRACE); stopping\n",
                   w.rank, graceSeconds());
      _exit(143);
    }
    int64_t since = inFlightSince.load();
    int64_t timeout = timeoutMs();
    if (timeout > 0 && since && (nowNs() - since) / 1000000 > timeout) {
      std::fprintf(stderr,
                   "metart: rank %d: lost a peer: %s over %s made no progress "
                   "for %g s (--comm-timeout, METART_COMM_TIMEOUT): a rank "
                   "of its group is hung or was lost; stopping\n",
                   w.rank, inFlightWhat.load(), axesName(inFlightMask.load()),
                   timeout / 1000.0);
      _exit(1);
    }
    if (timeout > 0)
      checkDevices(w.rank, timeout);
  }
}

} // namespace

void watchdog::start() {
  if (thread.joinable())
    return;
  // A note left by an earlier job whose rank 0 had the same pid.
  unlink(notePath(world().rank).c_str());
  if (pipe(wakeFds) != 0)
    return;
  if (const char *text = std::getenv("METART_COMM_TIMEOUT"); text && *text)
    environmentTimeoutMs = toMilliseconds(std::atof(text));
  fcntl(wakeFds[1], F_SETFL, O_NONBLOCK);
  struct sigaction action = {};
  action.sa_handler = onSigterm;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  stopping = false;
  thread = std::thread(run);
}

bool watchdog::running() { return thread.joinable(); }

void watchdog::setTimeout(double seconds) {
  timeoutOverrideMs = toMilliseconds(seconds);
}

void watchdog::stop() {
  if (!thread.joinable())
    return;
  stopping = true;
  thread.join();
  signal(SIGTERM, SIG_DFL);
}

void watchdog::enter(const char *what, int mask) {
  inFlightWhat = what;
  inFlightMask = mask;
  inFlightSince = nowNs();
}

void watchdog::leave() { inFlightSince = 0; }

void watchdog::watch(DeviceWatch *watch) {
  std::lock_guard<std::mutex> lock(watchesLock);
  watches.push_back(watch);
}

void watchdog::unwatch(DeviceWatch *watch) {
  std::lock_guard<std::mutex> lock(watchesLock);
  watches.erase(std::remove(watches.begin(), watches.end(), watch),
                watches.end());
}

void watchdog::setIteration(int64_t iteration) { currentIteration = iteration; }

int64_t watchdog::iteration() { return currentIteration.load(); }
