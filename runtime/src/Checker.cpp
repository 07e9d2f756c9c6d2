//===- Checker.cpp - operand checks of runtime calls ----------------------===//

#include "Checker.h"

#include "Context.h"

#include <limits>

namespace metart {

Checker::Checker(metart_context *context, const char *function)
    : context(context), function(function) {
  if (!context) {
    record(METART_ERROR_INVALID_ARGUMENT, "the context is null");
    return;
  }
  profiling = context->profile.enabled() || context->timeline.enabled();
  if (profiling)
    begin = std::chrono::steady_clock::now();
}

metart_status Checker::record(metart_status code, const std::string &message) {
  status = code;
  setLastError(context, std::string(function) + ": " + message);
  return code;
}

bool Checker::tensor(const char *name, const metart_tensor *t) {
  if (!ok())
    return false;
  if (!t)
    return reject(name, " is null");
  if (dtypeSize(t->dtype) == 0)
    return reject(name, " has an unknown element type (", t->dtype, ")");
  if (t->rank < 0 || t->rank > kMaxRank)
    return reject(name, " has rank ", t->rank, ", outside [0, ", kMaxRank, "]");
  if (t->rank > 0 && !t->shape)
    return reject(name, " has rank ", t->rank, " and a null shape");
  // The element count and the byte size must not overflow.
  int64_t limit = std::numeric_limits<int64_t>::max() /
                  static_cast<int64_t>(dtypeSize(t->dtype));
  int64_t elements = 1;
  for (int64_t d : shapeOf(*t)) {
    if (d < 0)
      return reject(name, " has a negative dimension: ", shapeOf(*t));
    if (d != 0 && elements > limit / d)
      return reject(name, " of shape ", shapeOf(*t), " is too large");
    elements *= d;
  }
  if (elements > 0 && !t->data)
    return reject(name, " (", describe(*t), ") has null data");
  return true;
}

bool Checker::floatTensor(const char *name, const metart_tensor *t) {
  if (!tensor(name, t))
    return false;
  if (t->dtype != METART_F32 && t->dtype != METART_F64 &&
      t->dtype != METART_BF16 && t->dtype != METART_F16)
    return reject("expects ", name,
                  " of element type f32, f64, bf16 or f16, got ", describe(*t));
  return true;
}

bool Checker::indexTensor(const char *name, const metart_tensor *t) {
  if (!tensor(name, t))
    return false;
  if (t->dtype != METART_I32 && t->dtype != METART_I64)
    return reject("expects ", name, " of element type i32 or i64, got ",
                  describe(*t));
  return true;
}

bool Checker::sameDtype(const char *name, const metart_tensor &t,
                        const char *referenceName,
                        const metart_tensor &reference) {
  if (!ok())
    return false;
  if (t.dtype != reference.dtype)
    return reject(name, " (", describe(t),
                  ") does not have the element type of ", referenceName, " (",
                  describe(reference), ")");
  return true;
}

bool Checker::shape(const char *name, const metart_tensor &t,
                    ShapeRef expected) {
  if (!ok())
    return false;
  if (shapeOf(t) != expected)
    return reject(name, " shape ", shapeOf(t),
                  " does not match the expected shape ", expected);
  return true;
}

bool Checker::disjoint(const char *nameA, const metart_tensor &a,
                       const char *nameB, const metart_tensor &b,
                       bool allowSame) {
  if (!ok())
    return false;
  auto begin = [](const metart_tensor &t) {
    return reinterpret_cast<uintptr_t>(t.data);
  };
  auto end = [&](const metart_tensor &t) {
    return begin(t) +
           static_cast<uintptr_t>(numElements(t)) * dtypeSize(t.dtype);
  };
  if (numElements(a) == 0 || numElements(b) == 0)
    return true;
  if (allowSame && begin(a) == begin(b) && end(a) == end(b))
    return true;
  if (begin(a) < end(b) && begin(b) < end(a))
    return reject(nameA, " and ", nameB, " overlap in memory");
  return true;
}

bool Checker::dimensionList(const char *what, const int64_t *dims,
                            int64_t count, int64_t rank) {
  if (!ok())
    return false;
  if (count < 0 || count > kMaxRank || (count > 0 && !dims))
    return reject("expects a list of ", what, "s, got ", count, " entries");
  for (int64_t i = 0; i < count; ++i) {
    if (dims[i] < 0 || dims[i] >= rank)
      return reject(what, " ", dims[i], " is out of range for rank ", rank);
    if (i > 0 && dims[i - 1] >= dims[i])
      return reject(what, "s must be sorted and distinct, got ",
                    ShapeRef(dims, count));
  }
  return true;
}

/// The largest kernel, stride or padding value: larger ones are mistakes,
/// and sizes computed from them could overflow.
static constexpr int64_t kMaxWindow = int64_t(1) << 32;

bool Checker::pair(const char *what, const int64_t *values, int64_t minimum) {
  if (!ok())
    return false;
  if (!values)
    return reject(what, " is null");
  if (values[0] < minimum || values[1] < minimum || values[0] > kMaxWindow ||
      values[1] > kMaxWindow)
    return reject("expects ", what, " values in [", minimum, ", ", kMaxWindow,
                  "], got ", ShapeRef(values, 2));
  return true;
}

metart_status Checker::finish(const KernelStatus &kernel) {
  if (kernel.failed())
    return record(kernel.code, kernel.message);
  if (profiling && ok()) {
    // A device backend runs asynchronously: wait, so that the time covers
    // the work and not only its launch.
    context->backend->synchronize();
    auto end = std::chrono::steady_clock::now();
    const char *name = profiledName ? profiledName : function;
    if (context->profile.enabled())
      context->profile.add(name,
                           std::chrono::duration<double>(end - begin).count());
    if (context->timeline.enabled())
      context->timeline.call(name, begin, end);
  }
  return result();
}

} // namespace metart
