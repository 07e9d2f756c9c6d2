//===- ClusterDescription.h - the machines a plan targets -------*- C++ -*-===//
//
// A cluster description (docs/planning.md) says what the planner and the
// cost model need of a cluster: nodes of identical devices, each device's
// memory, peak FLOP/s per element type, memory bandwidth and kernel launch
// overhead, the links of each level (inside a node, between nodes) with
// bandwidth, latency, kind and rails, and optionally measured collective
// bus bandwidths, a measured table of matrix-product rates by size and
// fitted α–β models of collectives (both written by `metac calibrate`). It
// is a YAML file read and written with LLVM's YAML I/O, whose errors name
// the file, line, column and field.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_PLANNER_CLUSTERDESCRIPTION_H
#define METAC_PLANNER_CLUSTERDESCRIPTION_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class MemoryBufferRef;
} // namespace llvm

namespace metac::planner {

/// Peak arithmetic throughput per element type, in FLOP/s (0: unknown or
/// not supported; dense, without sparsity).
struct PeakFlops {
  double f64 = 0, f32 = 0, tf32 = 0, bf16 = 0, fp16 = 0, fp8 = 0;
};

/// A measured rate of the runtime's matrix product: calls of `flops`
/// floating-point operations run at `rate` FLOP/s per element type.
struct GemmRate {
  double flops = 0;
  PeakFlops rate;
};

/// One row of a GEMM grid: the rates of GEMMs whose thinnest dimension is
/// `thin`, one per entry of the grid's `area`, in FLOP/s (operands from
/// memory; `*Hot`: the same operands call after call, from cache; f64 and
/// the hot rows optional).
struct GemmGridRow {
  double thin = 0;
  std::vector<double> f32, f64, f32Hot, f64Hot;
};

/// Measured rates of GEMMs by shape (`metac calibrate`). A GEMM of m x k by
/// k x n has a thin dimension, the smallest of m, n and k (a task's rows,
/// or a weight gradient's inner dimension), and an area, the product of
/// the other two (a weight's elements). At equal FLOPs the thin ones run
/// far slower: a 16-row GEMM against a 256 x 1024 weight packs the whole
/// weight for 16 rows (30 GFLOP/s measured here, where a 64-row one
/// against a 256 x 256 weight of the same FLOPs ran at 77).
struct GemmGrid {
  /// The areas of the columns (elements), increasing.
  std::vector<double> area;
  /// By `thin`, increasing; every row has one rate per area.
  std::vector<GemmGridRow> rows;
  bool empty() const { return rows.empty(); }
  /// The rate of one GEMM of `thin` and `area`, interpolated in log-log
  /// between the rows and columns around it; past the last row or column,
  /// theirs; below the first area, a GEMM takes the first column's time
  /// (its fixed part does not shrink). 0 when the grid is empty.
  double rate(double thin, double area, bool f64, bool hot) const;
};

/// A fitted model of one kind of the runtime's kernels (what `metac
/// calibrate` measures): a call whose operands and results are `bytes`
/// takes alpha + bytes / beta seconds. Kinds: elementwise, transcendental
/// (exp, log, sigmoid), erf (erf, gelu, tanh), window (pooling), reduce,
/// broadcast, transpose,
/// copy, product (alpha only: the rest follows the GEMM table, per BLAS
/// call), optimizer.
struct KernelFit {
  std::string kind;
  double alpha = 0, beta = 0;
  /// Measured calls (optional, ascending bytes): where given, a call's time
  /// is interpolated between them in log-log (caches make the time per
  /// byte change with size, which one line cannot follow); beyond the
  /// largest it grows at the largest's time per byte, below the smallest it
  /// follows the fit.
  std::vector<double> bytes, seconds;
  /// The same calls with their operands in cache (optional; as many as
  /// `bytes`): what a call costs when the data it reads was touched
  /// recently, as in a program whose ops consume what the previous ones
  /// wrote. `seconds` are with operands from memory.
  std::vector<double> hotSeconds;
  /// A call of `bytes` bytes, its operands from memory (`hot`: from cache,
  /// where measured).
  double secondsFor(double bytes, bool hot = false) const;
};

/// One device (all devices of a cluster are alike).
struct DeviceDescription {
  std::string name;
  /// "gpu" or "cpu".
  std::string kind = "gpu";
  uint64_t memoryBytes = 0;
  PeakFlops peakFlops;
  /// Bytes per second between the device and its memory.
  double memoryBandwidth = 0;
  /// Bytes per second between host memory and the device, one way (what
  /// offloaded state crosses; 0: not given, the memory bandwidth for a
  /// CPU and PCIe 5.0 x16's practical 50 GB/s for a GPU).
  double hostBandwidth = 0;
  double hostBandwidthOrDefault() const {
    return hostBandwidth > 0 ? hostBandwidth
                             : (kind == "cpu" ? memoryBandwidth : 50e9);
  }
  /// Seconds from one kernel (or runtime call) to the next.
  double launchOverhead = 0;
  /// Measured rates of products by the FLOPs of one GEMM (small products
  /// run far below peak), sorted by flops, ascending; empty when not
  /// measured. A call that makes several GEMMs (one per task of a per-task
  /// weight, per batch entry of a matmul, per image of a convolution) is
  /// priced GEMM by GEMM.
  std::vector<GemmRate> gemmRates;
  /// The same GEMMs with their operands in cache (optional).
  std::vector<GemmRate> gemmHotRates;
  /// The GEMMs of a linear layer with one weight per task (optional; the
  /// `gemm` table otherwise): few rows against a whole weight, whose
  /// packing the rows do not amortise, so they run below a shared
  /// weight's or a matmul's GEMM of the same FLOPs. Above the table's
  /// largest entry the `gemm` table prices them.
  std::vector<GemmRate> gemmPerTaskRates;
  /// The same with their operands in cache (optional).
  std::vector<GemmRate> gemmPerTaskHotRates;
  /// Rates of GEMMs by shape (optional; measured by `metac calibrate`):
  /// where given, every GEMM is priced by its shape from it instead of by
  /// its FLOPs from the tables above.
  GemmGrid gemmGrid;
  /// The bytes of cache a device keeps to itself (a CPU core's L2 and its
  /// share of the L3); 0: unknown. Data touched again within this many
  /// bytes of other data is read from cache (the `hot` tables).
  double cacheBytes = 0;
  /// Fitted costs of kinds of kernels; kinds not listed follow the
  /// roofline with `launchOverhead`.
  std::vector<KernelFit> kernelFits;
  /// A CPU runtime splits an elementwise loop of at least
  /// `parallelMinElements` elements over its threads, which costs
  /// `parallelDispatch` seconds more (waking them); 0: never.
  int64_t parallelMinElements = 0;
  double parallelDispatch = 0;
  /// The share of a processor each device gets when all of a node's
  /// devices compute at once (CPU ranks outnumbering cores: cores / ranks).
  /// The calibrated per-call figures are a rank's at full speed; the cost
  /// model shares the processors among the ranks running at each moment.
  double processorShare = 1;
  /// With processor_share < 1: the share of a processor that a rank
  /// waiting for a message takes, relative to a computing rank's (MPI
  /// polls while it waits: 1 polls as hard as computing, 0 sleeps).
  double waitingShare = 1;
  /// With processor_share < 1: whether the runtime pins each rank to one
  /// core, pipeline stages spread over the cores (its default on one host
  /// when the ranks are a multiple of the cores), or leaves the ranks to
  /// the kernel's balancer (METART_BIND=none), which the model treats as
  /// one pool of processors.
  bool pinnedRanks = true;
  /// The fit for `kind`, if any.
  const KernelFit *kernel(llvm::StringRef kind) const;
};

/// Where a link connects devices.
enum class LinkLevel { Node, Cluster };

/// What a link is made of.
enum class LinkKind {
  SharedMemory,
  NVLink,
  NVSwitch,
  PCIe,
  InfiniBand,
  Ethernet
};

/// The links of one level: each device's bandwidth to the others, one way.
struct LinkDescription {
  LinkLevel level = LinkLevel::Node;
  LinkKind kind = LinkKind::NVLink;
  /// Bytes per second per device, one way.
  double bandwidth = 0;
  /// Seconds for a message of no bytes.
  double latency = 0;
  /// Independent networks a node is attached to (rail-optimised
  /// InfiniBand: device i of every node on rail i); `bandwidth` is still
  /// per device.
  int64_t rails = 1;
};

/// A measured table: the bus bandwidth (nccl-tests' busbw) of a collective
/// over `group` devices placed on `placement`, per message size.
struct CollectiveTable {
  std::string collective;
  int64_t group = 0;
  LinkLevel placement = LinkLevel::Node;
  std::vector<double> bytes, busBandwidth;
};

/// A fitted α–β model of one collective over `group` devices on
/// `placement`: time = alpha + bytes / beta, bytes being each rank's
/// payload as the runtime counts it (include/metart/comm.h: the operand,
/// the gathered result for all_gather, the message for send_recv, whose
/// group is the pair).
struct CollectiveFit {
  /// all_reduce, all_gather, reduce_scatter, send_recv or broadcast.
  std::string collective;
  int64_t group = 0;
  LinkLevel placement = LinkLevel::Node;
  /// Seconds, and bytes per second.
  double alpha = 0, beta = 0;
};

struct ClusterDescription {
  std::string name;
  int64_t nodes = 0, devicesPerNode = 0;
  DeviceDescription device;
  std::vector<LinkDescription> links;
  std::vector<CollectiveTable> collectives;
  std::vector<CollectiveFit> collectiveFits;

