//===- CollectivesBench.cpp - bandwidth of the runtime's collectives ------===//
//
// `mpirun -np N metart-collectives [--max-bytes B] [--min-seconds S]`: the
// time of all_reduce (by each algorithm), all_gather and reduce_scatter on
// f32 buffers from 8 bytes up, over the whole world (one axis), as
// nccl-tests reports them: algorithm bandwidth = bytes / time and bus
// bandwidth = algorithm bandwidth x 2(n-1)/n for all-reduce, x (n-1)/n for
// the others (what each link carries, comparable across n). The time of a
// size is the slowest rank's mean over repetitions (after one warm-up),
// repeated until `min-seconds` passed. Rank 0 prints one line per size and
// algorithm, then ends with JSON lines for scripts.
//
//===----------------------------------------------------------------------===//

#include "metart/comm.h"
#include "metart/metart.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Collective {
  const char *name;
  int32_t algorithm; // for all_reduce
  double busFactor(int64_t n) const {
    double share = static_cast<double>(n - 1) / n;
    return std::strcmp(name, "all_reduce") == 0 ? 2 * share : share;
  }
};

const char *algorithmName(int32_t algorithm) {
  switch (algorithm) {
  case METART_ALLREDUCE_RING:
    return "ring";
  case METART_ALLREDUCE_TREE:
    return "tree";
  case METART_ALLREDUCE_HIERARCHICAL:
    return "hierarchical";
  default:
    return "library";
  }
}

[[noreturn]] void fail(metart_context *c, const char *what) {
  std::fprintf(stderr, "metart-collectives: %s failed: %s\n", what,
               metart_context_last_error(c));
  metart_world_abort(1);
  std::exit(1);
}

} // namespace

int main(int argc, char **argv) {
  int64_t maxBytes = 64 << 20;
  double minSeconds = 0.2;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--max-bytes" && i + 1 < argc)
      maxBytes = std::atoll(argv[++i]);
    else if (arg == "--min-seconds" && i + 1 < argc)
      minSeconds = std::atof(argv[++i]);
    else {
      std::fprintf(stderr, "usage: mpirun -np N metart-collectives "
                           "[--max-bytes B] [--min-seconds S]\n");
      return 2;
    }
  }
  if (metart_world_init() != METART_OK) {
    std::fprintf(stderr, "metart-collectives: %s\n",
                 metart_context_last_error(nullptr));
    return 1;
  }
  int64_t n = metart_world_size(), rank = metart_world_rank();
  metart_context_options options = {METART_BACKEND_CPU, 0, 0};
  metart_context *c = nullptr;
  if (metart_context_create(&options, &c) != METART_OK)
    fail(c, "metart_context_create");
  int64_t mesh[METART_NUM_AXES] = {n, 1, 1, 1, 1, 1};
  if (metart_comm_attach(c, mesh) != METART_OK)
    fail(c, "metart_comm_attach");

  const Collective collectives[] = {
      {"all_reduce", METART_ALLREDUCE_LIBRARY},
      {"all_reduce", METART_ALLREDUCE_RING},
      {"all_reduce", METART_ALLREDUCE_TREE},
      {"all_reduce", METART_ALLREDUCE_HIERARCHICAL},
      {"all_gather", METART_ALLREDUCE_LIBRARY},
      {"reduce_scatter", METART_ALLREDUCE_LIBRARY},
      {"reduce_scatter", METART_ALLREDUCE_RING}};
  if (rank == 0)
    std::printf("# %lld ranks; time: slowest rank's mean; busbw as "
                "nccl-tests\n%-15s %-13s %12s %12s %10s %10s\n",
                static_cast<long long>(n), "collective", "algorithm", "bytes",
                "time_us", "algbw_GBs", "busbw_GBs");
  std::vector<std::string> json;
  for (int64_t bytes = 8; bytes <= maxBytes; bytes *= 4) {
    // Every rank holds `bytes` (all_reduce); all_gather gathers n pieces
    // of bytes / n, reduce_scatter scatters the buffer into n pieces.
    int64_t elements = bytes / 4 / n * n;
    if (elements == 0)
      elements = n;
    std::vector<float> x(elements, 1.0f), y(elements, 0.0f);
    int64_t full[1] = {elements}, part[1] = {elements / n};
    metart_tensor whole = {x.data(), METART_F32, 1, full};
    metart_tensor out = {y.data(), METART_F32, 1, full};
    metart_tensor piece = {x.data(), METART_F32, 1, part};
    metart_tensor pieceOut = {y.data(), METART_F32, 1, part};
    for (const Collective &collective : collectives) {
      auto once = [&] {
        metart_status s;
        if (std::strcmp(collective.name, "all_reduce") == 0)
          s = metart_all_reduce_algorithm(c, &whole, &out, 1, METART_REDUCE_SUM,
                                          collective.algorithm, METART_F32);
        else if (std::strcmp(collective.name, "all_gather") == 0)
          s = metart_all_gather(c, &piece, &out, 1, 0);
        else
          s = metart_reduce_scatter_algorithm(c, &whole, &pieceOut, 1, 0,
                                              METART_REDUCE_SUM,
                                              collective.algorithm);
        if (s != METART_OK)
          fail(c, collective.name);
      };
      once(); // warm-up
      // Every rank runs as many repetitions as rank 0 decides.
      int64_t repetitions = 0;
      double elapsed = 0;
      while (true) {
        if (metart_barrier(c, 1) != METART_OK)
          fail(c, "metart_barrier");
        auto begin = std::chrono::steady_clock::now();
        once();
        elapsed += std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - begin)
                       .count();
        ++repetitions;
        double decide[1] = {elapsed >= minSeconds && repetitions >= 3 ? 1.0
                                                                      : 0.0};
        int64_t one[1] = {1};
        metart_tensor flag = {decide, METART_F64, 1, one};
        if (metart_all_reduce(c, &flag, &flag, 1, METART_REDUCE_MAX) !=
            METART_OK)
          fail(c, "metart_all_reduce");
        if (decide[0] > 0)
          break;
      }
      double mean[1] = {elapsed / repetitions};
      int64_t one[1] = {1};
      metart_tensor slowest = {mean, METART_F64, 1, one};
      if (metart_all_reduce(c, &slowest, &slowest, 1, METART_REDUCE_MAX) !=
          METART_OK)
        fail(c, "metart_all_reduce");
      double payload = static_cast<double>(elements) * 4;
      double algbw = payload / mean[0] / 1e9;
      double busbw = algbw * collective.busFactor(n);
      if (rank == 0) {
        std::printf("%-15s %-13s %12.0f %12.2f %10.3f %10.3f\n",
                    collective.name, algorithmName(collective.algorithm),
                    payload, mean[0] * 1e6, algbw, busbw);
        char line[256];
        std::snprintf(line, sizeof(line),
                      "{\"collective\": \"%s\", \"algorithm\": \"%s\", "
                      "\"ranks\": %lld, \"bytes\": %.0f, \"seconds\": %.9g, "
                      "\"algbw_GBs\": %.6g, \"busbw_GBs\": %.6g}",
                      collective.name, algorithmName(collective.algorithm),
                      static_cast<long long>(n), payload, mean[0], algbw,
                      busbw);
        json.push_back(line);
      }
    }
  }
  if (rank == 0)
    for (const std::string &line : json)
      std::printf("%s\n", line.c_str());
  metart_context_destroy(c);
  metart_world_finalize();
  return 0;
}
