//===- Widen.cpp - kernels on bf16 and f16 computed in f32 ----------------===//

#include "Widen.h"

using namespace metart;

Widened::~Widened() {
  for (Copy &c : copies)
    context->arena.freeScratch(c.data, c.bytes);
}

Widened::Copy *Widened::copyOf(const metart_tensor *t, bool read) {
  auto widen = [&](Copy &c) {
    c.read = true;
    KernelStatus converted = context->backend->convert(
        dtypeOf(*t), METART_F32, numElements(*t), t->data, c.data);
    if (converted.failed() && !failure.failed())
      failure = converted;
  };
  for (Copy &c : copies)
    if (c.tensor->data == t->data) {
      if (read && !c.read)
        widen(c);
      return &c;
    }
  Copy c{t, nullptr, size_t(numElements(*t)) * 4, false, false};
  std::string error;
  if (metart_status s =
          context->arena.allocateScratch(c.bytes, &c.data, error)) {
    if (!failure.failed())
      failure = {s, "the f32 copy of a " + dtypeName(t->dtype) +
                        " operand: " + error};
    return nullptr;
  }
  copies.push_back(c);
  if (read)
    widen(copies.back());
  return &copies.back();
}

void *Widened::data(const metart_tensor *t, bool read, bool written) {
  if (!t)
    return nullptr;
  if (!widened())
    return t->data;
  Copy *c = copyOf(t, read);
  if (!c)
    return nullptr;
  c->written |= written;
  return c->data;
}

const void *Widened::in(const metart_tensor *t) {
  return data(t, /*read=*/true, /*written=*/false);
}

void *Widened::out(const metart_tensor *t) {
  return data(t, /*read=*/false, /*written=*/true);
}

void *Widened::inOut(const metart_tensor *t) {
  return data(t, /*read=*/true, /*written=*/true);
}

KernelStatus Widened::finish(KernelStatus kernel) {
  if (kernel.failed())
    return kernel;
  for (Copy &c : copies) {
    if (!c.written)
      continue;
    KernelStatus back = context->backend->convert(
        METART_F32, dtypeOf(*c.tensor), numElements(*c.tensor), c.data,
        c.tensor->data);
    if (back.failed())
      return back;
  }
  return kernel;
}
