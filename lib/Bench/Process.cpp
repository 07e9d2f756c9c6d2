//===- Process.cpp - run a program, capture its output --------------------===//

#include "metac/Bench/Process.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"

#include <chrono>

using namespace metac::bench;

ProcessResult metac::bench::runProcess(llvm::StringRef program,
                                       llvm::ArrayRef<std::string> args,
                                       unsigned timeoutSeconds,
                                       llvm::StringRef logPath) {
  ProcessResult result;
  llvm::SmallString<128> output;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("metac-bench", "log", output)) {
    result.error = "cannot create a temporary file: " + ec.message();
    return result;
  }
  llvm::SmallVector<llvm::StringRef> argv(args.begin(), args.end());
  std::optional<llvm::StringRef> redirects[] = {
      llvm::StringRef(""), llvm::StringRef(output), llvm::StringRef(output)};
  auto begin = std::chrono::steady_clock::now();
  bool failedToRun = false;
  result.exitCode =
      llvm::sys::ExecuteAndWait(program, argv, std::nullopt, redirects,
                                timeoutSeconds, 0, &result.error, &failedToRun);
  result.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
          .count();
  if (auto buffer = llvm::MemoryBuffer::getFile(output, /*IsText=*/true))
    result.output = (*buffer)->getBuffer().str();
  if (logPath.empty())
    llvm::sys::fs::remove(output);
  else if (llvm::sys::fs::rename(output, logPath))
    (void)llvm::sys::fs::copy_file(output, logPath),
        llvm::sys::fs::remove(output);
  if (result.exitCode < 0 && result.error.empty())
    result.error = "it was killed";
  return result;
}

std::optional<std::string>
metac::bench::queryProgram(llvm::StringRef name,
                           llvm::ArrayRef<std::string> args) {
  llvm::ErrorOr<std::string> path = llvm::sys::findProgramByName(name);
  if (!path)
    return std::nullopt;
  std::vector<std::string> argv{name.str()};
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessResult result = runProcess(*path, argv, /*timeoutSeconds=*/30);
  if (result.exitCode != 0)
    return std::nullopt;
  return llvm::StringRef(result.output).trim().str();
}
