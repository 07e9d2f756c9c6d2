//===- Carry.cpp - values a step keeps for its next call ------------------===//
//
// `metart_carry_store` and `metart_carry_load`: the pipelined schedule
// `pipedream` finishes meta-iteration t - 1 in the step that starts
// meta-iteration t, so the activations, task batch and weights of the
// earlier one cross from one call of the step to the next. Each site has
// two persistent buffers: store number s writes buffer s % 2, load number l
// reads what store l - 1 wrote, so within one call the load and the store
// of a site may come in either order. A site whose loaded value is read
// only before its store in every call needs one buffer (the lowering says
// so): the store overwrites it after its last read.
//
//===----------------------------------------------------------------------===//

#include "Checker.h"
#include "Context.h"
#include "Tensor.h"

using namespace metart;

static size_t bytesOf(const metart_tensor &t) {
  return static_cast<size_t>(numElements(t)) * dtypeSize(t.dtype);
}

/// The site's buffers, made on its first use; an error when the site was
/// used with another size or element type before.
static CarrySite *siteOf(Checker &check, metart_context *c,
                         const metart_tensor &t, int64_t site,
                         int32_t buffers) {
  if (site < 0) {
    check.invalid("site ", site, " is negative");
    return nullptr;
  }
  if (buffers != 1 && buffers != 2) {
    check.invalid("a site has 1 or 2 buffers, not ", buffers);
    return nullptr;
  }
  CarrySite &s = c->carries[site];
  size_t bytes = bytesOf(t);
  if (!s.buffers[0]) {
    s.count = buffers;
    for (int32_t i = 0; i < buffers; ++i)
      if (metart_status status = metart_buffer_alloc(c, bytes, &s.buffers[i])) {
        check.invalid("cannot hold site ", site, " (", bytes,
                      " bytes): ", metart_context_last_error(c));
        (void)status;
        return nullptr;
      }
    s.bytes = bytes;
    s.dtype = t.dtype;
  }
  if (s.count != buffers) {
    check.invalid("site ", site, " was first used with ", s.count,
                  s.count == 1 ? " buffer" : " buffers", ", not ", buffers);
    return nullptr;
  }
  if (s.bytes != bytes || s.dtype != t.dtype) {
    check.invalid("site ", site, " holds ", s.bytes, " bytes of ",
                  dtypeName(s.dtype), ", not ", bytes, " bytes of ",
                  dtypeName(t.dtype));
    return nullptr;
  }
  return &s;
}

extern "C" metart_status metart_carry_store(metart_context *c,
                                            const metart_tensor *x,
                                            int64_t site, int32_t buffers) {
  Checker check(c, "metart_carry_store");
  if (!check.tensor("x", x))
    return check.result();
  CarrySite *s = siteOf(check, c, *x, site, buffers);
  if (!s)
    return check.result();
  void *target = s->buffers[s->stores % s->count];
  if (metart_status status = metart_copy_device(c, target, x->data, s->bytes))
    return status;
  ++s->stores;
  return check.finish(KernelStatus::ok());
}

extern "C" metart_status metart_carry_load(metart_context *c,
                                           const metart_tensor *y, int64_t site,
                                           int32_t buffers) {
  Checker check(c, "metart_carry_load");
  if (!check.tensor("y", y))
    return check.result();
  CarrySite *s = siteOf(check, c, *y, site, buffers);
  if (!s)
    return check.result();
  int64_t load = s->loads++;
  // Nothing stored by the previous call (the first one): zeros.
  if (load == 0 || s->stores < load)
    return metart_fill(c, y, 0.0);
  return metart_copy_device(c, y->data, s->buffers[(load - 1) % s->count],
                            s->bytes);
}

extern "C" metart_status metart_carry_view(metart_context *c, metart_tensor *y,
                                           int64_t site, int32_t buffers) {
  Checker check(c, "metart_carry_view");
  if (!y)
    return check.invalid("y is null");
  CarrySite *s = siteOf(check, c, *y, site, buffers);
  if (!s)
    return check.result();
  int64_t load = s->loads++;
  // The buffer this call's store does not write (load number l and store
  // number l of one call use different ones), or the one it writes after
  // the view's last read.
  void *buffer = s->buffers[(load + 1) % s->count];
  if (load == 0 || s->stores < load) {
    metart_tensor zeros = *y;
    zeros.data = buffer;
    if (metart_status status = metart_fill(c, &zeros, 0.0))
      return status;
  }
  y->data = buffer;
  return check.finish(KernelStatus::ok());
}

extern "C" void metart_carry_reset(metart_context *c) {
  if (!c)
    return;
  for (auto &[site, s] : c->carries) {
    s.loads = 0;
    s.stores = 0;
  }
}
