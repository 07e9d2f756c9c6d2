//===- Placement.cpp - oversubscribed ranks pinned to cores ---------------===//

#include "Placement.h"
#include "World.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <sched.h>
#include <vector>

using namespace metart;
using namespace metart::comm;

int64_t comm::pinnedCoreIndex(const int64_t mesh[METART_NUM_AXES], int64_t rank,
                              int64_t ranks, int64_t cores) {
  if (cores < 1 || ranks <= cores || ranks % cores != 0)
    return -1;
  int64_t stages =
      mesh[METART_AXIS_PIPELINE] > 0 ? mesh[METART_AXIS_PIPELINE] : 1;
  // The axes after the pipeline axis vary faster (row-major).
  int64_t inner = 1;
  for (int axis = METART_AXIS_PIPELINE + 1; axis < METART_NUM_AXES; ++axis)
    inner *= mesh[axis] > 0 ? mesh[axis] : 1;
  // Stage-major: the ranks of stage 0 (in rank order) first, then stage 1's.
  int64_t stage = rank / inner % stages;
  int64_t within = rank / (inner * stages) * inner + rank % inner;
  int64_t position = stage * (ranks / stages) + within;
  return position % cores;
}

const std::vector<int> &comm::coresBeforePinning() {
  static const std::vector<int> cores = [] {
    std::vector<int> cpus;
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0)
      for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
        if (CPU_ISSET(cpu, &allowed))
          cpus.push_back(cpu);
    return cpus;
  }();
  return cores;
}

std::string comm::pinOversubscribedRank(const int64_t mesh[METART_NUM_AXES]) {
  if (const char *bind = std::getenv("METART_BIND"))
    if (std::strcmp(bind, "none") == 0)
      return "";
  const World &w = world();
  if (w.size <= 1 || int64_t(w.peers.size()) != w.size)
    return "";
  for (const Peer &peer : w.peers)
    if (peer.host != w.peers[w.rank].host)
      return ""; // several hosts: the launcher places the ranks
  const std::vector<int> &cpus = coresBeforePinning();
  if (cpus.empty())
    return "sched_getaffinity failed";
  int64_t index = pinnedCoreIndex(mesh, w.rank, w.size, int64_t(cpus.size()));
  if (index < 0)
    return "";
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpus[index], &one);
  // Every thread the process has (MPI's and OpenBLAS's included); threads
  // started later inherit the mask.
  DIR *tasks = opendir("/proc/self/task");
  if (!tasks)
    return sched_setaffinity(0, sizeof(one), &one) == 0
               ? ""
               : std::string("sched_setaffinity: ") + std::strerror(errno);
  std::string error;
  while (dirent *entry = readdir(tasks)) {
    int tid = std::atoi(entry->d_name);
    if (tid > 0 && sched_setaffinity(tid, sizeof(one), &one) != 0 &&
        error.empty())
      error = std::string("sched_setaffinity: ") + std::strerror(errno);
  }
  closedir(tasks);
  return error;
}
