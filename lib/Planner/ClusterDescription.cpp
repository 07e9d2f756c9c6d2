//===- ClusterDescription.cpp - reading cluster files with YAML I/O ------===//
//
// The schema is declared as LLVM YAML I/O traits: unknown and missing keys,
// malformed numbers and unknown names are reported by the parser at their
// line and column; the ranges (positive bandwidths and memory, a link for
// every level the cluster uses, tables of matching lengths) are checked by
// each mapping's `validate`, which reports at the mapping and names the
// field. The same traits write descriptions (`metac calibrate`), so what
// is written is what is read.
//
//===----------------------------------------------------------------------===//

#include "metac/Planner/ClusterDescription.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/YAMLTraits.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>

using namespace metac::planner;
using llvm::yaml::IO;

LLVM_YAML_IS_SEQUENCE_VECTOR(LinkDescription)
LLVM_YAML_IS_SEQUENCE_VECTOR(CollectiveTable)
LLVM_YAML_IS_SEQUENCE_VECTOR(GemmRate)
LLVM_YAML_IS_SEQUENCE_VECTOR(GemmGridRow)
LLVM_YAML_IS_SEQUENCE_VECTOR(CollectiveFit)
LLVM_YAML_IS_SEQUENCE_VECTOR(KernelFit)

namespace {

/// Whether reading already failed (a mapping's checks then say nothing:
/// the fields they look at may not have been read).
bool failedAlready(IO &io) {
  return !io.outputting() && static_cast<llvm::yaml::Input &>(io).error();
}

/// `value` is a finite number above 0 (or at least 0 with `zero`).
bool positive(double value, bool zero = false) {
  return std::isfinite(value) && (zero ? value >= 0 : value > 0);
}

std::string mustBe(llvm::StringRef what, llvm::StringRef field, double value,
                   bool zero = false) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return llvm::formatv("{0}: '{1}' must be a finite number {2} 0, got {3}",
                       what, field, zero ? ">=" : ">", text)
      .str();
}

/// Every rate of `p` is finite and at least 0, and f32 is given.
std::string checkRates(llvm::StringRef what, const PeakFlops &p) {
  for (auto [name, value] : {std::pair{"f64", p.f64},
                             {"f32", p.f32},
                             {"tf32", p.tf32},
                             {"bf16", p.bf16},
                             {"fp16", p.fp16},
                             {"fp8", p.fp8}})
    if (!positive(value, /*zero=*/true))
      return mustBe(what, name, value, true);
  if (!(p.f32 > 0))
    return (what + ": 'f32' must be given (the cost model's default "
                   "element type)")
        .str();
  return "";
}

/// The names `collective_fits` take.
bool isFittedCollective(llvm::StringRef name) {
  return name == "all_reduce" || name == "all_gather" ||
         name == "reduce_scatter" || name == "send_recv" || name == "broadcast";
}

} // namespace

