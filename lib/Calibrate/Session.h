//===- Session.h - the runtime context the measurements share ---*- C++ -*-===//
//
// One runtime context per rank with the world laid out as a mesh, device
// tensors that live until the session lets them go, and timing that every
// rank agrees on: a repetition count is derived from the slowest rank's
// pilot call, so that all ranks run the same calls at the same time (a
// collective must be called by every rank; a product must compete with the
// others' products for the cores as it would in a training step). A kernel
// can be timed with its result allocated from scratch memory per call, as
// compiled code allocates it.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_LIB_CALIBRATE_SESSION_H
#define METAC_LIB_CALIBRATE_SESSION_H

#include "metart/comm.h"
#include "metart/metart.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <array>
#include <cstdint>
#include <deque>
#include <memory>

namespace metac::calibrate {

/// A tensor in the context's device memory (its shape is its own, so it
/// stays where it was made).
struct DeviceTensor {
  DeviceTensor() = default;
  DeviceTensor(const DeviceTensor &) = delete;
  DeviceTensor &operator=(const DeviceTensor &) = delete;
  llvm::SmallVector<int64_t, 4> shape;
  metart_tensor tensor{};
  const metart_tensor *get() const { return &tensor; }
  /// Bytes of its elements.
  double bytes() const;
};

/// How long each sample of a measurement runs, and how many there are.
struct SamplePolicy {
  double sampleSeconds;
  int samples;
  /// Whether a sample ends when every rank has finished its calls (a
  /// barrier): ranks that share cores then pay for each other's work, as
  /// between two collectives of a step. Collectives wait for each other
  /// already.
  bool untilAllDone;
  /// Seconds the calling thread works on its own between two calls (0:
  /// back to back). With a gap, each call is timed alone and the gap is
  /// not counted: between the ops of a compiled step the runtime's loop
  /// threads fall asleep, and waking them is part of what the next
  /// parallel loop costs, which calls back to back never pay.
  double idleGap = 0;
};

class Session {
public:
  /// Joins the world and creates this rank's context, its mesh the world
  /// as one axis.
  static llvm::Expected<std::unique_ptr<Session>> create(bool cuda);
  ~Session();

  metart_context *context() const { return ctx; }
  int64_t rank() const { return worldRank; }
  int64_t size() const { return worldSize; }
  /// Only ranks below `count` run the timed calls (time() returns 0 on the
  /// others, which sleep through the samples instead of waiting in a
  /// barrier, or with `othersPoll` wait in the barrier as a rank waiting
  /// for a message does): with more ranks than cores, a kernel is then
  /// measured at a rank's full speed with every core busy. Default: every
  /// rank.
  /// Whether the calls read the same operands call after call (in cache:
  /// the `hot` tables) or cycle through copies of them (from memory).
  void setHotOperands(bool hot) { hotOperands = hot; }
  bool operandsHot() const { return hotOperands; }
  /// How many copies of a call's operands (`bytes` in all) the
  /// measurements cycle through, one per call: with hot operands one,
  /// else up to 32 and 256 MiB, so that the calls read their operands
  /// from memory as far as the pool allows.
  int operandCopies(double bytes) const;

  void setActiveRanks(int64_t count, bool othersPoll = false) {
    activeRanks = count;
    idleRanksPoll = othersPoll;
  }

  /// Lays the world out as `mesh` (task, data, tensor, pipeline, expert).
  llvm::Error attach(const std::array<int64_t, METART_NUM_AXES> &mesh);
  /// An error naming `what` and the runtime's message when `status` is not
  /// METART_OK.
  llvm::Error check(metart_status status, llvm::StringRef what) const;
  /// The largest `value` of all ranks.
  llvm::Expected<double> maxOverRanks(double value);
  /// A tensor of `shape` filled with `value`, freed by releaseTensors.
  llvm::Expected<DeviceTensor &>
  tensor(metart_dtype dtype, llvm::ArrayRef<int64_t> shape, double value = 1);
  /// An f32 tensor of `shape` holding varied values in [-1, 1) (a fixed
  /// pseudo-random sequence), or, `rectified`, those values' max(0, v) (as
  /// after a ReLU): kernels that branch on their data (pooling's maxima,
  /// the ranges of exp or erf) run as they do on real data.
  llvm::Expected<DeviceTensor &> variedTensor(llvm::ArrayRef<int64_t> shape,
                                              bool rectified = false);
  void releaseTensors();

  /// Seconds per call of `call`: after a warm-up call and an agreed number
  /// of calls per sample, the median of `policy.samples` samples on this
  /// rank, each started by a barrier of the world (and ended by one with
  /// `policy.untilAllDone`); with `policy.idleGap`, the calls alone, each
  /// after the gap. Every rank must time the same calls.
  llvm::Expected<double> time(llvm::function_ref<metart_status()> call,
                              llvm::StringRef what, SamplePolicy policy);
  /// time() of every rank, then the slowest rank's median.
  llvm::Expected<double> slowestTime(llvm::function_ref<metart_status()> call,
                                     llvm::StringRef what, SamplePolicy policy);
  /// slowestTime() of a kernel called the way compiled code calls it
  /// (lib/Conversion/NNToRuntime): its result, of `dtype` and `shape`, is
  /// allocated with metart_scratch_alloc before each call and given back
  /// with metart_scratch_free after it, both inside the timed call.
  llvm::Expected<double> slowestCompiledTime(
      metart_dtype dtype, llvm::ArrayRef<int64_t> shape,
      llvm::function_ref<metart_status(const metart_tensor *result)> kernel,
      llvm::StringRef what, SamplePolicy policy);

private:
  Session() = default;
  metart_context *ctx = nullptr;
  int64_t worldRank = 0, worldSize = 1;
  /// Seconds between two readings of the clock with nothing between them
  /// (taken off each call timed alone).
  double clockSeconds = 0;
  /// Where maxOverRanks reduces (kept by releaseTensors).
  DeviceTensor scalar;
  std::deque<DeviceTensor> tensors;
  /// Tensors variedTensor has filled (each gets its own sequence).
  uint64_t variedTensors = 0;
  int64_t activeRanks = INT64_MAX;
  bool idleRanksPoll = false;
  bool hotOperands = false;
};

/// Seconds on a steady clock.
double now();
/// The median of `values` (not empty).
double median(llvm::SmallVectorImpl<double> &values);

} // namespace metac::calibrate

#endif // METAC_LIB_CALIBRATE_SESSION_H
