//===- Linear.cpp - checks and dispatch of linear layers and products -----===//
//
// `metart_nn_linear` (a weight `[P..., out, in]` whose batch dimensions
// prefix the input's `[B..., in]`) and `metart_nn_matmul` (operands with the
// same batch dimensions, optionally transposed).
//
//===----------------------------------------------------------------------===//

#include "../Checker.h"
#include "../Context.h"
#include "Widen.h"

using namespace metart;

metart_status metart_nn_linear(metart_context *context, const metart_tensor *x,
                               const metart_tensor *weight,
                               const metart_tensor *bias,
                               const metart_tensor *y) {
  Checker check(context, "metart_nn_linear");
  if (!check.floatTensor("x", x) || !check.floatTensor("weight", weight) ||
      (bias && !check.floatTensor("bias", bias)) ||
      !check.floatTensor("y", y) ||
      !check.sameDtype("weight", *weight, "x", *x) ||
      (bias && !check.sameDtype("bias", *bias, "x", *x)) ||
      !check.sameDtype("y", *y, "x", *x))
    return check.result();
  ShapeRef xs = shapeOf(*x), ws = shapeOf(*weight);
  if (xs.empty() || ws.size() < 2)
    return check.invalid("expects x of rank >= 1 and weight of rank >= 2, got ",
                         describe(*x), " and ", describe(*weight));
  ShapeRef leading = xs.dropBack(1);
  size_t slices = ws.size() - 2;
  if (slices > leading.size() ||
      ws.takeFront(slices) != leading.takeFront(slices))
    return check.invalid("weight batch dimensions ", ws.takeFront(slices),
                         " are not a prefix of the input's leading dimensions ",
                         leading, " (x ", describe(*x), ", weight ",
                         describe(*weight), ")");
  int64_t out = ws[ws.size() - 2], in = ws.back();
  if (xs.back() != in)
    return check.invalid("input features ", xs.back(),
                         " do not match the weight's in-features ", in, " (x ",
                         describe(*x), ", weight ", describe(*weight), ")");
  SmallShape expected(leading);
  expected.push_back(out);
  if ((bias && !check.shape("bias", *bias, ws.dropBack(1))) ||
      !check.shape("y", *y, expected) || !check.disjoint("y", *y, "x", *x) ||
      !check.disjoint("y", *y, "weight", *weight) ||
      (bias && !check.disjoint("y", *y, "bias", *bias)))
    return check.result();
  LinearSizes sizes;
  sizes.slices = ws.takeFront(slices).product();
  sizes.rowsPerSlice = leading.dropFront(slices).product();
  sizes.in = in;
  sizes.out = out;
  Widened w(context, dtypeOf(*x), context->backend->reducedFloatProducts());
  const void *xd = w.in(x), *wd = w.in(weight), *bd = w.in(bias);
  void *yd = w.out(y);
  return check.finish(w.run([&] {
    return context->backend->linear(w.dtype(), sizes, xd, wd, bd, yd);
  }));
}

metart_status metart_nn_matmul(metart_context *context, const metart_tensor *a,
                               const metart_tensor *b, int transpose_a,
                               int transpose_b, const metart_tensor *y) {
  Checker check(context, "metart_nn_matmul");
  if (!check.floatTensor("a", a) || !check.floatTensor("b", b) ||
      !check.floatTensor("y", y) || !check.sameDtype("b", *b, "a", *a) ||
      !check.sameDtype("y", *y, "a", *a))
    return check.result();
  ShapeRef as = shapeOf(*a), bs = shapeOf(*b);
  if (as.size() < 2 || bs.size() < 2)
    return check.invalid("expects operands of rank >= 2, got ", as, " and ",
                         bs);
  if (as.size() != bs.size() || as.dropBack(2) != bs.dropBack(2))
    return check.invalid("batch dimensions differ: ", as, " and ", bs);
  size_t r = as.size();
  MatmulSizes sizes;
  sizes.transposeA = transpose_a != 0;
  sizes.transposeB = transpose_b != 0;
  sizes.m = sizes.transposeA ? as[r - 1] : as[r - 2];
  sizes.k = sizes.transposeA ? as[r - 2] : as[r - 1];
  int64_t kb = sizes.transposeB ? bs[r - 1] : bs[r - 2];
  sizes.n = sizes.transposeB ? bs[r - 2] : bs[r - 1];
  if (sizes.k != kb)
    return check.invalid("contracting dimensions differ: ", sizes.k, " vs ", kb,
                         " (a ", as, ", b ", bs, ", transpose_a ", transpose_a,
                         ", transpose_b ", transpose_b, ")");
  sizes.batch = as.dropBack(2).product();
  SmallShape expected(as.dropBack(2));
  expected.push_back(sizes.m);
  expected.push_back(sizes.n);
  if (!check.shape("y", *y, expected) || !check.disjoint("y", *y, "a", *a) ||
      !check.disjoint("y", *y, "b", *b))
    return check.result();
  Widened w(context, dtypeOf(*a), context->backend->reducedFloatProducts());
  const void *ad = w.in(a), *bd = w.in(b);
  void *yd = w.out(y);
  return check.finish(w.run(
      [&] { return context->backend->matmul(w.dtype(), sizes, ad, bd, yd); }));
}