namespace llvm::yaml {

template <> struct ScalarEnumerationTraits<LinkLevel> {
  static void enumeration(IO &io, LinkLevel &value) {
    io.enumCase(value, "node", LinkLevel::Node);
    io.enumCase(value, "cluster", LinkLevel::Cluster);
  }
};

template <> struct ScalarEnumerationTraits<LinkKind> {
  static void enumeration(IO &io, LinkKind &value) {
    io.enumCase(value, "shared_memory", LinkKind::SharedMemory);
    io.enumCase(value, "nvlink", LinkKind::NVLink);
    io.enumCase(value, "nvswitch", LinkKind::NVSwitch);
    io.enumCase(value, "pcie", LinkKind::PCIe);
    io.enumCase(value, "infiniband", LinkKind::InfiniBand);
    io.enumCase(value, "ethernet", LinkKind::Ethernet);
  }
};

template <> struct MappingTraits<PeakFlops> {
  static void mapping(IO &io, PeakFlops &p) {
    io.mapOptional("f64", p.f64, 0.0);
    io.mapOptional("f32", p.f32, 0.0);
    io.mapOptional("tf32", p.tf32, 0.0);
    io.mapOptional("bf16", p.bf16, 0.0);
    io.mapOptional("fp16", p.fp16, 0.0);
    io.mapOptional("fp8", p.fp8, 0.0);
  }
  static std::string validate(IO &io, PeakFlops &p) {
    if (failedAlready(io))
      return "";
    return checkRates("peak_flops", p);
  }
};

// `{flops: 2.1e9, f32: 1.1e11, f64: 5.6e10}`: the rates sit beside the
// size, under the names of `peak_flops`.
template <> struct MappingTraits<GemmRate> {
  static void mapping(IO &io, GemmRate &g) {
    io.mapRequired("flops", g.flops);
    MappingTraits<PeakFlops>::mapping(io, g.rate);
  }
  static std::string validate(IO &io, GemmRate &g) {
    if (failedAlready(io))
      return "";
    if (!positive(g.flops))
      return mustBe("gemm", "flops", g.flops);
    return checkRates("gemm", g.rate);
  }
  static const bool flow = true;
};

// `{thin: 16, f32: [...], f64: [...], f32_hot: [...], f64_hot: [...]}`.
template <> struct MappingTraits<GemmGridRow> {
  static void mapping(IO &io, GemmGridRow &r) {
    io.mapRequired("thin", r.thin);
    io.mapRequired("f32", r.f32);
    io.mapOptional("f64", r.f64);
    io.mapOptional("f32_hot", r.f32Hot);
    io.mapOptional("f64_hot", r.f64Hot);
  }
  static std::string validate(IO &io, GemmGridRow &r) {
    if (failedAlready(io))
      return "";
    char thin[32];
    std::snprintf(thin, sizeof(thin), "%g", r.thin);
    std::string what = std::string("gemm_grid row of thin ") + thin;
    if (!positive(r.thin))
      return mustBe("gemm_grid", "thin", r.thin);
    for (auto [rates, name] : {std::pair{&r.f32, "f32"},
                               {&r.f64, "f64"},
                               {&r.f32Hot, "f32_hot"},
                               {&r.f64Hot, "f64_hot"}})
      for (double rate : *rates)
        if (!positive(rate))
          return mustBe(what, name, rate);
    return "";
  }
  static const bool flow = true;
};

// `area: [...]` and the rows, each as long as `area`.
template <> struct MappingTraits<GemmGrid> {
  static void mapping(IO &io, GemmGrid &g) {
    io.mapRequired("area", g.area);
    io.mapRequired("rows", g.rows);
  }
  static std::string validate(IO &io, GemmGrid &g) {
    if (failedAlready(io))
      return "";
    if (g.area.empty() || g.rows.empty())
      return "gemm_grid: 'area' and 'rows' must not be empty";
    for (size_t i = 0; i < g.area.size(); ++i) {
      if (!positive(g.area[i]))
        return mustBe("gemm_grid", "area", g.area[i]);
      if (i && !(g.area[i] > g.area[i - 1]))
        return "gemm_grid: 'area' must increase";
    }
    for (size_t i = 0; i < g.rows.size(); ++i) {
      const GemmGridRow &r = g.rows[i];
      if (i && !(r.thin > g.rows[i - 1].thin))
        return "gemm_grid: the rows' 'thin' must increase";
      for (auto [rates, name, required] : {std::tuple{&r.f32, "f32", true},
                                           {&r.f64, "f64", false},
                                           {&r.f32Hot, "f32_hot", false},
                                           {&r.f64Hot, "f64_hot", false}})
        if ((required || !rates->empty()) && rates->size() != g.area.size())
          return llvm::formatv("gemm_grid row of thin {0}: '{1}' must have "
                               "one rate per area ({2}), got {3}",
                               llvm::formatv("{0}", int64_t(r.thin)).str(),
                               name, g.area.size(), rates->size())
              .str();
    }
    return "";
  }
};

// `{kind: transpose, alpha: 1.1e-5, beta: 2.0e10}`.
template <> struct MappingTraits<KernelFit> {
  static void mapping(IO &io, KernelFit &k) {
    io.mapRequired("kind", k.kind);
    io.mapRequired("alpha", k.alpha);
    io.mapRequired("beta", k.beta);
    io.mapOptional("bytes", k.bytes);
    io.mapOptional("seconds", k.seconds);
    io.mapOptional("hot_seconds", k.hotSeconds);
  }
  static std::string validate(IO &io, KernelFit &k) {
    if (failedAlready(io))
      return "";
    static const char *const kinds[] = {
        "elementwise", "transcendental", "erf",  "window",  "reduce",
        "broadcast",   "transpose",      "copy", "product", "optimizer"};
    if (!llvm::is_contained(kinds, k.kind))
      return "kernels: 'kind' must be elementwise, transcendental, erf, "
             "window, "
             "reduce, "
             "broadcast, transpose, copy, product or optimizer, "
             "got '" +
             k.kind + "'";
    std::string what = "kernels '" + k.kind + "'";
    if (!positive(k.alpha, true))
      return mustBe(what, "alpha", k.alpha, true);
    if (!positive(k.beta))
      return mustBe(what, "beta", k.beta);
    if (k.bytes.size() != k.seconds.size())
      return what + ": 'bytes' and 'seconds' must have as many entries (" +
             std::to_string(k.bytes.size()) + " and " +
             std::to_string(k.seconds.size()) + ")";
    if (!k.hotSeconds.empty() && k.hotSeconds.size() != k.bytes.size())
      return what + ": 'bytes' and 'hot_seconds' must have as many entries (" +
             std::to_string(k.bytes.size()) + " and " +
             std::to_string(k.hotSeconds.size()) + ")";
    for (size_t i = 0; i < k.bytes.size(); ++i) {
      if (!positive(k.bytes[i]))
        return mustBe(what, "bytes", k.bytes[i]);
      if (!positive(k.seconds[i]))
        return mustBe(what, "seconds", k.seconds[i]);
      if (!k.hotSeconds.empty() && !positive(k.hotSeconds[i]))
        return mustBe(what, "hot_seconds", k.hotSeconds[i]);
      if (i > 0 && !(k.bytes[i] > k.bytes[i - 1]))
        return what + ": 'bytes' must increase, got " +
               std::to_string(k.bytes[i]) + " after " +
               std::to_string(k.bytes[i - 1]);
    }
    return "";
  }
  static const bool flow = true;
};

template <> struct MappingTraits<DeviceDescription> {
  static void mapping(IO &io, DeviceDescription &d) {
    io.mapRequired("name", d.name);
    io.mapOptional("kind", d.kind, std::string("gpu"));
    // Read as a number (`80e9`), written as an exact count of bytes.
    if (io.outputting()) {
      uint64_t bytes = d.memoryBytes;
      io.mapRequired("memory_bytes", bytes);
    } else {
      double memory = 0;
      io.mapRequired("memory_bytes", memory);
      d.memoryBytes = positive(memory) && memory < 1.8e19
                          ? static_cast<uint64_t>(memory)
                          : 0;
    }
    io.mapRequired("peak_flops", d.peakFlops);
    io.mapRequired("memory_bandwidth", d.memoryBandwidth);
    io.mapRequired("launch_overhead", d.launchOverhead);
    io.mapOptional("host_bandwidth", d.hostBandwidth, 0.0);
    io.mapOptional("gemm", d.gemmRates);
    io.mapOptional("gemm_hot", d.gemmHotRates);
    io.mapOptional("gemm_per_task", d.gemmPerTaskRates);
    io.mapOptional("gemm_per_task_hot", d.gemmPerTaskHotRates);
    if (!io.outputting() || !d.gemmGrid.empty())
      io.mapOptional("gemm_grid", d.gemmGrid);
    io.mapOptional("cache_bytes", d.cacheBytes, 0.0);
    io.mapOptional("kernels", d.kernelFits);
    io.mapOptional("parallel_min_elements", d.parallelMinElements, int64_t(0));
    io.mapOptional("parallel_dispatch", d.parallelDispatch, 0.0);
    io.mapOptional("processor_share", d.processorShare, 1.0);
    io.mapOptional("waiting_share", d.waitingShare, 1.0);
    io.mapOptional("pinned_ranks", d.pinnedRanks, true);
  }
  static std::string validate(IO &io, DeviceDescription &d) {
    if (failedAlready(io))
      return "";
    if (d.kind != "gpu" && d.kind != "cpu")
      return "device: 'kind' must be gpu or cpu, got '" + d.kind + "'";
    if (d.memoryBytes == 0)
      return "device: 'memory_bytes' must be a number of bytes > 0";
    if (!positive(d.memoryBandwidth))
      return mustBe("device", "memory_bandwidth", d.memoryBandwidth);
    if (!positive(d.launchOverhead, true))
      return mustBe("device", "launch_overhead", d.launchOverhead, true);
    if (!positive(d.hostBandwidth, true))
      return mustBe("device", "host_bandwidth", d.hostBandwidth, true);
    if (d.parallelMinElements < 0)
      return "device: 'parallel_min_elements' must be >= 0, got " +
             std::to_string(d.parallelMinElements);
    if (!(d.waitingShare >= 0 && d.waitingShare <= 1))
      return "device: 'waiting_share' must be in [0, 1], got " +
             std::to_string(d.waitingShare);
    if (!(d.processorShare > 0 && d.processorShare <= 1))
      return "device: 'processor_share' must be in (0, 1], got " +
             std::to_string(d.processorShare);
    if (!positive(d.parallelDispatch, true))
      return mustBe("device", "parallel_dispatch", d.parallelDispatch, true);
    for (auto [table, name] :
         {std::pair{&d.gemmRates, "gemm"},
          std::pair{&d.gemmHotRates, "gemm_hot"},
          std::pair{&d.gemmPerTaskRates, "gemm_per_task"},
          std::pair{&d.gemmPerTaskHotRates, "gemm_per_task_hot"}})
      for (size_t i = 1; i < table->size(); ++i)
        if (!((*table)[i].flops > (*table)[i - 1].flops))
          return std::string("device: '") + name +
                 "' must be sorted by 'flops', increasing";
    if (!positive(d.cacheBytes, true))
      return mustBe("device", "cache_bytes", d.cacheBytes, true);
    return "";
  }
};

template <> struct MappingTraits<LinkDescription> {
  static void mapping(IO &io, LinkDescription &l) {
    io.mapRequired("level", l.level);
    io.mapRequired("kind", l.kind);
    io.mapRequired("bandwidth", l.bandwidth);
    io.mapRequired("latency", l.latency);
    io.mapOptional("rails", l.rails, int64_t(1));
  }
  static std::string validate(IO &io, LinkDescription &l) {
    if (failedAlready(io))
      return "";
    std::string what = ("link '" + stringifyLinkLevel(l.level) + "'").str();
    if (!positive(l.bandwidth))
      return mustBe(what, "bandwidth", l.bandwidth);
    if (!positive(l.latency, true))
      return mustBe(what, "latency", l.latency, true);
    if (l.rails < 1)
      return what + ": 'rails' must be at least 1, got " +
             std::to_string(l.rails);
    return "";
  }
};

template <> struct MappingTraits<CollectiveTable> {
  static void mapping(IO &io, CollectiveTable &t) {
    io.mapRequired("collective", t.collective);
    io.mapRequired("group", t.group);
    io.mapRequired("placement", t.placement);
    io.mapRequired("bytes", t.bytes);
    io.mapRequired("bus_bandwidth", t.busBandwidth);
  }
  static std::string validate(IO &io, CollectiveTable &t) {
    if (failedAlready(io))
      return "";
    std::string what = "collective '" + t.collective + "'";
    if (t.collective != "all_reduce" && t.collective != "all_gather" &&
        t.collective != "reduce_scatter" && t.collective != "broadcast" &&
        t.collective != "all_to_all")
      return what + ": 'collective' must be all_reduce, all_gather, "
                    "reduce_scatter, broadcast or all_to_all";
    if (t.group < 2)
      return what + ": 'group' must be at least 2, got " +
             std::to_string(t.group);
    if (t.bytes.empty() || t.bytes.size() != t.busBandwidth.size())
      return what +
             ": 'bytes' and 'bus_bandwidth' must be lists of the "
             "same, non-zero length, got " +
             std::to_string(t.bytes.size()) + " and " +
             std::to_string(t.busBandwidth.size());
    for (size_t i = 0; i < t.bytes.size(); ++i) {
      if (!positive(t.bytes[i]))
        return mustBe(what, "bytes", t.bytes[i]);
      if (!positive(t.busBandwidth[i]))
        return mustBe(what, "bus_bandwidth", t.busBandwidth[i]);
      if (i && !(t.bytes[i] > t.bytes[i - 1]))
        return what + ": 'bytes' must increase";
    }
    return "";
  }
};

template <> struct MappingTraits<CollectiveFit> {
  static void mapping(IO &io, CollectiveFit &f) {
    io.mapRequired("collective", f.collective);
    io.mapRequired("group", f.group);
    io.mapRequired("placement", f.placement);
    io.mapRequired("alpha", f.alpha);
    io.mapRequired("beta", f.beta);
  }
  static std::string validate(IO &io, CollectiveFit &f) {
    if (failedAlready(io))
      return "";
    std::string what = "collective_fits '" + f.collective + "'";
    if (!isFittedCollective(f.collective))
      return what + ": 'collective' must be all_reduce, all_gather, "
                    "reduce_scatter, send_recv or broadcast";
    if (f.group < 2)
      return what + ": 'group' must be at least 2, got " +
             std::to_string(f.group);
    if (!positive(f.alpha, true))
      return mustBe(what, "alpha", f.alpha, true);
    if (!positive(f.beta))
      return mustBe(what, "beta", f.beta);
    return "";
  }
  static const bool flow = true;
};

template <> struct MappingTraits<ClusterDescription> {
  static void mapping(IO &io, ClusterDescription &c) {
    io.mapRequired("name", c.name);
    io.mapRequired("nodes", c.nodes);
    io.mapRequired("devices_per_node", c.devicesPerNode);
    io.mapRequired("device", c.device);
    io.mapRequired("links", c.links);
    io.mapOptional("collectives", c.collectives);
    io.mapOptional("collective_fits", c.collectiveFits);
  }
  static std::string validate(IO &io, ClusterDescription &c) {
    if (failedAlready(io))
      return "";
    if (c.nodes < 1)
      return "'nodes' must be at least 1, got " + std::to_string(c.nodes);
    if (c.devicesPerNode < 1)
      return "'devices_per_node' must be at least 1, got " +
             std::to_string(c.devicesPerNode);
    for (size_t i = 0; i < c.links.size(); ++i)
      for (size_t j = 0; j < i; ++j)
        if (c.links[i].level == c.links[j].level)
          return ("'links' describes level '" +
                  stringifyLinkLevel(c.links[i].level) + "' twice")
              .str();
    if (c.devicesPerNode > 1 && !c.link(LinkLevel::Node))
      return "'links' needs a link of level 'node': " +
             std::to_string(c.devicesPerNode) + " devices share each node";
    if (c.nodes > 1 && !c.link(LinkLevel::Cluster))
      return "'links' needs a link of level 'cluster': the cluster has " +
             std::to_string(c.nodes) + " nodes";
    for (const CollectiveTable &t : c.collectives) {
      int64_t room =
          t.placement == LinkLevel::Node ? c.devicesPerNode : c.numDevices();
      if (t.group > room)
        return "collective '" + t.collective + "': a group of " +
               std::to_string(t.group) + " does not fit its placement '" +
               stringifyLinkLevel(t.placement).str() + "' (" +
               std::to_string(room) + " devices)";
    }
    for (size_t i = 0; i < c.collectiveFits.size(); ++i) {
      const CollectiveFit &f = c.collectiveFits[i];
      int64_t room =
          f.placement == LinkLevel::Node ? c.devicesPerNode : c.numDevices();
      std::string what = "collective_fits '" + f.collective + "'";
      if (f.group > room)
        return what + ": a group of " + std::to_string(f.group) +
               " does not fit its placement '" +
               stringifyLinkLevel(f.placement).str() + "' (" +
               std::to_string(room) + " devices)";
      for (size_t j = 0; j < i; ++j)
        if (c.collectiveFits[j].collective == f.collective &&
            c.collectiveFits[j].group == f.group &&
            c.collectiveFits[j].placement == f.placement)
          return what + ": fitted twice for a group of " +
                 std::to_string(f.group) + " on '" +
                 stringifyLinkLevel(f.placement).str() + "'";
    }
    return "";
  }
};

} // namespace llvm::yaml

