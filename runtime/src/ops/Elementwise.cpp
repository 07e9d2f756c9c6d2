//===- Elementwise.cpp - checks and dispatch of elementwise kernels -------===//
//
// `metart_fill` (of any element type: integer splat constants are ids or
// labels), `metart_convert` (between float element types),
// `metart_nn_unary`, `metart_nn_scale` and `metart_nn_binary`:
// operands of one shape and element type; the result may be exactly an
// operand (in place) but not overlap one partially.
//
//===----------------------------------------------------------------------===//

#include "../Checker.h"
#include "../Context.h"
#include "Widen.h"

#include <cmath>

using namespace metart;

metart_status metart_fill(metart_context *context, const metart_tensor *y,
                          double value) {
  Checker check(context, "metart_fill");
  if (!check.tensor("y", y))
    return check.result();
  if (y->dtype == METART_I32 || y->dtype == METART_I64) {
    double bound =
        y->dtype == METART_I32 ? 2147483648.0 : 9223372036854775808.0;
    if (!(value == std::trunc(value) && value >= -bound && value < bound))
      return check.invalid("value ", value, " is not an ", dtypeName(y->dtype),
                           " integer");
  }
  Widened w(context, dtypeOf(*y), context->backend->reducedFloatElementwise());
  void *yd = w.out(y);
  return check.finish(w.run([&] {
    return context->backend->fill(w.dtype(), numElements(*y), yd, value);
  }));
}

metart_status metart_convert(metart_context *context, const metart_tensor *x,
                             const metart_tensor *y) {
  Checker check(context, "metart_convert");
  if (!check.floatTensor("x", x) || !check.floatTensor("y", y) ||
      !check.shape("y", *y, shapeOf(*x)) ||
      !check.disjoint("y", *y, "x", *x, /*allowSame=*/false))
    return check.result();
  return check.finish(context->backend->convert(
      dtypeOf(*x), dtypeOf(*y), numElements(*x), x->data, y->data));
}

metart_status metart_nn_unary(metart_context *context, metart_unary_op op,
                              const metart_tensor *x, const metart_tensor *y) {
  Checker check(context, "metart_nn_unary");
  if (!check.floatTensor("x", x) || !check.floatTensor("y", y) ||
      !check.sameDtype("y", *y, "x", *x) ||
      !check.shape("y", *y, shapeOf(*x)) ||
      !check.disjoint("y", *y, "x", *x, /*allowSame=*/true))
    return check.result();
  if (op < METART_NEG || op > METART_GELU)
    return check.invalid("unknown unary op ", static_cast<int>(op));
  Widened w(context, dtypeOf(*x), context->backend->reducedFloatElementwise());
  const void *xd = w.in(x);
  void *yd = w.out(y);
  return check.finish(w.run([&] {
    return context->backend->unary(op, w.dtype(), numElements(*x), xd, yd);
  }));
}

metart_status metart_nn_scale(metart_context *context, const metart_tensor *x,
                              double factor, const metart_tensor *y) {
  Checker check(context, "metart_nn_scale");
  if (!check.floatTensor("x", x) || !check.floatTensor("y", y) ||
      !check.sameDtype("y", *y, "x", *x) ||
      !check.shape("y", *y, shapeOf(*x)) ||
      !check.disjoint("y", *y, "x", *x, /*allowSame=*/true))
    return check.result();
  Widened w(context, dtypeOf(*x), context->backend->reducedFloatElementwise());
  const void *xd = w.in(x);
  void *yd = w.out(y);
  return check.finish(w.run([&] {
    return context->backend->scale(w.dtype(), numElements(*x), xd, factor, yd);
  }));
}

metart_status metart_nn_binary(metart_context *context, metart_binary_op op,
                               const metart_tensor *a, const metart_tensor *b,
                               const metart_tensor *y) {
  Checker check(context, "metart_nn_binary");
  if (!check.floatTensor("a", a) || !check.floatTensor("b", b) ||
      !check.floatTensor("y", y) || !check.sameDtype("b", *b, "a", *a) ||
      !check.sameDtype("y", *y, "a", *a))
    return check.result();
  if (shapeOf(*a) != shapeOf(*b))
    return check.invalid("operand shapes ", shapeOf(*a), " and ", shapeOf(*b),
                         " differ (broadcasting is explicit)");
  if (!check.shape("y", *y, shapeOf(*a)) ||
      !check.disjoint("y", *y, "a", *a, /*allowSame=*/true) ||
      !check.disjoint("y", *y, "b", *b, /*allowSame=*/true))
    return check.result();
  if (op < METART_ADD || op > METART_DIV)
    return check.invalid("unknown binary op ", static_cast<int>(op));
  Widened w(context, dtypeOf(*a), context->backend->reducedFloatElementwise());
  const void *ad = w.in(a), *bd = w.in(b);
  void *yd = w.out(y);
  return check.finish(w.run([&] {
    return context->backend->binary(op, w.dtype(), numElements(*a), ad, bd, yd);
  }));
}
