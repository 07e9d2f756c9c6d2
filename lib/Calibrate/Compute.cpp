//===- Compute.cpp - products, bandwidth and call overhead ----------------===//
//
// What one device computes. Products are timed at the shapes metac's
// programs have (a task dimension first: [T, N, K] by an M x K weight,
// shared or one per task, and the weight gradient's transposed product)
// and as square n x n products, each call allocating its result from
// scratch memory as compiled code does. The per-call part of a product
// (alpha: dispatch, allocation, BLAS set-up) is fitted over all of them
// (operands taken in turn from copies, as for the other kernels),
// and the GEMM tables' rates are what remains: flops / (time - alpha) by
// the FLOPs of one BLAS call (a per-task weight or a batched matmul makes
// one call per task or batch entry), calls of similar FLOPs merged; the
// per-task linear layers get a table of their own (their few rows do not
// amortise packing the whole weight: 5 x 256 by 256 x 256 per task ran at
// a quarter of the rate of a weight-gradient product of the same FLOPs). Also:
// the bandwidth of a large elementwise op (the roofline's memory side) and the
// time of a runtime call that does nearly nothing (the floor of every op).
//
//===----------------------------------------------------------------------===//

#include "Measurements.h"

#include "metac/Calibrate/Calibrate.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

using namespace metac::calibrate;
using metac::planner::GemmRate;

namespace {

/// One product call measured in both element types: `gemms` BLAS calls
/// of `flops / gemms` each (the runtime makes one per task of a per-task
/// weight and one per batch entry of a matmul).
struct ProductSample {
  double flops = 0, bytes = 0, f32 = 0, f64 = 0, gemms = 1;
  /// A linear layer with one weight per task.
  bool perTask = false;
};

/// The rate table of `samples` by the FLOPs of one BLAS call: each
/// product's rate once the per-call part `alpha` is taken away, its time
/// shared among its GEMMs; GEMMs within 25% of each other's FLOPs are one
/// entry (their total FLOPs over their total compute time, at their
/// geometric mean), the table strictly increasing.
std::vector<GemmRate> rateTable(llvm::ArrayRef<ProductSample> samples,
                                double alpha) {
  struct Gemm {
    double flops, f32, f64;
  };
  std::vector<Gemm> sorted;
  for (const ProductSample &s : samples)
    sorted.push_back({s.flops / s.gemms, (s.f32 - alpha) / s.gemms,
                      (s.f64 - alpha) / s.gemms});
  llvm::sort(sorted,
             [](const Gemm &a, const Gemm &b) { return a.flops < b.flops; });
  std::vector<GemmRate> table;
  for (size_t i = 0; i < sorted.size();) {
    size_t end = i;
    double logSum = 0, total = 0, f32 = 0, f64 = 0;
    for (; end < sorted.size() && sorted[end].flops < 1.25 * sorted[i].flops;
         ++end) {
      logSum += std::log(sorted[end].flops);
      total += sorted[end].flops;
      f32 += sorted[end].f32;
      f64 += sorted[end].f64;
    }
    GemmRate rate;
    rate.flops = std::exp(logSum / double(end - i));
    rate.rate.f32 = total / f32;
    rate.rate.f64 = total / f64;
    table.push_back(rate);
    i = end;
  }
  // The geometric mean can round onto its neighbour's FLOPs only if they
  // are equal; keep the table strictly increasing all the same.
  for (size_t i = 1; i < table.size(); ++i)
    table[i].flops =
        std::max(table[i].flops, std::nextafter(table[i - 1].flops, HUGE_VAL));
  return table;
}

/// Times `kernel` (a product of `flops` writing a `resultShape` result
/// from operands of `shapes`) in f32 and f64; the operands are filled with
/// 0.5, in session.operandCopies() copies that the calls take in turn.
llvm::Expected<ProductSample> timeProduct(
    Session &session, llvm::ArrayRef<llvm::SmallVector<int64_t, 4>> shapes,
    llvm::ArrayRef<int64_t> resultShape, double flops, double gemms,
    llvm::function_ref<metart_status(llvm::ArrayRef<const metart_tensor *>,
                                     const metart_tensor *)>
        kernel,
    llvm::StringRef what, SamplePolicy policy) {
  ProductSample sample;
  sample.flops = flops;
  sample.gemms = gemms;
  // The f32 bytes (f64 moves twice as many).
  auto elementsOf = [](llvm::ArrayRef<int64_t> shape) {
    double elements = 1;
    for (int64_t d : shape)
      elements *= double(d);
    return elements;
  };
  sample.bytes = 4 * elementsOf(resultShape);
  for (llvm::ArrayRef<int64_t> shape : shapes)
    sample.bytes += 4 * elementsOf(shape);
  for (metart_dtype dtype : {METART_F32, METART_F64}) {
    std::vector<llvm::SmallVector<const metart_tensor *, 3>> sets(
        session.operandCopies(sample.bytes * (dtype == METART_F64 ? 2 : 1)));
    for (llvm::SmallVector<const metart_tensor *, 3> &operands : sets)
      for (llvm::ArrayRef<int64_t> shape : shapes) {
        llvm::Expected<DeviceTensor &> t = session.tensor(dtype, shape, 0.5);
        if (!t)
          return t.takeError();
        operands.push_back(t->get());
      }
    size_t next = 0;
    llvm::Expected<double> seconds = session.slowestCompiledTime(
        dtype, resultShape,
        [&](const metart_tensor *y) {
          next = (next + 1) % sets.size();
          return kernel(sets[next], y);
        },
        what, policy);
    session.releaseTensors();
    if (!seconds)
      return seconds.takeError();
    (dtype == METART_F32 ? sample.f32 : sample.f64) = *seconds;
  }
  return sample;
}

} // namespace

