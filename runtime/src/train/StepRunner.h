//===- StepRunner.h - the compiled step, replayed when recorded -*- C++ -*-===//
//-*-===//
//
// The meta-iterations of a training run call the same compiled step on the
// same memory (parameters, optimizer state and batch buffers are allocated
// once), so a backend that can record (CUDA) records one meta-iteration as
// a graph and replays it for the others: one launch instead of a call per
// op. The first meta-iteration runs call by call (it fills the allocator's
// cache and initialises the libraries), the second is recorded and
// replayed, the rest are replays. When recording fails (the step waits for
// the device, or the backend cannot record), the run goes on call by call
// and `fallback` says why.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_TRAIN_STEPRUNNER_H
#define METART_SRC_TRAIN_STEPRUNNER_H

#include "metart/train.h"

#include <cstdint>
#include <string>

namespace metart::train {

class StepRunner {
public:
  /// Runs `step` on `context`; `record`: whether to record when the
  /// context's backend can.
  StepRunner(metart_context *context, metart_function step, bool record);
  /// Drops the recording.
  ~StepRunner();
  StepRunner(const StepRunner &) = delete;
  StepRunner &operator=(const StepRunner &) = delete;

  /// Runs one meta-iteration. On failure, `error` says why.
  metart_status run(metart_tensor *const *inputs, metart_tensor *const *outputs,
                    std::string &error);
  /// Drops the recording: later meta-iterations record again.
  void discard();

  /// How many meta-iterations were replays of the recording.
  int64_t replays() const { return replayCount; }
  /// Why recording was given up (empty when it was not).
  const std::string &fallback() const { return reason; }

private:
  enum State { Warming, Recording, Replaying, CallByCall };

  metart_status callStep(metart_tensor *const *inputs,
                         metart_tensor *const *outputs, std::string &error);
  metart_status replay(std::string &error);

  metart_context *context;
  metart_function step;
  State state;
  int64_t replayCount = 0;
  std::string reason;
};

} // namespace metart::train

#endif // METART_SRC_TRAIN_STEPRUNNER_H
