//===- Dtype.h - element types of the CPU kernels ---------------*- C++ -*-===//
//
// The kernels are templates over the C++ element type; these helpers call a
// generic lambda with a value of the type that a runtime element type names,
// so that one switch per call, not per element, picks the instantiation.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_CPU_DTYPE_H
#define METART_SRC_CPU_DTYPE_H

#include "metart/metart.h"

#include <cstdint>

namespace metart::cpu {

/// Calls `fn(T())` with T float for METART_F32 and double for METART_F64
/// (the dispatch layer admits no other float type).
template <typename Fn> decltype(auto) withFloat(metart_dtype dtype, Fn &&fn) {
  if (dtype == METART_F64)
    return fn(double());
  return fn(float());
}

/// Calls `fn(I())` with I int32_t for METART_I32 and int64_t for METART_I64.
template <typename Fn> decltype(auto) withIndex(metart_dtype dtype, Fn &&fn) {
  if (dtype == METART_I64)
    return fn(int64_t());
  return fn(int32_t());
}

/// Calls `withFloat` and `withIndex` together: `fn(T(), I())`.
template <typename Fn>
decltype(auto) withFloatAndIndex(metart_dtype dtype, metart_dtype indexType,
                                 Fn &&fn) {
  return withFloat(dtype, [&](auto t) {
    return withIndex(indexType, [&](auto i) { return fn(t, i); });
  });
}

} // namespace metart::cpu

#endif // METART_SRC_CPU_DTYPE_H