/// `values` (at increasing `at`) at `x`, interpolated in log-log; past
/// either end, the end's value.
static double logInterpolate(llvm::ArrayRef<double> at,
                             llvm::ArrayRef<double> values, double x) {
  if (x <= at.front())
    return values.front();
  if (x >= at.back())
    return values.back();
  size_t hi = std::upper_bound(at.begin(), at.end(), x) - at.begin();
  size_t lo = hi - 1;
  double t = std::log(x / at[lo]) / std::log(at[hi] / at[lo]);
  return std::exp(std::log(values[lo]) * (1 - t) + std::log(values[hi]) * t);
}

double KernelFit::secondsFor(double callBytes, bool hot) const {
  const std::vector<double> &table =
      hot && !hotSeconds.empty() ? hotSeconds : seconds;
  double line = alpha + callBytes / beta;
  if (bytes.empty() || callBytes <= bytes.front())
    return bytes.empty() ? line : std::min(line, table.front());
  if (callBytes >= bytes.back())
    return table.back() * callBytes / bytes.back();
  return logInterpolate(bytes, table, callBytes);
}

double GemmGrid::rate(double thin, double callArea, bool f64, bool hot) const {
  if (rows.empty() || !(thin > 0) || !(callArea > 0))
    return 0;
  auto rowRates = [&](const GemmGridRow &row) -> const std::vector<double> & {
    if (f64 && hot && !row.f64Hot.empty())
      return row.f64Hot;
    if (f64 && !row.f64.empty())
      return row.f64;
    if (hot && !row.f32Hot.empty())
      return row.f32Hot;
    return row.f32;
  };
  // Below the first area a GEMM costs the first column's time.
  double scale = callArea < area.front() ? callArea / area.front() : 1;
  llvm::SmallVector<double, 8> thins, rates;
  for (const GemmGridRow &row : rows) {
    thins.push_back(row.thin);
    rates.push_back(logInterpolate(area, rowRates(row), callArea));
  }
  return scale * logInterpolate(thins, rates, thin);
}

