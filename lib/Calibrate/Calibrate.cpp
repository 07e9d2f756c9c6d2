//===- Calibrate.cpp - a cluster description of this machine --------------===//
//
// Runs the measurements in order (bandwidth, kinds of kernels, products,
// call overhead, collectives), then describes one node whose devices are
// the job's ranks, with notes on how each figure was obtained. The host facts
// the notes report (cores, affinity, threads) are read the way the runtime's
// CPU backend reads them (runtime/src/cpu/Parallel.cpp).
//
//===----------------------------------------------------------------------===//

#include "metac/Calibrate/Calibrate.h"
#include "metac/Bench/HostInfo.h"

#include "Measurements.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <sched.h>
#include <thread>
#include <unistd.h>

using namespace metac::calibrate;
using namespace metac::planner;

Plan metac::calibrate::planFor(bool quick, bool cuda, int64_t loopThreads) {
  Plan plan;
  // Square products from latency-bound to near peak; a GPU needs larger
  // ones to fill.
  int64_t largest = cuda ? (quick ? 2048 : 8192) : (quick ? 512 : 1024);
  for (int64_t n = 8; n <= largest; n *= quick ? 4 : 2)
    plan.gemmSizes.push_back(n);
  if (plan.gemmSizes.back() != largest)
    plan.gemmSizes.push_back(largest);
  // Products and tensors as metac's programs have them: a task dimension
  // first (5 to 32 tasks), a few to 128 samples, 16 to 512 features; from
  // MAML's sinusoid ([25, 10, 40] by 40 x 40) to MiB.
  if (quick) {
    plan.productShapes = {{5, 5, 16, 16}, {25, 10, 40, 40}, {16, 32, 128, 128}};
    plan.kernelShapes = {{5, 10, 40}, {25, 40, 40}, {32, 64, 256}};
    plan.optimizerWidths = {8, 64, 256};
  } else {
    plan.productShapes = {
        {5, 5, 16, 16},    {25, 10, 40, 40},   {32, 16, 64, 64},
        {25, 20, 32, 128}, {5, 5, 256, 256},   {16, 32, 128, 128},
        {8, 64, 512, 64},  {32, 64, 256, 256}, {32, 64, 512, 512}};
    plan.kernelShapes = {{4, 5, 10},     {5, 10, 40},   {25, 10, 40},
                         {25, 40, 40},   {32, 64, 64},  {32, 64, 256},
                         {32, 128, 256}, {8, 256, 1024}};
    plan.optimizerWidths = {8, 40, 64, 128, 256, 512};
  }
  // GEMMs by shape: one to a few hundred rows (a task's, or a data
  // shard's) against weights of 16 x 16 to 1024 x 1024 (a GPU: to 8192).
  plan.gridThin = {1, 4, 16, 64, 256};
  plan.gridSides = {16, 64, 256, 512, 1024};
  if (cuda)
    plan.gridSides = {64, 256, 1024, 4096, 8192};
  if (quick) {
    plan.gridThin = {1, 16, 256};
    plan.gridSides = {16, 256, cuda ? 4096 : 1024};
  }
  // Operands well beyond the last-level cache.
  plan.streamElements = (quick ? 8 : 16) << 20;
  // 8 bytes to 8 MiB per rank by factors of 4 (quick: of 16).
  for (double bytes = 8; bytes <= 8 * 1048576.0; bytes *= quick ? 16 : 4)
    plan.messageBytes.push_back(bytes);
  // Kernels on the CPU are timed alone, each after 20 us of other work on
  // the calling thread, as between the ops of a step: long enough for the
  // loop threads to fall asleep. (A GPU queues its kernels: back to back.)
  double gap = cuda ? 0 : 20e-6;
  plan.compute = {quick ? 0.01 : 0.05, quick ? 5 : 9, true, gap};
  plan.product = {quick ? 0.004 : 0.02, quick ? 5 : 9, true, gap};
  plan.kernel = {quick ? 0.003 : 0.01, quick ? 5 : 9, true, gap};
  plan.tiny = {quick ? 0.005 : 0.02, quick ? 5 : 21, true, gap};
  plan.collective = {quick ? 0.003 : 0.01, quick ? 5 : 9, false};
  plan.wakesLoopThreads = !cuda && loopThreads > 1;
  return plan;
}

