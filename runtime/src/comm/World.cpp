//===- World.cpp - the processes of the job -------------------------------===//
//
// The job's processes as this one sees them, and the launcher that
// started them. Joining and leaving (MPI, the watchdog) are in
// WorldLifetime.cpp.
//
//===----------------------------------------------------------------------===//

#include "World.h"
#include "metart/comm.h"

#include <cstdlib>

using namespace metart;
using namespace metart::comm;

namespace {

World theWorld;

} // namespace

const World &comm::world() { return theWorld; }
World &comm::worldForSetUp() { return theWorld; }

const char *comm::detectLauncher() {
  static const std::pair<const char *, const char *> launchers[] = {
      {"OMPI_COMM_WORLD_SIZE", "mpirun"},
      {"PMIX_RANK", "a PMIx launcher"},
      {"PMI_SIZE", "a PMI launcher"}};
  for (const auto &[variable, name] : launchers)
    if (std::getenv(variable))
      return name;
  return nullptr;
}

extern "C" int64_t metart_world_rank(void) { return theWorld.rank; }
extern "C" int64_t metart_world_size(void) { return theWorld.size; }
extern "C" int64_t metart_world_local_rank(void) { return theWorld.localRank; }
