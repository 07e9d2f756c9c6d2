//===- CarrySite.h - a step's values kept for its next call -----*- C++ -*-===//
//
// The per-site state of metart_carry_store / metart_carry_load (Carry.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_CARRYSITE_H
#define METART_SRC_CARRYSITE_H

#include <cstddef>
#include <cstdint>

namespace metart {

/// Two persistent buffers (metart_buffer_alloc) and how often the site was
/// stored and loaded.
struct CarrySite {
  void *buffers[2] = {nullptr, nullptr};
  /// 2, or 1 where every read of a load ends before the store of its call.
  int32_t count = 0;
  size_t bytes = 0;
  int32_t dtype = 0;
  int64_t stores = 0;
  int64_t loads = 0;
};

} // namespace metart

#endif // METART_SRC_CARRYSITE_H
