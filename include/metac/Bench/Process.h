//===- Process.h - run a program, capture its output ------------*- C++ -*-===//

#ifndef METAC_BENCH_PROCESS_H
#define METAC_BENCH_PROCESS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace metac::bench {

struct ProcessResult {
  int exitCode = -1;  // -1: it did not start, was killed or timed out
  std::string output; // stdout and stderr together
  std::string error;  // why it did not run to an exit code
  double seconds = 0; // wall time
};

/// Runs `program` with `args` (args[0] is the program's name) and waits at
/// most `timeoutSeconds` (0: no limit). The output is kept in memory and,
/// when `logPath` is given, written there too.
ProcessResult runProcess(llvm::StringRef program,
                         llvm::ArrayRef<std::string> args,
                         unsigned timeoutSeconds = 0,
                         llvm::StringRef logPath = "");

/// The output of a short query such as `mpirun --version`, trimmed; none
/// when the program is missing or fails.
std::optional<std::string> queryProgram(llvm::StringRef name,
                                        llvm::ArrayRef<std::string> args);

} // namespace metac::bench

#endif // METAC_BENCH_PROCESS_H