llvm::Expected<MeasuredProducts>
metac::calibrate::measureProducts(Session &session, const Plan &plan,
                                  double streamBandwidth) {
  metart_context *c = session.context();
  KernelSeries shared = named("metart_nn_linear [T,N,K] x [M,K] + [M]"),
               perTask = named("metart_nn_linear [T,N,K] x [T,M,K] + [T,M]"),
               gradient = named("metart_nn_matmul [T,N,M]^T x [T,N,K]"),
               square = named("metart_nn_matmul n x n by n x n");
  // Every product in both types (the series keep the f32 times).
  std::vector<ProductSample> samples;
  auto record = [&](KernelSeries &series, std::string shape,
                    const ProductSample &s) {
    series.shapes.push_back(std::move(shape));
    series.bytes.push_back(s.bytes);
    series.flops.push_back(s.flops);
    series.seconds.push_back(s.f32);
    samples.push_back(s);
  };
  auto linear = [&](llvm::ArrayRef<const metart_tensor *> in,
                    const metart_tensor *y) {
    return metart_nn_linear(c, in[0], in[1], in[2], y);
  };
  for (const std::array<int64_t, 4> &shape : plan.productShapes) {
    auto [t, n, k, m] = shape;
    double flops = 2.0 * double(t * n * k * m) + double(t * n * m);
    std::string text = llvm::formatv("T={0} N={1} K={2} M={3}", t, n, k, m);
    llvm::Expected<ProductSample> s =
        timeProduct(session, {{t, n, k}, {m, k}, {m}}, {t, n, m}, flops, 1,
                    linear, "metart_nn_linear", plan.product);
    if (!s)
      return s.takeError();
    record(shared, text, *s);
    s = timeProduct(session, {{t, n, k}, {t, m, k}, {t, m}}, {t, n, m}, flops,
                    double(t), linear, "metart_nn_linear", plan.product);
    if (!s)
      return s.takeError();
    s->perTask = true;
    record(perTask, text, *s);
    s = timeProduct(
        session, {{t, n, m}, {t, n, k}}, {t, m, k}, 2.0 * double(t * n * k * m),
        double(t),
        [&](llvm::ArrayRef<const metart_tensor *> in, const metart_tensor *y) {
          return metart_nn_matmul(c, in[0], in[1], 1, 0, y);
        },
        "metart_nn_matmul", plan.product);
    if (!s)
      return s.takeError();
    record(gradient, text, *s);
  }
  for (int64_t n : plan.gemmSizes) {
    llvm::Expected<ProductSample> s = timeProduct(
        session, {{n, n}, {n, n}}, {n, n}, 2.0 * double(n * n * n), 1,
        [&](llvm::ArrayRef<const metart_tensor *> in, const metart_tensor *y) {
          return metart_nn_matmul(c, in[0], in[1], 0, 0, y);
        },
        "metart_nn_matmul", plan.compute);
    if (!s)
      return s.takeError();
    record(square, "n=" + std::to_string(n), *s);
  }

  // The per-call part: time = alpha + flops / rate fitted over every f32
  // product on relative residuals, so the small (latency-bound) products
  // decide it. It stays below half of the fastest call (of either type),
  // so that every product keeps a compute part.
  llvm::SmallVector<double> flops, seconds;
  for (const ProductSample &s : samples) {
    flops.push_back(s.flops);
    seconds.push_back(s.f32);
  }
  double worst = 0;
  planner::CollectiveFit line = fitAlphaBeta(flops, seconds, &worst);
  double fastest = HUGE_VAL;
  for (const ProductSample &s : samples)
    fastest = std::min({fastest, s.f32, s.f64});
  double alpha = std::min(line.alpha, 0.5 * fastest);
  double beta = streamBandwidth;
  for (const ProductSample &s : samples)
    beta = std::max(
        {beta, s.bytes / (s.f32 - alpha), 2 * s.bytes / (s.f64 - alpha)});

  // Two tables: per-task linear layers' GEMMs (few rows against a whole
  // weight) run below the others' of the same FLOPs.
  MeasuredProducts result;
  llvm::SmallVector<ProductSample> perTaskSamples, others;
  for (const ProductSample &s : samples)
    (s.perTask ? perTaskSamples : others).push_back(s);
  result.gemm = rateTable(others, alpha);
  result.gemmPerTask = rateTable(perTaskSamples, alpha);

  // The grid: each cell's three products, their FLOPs over their time
  // less the per-call part.
  for (int64_t side : plan.gridSides)
    result.grid.area.push_back(double(side * side));
  for (int64_t thin : plan.gridThin) {
    planner::GemmGridRow row;
    row.thin = double(thin);
    for (int64_t side : plan.gridSides) {
      // lhs, rhs shapes and transposes: x W^T, x^T dy, dy W.
      struct Orientation {
        llvm::SmallVector<int64_t, 4> lhs, rhs, result;
        bool transposeLhs, transposeRhs;
      };
      llvm::SmallVector<Orientation, 3> orientations = {
          {{thin, side}, {side, side}, {thin, side}, false, true},
          {{thin, side}, {thin, side}, {side, side}, true, false},
          {{thin, side}, {side, side}, {thin, side}, false, false}};
      // Operands from memory, as a program's weights are: a call makes
      // `batch` GEMMs on distinct operands, together ~4 MiB, so that the
      // copies the calls cycle through exceed the last-level cache (a cell
      // of a few hundred KiB would otherwise be timed from L3).
      double gemmBytes = 4.0 * double(2 * thin * side + side * side);
      int64_t batch =
          session.operandsHot()
              ? 1
              : int64_t(std::clamp(std::ceil(4.0 * 1048576 / gemmBytes), 1.0,
                                   256.0));
      for (Orientation &o : orientations)
        for (auto *shape : {&o.lhs, &o.rhs, &o.result})
          shape->insert(shape->begin(), batch);
      double flops =
          2.0 * double(batch) * double(thin) * double(side) * double(side);
      double f32 = 0, f64 = 0;
      for (const Orientation &o : orientations) {
        llvm::Expected<ProductSample> s = timeProduct(
            session, {o.lhs, o.rhs}, o.result, flops, double(batch),
            [&](llvm::ArrayRef<const metart_tensor *> in,
                const metart_tensor *y) {
              return metart_nn_matmul(c, in[0], in[1], o.transposeLhs,
                                      o.transposeRhs, y);
            },
            "metart_nn_matmul", plan.kernel);
        if (!s)
          return s.takeError();
        f32 += std::max(s->f32 - alpha, 0.5 * s->f32);
        f64 += std::max(s->f64 - alpha, 0.5 * s->f64);
      }
      row.f32.push_back(3 * flops / f32);
      row.f64.push_back(3 * flops / f64);
    }
    result.grid.rows.push_back(std::move(row));
  }

  MeasuredKernel &product = result.kernel;
  product.fit.kind = "product";
  product.fit.alpha = alpha;
  product.fit.beta = beta;
  product.worst = worst;
  product.series = {shared, perTask, gradient, square};
  return result;
}

