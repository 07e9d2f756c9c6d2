//===- Health.cpp - the verdict on each meta-iteration's update -----------===//

#include "Health.h"

#include "metart/comm.h"

#include <cmath>
#include <cstring>

using namespace metart::train;

metart_status UpdateHealth::allocate(metart_context *c, int64_t count,
                                     bool agree, std::string &error) {
  context = c;
  this->count = count;
  norms.assign(count + 1, 0.0);
  normsShape = count;
  void *data = nullptr;
  if (metart_status s =
          metart_buffer_alloc(c, (count + 1) * sizeof(double), &data)) {
    error = metart_context_last_error(c);
    return s;
  }
  normsTensor = {data, METART_F64, 1, &normsShape};
  if (!agree)
    return METART_OK;
  if (metart_status s = metart_buffer_alloc(c, sizeof(double), &data)) {
    error = metart_context_last_error(c);
    return s;
  }
  verdictTensor = {data, METART_F64, 1, &one};
  return METART_OK;
}

metart_status UpdateHealth::check(int32_t lossType, double &loss, bool &healthy,
                                  bool &overflow, std::string &error) {
  metart_status s = metart_copy_to_host(context, norms.data(), normsTensor.data,
                                        norms.size() * sizeof(double));
  float narrow = 0;
  std::memcpy(&narrow, &norms[count], sizeof(narrow));
  loss = lossType == METART_F32 ? narrow : norms[count];
  // 0: healthy; 1: a gradient is not finite; 2: the loss is not. The
  // ranks agree on the worst.
  double bad = !std::isfinite(loss) ? 2 : firstNonfiniteGradient() >= 0 ? 1 : 0;
  // With stale-synchronous sums every rank applies the same sums without
  // meeting every iteration; a verdict all-reduce would make them meet.
  if (!s && verdictTensor.data && !metart_has_stale_collectives(context)) {
    s = metart_copy_to_device(context, verdictTensor.data, &bad, sizeof(bad));
    if (!s)
      s = metart_all_reduce(context, &verdictTensor, &verdictTensor,
                            METART_ALL_AXES, METART_REDUCE_MAX);
    if (!s)
      s = metart_copy_to_host(context, &bad, verdictTensor.data, sizeof(bad));
  }
  if (s) {
    error = std::string("reading the meta-iteration's update guard: ") +
            metart_context_last_error(context);
    return s;
  }
  healthy = bad == 0;
  overflow = bad == 1;
  return METART_OK;
}

double UpdateHealth::gradNorm() const {
  double squares = 0;
  for (int64_t i = 0; i < count; ++i)
    squares += norms[i];
  return std::sqrt(squares);
}

int64_t UpdateHealth::firstNonfiniteGradient() const {
  for (int64_t i = 0; i < count; ++i)
    if (!std::isfinite(norms[i]))
      return i;
  return -1;
}
