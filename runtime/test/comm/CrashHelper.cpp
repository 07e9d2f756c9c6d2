//===- CrashHelper.cpp - a job in which one rank dies ---------------------===//
//
// Usage: metart-comm-crash-helper kill|stop VICTIM DIR
// Every rank all-reduces in a loop; rank 0 writes DIR/state.safetensors
// (atomically, as the trainer writes checkpoints) as it goes; after a
// moment rank VICTIM kills itself (SIGKILL) or stops (SIGSTOP, a hung
// rank). DeadRankTest checks that the others stop in time.
//
//===----------------------------------------------------------------------===//

#include "metart/comm.h"
#include "metart/data.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

int main(int argc, char **argv) {
  if (argc != 4)
    return 2;
  bool kill = std::strcmp(argv[1], "kill") == 0;
  int victim = std::atoi(argv[2]);
  std::string state = std::string(argv[3]) + "/state.safetensors";
  metart_context *c = nullptr;
  int64_t mesh[METART_NUM_AXES] = {0, 1, 1, 1, 1, 1};
  if (metart_world_init() || (mesh[0] = metart_world_size(), false) ||
      metart_context_create(nullptr, &c) || metart_comm_attach(c, mesh)) {
    std::fprintf(stderr, "set-up failed: %s\n", metart_context_last_error(c));
    return 1;
  }
  int rank = int(metart_world_rank());
  std::vector<float> values(1024, 1.0f);
  int64_t shape[1] = {1024};
  metart_tensor x = {values.data(), METART_F32, 1, shape};
  auto start = std::chrono::steady_clock::now();
  for (int64_t it = 0;
       std::chrono::steady_clock::now() - start < std::chrono::seconds(90);
       ++it) {
    if (it == 100 && rank == victim)
      raise(kill ? SIGKILL : SIGSTOP);
    if (metart_all_reduce(c, &x, &x, 1, METART_REDUCE_MAX)) {
      std::fprintf(stderr, "rank %d: %s\n", rank, metart_context_last_error(c));
      return 1;
    }
    if (rank == 0 && it % 10 == 0) {
      metart_named_tensor entry = {"iteration", METART_I64, 0, nullptr, &it};
      char error[256];
      if (metart_safetensors_write(state.c_str(), &entry, 1, error,
                                   sizeof(error)))
        std::fprintf(stderr, "%s\n", error);
    }
    usleep(2000);
  }
  std::fprintf(stderr, "rank %d: the job went on without rank %d\n", rank,
               victim);
  metart_context_destroy(c);
  metart_world_finalize();
  return 0;
}
