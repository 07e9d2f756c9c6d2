//===- Checker.h - operand checks of runtime calls --------------*- C++ -*-===//
//
// Each runtime entry point checks its context and operands with a Checker
// before it runs a kernel, and finishes through it: the first failure is
// the call's error, and the profile and the timeline time the call.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_CHECKER_H
#define METART_SRC_CHECKER_H

#include "Tensor.h"

#include <chrono>
#include <string>

namespace metart {

/// Checks the operands of one call of `function`. Every check returns
/// whether it (and every check before it) passed; the first failure is
/// recorded on the context as "function: message" and later checks do
/// nothing. A null context fails at once (its message goes where
/// `metart_context_last_error(NULL)` finds it).
class Checker {
public:
  Checker(metart_context *context, const char *function);

  /// Whether every check so far passed.
  bool ok() const { return status == METART_OK; }
  /// METART_OK, or the status of the first failure.
  metart_status result() const { return status; }

  /// `t` is non-null, of a known element type, of rank in [0, kMaxRank]
  /// with non-negative dimensions, and its data is non-null unless empty.
  bool tensor(const char *name, const metart_tensor *t);
  /// `tensor`, and of element type f32, f64, bf16 or f16.
  bool floatTensor(const char *name, const metart_tensor *t);
  /// `tensor`, and of element type i32 or i64 (ids, labels).
  bool indexTensor(const char *name, const metart_tensor *t);
  /// `t` has the element type of `reference`.
  bool sameDtype(const char *name, const metart_tensor &t,
                 const char *referenceName, const metart_tensor &reference);
  /// `t`'s shape is `expected`.
  bool shape(const char *name, const metart_tensor &t, ShapeRef expected);
  /// The bytes of `a` and `b` do not overlap; with `allowSame`, the two may
  /// also be exactly the same memory (an elementwise op in place).
  bool disjoint(const char *nameA, const metart_tensor &a, const char *nameB,
                const metart_tensor &b, bool allowSame = false);
  /// `dims` (with `count` entries) are sorted, distinct and in [0, rank).
  bool dimensionList(const char *what, const int64_t *dims, int64_t count,
                     int64_t rank);
  /// `values` has two entries, each at least `minimum` (and at most 2^32).
  bool pair(const char *what, const int64_t *values, int64_t minimum);

  /// Records the failure `code` with the streamed `parts` as its message,
  /// returns `code`.
  template <typename... Parts>
  metart_status fail(metart_status code, const Parts &...parts) {
    std::ostringstream os;
    (os << ... << parts);
    return record(code, os.str());
  }
  /// `fail` with METART_ERROR_INVALID_ARGUMENT.
  template <typename... Parts> metart_status invalid(const Parts &...parts) {
    return fail(METART_ERROR_INVALID_ARGUMENT, parts...);
  }
  /// `invalid`, returning false (for checks written as predicates).
  template <typename... Parts> bool reject(const Parts &...parts) {
    invalid(parts...);
    return false;
  }
  /// Records a backend's failure, if any, and returns its status. When the
  /// context profiles, a successful call's time is added to its function.
  metart_status finish(const KernelStatus &kernel);
  /// Profiles and traces the call under `name` instead of its function (a
  /// generated kernel under its entry: a string that outlives the context).
  void profileAs(const char *name) { profiledName = name; }

private:
  metart_status record(metart_status code, const std::string &message);

  metart_context *context;
  const char *function;
  const char *profiledName = nullptr;
  metart_status status = METART_OK;
  /// When the call began (profiling only).
  std::chrono::steady_clock::time_point begin;
  bool profiling = false;
};

} // namespace metart

#endif // METART_SRC_CHECKER_H
