//===- Widen.h - kernels on bf16 and f16 computed in f32 --------*- C++ -*-===//
//
// bf16 and f16 are storage types here (Precision.h): a kernel called on
// them runs the backend's f32 kernel on widened copies of its operands and
// rounds its results back, to nearest even. Products and reductions then
// accumulate in f32, as mixed-precision training needs (a bf16 sum of
// many small terms would lose them). f32 and f64 operands pass through
// untouched. The copies are scratch memory of the call, counted in the
// peak like any other.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_OPS_WIDEN_H
#define METART_SRC_OPS_WIDEN_H

#include "../Context.h"
#include "../Tensor.h"

#include <vector>

namespace metart {

/// Whether `dtype` is a 16-bit float (computed in f32).
inline bool isReducedFloat(int32_t dtype) {
  return dtype == METART_BF16 || dtype == METART_F16;
}

class Widened {
public:
  /// For a call whose float operands are of `dtype`; with `native`, a
  /// 16-bit `dtype` is passed as it is (the backend computes on it).
  Widened(metart_context *context, metart_dtype dtype, bool native = false)
      : context(context), stored(dtype), native(native) {}
  ~Widened();
  Widened(const Widened &) = delete;
  Widened &operator=(const Widened &) = delete;

  /// The element type the backend computes in.
  metart_dtype dtype() const { return widened() ? METART_F32 : stored; }
  /// What the kernel reads for `t` (null for a null `t`).
  const void *in(const metart_tensor *t);
  /// What the kernel writes for `t`, rounded back by finish(). A result
  /// that is exactly an operand (in place) shares its copy.
  void *out(const metart_tensor *t);
  /// Read and written (optimizer state): widened now, rounded back later.
  void *inOut(const metart_tensor *t);
  /// Runs the kernel `call` unless a copy failed, then rounds the results
  /// back: the first failure of all that.
  template <typename Call> KernelStatus run(Call &&call) {
    if (failure.failed())
      return failure;
    return finish(call());
  }

private:
  struct Copy {
    const metart_tensor *tensor;
    void *data;
    size_t bytes;
    bool read, written;
  };
  bool widened() const { return isReducedFloat(stored) && !native; }
  Copy *copyOf(const metart_tensor *t, bool read);
  /// The data the kernel uses for `t`: `read` widened now, `written`
  /// rounded back by finish().
  void *data(const metart_tensor *t, bool read, bool written);
  KernelStatus finish(KernelStatus kernel);

  metart_context *context;
  metart_dtype stored;
  bool native;
  std::vector<Copy> copies;
  KernelStatus failure;
};

} // namespace metart

#endif // METART_SRC_OPS_WIDEN_H