/// Seconds per y = a + b on `elements` f32 elements (slowest rank), y from
/// scratch memory.
static llvm::Expected<double> timeAdd(Session &session, int64_t elements,
                                      SamplePolicy policy) {
  llvm::Expected<DeviceTensor &> a = session.tensor(METART_F32, {elements}, 1);
  if (!a)
    return a.takeError();
  llvm::Expected<DeviceTensor &> b = session.tensor(METART_F32, {elements}, 2);
  if (!b)
    return b.takeError();
  metart_context *c = session.context();
  llvm::Expected<double> seconds = session.slowestCompiledTime(
      METART_F32, {elements},
      [&](const metart_tensor *y) {
        return metart_nn_binary(c, METART_ADD, a->get(), b->get(), y);
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

llvm::Expected<double> metac::calibrate::measureWaitingShare(Session &session,
                                                             const Plan &plan,
                                                             int64_t cores) {
  int64_t n = session.size();
  if (n <= cores)
    return 0.0;
  metart_context *c = session.context();
  llvm::Expected<DeviceTensor &> a = session.tensor(METART_F32, {256, 256}, 1);
  if (!a)
    return a.takeError();
  llvm::Expected<DeviceTensor &> b = session.tensor(METART_F32, {256, 256}, 1);
  if (!b)
    return b.takeError();
  // Back to back, each sample ending when every rank is done.
  SamplePolicy policy = plan.compute;
  policy.idleGap = 0;
  policy.untilAllDone = true;
  auto product = [&](bool othersPoll) -> llvm::Expected<double> {
    session.setActiveRanks(cores, othersPoll);
    return session.slowestCompiledTime(
        METART_F32, {256, 256},
        [&](const metart_tensor *y) {
          return metart_nn_matmul(c, a->get(), b->get(), 0, 0, y);
        },
        "metart_nn_matmul", policy);
  };
  llvm::Expected<double> alone = product(false);
  if (!alone)
    return alone.takeError();
  llvm::Expected<double> polled = product(true);
  session.setActiveRanks(cores);
  session.releaseTensors();
  if (!polled)
    return polled.takeError();
  // cores computing and w (n - cores) polling share the cores: the
  // products take (cores + w (n - cores)) / cores times as long.
  double w = (*polled / *alone - 1) * double(cores) / double(n - cores);
  return std::clamp(w, 0.0, 1.0);
}