const KernelFit *DeviceDescription::kernel(llvm::StringRef kind) const {
  for (const KernelFit &k : kernelFits)
    if (k.kind == kind)
      return &k;
  return nullptr;
}

const LinkDescription *ClusterDescription::link(LinkLevel level) const {
  for (const LinkDescription &l : links)
    if (l.level == level)
      return &l;
  return nullptr;
}

llvm::StringRef metac::planner::stringifyLinkLevel(LinkLevel level) {
  return level == LinkLevel::Node ? "node" : "cluster";
}

llvm::StringRef metac::planner::stringifyLinkKind(LinkKind kind) {
  switch (kind) {
  case LinkKind::SharedMemory:
    return "shared_memory";
  case LinkKind::NVLink:
    return "nvlink";
  case LinkKind::NVSwitch:
    return "nvswitch";
  case LinkKind::PCIe:
    return "pcie";
  case LinkKind::InfiniBand:
    return "infiniband";
  case LinkKind::Ethernet:
    return "ethernet";
  }
  return "unknown";
}

std::optional<ClusterDescription>
metac::planner::readClusterDescription(llvm::MemoryBufferRef buffer,
                                       llvm::raw_ostream &diagnostics) {
  struct Sink {
    llvm::raw_ostream &os;
    bool reported = false;
  } sink{diagnostics};
  auto handler = [](const llvm::SMDiagnostic &diagnostic, void *context) {
    auto *sink = static_cast<Sink *>(context);
    diagnostic.print(nullptr, sink->os);
    sink->reported = true;
  };
  llvm::yaml::Input input(buffer, nullptr, handler, &sink);
  ClusterDescription cluster;
  input >> cluster;
  if (!input.error())
    return cluster;
  // The YAML reader refuses a file without a document (empty, or comments
  // only) and says nothing (found by fuzz/FuzzClusterDescription.cpp).
  if (!sink.reported)
    diagnostics << buffer.getBufferIdentifier()
                << ":1:1: error: the cluster description is empty (expected "
                   "a mapping with 'name', 'nodes', 'devices_per_node', "
                   "'device' and 'links')\n";
  return std::nullopt;
}