namespace {

/// What the host offers the ranks, as the runtime sees it.
struct Host {
  std::string name, cpuModel;
  int64_t onlineCores = 1, affinityCores = 1, localRanks = 1;
  int64_t loopThreads = 1;
  uint64_t memoryBytes = 0;
  /// The cache each local rank keeps to itself (cacheBytesPerRank).
  double cacheBytesPerRank = 0;
  std::string openblasThreads;
};

/// The cache a rank keeps to itself: cpu0's caches from L2 up that no
/// other cpu shares (sysfs). A shared level (the L3 of a socket, which on
/// a virtual machine other tenants use as well) counts only where no level
/// is private, over the ranks sharing it. None when ranks outnumber the
/// `cores`: they take turns on a core at every message and every poll of
/// a waiting rank, each filling its caches with its own data (measured:
/// the sinusoid and Fashion-MNIST on 4 and 5 ranks on 2 cores ran as their
/// kernels do on operands from memory, 0-20% slower than the hot tables
/// predicted with the cache split among the ranks; docs/plan-accuracy.md).
double cacheBytesPerRank(int64_t cores, int64_t localRanks) {
  if (localRanks > cores)
    return 0;
  double privateBytes = 0, sharedBytes = 0;
  for (int index = 0;; ++index) {
    std::string dir =
        "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
    auto read = [&](const char *field) {
      // sysfs files say 4096 bytes whatever they hold: read as a stream.
      auto buffer = llvm::MemoryBuffer::getFileAsStream(dir + "/" + field);
      return buffer ? (*buffer)->getBuffer().trim().str() : std::string();
    };
    std::string level = read("level");
    if (level.empty())
      break;
    std::string type = read("type");
    if (std::atoi(level.c_str()) < 2 || type == "Instruction")
      continue;
    // "2048K"
    std::string sizeText = read("size");
    llvm::StringRef size = sizeText;
    uint64_t kib = 0;
    if (!size.consume_back("K") || size.getAsInteger(10, kib) || kib == 0)
      continue;
    // "0-1" or "0,2": the cpus sharing this cache.
    int64_t sharing = 0;
    llvm::SmallVector<llvm::StringRef> ranges;
    llvm::StringRef(read("shared_cpu_list")).split(ranges, ',');
    for (llvm::StringRef range : ranges) {
      auto [first, last] = range.split('-');
      int64_t a = 0, b = 0;
      if (first.getAsInteger(10, a))
        continue;
      if (last.empty() || last.getAsInteger(10, b))
        b = a;
      sharing += b - a + 1;
    }
    sharing = std::clamp<int64_t>(sharing, 1, cores);
    double ranksPerCache =
        std::max(1.0, double(localRanks) * double(sharing) / double(cores));
    (sharing == 1 ? privateBytes : sharedBytes) +=
        double(kib) * 1024 / ranksPerCache;
  }
  return privateBytes > 0 ? privateBytes : sharedBytes;
}

Host describeHost(int64_t worldSize) {
  Host host;
  char name[256] = {0};
  if (gethostname(name, sizeof(name) - 1) == 0)
    host.name = name;
  host.cpuModel = metac::bench::procField("/proc/cpuinfo", "model name");
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
  llvm::StringRef(metac::bench::procField("/proc/meminfo", "MemTotal"))
      .split(' ')
      .first.getAsInteger(10, kib);
  host.memoryBytes = kib * 1024;
  host.cacheBytesPerRank = cacheBytesPerRank(
      host.onlineCores, std::max<int64_t>(host.localRanks, 1));
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

std::string shapeText(llvm::ArrayRef<int64_t> shape) {
  return "[" + sizes(shape) + "]";
}

/// `seconds` in microseconds, to 3 significant digits or so.
std::string microseconds(double seconds) {
  double us = seconds * 1e6;
  if (us < 10)
    return llvm::formatv("{0:f2} us", us).str();
  if (us < 100)
    return llvm::formatv("{0:f1} us", us).str();
  return llvm::formatv("{0:f0} us", us).str();
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
  Plan plan = planFor(options.quick, options.cuda, host.loopThreads);
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
    device.cacheBytes = host.cacheBytesPerRank;
    // The cores each rank gets when every rank computes.
    if (n > host.onlineCores)
      device.processorShare = double(host.onlineCores) / double(n);
    // The runtime pins such ranks to cores unless told not to.
    if (const char *bind = std::getenv("METART_BIND"))
      device.pinnedRanks = llvm::StringRef(bind) != "none";
  }
  if (device.memoryBytes == 0)
    return llvm::createStringError("cannot read the memory of the device");

  // With more ranks than cores, compute is measured on as many ranks as
  // there are cores while the others sleep: a rank's figures at full speed
  // with every core busy. The cost model shares the cores among the ranks
  // computing at each moment (processor_share).
  if (!options.cuda && n > host.onlineCores)
    session.setActiveRanks(host.onlineCores);
  say("memory bandwidth");
  llvm::Expected<double> bandwidth = measureBandwidth(session, plan);
  if (!bandwidth)
    return bandwidth.takeError();
  device.memoryBandwidth = *bandwidth;
  say(llvm::formatv("{0} kernels on [T, N, H] = {1} to {2}", backend,
                    shapeText(plan.kernelShapes.front()),
                    shapeText(plan.kernelShapes.back())));
  llvm::Expected<MeasuredKernels> kernels = measureKernels(session, plan);
  if (!kernels)
    return kernels.takeError();
  const MeasuredKernel &elementwise = kernels->kinds.front();
  device.parallelMinElements = kernels->parallelMinElements;
  device.parallelDispatch = kernels->parallelDispatch;
  say(llvm::formatv("{0} products, {1} batched shapes and m = n = k in {2}",
                    backend, plan.productShapes.size(), sizes(plan.gemmSizes)));
  llvm::Expected<MeasuredProducts> products =
      measureProducts(session, plan, elementwise.fit.beta);
  if (!products)
    return products.takeError();
  device.gemmRates = products->gemm;
  device.gemmPerTaskRates = products->gemmPerTask;
  // Again with the same operands call after call: the calls of a program
  // that read what the ops before them wrote, still in cache.
  say("kernels and products with their operands in cache");
  session.setHotOperands(true);
  llvm::Expected<MeasuredKernels> hotKernels = measureKernels(session, plan);
  if (!hotKernels)
    return hotKernels.takeError();
  llvm::Expected<MeasuredProducts> hotProducts =
      measureProducts(session, plan, elementwise.fit.beta);
  if (!hotProducts)
    return hotProducts.takeError();
  session.setHotOperands(false);
  device.gemmHotRates = hotProducts->gemm;
  device.gemmPerTaskHotRates = hotProducts->gemmPerTask;
  device.gemmGrid = products->grid;
  for (size_t i = 0; i < device.gemmGrid.rows.size(); ++i) {
    device.gemmGrid.rows[i].f32Hot = hotProducts->grid.rows[i].f32;
    device.gemmGrid.rows[i].f64Hot = hotProducts->grid.rows[i].f64;
  }
  for (MeasuredKernel &k : kernels->kinds)
    for (const MeasuredKernel &hot : hotKernels->kinds)
      if (hot.fit.kind == k.fit.kind && hot.fit.bytes == k.fit.bytes)
        k.fit.hotSeconds = hot.fit.seconds;
  for (const GemmRate &g : device.gemmRates) {
    device.peakFlops.f32 = std::max(device.peakFlops.f32, g.rate.f32);
    device.peakFlops.f64 = std::max(device.peakFlops.f64, g.rate.f64);
  }
  // The kinds in the order the cost model's kernelKind lists them.
  std::vector<const MeasuredKernel *> measured;
  for (const MeasuredKernel &k : kernels->kinds) {
    if (k.fit.kind == "optimizer")
      measured.push_back(&products->kernel);
    measured.push_back(&k);
  }
  for (const MeasuredKernel *k : measured)
    device.kernelFits.push_back(k->fit);
  say("launch overhead");
  llvm::Expected<double> floor = measureLaunchOverhead(session, plan);
  if (!floor)
    return floor.takeError();
  device.launchOverhead = std::max(*floor, elementwise.fit.alpha);
  if (!options.cuda && n > host.onlineCores) {
    say("ranks waiting beside ranks computing");
    llvm::Expected<double> waiting =
        measureWaitingShare(session, plan, host.onlineCores);
    if (!waiting)
      return waiting.takeError();
    device.waitingShare = *waiting;
  }
  session.setActiveRanks(n);
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
    } else {
      // The description's tables have no send_recv: it keeps its fit.
      cluster.collectives.push_back(busBandwidthTable(f));
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
  note(llvm::formatv(
      "Every kernel and product is timed twice: its operands cycling "
      "through copies (from memory as far as 256 MiB of copies allow: "
      "'seconds', 'gemm', 'gemm_per_task') and the same operands call "
      "after call (from cache: 'hot_seconds', 'gemm_hot', "
      "'gemm_per_task_hot'); 'gemm_per_task' holds the GEMMs of linear "
      "layers with one weight per task, 'gemm' the others. cache_bytes "
      "({0:f2} MiB): the "
      "caches from L2 up private to a core (sysfs), the cache the hot "
      "times come from, none when ranks outnumber cores and take turns on "
      "them; the cost model reads an operand touched again within that "
      "many bytes of other data from cache.",
      device.cacheBytes / 1048576));
  if (!options.cuda && n > host.onlineCores)
    note(llvm::formatv(
        "More ranks than cores: the ranks share the cores ({0} ranks on {1}). "
        "Compute (kernels, products, bandwidth, launch) is measured on {1} "
        "ranks at once while the others sleep: a rank's figures at full "
        "speed with every core busy. processor_share ({1}/{0}) tells the "
        "cost model to share the cores among the ranks computing at each "
        "moment (a rank waiting in a pipeline's bubble lends its share). "
        "Collectives are measured with every rank. {2}",
        n, host.onlineCores,
        device.pinnedRanks
            ? "The runtime pins each rank to one core when the ranks are a "
              "multiple of the cores (the ranks ordered pipeline stage "
              "first, dealt round the cores), and so do these measurements "
              "and the cost model; otherwise the kernel balances them and "
              "the model treats the cores as one pool."
            : "METART_BIND=none: the ranks are left to the kernel's "
              "balancer, and the cost model treats the cores as one pool "
              "(pinned_ranks: false)."));
  if (!options.cuda && n > host.onlineCores)
    note(llvm::formatv(
        "waiting_share: {0} ranks multiply 256 x 256 matrices back to back "
        "while the other {1} sleep, then while they wait in a barrier "
        "(polling, as a rank waiting for a message does); waiting_share = "
        "(the second time / the first - 1) x {0} / {1}, in [0, 1].",
        host.onlineCores, n - host.onlineCores));
  note("Every figure is measured through metart's C API with all ranks "
       "running at once; a time is the slowest rank's median of samples, "
       "each started by a barrier (a compute sample also ends when every "
       "rank is done). Each kernel call allocates its result with "
       "metart_scratch_alloc and gives it back with metart_scratch_free "
       "inside the timed call, as compiled code does, and takes its operands "
       "in turn from up to 32 copies (256 MiB at most): a step's ops read "
       "tensors written several ops before, so small operands are still in "
       "cache and large ones come from memory.");
  if (plan.kernel.idleGap > 0)
    note(llvm::formatv(
        "Each kernel call (products included) is timed alone, after {0:f0} "
        "us of other work on the calling thread: between the ops of a step "
        "the runtime's loop threads fall asleep, and waking them is part of "
        "what a parallel loop costs (calls back to back would not pay it).",
        plan.kernel.idleGap * 1e6));
  note(options.cuda ? "memory_bytes: the GPU's memory.total (nvidia-smi)."
                    : llvm::formatv("memory_bytes: MemTotal of /proc/meminfo "
                                    "({0} bytes) / {1} rank{2}.",
                                    host.memoryBytes, n, n == 1 ? "" : "s")
                          .str());
  note(llvm::formatv("memory_bandwidth: metart_nn_binary add of {0} f32 "
                     "elements: 2 operands read and 1 result written per "
                     "second.",
                     plan.streamElements));
  note(llvm::formatv(
      "kernels: time = alpha + bytes / beta per call of a kind, bytes being "
      "every operand and result (as the cost model counts them; operands "
      "hold varied values in [-1, 1), as data does), least "
      "squares on relative residuals over f32 tensors [T, N, H] in {0}; "
      "each time the median of {1} samples of {2:f0} ms.",
      llvm::join(llvm::map_range(plan.kernelShapes,
                                 [](const std::array<int64_t, 3> &s) {
                                   return shapeText(s);
                                 }),
                 ", "),
      plan.kernel.samples, plan.kernel.sampleSeconds * 1e3));
  note("  elementwise: metart_nn_binary add, metart_nn_unary relu and "
       "metart_nn_scale together; transcendental: metart_nn_unary exp (a few "
       "ns of arithmetic per element); erf: metart_nn_unary erf, gelu and "
       "tanh (libm's scalar functions: ten times longer); window: "
       "metart_nn_max_pool2d and metart_nn_max_pool2d_backward, 2 x 2 "
       "windows of stride 2 over [T, N, S, S] images (S 8, 14 or 28 as H "
       "grows), their values as after a ReLU; reduce: "
       "metart_nn_reduce_sum over the "
       "last and over the first (task) dimension; broadcast: "
       "metart_nn_broadcast along the first and along the last dimension; "
       "transpose: metart_nn_transpose of the last two dimensions; copy: "
       "metart_copy_device into a new result (bytes: source and "
       "destination); optimizer: an Adam outer step as compiled "
       "(metart_increment, then metart_adam_update of each parameter of a "
       "set of three h x h weights and three biases of h; bytes: 7 times "
       "the parameters').");
  note(llvm::formatv(
      "  product: metart_nn_linear of [T, N, K] by an M x K weight (bias "
      "[M]) and by a [T, M, K] weight per task (bias [T, M]), and "
      "metart_nn_matmul [T, N, M]^T x [T, N, K] (a weight's gradient), for "
      "T, N, K, M in {0}; and metart_nn_matmul n x n by n x n, n in {1}; "
      "each in f32 and f64, medians of {2} samples of {3:f0} ms (squares: "
      "of {4:f0} ms). alpha: the per-call part, time = alpha + flops / r "
      "fitted over the f32 products (at most half the fastest call); beta: "
      "the elementwise beta, raised so that no measured product is priced "
      "by its bytes.",
      llvm::join(llvm::map_range(plan.productShapes,
                                 [](const std::array<int64_t, 4> &s) {
                                   return llvm::formatv("{0}/{1}/{2}/{3}", s[0],
                                                        s[1], s[2], s[3])
                                       .str();
                                 }),
                 ", "),
      sizes(plan.gemmSizes), plan.product.samples,
      plan.product.sampleSeconds * 1e3, plan.compute.sampleSeconds * 1e3));
  note("gemm: by the FLOPs of one BLAS call (the runtime makes one per "
       "task of a per-task weight and one per batch entry of a matmul: T of "
       "2 N K M, one of 2 T N K M (+ T N M for the bias) for a shared "
       "weight, one of 2n^3 for a square), rate = those FLOPs / ((time - the "
       "product's alpha) / calls); calls within 25% of each other's FLOPs "
       "make one entry (their FLOPs over their compute time, at their "
       "geometric mean); peak_flops is the best of these rates.");
  note(llvm::formatv(
      "gemm_grid: GEMMs by shape, what the cost model prices every product "
      "by (the FLOPs tables are for descriptions without it): a GEMM's "
      "thin dimension (the smallest of m, n, k) by its area (the product of "
      "the other two). Each cell (thin t in {0}; area p x p, p in {1}) is "
      "metart_nn_matmul of [t, p] by [p, p] transposed (a linear layer), "
      "[t, p] transposed by [t, p] (a weight gradient) and [t, p] by [p, p] "
      "(an input gradient), medians of {2} samples of {3:f0} ms; rate = the "
      "three calls' FLOPs over their times less the product's alpha. At "
      "equal FLOPs thin GEMMs run far slower (the weight packed for a few "
      "rows), which a table by FLOPs cannot tell apart.",
      sizes(plan.gridThin), sizes(plan.gridSides), plan.kernel.samples,
      plan.kernel.sampleSeconds * 1e3));
  for (const MeasuredKernel *k : measured) {
    note(llvm::formatv(
        "  {0}: alpha {1:f2} us, beta {2:f2} GB/s, worst "
        "relative residual {3:f0}%{4}; measured{5}:",
        k->fit.kind, k->fit.alpha * 1e6, k->fit.beta / 1e9, k->worst * 100,
        k->fit.kind == "product" ? " (of alpha + flops / r)" : "",
        k->fit.kind == "product" ? " (f32)" : ""));
    for (const KernelSeries &series : k->series) {
      std::string line = "    " + series.what + ":";
      for (size_t i = 0; i < series.seconds.size(); ++i)
        line += llvm::formatv(" {0} {1}{2}", series.shapes[i],
                              microseconds(series.seconds[i]),
                              i + 1 < series.seconds.size() ? "," : "");
      note(line);
    }
  }
  if (!kernels->step.empty()) {
    std::string line = llvm::formatv(
        "parallel_min_elements, parallel_dispatch: the runtime's CPU backend "
        "splits an elementwise loop of at least {0} elements over its {1} "
        "loop threads (runtime/src/cpu/Parallel.h); waking them, the median "
        "step from {2} to {0} elements of:",
        kParallelMinElements, host.loopThreads, kParallelMinElements - 1);
    for (const KernelSeries &series : kernels->step)
      line += llvm::formatv(" {0} {1} then {2},", series.what,
                            microseconds(series.seconds[0]),
                            microseconds(series.seconds[1]));
    line.back() = '.';
    note(line);
    note(kernels->parallelMinElements > 0
             ? llvm::formatv("  {0} more per loop from {1} elements; the "
                             "elementwise fit is of the times without it.",
                             microseconds(kernels->parallelDispatch),
                             kernels->parallelMinElements)
                   .str()
             : std::string("  no step: none written."));
  }
  note(llvm::formatv("launch_overhead: the larger of the elementwise alpha "
                     "and a metart_nn_binary add of 4 f32 elements ({0}, "
                     "median of {1} samples of {2:f0} ms), the floor of a "
                     "call of a kind without a fit.",
                     microseconds(*floor), plan.tiny.samples,
                     plan.tiny.sampleSeconds * 1e3));
  if (n > 1) {
    note(llvm::formatv(
        "collectives: the measured times below as bus bandwidths per size "
        "(nccl-tests' busbw: bytes / time times 2(n-1)/n for all_reduce, "
        "(n-1)/n for all_gather and reduce_scatter, 1 for broadcast), which "
        "the cost model interpolates in log(bytes) before it reads a fit; "
        "send_recv has only its fit."));
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
