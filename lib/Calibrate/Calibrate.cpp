//===- Calibrate.cpp - a cluster description of this machine --------------===//
//
// Runs the measurements in order (products, bandwidth, call overhead,
// collectives), then describes one node whose devices are the job's
// ranks, with notes on how each figure was obtained. The host facts the
// notes report (cores, affinity, threads) are read the way the runtime's
// CPU backend reads them (runtime/src/cpu/Parallel.cpp).
//
//===----------------------------------------------------------------------===//

#include "metac/Calibrate/Calibrate.h"

#include "Measurements.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"

#include <algorithm>
#include <ctime>
#include <sched.h>
#include <thread>
#include <unistd.h>

using namespace metac::calibrate;
using namespace metac::planner;

Plan metac::calibrate::planFor(bool quick, bool cuda) {
  Plan plan;
  // Square products from latency-bound to near peak; a GPU needs larger
  // ones to fill.
  int64_t largest = cuda ? (quick ? 2048 : 8192) : (quick ? 512 : 1024);
  for (int64_t n = 8; n <= largest; n *= quick ? 4 : 2)
    plan.gemmSizes.push_back(n);
  if (plan.gemmSizes.back() != largest)
    plan.gemmSizes.push_back(largest);
  // Operands well beyond the last-level cache.
  plan.streamElements = (quick ? 8 : 16) << 20;
  // 8 bytes to 8 MiB per rank by factors of 4 (quick: to 2 MiB by 8).
  for (double bytes = 8; bytes <= (quick ? 2 : 8) * 1048576.0;
       bytes *= quick ? 8 : 4)
    plan.messageBytes.push_back(bytes);
  plan.compute = {quick ? 0.01 : 0.05, quick ? 5 : 9, true};
  plan.tiny = {quick ? 0.005 : 0.02, quick ? 5 : 21, true};
  plan.collective = {quick ? 0.003 : 0.01, quick ? 5 : 9, false};
  return plan;
}

namespace {

/// The first value of `key` in a `key : value` file such as /proc/cpuinfo.
std::string procField(const char *path, llvm::StringRef key) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFileAsStream(path);
  if (!file)
    return "";
  llvm::SmallVector<llvm::StringRef> lines;
  (*file)->getBuffer().split(lines, '\n');
  for (llvm::StringRef line : lines) {
    auto [name, value] = line.split(':');
    if (name.trim() == key)
      return value.trim().str();
  }
  return "";
}

/// What the host offers the ranks, as the runtime sees it.
struct Host {
  std::string name, cpuModel;
  int64_t onlineCores = 1, affinityCores = 1, localRanks = 1;
  int64_t loopThreads = 1;
  uint64_t memoryBytes = 0;
  std::string openblasThreads;
};

Host describeHost(int64_t worldSize) {
  Host host;
  char name[256] = {0};
  if (gethostname(name, sizeof(name) - 1) == 0)
    host.name = name;
  host.cpuModel = procField("/proc/cpuinfo", "model name");
  if (host.cpuModel.empty())
    host.cpuModel = "CPU";
  host.onlineCores = std::max(1u, std::thread::hardware_concurrency());
  cpu_set_t set;
  host.affinityCores = sched_getaffinity(0, sizeof(set), &set) == 0
                           ? CPU_COUNT(&set)
                           : host.onlineCores;
  host.localRanks = worldSize;
  if (const char *local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE"))
    host.localRanks = std::max(1, std::atoi(local));
  host.loopThreads = std::max<int64_t>(1, host.affinityCores / host.localRanks);
  if (const char *threads = std::getenv("METART_NUM_THREADS"))
    host.loopThreads = std::max(1, std::atoi(threads));
  const char *blas = std::getenv("OPENBLAS_NUM_THREADS");
  host.openblasThreads = blas ? blas : "its default";
  // "MemTotal:       24684100 kB"
  uint64_t kib = 0;
  llvm::StringRef(procField("/proc/meminfo", "MemTotal"))
      .split(' ')
      .first.getAsInteger(10, kib);
  host.memoryBytes = kib * 1024;
  return host;
}

/// The name and memory of GPU `device`, from nvidia-smi (the runtime's C
/// API does not report them).
llvm::Expected<std::pair<std::string, uint64_t>> describeGpu(int64_t device) {
  llvm::ErrorOr<std::string> smi = llvm::sys::findProgramByName("nvidia-smi");
  if (!smi)
    return llvm::createStringError("--backend=cuda needs nvidia-smi to read "
                                   "the GPU's name and memory");
  llvm::SmallString<128> out;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("metac-calibrate", "csv", out))
    return llvm::errorCodeToError(ec);
  std::string index = std::to_string(device);
  llvm::StringRef args[] = {*smi, "--query-gpu=name,memory.total",
                            "--format=csv,noheader,nounits", "-i", index};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, out.str(),
                                                std::nullopt};
  int code = llvm::sys::ExecuteAndWait(*smi, args, std::nullopt, redirects);
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> text =
      llvm::MemoryBuffer::getFile(out);
  llvm::sys::fs::remove(out);
  uint64_t mib = 0;
  if (code != 0 || !text)
    return llvm::createStringError("nvidia-smi could not describe GPU " +
                                   index);
  auto [name, memory] = (*text)->getBuffer().trim().rsplit(',');
  if (memory.trim().getAsInteger(10, mib))
    return llvm::createStringError("cannot read nvidia-smi's memory.total '" +
                                   memory.str() + "'");
  return std::make_pair(name.trim().str(), mib << 20);
}