std::optional<ClusterDescription>
metac::planner::readClusterDescriptionFile(llvm::StringRef path,
                                           llvm::raw_ostream &diagnostics) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!file) {
    diagnostics << path << ": error: cannot read the cluster description: "
                << file.getError().message() << "\n";
    return std::nullopt;
  }
  return readClusterDescription((*file)->getMemBufferRef(), diagnostics);
}

void metac::planner::writeClusterDescription(const ClusterDescription &c,
                                             llvm::raw_ostream &os) {
  // One flow mapping per line, however long (no wrapping column).
  std::string text;
  llvm::raw_string_ostream stream(text);
  llvm::yaml::Output output(stream, nullptr, /*WrapColumn=*/0);
  output << const_cast<ClusterDescription &>(c);
  os << text;
  if (!llvm::StringRef(text).ends_with("\n"))
    os << "\n";
}

void metac::planner::printClusterSummary(const ClusterDescription &c,
                                         llvm::raw_ostream &os) {
  const DeviceDescription &d = c.device;
  os << "cluster '" << c.name << "': " << c.numDevices() << " " << d.kind
     << (c.numDevices() == 1 ? "" : "s") << " (" << c.nodes << " node"
     << (c.nodes == 1 ? "" : "s") << " x " << c.devicesPerNode << ")\n";
  os << llvm::formatv("  device {0}: {1:f1} GiB, {2:f1} GB/s memory, launch "
                      "{3:f2} us\n",
                      d.name, d.memoryBytes / double(1ull << 30),
                      d.memoryBandwidth / 1e9, d.launchOverhead * 1e6);
  os << "  peak TFLOP/s:";
  for (auto [name, value] : {std::pair{"f64", d.peakFlops.f64},
                             {"f32", d.peakFlops.f32},
                             {"tf32", d.peakFlops.tf32},
                             {"bf16", d.peakFlops.bf16},
                             {"fp16", d.peakFlops.fp16},
                             {"fp8", d.peakFlops.fp8}})
    if (value > 0)
      os << llvm::formatv(" {0} {1:f2}", name, value / 1e12);
  os << "\n";
  for (const LinkDescription &l : c.links)
    os << llvm::formatv("  {0} link: {1}, {2:f2} GB/s per device, {3:f2} us"
                        "{4}\n",
                        stringifyLinkLevel(l.level), stringifyLinkKind(l.kind),
                        l.bandwidth / 1e9, l.latency * 1e6,
                        l.rails > 1
                            ? llvm::formatv(", {0} rails", l.rails).str()
                            : std::string());
  for (const CollectiveTable &t : c.collectives)
    os << "  measured " << t.collective << " over " << t.group << " ("
       << stringifyLinkLevel(t.placement) << "): " << t.bytes.size()
       << " sizes\n";
  for (auto [table, name] : {std::pair{&d.gemmRates, "gemm"},
                             std::pair{&d.gemmPerTaskRates, "gemm per task"}})
    if (!table->empty()) {
      const GemmRate &small = table->front(), &large = table->back();
      os << llvm::formatv("  {0}: {1} sizes, f32 {2:f2} GFLOP/s at {3:e1} "
                          "FLOPs to {4:f2} GFLOP/s at {5:e1} FLOPs\n",
                          name, table->size(), small.rate.f32 / 1e9,
                          small.flops, large.rate.f32 / 1e9, large.flops);
    }
  if (!d.gemmGrid.empty()) {
    const GemmGrid &g = d.gemmGrid;
    os << llvm::formatv(
        "  gemm by shape: thin {0:f0} to {1:f0}, area {2:e1} to "
        "{3:e1}; f32 {4:f2} GFLOP/s (thinnest, largest area) "
        "to {5:f2} GFLOP/s (thickest)\n",
        g.rows.front().thin, g.rows.back().thin, g.area.front(), g.area.back(),
        g.rows.front().f32.back() / 1e9, g.rows.back().f32.back() / 1e9);
  }
  if (d.processorShare < 1)
    os << llvm::formatv("  each device gets {0:f2} of a processor; a waiting "
                        "one takes {1:f2} of a computing one's share; ranks "
                        "{2}\n",
                        d.processorShare, d.waitingShare,
                        d.pinnedRanks ? "pinned to cores" : "in one pool");
  if (d.parallelMinElements > 0)
    os << llvm::formatv("  parallel loops from {0} elements: {1:f2} us more\n",
                        d.parallelMinElements, d.parallelDispatch * 1e6);
  for (const KernelFit &k : d.kernelFits)
    os << llvm::formatv("  kernel {0}: alpha {1:f2} us, beta {2:f2} GB/s{3}\n",
                        k.kind, k.alpha * 1e6, k.beta / 1e9,
                        k.bytes.empty()
                            ? std::string()
                            : ", " + std::to_string(k.bytes.size()) +
                                  " measured sizes");
  for (const CollectiveFit &f : c.collectiveFits)
    os << llvm::formatv("  fitted {0} over {1} ({2}): alpha {3:f2} us, beta "
                        "{4:f2} GB/s\n",
                        f.collective, f.group, stringifyLinkLevel(f.placement),
                        f.alpha * 1e6, f.beta / 1e9);
  os << llvm::formatv("  in all: {0:f1} GiB, {1:f2} TFLOP/s f32, {2:f2} "
                      "TFLOP/s bf16\n",
                      c.numDevices() * (d.memoryBytes / double(1ull << 30)),
                      c.numDevices() * d.peakFlops.f32 / 1e12,
                      c.numDevices() * d.peakFlops.bf16 / 1e12);
}
