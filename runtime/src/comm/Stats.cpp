//===- Stats.cpp - counters of collectives per axes mask ------------------===//
//
// The names of the axes masks (the counters' C API: CommStats.cpp).
//
//===----------------------------------------------------------------------===//

#include "Stats.h"
#include "metart/comm.h"

using namespace metart;
using namespace metart::comm;

const char *comm::axesName(int mask) {
  static const char *const names[kNumMasks] = {"none",
                                               "task",
                                               "data",
                                               "task+data",
                                               "tensor",
                                               "task+tensor",
                                               "data+tensor",
                                               "task+data+tensor",
                                               "pipeline",
                                               "task+pipeline",
                                               "data+pipeline",
                                               "task+data+pipeline",
                                               "tensor+pipeline",
                                               "task+tensor+pipeline",
                                               "data+tensor+pipeline",
                                               "task+data+tensor+pipeline"};
  return mask >= 0 && mask < kNumMasks ? names[mask] : "";
}

extern "C" const char *metart_comm_axes_name(int32_t axes_mask) {
  return axesName(axes_mask);
}
