//===- Stats.cpp - counters of collectives per axes mask ------------------===//
//
// The names of the axes masks (the counters' C API: CommStats.cpp).
//
//===----------------------------------------------------------------------===//

#include "Stats.h"
#include "metart/comm.h"

#include <array>
#include <string>

using namespace metart;
using namespace metart::comm;

const char *comm::axesName(int mask) {
  // "task+data", ... built once: callers keep the pointers.
  static const std::array<std::string, kNumMasks> names = [] {
    static const char *const axes[METART_NUM_AXES] = {
        "task", "data", "tensor", "pipeline", "expert", "sequence"};
    std::array<std::string, kNumMasks> out;
    out[0] = "none";
    for (int m = 1; m < kNumMasks; ++m)
      for (int axis = 0; axis < METART_NUM_AXES; ++axis)
        if (m & (1 << axis))
          out[m] += (out[m].empty() ? "" : "+") + std::string(axes[axis]);
    return out;
  }();
  return mask >= 0 && mask < kNumMasks ? names[mask].c_str() : "";
}

extern "C" const char *metart_comm_axes_name(int32_t axes_mask) {
  return axesName(axes_mask);
}
