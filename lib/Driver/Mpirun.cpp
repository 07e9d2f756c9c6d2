//===- Mpirun.cpp - `--np N`: the same command under mpirun -------------===//

#include "metac/Driver/Driver.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <string>
#include <unistd.h>

using namespace llvm;

/// `--np N` of `metac run` and `metac calibrate`: runs the same command as N
/// processes under mpirun on this machine and returns its exit code.
int metac::launchWithMpirun(int argc, char **argv, int64_t np) {
  if (const char *size = std::getenv("OMPI_COMM_WORLD_SIZE")) {
    if (std::to_string(np) == size)
      return -1; // already launched: go on as one of the ranks
    // One write: every rank says it, and pieces of two lines would mix.
    llvm::errs() << ("metac: error: --np " + std::to_string(np) +
                     " inside a job of " + size + " processes\n");
    return 1;
  }
  llvm::ErrorOr<std::string> mpirun = llvm::sys::findProgramByName("mpirun");
  if (!mpirun) {
    llvm::errs() << "metac: error: --np needs mpirun (install openmpi-bin)\n";
    return 1;
  }
  std::string self = llvm::sys::fs::getMainExecutable(argv[0], nullptr);
  std::string count = std::to_string(np);
  SmallVector<StringRef> args{*mpirun, "-np", count, "--oversubscribe"};
  if (::geteuid() == 0)
    args.push_back("--allow-run-as-root");
  args.push_back(self);
  for (int i = 1; i < argc; ++i)
    args.push_back(argv[i]);
  std::string message;
  int code = llvm::sys::ExecuteAndWait(*mpirun, args, std::nullopt, {}, 0, 0,
                                       &message);
  if (code < 0)
    llvm::errs() << "metac: error: mpirun failed: " << message << "\n";
  return code < 0 ? 1 : code;
}
