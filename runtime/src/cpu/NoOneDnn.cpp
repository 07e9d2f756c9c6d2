//===- NoOneDnn.cpp - the CPU backend built without oneDNN ----------------===//
//
// Without oneDNN (libdnnl-dev absent when configuring) every convolution
// stays on im2col: `handles` says no, and the kernels are never called.
//
//===----------------------------------------------------------------------===//

#include "OneDnn.h"

namespace metart::cpu {

struct OneDnnConvolutions::State {};

OneDnnConvolutions::OneDnnConvolutions() = default;
OneDnnConvolutions::~OneDnnConvolutions() = default;

bool OneDnnConvolutions::handles(metart_dtype, const ConvSizes &) {
  return false;
}

bool OneDnnConvolutions::forced() const { return false; }

void OneDnnConvolutions::setThreads(int) {}

std::string OneDnnConvolutions::implementation(const ConvSizes &) { return ""; }

static KernelStatus notBuilt() {
  return {METART_ERROR_UNSUPPORTED, "metart was built without oneDNN"};
}

KernelStatus OneDnnConvolutions::forward(const ConvSizes &, Workspace &,
                                         const float *, const float *,
                                         const float *, float *) {
  return notBuilt();
}

KernelStatus OneDnnConvolutions::backwardInput(const ConvSizes &, Workspace &,
                                               const float *, const float *,
                                               float *) {
  return notBuilt();
}

KernelStatus OneDnnConvolutions::backwardWeight(const ConvSizes &, Workspace &,
                                                const float *, const float *,
                                                float *) {
  return notBuilt();
}

} // namespace metart::cpu
