//===- StepRunner.cpp - runs the compiled step, replaying a recording -----===//

#include "StepRunner.h"

#include "../Context.h"

namespace metart::train {

StepRunner::StepRunner(metart_context *context, metart_function step,
                       bool record)
    : context(context), step(step),
      state(record && context->backend->canRecord() ? Warming : CallByCall) {}

StepRunner::~StepRunner() { discard(); }

void StepRunner::discard() {
  if (state == Replaying) {
    context->backend->discardRecording();
    state = Recording;
  }
}

metart_status StepRunner::callStep(metart_tensor *const *inputs,
                                   metart_tensor *const *outputs,
                                   std::string &error) {
  auto status = static_cast<metart_status>(step(context, inputs, outputs));
  if (status)
    error = metart_context_last_error(context);
  return status;
}

metart_status StepRunner::replay(std::string &error) {
  KernelStatus status = context->backend->replay();
  if (status.failed()) {
    error = status.message;
    return status.code;
  }
  ++replayCount;
  return METART_OK;
}

metart_status StepRunner::run(metart_tensor *const *inputs,
                              metart_tensor *const *outputs,
                              std::string &error) {
  switch (state) {
  case CallByCall:
    return callStep(inputs, outputs, error);
  case Warming:
    state = Recording;
    return callStep(inputs, outputs, error);
  case Replaying:
    return replay(error);
  case Recording:
    break;
  }
  Backend &backend = *context->backend;
  KernelStatus begun = backend.beginRecording();
  if (begun.failed()) {
    state = CallByCall;
    reason = begun.message;
    return callStep(inputs, outputs, error);
  }
  // Recorded, nothing has run yet.
  std::string stepError;
  metart_status stepStatus = callStep(inputs, outputs, stepError);
  KernelStatus ended = backend.endRecording();
  if (stepStatus || ended.failed()) {
    backend.discardRecording();
    state = CallByCall;
    reason = stepStatus ? stepError : ended.message;
    // Call by call, a failure of the step itself is reported as usual.
    return callStep(inputs, outputs, error);
  }
  state = Replaying;
  return replay(error);
}

} // namespace metart::train
