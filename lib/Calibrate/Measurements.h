//===- Measurements.h - what calibration measures ---------------*- C++ -*-===//
//
// Each measurement runs on every rank at once and returns the slowest
// rank's figure (a step of a distributed program waits for its slowest
// rank), through the session's agreed timing.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_LIB_CALIBRATE_MEASUREMENTS_H
#define METAC_LIB_CALIBRATE_MEASUREMENTS_H

#include "Session.h"

#include "metac/Planner/ClusterDescription.h"

#include <array>
#include <string>
#include <vector>

namespace metac::calibrate {

/// Where the runtime's CPU backend splits an elementwise loop over its
/// threads (runtime/src/cpu/Parallel.h: parallelFor splits loops of at
/// least twice kElementGrain, 8192 elements). The calibration checks it:
/// without a step in time there, it writes no threshold.
constexpr int64_t kParallelMinElements = 2 * 8192;

/// The sizes and sample counts of one calibration.
struct Plan {
  /// m = n = k of the square products.
  std::vector<int64_t> gemmSizes;
  /// [T, N, K, M] of the batched products: T tasks of N rows of K
  /// features times an M x K weight.
  std::vector<std::array<int64_t, 4>> productShapes;
  /// The GEMM grid: thin dimensions, and sides p of the p x p areas; each
  /// cell timed as three products (a linear layer's x W^T, a weight
  /// gradient's x^T dy, an input gradient's dy W).
  std::vector<int64_t> gridThin, gridSides;
  /// [T, N, H] of the tensors the other kinds of kernels are timed on.
  std::vector<std::array<int64_t, 3>> kernelShapes;
  /// Widths h of the parameter sets of the optimizer (three h x h weights
  /// and three biases of h).
  std::vector<int64_t> optimizerWidths;
  /// Elements of each operand of the bandwidth measurement.
  int64_t streamElements;
  /// Payload bytes per rank of the collectives.
  std::vector<double> messageBytes;
  SamplePolicy compute, product, kernel, tiny, collective;
  /// Whether the runtime has loop threads to wake (a CPU rank with a core
  /// to spare): then the cost of waking them is measured.
  bool wakesLoopThreads = false;
};

/// The plan of a calibration; `loopThreads` are the runtime's loop threads
/// per rank.
Plan planFor(bool quick, bool cuda, int64_t loopThreads);

/// The times of one runtime function over the sizes of a plan.
struct KernelSeries {
  /// The function and its operands, e.g. "metart_nn_binary add".
  std::string what;
  /// Per size: the shape in words, the bytes of every operand and result
  /// (what the cost model counts), the FLOPs (products) and the seconds
  /// per call.
  std::vector<std::string> shapes;
  std::vector<double> bytes, flops, seconds;
  /// Elements of the result per size (kinds but products).
  std::vector<double> elements;
};

/// An empty series of `what`.
inline KernelSeries named(llvm::StringRef what) {
  KernelSeries series;
  series.what = what.str();
  return series;
}

/// A fitted kind of kernel and the times it was fitted to.
struct MeasuredKernel {
  planner::KernelFit fit;
  /// The largest relative residual of the fit.
  double worst = 0;
  std::vector<KernelSeries> series;
};

/// Every kind of kernel but products, and the cost of waking the runtime's
/// loop threads.
struct MeasuredKernels {
  /// alpha + bytes / beta of elementwise, reduce, broadcast, transpose,
  /// copy and optimizer, in this order.
  std::vector<MeasuredKernel> kinds;
  /// Elementwise loops of at least `parallelMinElements` elements run on
  /// the loop threads, which costs `parallelDispatch` seconds more (0:
  /// never); the elementwise fit is of the times without it.
  int64_t parallelMinElements = 0;
  double parallelDispatch = 0;
  /// The elementwise functions timed just below and at the threshold.
  std::vector<KernelSeries> step;
};
llvm::Expected<MeasuredKernels> measureKernels(Session &session,
                                               const Plan &plan);

/// The products: the GEMM table (FLOPs -> rate, f32 and f64, ascending)
/// from batched and square products, and the product kind's fit (alpha:
/// the per-call part; beta: at least `streamBandwidth`, and high enough
/// that every measured product is priced by its rate).
struct MeasuredProducts {
  /// Every product but the per-task linear layers', and theirs alone.
  std::vector<planner::GemmRate> gemm, gemmPerTask;
  /// By shape (rows f32 and f64 only: the hot ones are a second call's).
  planner::GemmGrid grid;
  MeasuredKernel kernel;
};
llvm::Expected<MeasuredProducts>
measureProducts(Session &session, const Plan &plan, double streamBandwidth);

/// Bytes per second read and written by a large metart_nn_binary.
llvm::Expected<double> measureBandwidth(Session &session, const Plan &plan);

/// Seconds per metart_nn_binary call on 4 elements (result from scratch).
/// With more ranks than cores: the share of a core that a rank waiting for
/// a message takes from the ranks computing (0: it sleeps; 1: it polls as
/// hard as they compute), from `cores` ranks multiplying matrices while
/// the others sleep and while they wait in a barrier.
llvm::Expected<double> measureWaitingShare(Session &session, const Plan &plan,
                                           int64_t cores);
llvm::Expected<double> measureLaunchOverhead(Session &session,
                                             const Plan &plan);

/// One fitted collective and how well the fit matches the samples.
struct MeasuredFit {
  planner::CollectiveFit fit;
  /// The largest relative residual of the fit.
  double worst = 0;
  /// The samples: payload bytes per rank and seconds per call.
  std::vector<double> bytes, seconds;
};

/// α–β fits of every collective over every group size that divides the
/// world (all groups of a size at once), and of send/recv between pairs of
/// ranks. Leaves the world laid out as one axis.
llvm::Expected<std::vector<MeasuredFit>> measureCollectives(Session &session,
                                                            const Plan &plan);

/// The samples of `measured` as a table of bus bandwidths (nccl-tests'
/// busbw: bytes / time times 2(n-1)/n for all_reduce, (n-1)/n for
/// all_gather and reduce_scatter, 1 for broadcast and send_recv).
planner::CollectiveTable busBandwidthTable(const MeasuredFit &measured);

} // namespace metac::calibrate

#endif // METAC_LIB_CALIBRATE_MEASUREMENTS_H