  int64_t numDevices() const { return nodes * devicesPerNode; }
  /// The links of `level`, if described.
  const LinkDescription *link(LinkLevel level) const;
};

/// Reads a description from `buffer` (its identifier names the file in
/// errors). Errors and warnings go to `diagnostics` as
/// `file:line:col: error: ...` with the line and a caret; returns nothing
/// after an error.
std::optional<ClusterDescription>
readClusterDescription(llvm::MemoryBufferRef buffer,
                       llvm::raw_ostream &diagnostics);

/// Reads the description in file `path`; a missing file is an error that
/// names it.
std::optional<ClusterDescription>
readClusterDescriptionFile(llvm::StringRef path,
                           llvm::raw_ostream &diagnostics);

/// Writes `cluster` as YAML that readClusterDescription reads back (the
/// same schema, with LLVM's YAML I/O; numbers to 6 significant digits).
void writeClusterDescription(const ClusterDescription &cluster,
                             llvm::raw_ostream &os);

/// A human-readable summary: devices, memory, peak throughput, links,
/// measured tables and fits.
void printClusterSummary(const ClusterDescription &cluster,
                         llvm::raw_ostream &os);

llvm::StringRef stringifyLinkLevel(LinkLevel level);
llvm::StringRef stringifyLinkKind(LinkKind kind);

} // namespace metac::planner

#endif // METAC_PLANNER_CLUSTERDESCRIPTION_H