std::string utcNow() {
  std::time_t t = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M UTC", std::gmtime(&t));
  return text;
}

std::string sizes(llvm::ArrayRef<int64_t> values) {
  return llvm::join(
      llvm::map_range(values, [](int64_t v) { return std::to_string(v); }),
      ", ");
}

std::string bytesText(double bytes) {
  if (bytes >= 1048576)
    return llvm::formatv("{0:f0} MiB", bytes / 1048576).str();
  if (bytes >= 1024)
    return llvm::formatv("{0:f0} KiB", bytes / 1024).str();
  return llvm::formatv("{0:f0} B", bytes).str();
}

} // namespace

llvm::Expected<Calibration>
metac::calibrate::calibrate(const CalibrationOptions &options) {
  llvm::Expected<std::unique_ptr<Session>> created =
      Session::create(options.cuda);
  if (!created)
    return created.takeError();
  Session &session = **created;
  int64_t n = session.size();
  Host host = describeHost(n);
  if (host.localRanks != n)
    return llvm::createStringError(
        llvm::formatv("calibrate measures one node, but only {0} of the "
                      "job's {1} ranks are on this host",
                      host.localRanks, n)
            .str());
  llvm::raw_ostream *progress =
      session.rank() == 0 ? options.progress : nullptr;
  auto say = [&](const llvm::Twine &what) {
    if (progress)
      *progress << "calibrate: " << what << "\n";
  };
  Plan plan = planFor(options.quick, options.cuda);
  const char *backend = options.cuda ? "cuda" : "cpu";

  Calibration result;
  ClusterDescription &cluster = result.cluster;
  cluster.name = options.name.empty()
                     ? llvm::formatv("calibrated-{0}-{1}", backend, n).str()
                     : options.name;
  cluster.nodes = 1;
  cluster.devicesPerNode = n;
  DeviceDescription &device = cluster.device;
  device.kind = options.cuda ? "gpu" : "cpu";
  if (options.cuda) {
    auto gpu = describeGpu(metart_world_local_rank());
    if (!gpu)
      return gpu.takeError();
    device.name = gpu->first;
    device.memoryBytes = gpu->second;
  } else {
    device.name = llvm::formatv("{0} ({1} rank{2} on {3} cores)", host.cpuModel,
                                n, n == 1 ? "" : "s", host.onlineCores)
                      .str();
    device.memoryBytes = host.memoryBytes / uint64_t(n);
  }
  if (device.memoryBytes == 0)
    return llvm::createStringError("cannot read the memory of the device");

  say(llvm::formatv("{0} products, m = n = k in {1}", backend,
                    sizes(plan.gemmSizes)));
  llvm::Expected<std::vector<GemmRate>> gemm = measureGemm(session, plan);
  if (!gemm)
    return gemm.takeError();
  device.gemmRates = *gemm;
  for (const GemmRate &g : device.gemmRates) {
    device.peakFlops.f32 = std::max(device.peakFlops.f32, g.rate.f32);
    device.peakFlops.f64 = std::max(device.peakFlops.f64, g.rate.f64);
  }
  say("memory bandwidth");
  llvm::Expected<double> bandwidth = measureBandwidth(session, plan);
  if (!bandwidth)
    return bandwidth.takeError();
  device.memoryBandwidth = *bandwidth;
  say("launch overhead");
  llvm::Expected<double> overhead = measureLaunchOverhead(session, plan);
  if (!overhead)
    return overhead.takeError();
  device.launchOverhead = *overhead;
  if (n > 1)
    say(llvm::formatv("collectives over {0} ranks, {1} to {2} per rank", n,
                      bytesText(plan.messageBytes.front()),
                      bytesText(plan.messageBytes.back())));
  llvm::Expected<std::vector<MeasuredFit>> fits =
      measureCollectives(session, plan);
  if (!fits)
    return fits.takeError();
  for (const MeasuredFit &f : *fits) {
    if (f.fit.collective == "send_recv") {
      LinkDescription link;
      link.level = LinkLevel::Node;
      link.kind = options.cuda ? LinkKind::PCIe : LinkKind::SharedMemory;
      link.bandwidth = f.fit.beta;
      link.latency = f.fit.alpha;
      cluster.links.push_back(link);
    }
    cluster.collectiveFits.push_back(f.fit);
  }

  // The notes: the file's comments.
  std::vector<std::string> &notes = result.notes;
  auto note = [&](const llvm::Twine &line) { notes.push_back(line.str()); };
  note(llvm::formatv("Written by `metac calibrate --backend={0}{1}` on {2}, "
                     "host {3}.",
                     backend, options.quick ? " --quick" : "", utcNow(),
                     host.name));
  if (options.cuda)
    note(llvm::formatv("{0} ranks, one GPU each (by local rank).", n));
  else
    note(llvm::formatv(
        "{0} rank{1} (devices) on {2} cores; each rank's affinity mask holds "
        "{3}; {4} thread{5} per rank for the runtime's loops, {6} for "
        "OpenBLAS (OPENBLAS_NUM_THREADS).",
        n, n == 1 ? "" : "s", host.onlineCores, host.affinityCores,
        host.loopThreads, host.loopThreads == 1 ? "" : "s",
        host.openblasThreads));
  if (!options.cuda && n > host.onlineCores)
    note(llvm::formatv("More ranks than cores: the ranks share the cores, and "
                       "every rate is one rank's share ({0} ranks on {1}).",
                       n, host.onlineCores));
  note("Every figure is measured through metart's C API with all ranks "
       "running at once; a time is the slowest rank's median of samples, "
       "each started by a barrier (a compute sample also ends when every "
       "rank is done).");
  note(options.cuda ? "memory_bytes: the GPU's memory.total (nvidia-smi)."
                    : llvm::formatv("memory_bytes: MemTotal of /proc/meminfo "
                                    "({0} bytes) / {1} rank{2}.",
                                    host.memoryBytes, n, n == 1 ? "" : "s")
                          .str());
  note(llvm::formatv("gemm: metart_nn_matmul of n x n by n x n (flops = "
                     "2n^3), n in {0}; {1} samples of {2:f0} ms; peak_flops "
                     "is the best of these rates.",
                     sizes(plan.gemmSizes), plan.compute.samples,
                     plan.compute.sampleSeconds * 1e3));
  note(llvm::formatv("memory_bandwidth: metart_nn_binary add of {0} f32 "
                     "elements: 2 operands read and 1 result written per "
                     "second.",
                     plan.streamElements));
  note(llvm::formatv("launch_overhead: metart_nn_binary add of 4 f32 "
                     "elements, median of {0} samples of {1:f0} ms.",
                     plan.tiny.samples, plan.tiny.sampleSeconds * 1e3));
  if (n > 1) {
    note(llvm::formatv(
        "collective_fits: time = alpha + bytes / beta, least squares on "
        "relative residuals over {0} payloads of {1} to {2} per rank (f32; "
        "all_gather counts the gathered result), each the median of {3} "
        "samples of {4:f0} ms; groups of g are the data axis of mesh "
        "task=N/g,data=g, all groups at once.",
        plan.messageBytes.size(), bytesText(plan.messageBytes.front()),
        bytesText(plan.messageBytes.back()), plan.collective.samples,
        plan.collective.sampleSeconds * 1e3));
    note("send_recv (and the node link): ping-pong between ranks 2i and 2i+1, "
         "all pairs at once; half a round trip per message.");
    for (const MeasuredFit &f : *fits) {
      note(llvm::formatv("  {0} over {1}: alpha {2:f2} us, beta {3:f3} GB/s, "
                         "worst relative residual {4:f0}%; measured:",
                         f.fit.collective, f.fit.group, f.fit.alpha * 1e6,
                         f.fit.beta / 1e9, f.worst * 100));
      std::string line = "   ";
      for (size_t i = 0; i < f.bytes.size(); ++i)
        line += llvm::formatv(" {0} {1:f1} us{2}", bytesText(f.bytes[i]),
                              f.seconds[i] * 1e6,
                              i + 1 < f.bytes.size() ? "," : "");
      note(line);
    }
  }
  return result;
}
