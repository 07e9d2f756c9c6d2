//===- Compute.cpp - products, bandwidth and call overhead ----------------===//
//
// What one device computes: the rate of the runtime's matrix product by
// size (small products are far from peak, and the cost model interpolates
// between the sizes), the bandwidth of a large elementwise op (the
// roofline's memory side) and the time of a runtime call that does nearly
// nothing (the floor of every op).
//
//===----------------------------------------------------------------------===//

#include "Measurements.h"

#include "llvm/Support/FormatVariadic.h"

using namespace metac::calibrate;
using metac::planner::GemmRate;

llvm::Expected<std::vector<GemmRate>>
metac::calibrate::measureGemm(Session &session, const Plan &plan) {
  std::vector<GemmRate> rates;
  for (int64_t n : plan.gemmSizes) {
    GemmRate rate;
    rate.flops = 2.0 * double(n) * double(n) * double(n);
    for (metart_dtype dtype : {METART_F32, METART_F64}) {
      llvm::Expected<DeviceTensor &> a = session.tensor(dtype, {n, n}, 0.5);
      if (!a)
        return a.takeError();
      llvm::Expected<DeviceTensor &> b = session.tensor(dtype, {n, n}, 0.5);
      if (!b)
        return b.takeError();
      llvm::Expected<DeviceTensor &> y = session.tensor(dtype, {n, n}, 0);
      if (!y)
        return y.takeError();
      metart_context *c = session.context();
      llvm::Expected<double> seconds = session.slowestTime(
          [&] {
            return metart_nn_matmul(c, a->get(), b->get(), 0, 0, y->get());
          },
          "metart_nn_matmul", plan.compute);
      session.releaseTensors();
      if (!seconds)
        return seconds.takeError();
      (dtype == METART_F32 ? rate.rate.f32 : rate.rate.f64) =
          rate.flops / *seconds;
    }
    rates.push_back(rate);
  }
  return rates;
}

/// Seconds per y = a + b on `elements` f32 elements (slowest rank).
static llvm::Expected<double> timeAdd(Session &session, int64_t elements,
                                      SamplePolicy policy) {
  llvm::Expected<DeviceTensor &> a = session.tensor(METART_F32, {elements}, 1);
  if (!a)
    return a.takeError();
  llvm::Expected<DeviceTensor &> b = session.tensor(METART_F32, {elements}, 2);
  if (!b)
    return b.takeError();
  llvm::Expected<DeviceTensor &> y = session.tensor(METART_F32, {elements}, 0);
  if (!y)
    return y.takeError();
  metart_context *c = session.context();
  llvm::Expected<double> seconds = session.slowestTime(
      [&] {
        return metart_nn_binary(c, METART_ADD, a->get(), b->get(), y->get());
      },
      "metart_nn_binary", policy);
  session.releaseTensors();
  return seconds;
}

llvm::Expected<double> metac::calibrate::measureBandwidth(Session &session,
                                                          const Plan &plan) {
  llvm::Expected<double> seconds =
      timeAdd(session, plan.streamElements, plan.compute);
  if (!seconds)
    return seconds.takeError();
  // Two operands read, one result written.
  return 3.0 * 4.0 * double(plan.streamElements) / *seconds;
}

llvm::Expected<double>
metac::calibrate::measureLaunchOverhead(Session &session, const Plan &plan) {
  return timeAdd(session, 4, plan.tiny);
}
