//===- Environment.cpp - the machine and software of a benchmark ----------===//

#include "metac/Bench/HostInfo.h"
#include "metac/Bench/Process.h"
#include "metac/Bench/RunRecord.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"

#include <sys/utsname.h>
#include <thread>

using namespace metac::bench;
namespace json = llvm::json;

namespace {

std::string osName() {
  auto buffer = llvm::MemoryBuffer::getFileAsStream("/etc/os-release");
  if (!buffer)
    return "";
  llvm::SmallVector<llvm::StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n');
  for (llvm::StringRef line : lines)
    if (line.consume_front("PRETTY_NAME="))
      return line.trim('"').str();
  return "";
}

json::Value orNull(const std::optional<std::string> &text) {
  return text ? json::Value(*text) : json::Value(nullptr);
}

} // namespace

std::string metac::bench::procField(llvm::StringRef path, llvm::StringRef key) {
  auto buffer = llvm::MemoryBuffer::getFileAsStream(path);
  if (!buffer)
    return "";
  llvm::SmallVector<llvm::StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n');
  for (llvm::StringRef line : lines) {
    auto [name, value] = line.split(':');
    if (name.trim() == key)
      return value.trim().str();
  }
  return "";
}

json::Object metac::bench::describeEnvironment() {
  json::Object env;
  env["cpu_model"] = procField("/proc/cpuinfo", "model name");
  env["logical_cores"] =
      static_cast<int64_t>(std::max(1u, std::thread::hardware_concurrency()));
  int64_t memoryKiB = 0;
  (void)llvm::StringRef(procField("/proc/meminfo", "MemTotal"))
      .split(' ')
      .first.getAsInteger(10, memoryKiB);
  env["memory_bytes"] = memoryKiB * 1024;
  // GPUs: name, driver, memory, one line each.
  std::optional<std::string> gpus = queryProgram(
      "nvidia-smi", {"--query-gpu=name,driver_version,memory.total",
                     "--format=csv,noheader"});
  json::Array gpuList;
  if (gpus) {
    llvm::SmallVector<llvm::StringRef> lines;
    llvm::StringRef(*gpus).split(lines, '\n', -1, false);
    for (llvm::StringRef line : lines) {
      llvm::SmallVector<llvm::StringRef> parts;
      line.split(parts, ',');
      json::Object gpu{{"name", parts[0].trim().str()}};
      if (parts.size() > 1)
        gpu["driver"] = parts[1].trim().str();
      if (parts.size() > 2)
        gpu["memory"] = parts[2].trim().str();
      gpuList.push_back(std::move(gpu));
    }
  }
  env["gpus"] = std::move(gpuList);
  std::optional<std::string> mpi = queryProgram("mpirun", {"--version"});
  env["mpi"] = mpi ? json::Value(llvm::StringRef(*mpi).split('\n').first.str())
                   : json::Value(nullptr);
  std::optional<std::string> nvcc = queryProgram("nvcc", {"--version"});
  env["cuda_toolkit"] =
      nvcc ? json::Value(llvm::StringRef(*nvcc).rsplit('\n').second.str())
           : json::Value(nullptr);
  env["llvm"] = LLVM_VERSION_STRING;
  env["compiler"] = __VERSION__;
  env["os"] = osName();
  struct utsname name;
  if (::uname(&name) == 0) {
    env["kernel"] = std::string(name.release);
    env["hostname"] = std::string(name.nodename);
  }
  env["metac_commit"] = orNull(
      queryProgram("git", {"-C", METAC_SOURCE_DIR, "rev-parse", "HEAD"}));
  std::optional<std::string> changes =
      queryProgram("git", {"-C", METAC_SOURCE_DIR, "status", "--porcelain",
                           "--untracked-files=no"});
  env["metac_tree_modified"] =
      changes ? json::Value(!changes->empty()) : json::Value(nullptr);
  for (const char *variable : {"OMP_NUM_THREADS", "METART_MATMUL",
                               "METART_FUSED_KERNELS", "CUDA_VISIBLE_DEVICES"})
    if (std::optional<std::string> value = llvm::sys::Process::GetEnv(variable))
      env[std::string("env_") + variable] = *value;
  return env;
}
