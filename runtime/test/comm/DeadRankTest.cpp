//===- DeadRankTest.cpp - a dead rank never hangs the job -----------------===//
//
// Launches metart-comm-crash-helper with mpirun -np 4 (real processes),
// lets one rank die or hang mid-run, and checks that every other rank
// exits non-zero, in time, with a message that names the lost rank, and
// that the file rank 0 was writing stays loadable. `timeout` bounds every
// launch, so a regression fails instead of hanging.
//
//===----------------------------------------------------------------------===//

#include "metart/data.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace {

struct Launch {
  int exitCode = -1;
  double seconds = 0;
  std::string output;
};

/// Runs `command` through the shell, with stderr in the output.
Launch launch(const std::string &command) {
  Launch result;
  auto start = std::chrono::steady_clock::now();
  FILE *pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe)
    return result;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0)
    result.output.append(buffer, n);
  int status = pclose(pipe);
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return result;
}

/// A directory of its own for one test, removed with what the ranks left.
class ScratchDir {
public:
  ScratchDir() {
    char pattern[] = "/tmp/metart-dead-rank-XXXXXX";
    if (const char *made = mkdtemp(pattern))
      path = made;
  }
  ~ScratchDir() {
    if (!path.empty())
      std::filesystem::remove_all(path);
  }
  ScratchDir(const ScratchDir &) = delete;
  ScratchDir &operator=(const ScratchDir &) = delete;

  std::string path;
};

/// The helper under mpirun; with `reportExit`, each rank prints its exit
/// code ("rank exited with N"), for launchers that do not pass it on.
std::string helper(const std::string &mpirunOptions, const char *mode,
                   int victim, const std::string &dir,
                   bool reportExit = false) {
  std::string rank = std::string(METART_CRASH_HELPER " ") + mode + " " +
                     std::to_string(victim) + " " + dir;
  if (reportExit)
    rank = "sh -c '" + rank + "; echo rank exited with $? >&2'";
  return std::string("timeout -k 5 100 " METART_MPIEXEC " ") + mpirunOptions +
         " -np 4 " + rank;
}

/// How many times `needle` occurs in `text`.
int occurrences(const std::string &text, const std::string &needle) {
  int count = 0;
  for (size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + 1))
    ++count;
  return count;
}

void expectLoadable(const std::string &dir) {
  std::string path = dir + "/state.safetensors";
  metart_safetensors *file = nullptr;
  char error[256] = "";
  EXPECT_EQ(metart_safetensors_open(path.c_str(), &file, error, sizeof(error)),
            METART_OK)
      << error;
  if (file)
    metart_safetensors_close(file);
}

void expectSurvivorsNamed(const Launch &run, int victim) {
  EXPECT_NE(run.exitCode, 124) << "timed out:\n" << run.output;
  EXPECT_LT(run.seconds, 60.0) << run.output;
  for (int rank = 0; rank < 4; ++rank)
    if (rank != victim)
      EXPECT_NE(run.output.find("metart: rank " + std::to_string(rank) +
                                ": lost rank " + std::to_string(victim) +
                                " (pid "),
                std::string::npos)
          << "rank " << rank << " did not name the lost rank:\n"
          << run.output;
  EXPECT_EQ(run.output.find("went on without"), std::string::npos)
      << run.output;
}

TEST(DeadRank, KilledRankStopsTheOthers) {
  ScratchDir scratch;
  ASSERT_FALSE(scratch.path.empty()) << "mkdtemp failed";
  const std::string &dir = scratch.path;
  Launch run = launch(helper("", "kill", 2, dir));
  EXPECT_NE(run.exitCode, 0) << run.output;
  expectSurvivorsNamed(run, 2);
  expectLoadable(dir);
}

// --enable-recovery: mpirun lets the others run on (they would wait in the
// collective forever) and exits with 0 whatever the ranks return, so each
// rank reports its own exit code.
TEST(DeadRank, KilledRankStopsTheOthersWhenTheLauncherDoesNot) {
  ScratchDir scratch;
  ASSERT_FALSE(scratch.path.empty()) << "mkdtemp failed";
  const std::string &dir = scratch.path;
  Launch run = launch(helper("--enable-recovery", "kill", 1, dir, true));
  expectSurvivorsNamed(run, 1);
  EXPECT_EQ(occurrences(run.output, "rank exited with 1\n"), 3) << run.output;
  expectLoadable(dir);
}

// A hung rank (stopped, so still alive): the collective's timeout stops
// the others.
TEST(DeadRank, HungRankStopsTheOthersAfterTheTimeout) {
  ScratchDir scratch;
  ASSERT_FALSE(scratch.path.empty()) << "mkdtemp failed";
  const std::string &dir = scratch.path;
  Launch run = launch("METART_COMM_TIMEOUT=3 " + helper("", "stop", 3, dir));
  EXPECT_NE(run.exitCode, 0) << run.output;
  EXPECT_NE(run.exitCode, 124) << "timed out:\n" << run.output;
  EXPECT_LT(run.seconds, 30.0) << run.output;
  EXPECT_NE(run.output.find("made no progress for 3 s"), std::string::npos)
      << run.output;
  expectLoadable(dir);
}

} // namespace
