//===- Kernels.cpp - alpha and beta of each kind of runtime kernel --------===//
//
// The cost model prices a call of a kind of kernel on `bytes` (every
// operand and result) as alpha + bytes / beta. Each kind is timed through
// the runtime functions compiled code calls for it, on [T, N, H] tensors
// with a leading task dimension as metac's programs have them (from
// hundreds of bytes to MiB), each call allocating its result from scratch
// memory and giving it back as compiled code does, its operands taken in
// turn from copies (Session::operandCopies: from memory as far as the pool
// allows) or, for the hot tables, the same operands call after call (from
// cache, as ops that read what the previous ones wrote). alpha is then what a
// call costs beyond its bytes (argument checks, dispatch, waking the loop
// threads, the allocation), not the 4-element floor.
//
//===----------------------------------------------------------------------===//

#include "Measurements.h"

#include "metac/Calibrate/Calibrate.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <cmath>

using namespace metac::calibrate;

namespace {

constexpr double kF32 = 4;

/// A kernel writing `result` from `operands`.
using Kernel = llvm::function_ref<metart_status(
    llvm::ArrayRef<const metart_tensor *> operands,
    const metart_tensor *result)>;

std::string shapeText(llvm::ArrayRef<int64_t> shape) {
  return "[" +
         llvm::join(llvm::map_range(
                        shape, [](int64_t d) { return std::to_string(d); }),
                    ",") +
         "]";
}

double elementsOf(llvm::ArrayRef<int64_t> shape) {
  double elements = 1;
  for (int64_t d : shape)
    elements *= double(d);
  return elements;
}

/// Times a kernel of f32 `operands` (varied values, `rectified` as after a
/// ReLU, in session.operandCopies()
/// copies that the calls take in turn) writing a `result`-shaped tensor
/// from scratch memory, and adds the time to `series` under `shape`.
llvm::Error timeKernel(Session &session, KernelSeries &series,
                       llvm::StringRef function,
                       llvm::ArrayRef<llvm::SmallVector<int64_t, 4>> operands,
                       llvm::ArrayRef<int64_t> result,
                       llvm::ArrayRef<int64_t> shape, Kernel kernel,
                       SamplePolicy policy, bool rectified = false) {
  double bytes = kF32 * elementsOf(result);
  for (llvm::ArrayRef<int64_t> o : operands)
    bytes += kF32 * elementsOf(o);
  std::vector<llvm::SmallVector<const metart_tensor *, 3>> sets(
      session.operandCopies(bytes));
  for (llvm::SmallVector<const metart_tensor *, 3> &set : sets)
    for (llvm::ArrayRef<int64_t> o : operands) {
      llvm::Expected<DeviceTensor &> t = session.variedTensor(o, rectified);
      if (!t)
        return t.takeError();
      set.push_back(t->get());
    }
  size_t next = 0;
  llvm::Expected<double> seconds = session.slowestCompiledTime(
      METART_F32, result,
      [&](const metart_tensor *y) {
        next = (next + 1) % sets.size();
        return kernel(sets[next], y);
      },
      function, policy);
  session.releaseTensors();
  if (!seconds)
    return seconds.takeError();
  series.shapes.push_back(shapeText(shape));
  series.bytes.push_back(bytes);
  series.flops.push_back(0);
  series.seconds.push_back(*seconds);
  series.elements.push_back(elementsOf(result));
  return llvm::Error::success();
}

/// The fit of `kind` over every sample of its series, less `dispatch` for
/// results of at least `parallelElements` elements (0: none).
MeasuredKernel fitKind(llvm::StringRef kind, std::vector<KernelSeries> series,
                       int64_t parallelElements = 0, double dispatch = 0) {
  llvm::SmallVector<double> bytes, seconds;
  for (const KernelSeries &s : series)
    for (size_t i = 0; i < s.seconds.size(); ++i) {
      bytes.push_back(s.bytes[i]);
      bool parallel =
          parallelElements > 0 && s.elements[i] >= double(parallelElements);
      seconds.push_back(
          parallel ? std::max(s.seconds[i] - dispatch, 0.1 * s.seconds[i])
                   : s.seconds[i]);
    }
  MeasuredKernel measured;
  metac::planner::CollectiveFit line =
      fitAlphaBeta(bytes, seconds, &measured.worst);
  measured.fit.kind = kind.str();
  measured.fit.alpha = line.alpha;
  measured.fit.beta = line.beta;
  // The measured calls themselves, for the cost model to interpolate:
  // calls within 25% of each other's bytes are one entry (their geometric
  // mean; their total time over their total bytes at it).
  std::vector<std::pair<double, double>> calls;
  for (size_t i = 0; i < bytes.size(); ++i)
    calls.push_back({bytes[i], seconds[i]});
  llvm::sort(calls);
  for (size_t i = 0; i < calls.size();) {
    size_t end = i;
    double logSum = 0, totalBytes = 0, totalSeconds = 0;
    for (; end < calls.size() && calls[end].first < 1.25 * calls[i].first;
         ++end) {
      logSum += std::log(calls[end].first);
      totalBytes += calls[end].first;
      totalSeconds += calls[end].second;
    }
    double at = std::exp(logSum / double(end - i));
    if (!measured.fit.bytes.empty())
      at = std::max(at, std::nextafter(measured.fit.bytes.back(), HUGE_VAL));
    measured.fit.bytes.push_back(at);
    measured.fit.seconds.push_back(totalSeconds / totalBytes * at);
    i = end;
  }
  measured.series = std::move(series);
  return measured;
}

} // namespace

llvm::Expected<MeasuredKernels>
metac::calibrate::measureKernels(Session &session, const Plan &plan) {
  metart_context *c = session.context();
  SamplePolicy policy = plan.kernel;
  KernelSeries
      add = named("metart_nn_binary add"),
      relu = named("metart_nn_unary relu"), scale = named("metart_nn_scale"),
      exp = named("metart_nn_unary exp"), tanh = named("metart_nn_unary tanh"),
      erf = named("metart_nn_unary erf"), gelu = named("metart_nn_unary gelu"),
      pool = named("metart_nn_max_pool2d 2x2 of [T,N,S,S]"),
      poolBackward = named("metart_nn_max_pool2d_backward 2x2 of [T,N,S,S]"),
      sumLast = named("metart_nn_reduce_sum of [T,N,H] over H"),
      sumTasks = named("metart_nn_reduce_sum of [T,N,H] over T"),
      overTasks = named("metart_nn_broadcast of [N,H] to [T,N,H]"),
      alongLast = named("metart_nn_broadcast of [T,N] to [T,N,H]"),
      swap = named("metart_nn_transpose of [T,N,H] to [T,H,N]"),
      copy = named("metart_copy_device of [T,N,H]"),
      adam =
          named("metart_increment, then metart_adam_update of 3 h x h weights "
                "and 3 biases of h");
  auto run = [&](KernelSeries &series, llvm::StringRef function,
                 llvm::ArrayRef<llvm::SmallVector<int64_t, 4>> operands,
                 llvm::ArrayRef<int64_t> result, llvm::ArrayRef<int64_t> shape,
                 Kernel kernel, bool rectified = false) {
    return timeKernel(session, series, function, operands, result, shape,
                      kernel, policy, rectified);
  };
  for (const std::array<int64_t, 3> &shape : plan.kernelShapes) {
    auto [t, n, h] = shape;
    llvm::SmallVector<int64_t, 4> whole = {t, n, h};
    const int64_t lastDim[] = {2}, firstDim[] = {0}, transposed[] = {0, 2, 1};
    if (llvm::Error error = run(add, "metart_nn_binary", {whole, whole}, whole,
                                whole, [&](auto in, const metart_tensor *y) {
                                  return metart_nn_binary(c, METART_ADD, in[0],
                                                          in[1], y);
                                }))
      return std::move(error);
    if (llvm::Error error = run(relu, "metart_nn_unary", {whole}, whole, whole,
                                [&](auto in, const metart_tensor *y) {
                                  return metart_nn_unary(c, METART_RELU, in[0],
                                                         y);
                                }))
      return std::move(error);
    for (auto [series, op] :
         {std::pair{&exp, METART_EXP}, std::pair{&tanh, METART_TANH},
          std::pair{&erf, METART_ERF}, std::pair{&gelu, METART_GELU}})
      if (llvm::Error error =
              run(*series, "metart_nn_unary", {whole}, whole, whole,
                  [&, op = op](auto in, const metart_tensor *y) {
                    return metart_nn_unary(c, op, in[0], y);
                  }))
        return std::move(error);
    if (llvm::Error error = run(scale, "metart_nn_scale", {whole}, whole, whole,
                                [&](auto in, const metart_tensor *y) {
                                  return metart_nn_scale(c, in[0], 0.5, y);
                                }))
      return std::move(error);
    if (llvm::Error error =
            run(sumLast, "metart_nn_reduce_sum", {whole}, {t, n}, whole,
                [&](auto in, const metart_tensor *y) {
                  return metart_nn_reduce_sum(c, in[0], lastDim, 1, y);
                }))
      return std::move(error);
    if (llvm::Error error =
            run(sumTasks, "metart_nn_reduce_sum", {whole}, {n, h}, whole,
                [&](auto in, const metart_tensor *y) {
                  return metart_nn_reduce_sum(c, in[0], firstDim, 1, y);
                }))
      return std::move(error);
    if (llvm::Error error =
            run(overTasks, "metart_nn_broadcast", {{n, h}}, whole, whole,
                [&](auto in, const metart_tensor *y) {
                  return metart_nn_broadcast(c, in[0], firstDim, 1, y);
                }))
      return std::move(error);
    if (llvm::Error error =
            run(alongLast, "metart_nn_broadcast", {{t, n}}, whole, whole,
                [&](auto in, const metart_tensor *y) {
                  return metart_nn_broadcast(c, in[0], lastDim, 1, y);
                }))
      return std::move(error);
    if (llvm::Error error = run(swap, "metart_nn_transpose", {whole}, {t, h, n},
                                whole, [&](auto in, const metart_tensor *y) {
                                  return metart_nn_transpose(c, in[0],
                                                             transposed, y);
                                }))
      return std::move(error);
    size_t bytes = static_cast<size_t>(kF32 * elementsOf(whole));
    if (llvm::Error error = run(copy, "metart_copy_device", {whole}, whole,
                                whole, [&](auto in, const metart_tensor *y) {
                                  return metart_copy_device(c, y->data,
                                                            in[0]->data, bytes);
                                }))
      return std::move(error);
  }

  // Pooling windows (2 x 2, stride 2) over images of a task dimension,
  // forward and backward (the input, its result's cotangent in, the
  // input's cotangent out).
  const int64_t window[] = {2, 2}, noPadding[] = {0, 0};
  for (const std::array<int64_t, 3> &shape : plan.kernelShapes) {
    auto [t, n, h] = shape;
    int64_t side = h >= 256 ? 28 : h >= 40 ? 14 : 8;
    llvm::SmallVector<int64_t, 4> image = {t, n, side, side},
                                  pooled = {t, n, side / 2, side / 2};
    if (llvm::Error error = run(
            pool, "metart_nn_max_pool2d", {image}, pooled, image,
            [&](auto in, const metart_tensor *y) {
              return metart_nn_max_pool2d(c, in[0], window, window, noPadding,
                                          y);
            },
            /*rectified=*/true))
      return std::move(error);
    if (llvm::Error error = run(
            poolBackward, "metart_nn_max_pool2d_backward", {image, pooled},
            image, image,
            [&](auto in, const metart_tensor *y) {
              return metart_nn_max_pool2d_backward(c, in[0], in[1], window,
                                                   window, noPadding, y);
            },
            /*rectified=*/true))
      return std::move(error);
  }

  // Adam over a parameter set, as the outer step compiles (NNToRuntime's
  // lowerOuterStep): the step count, then one update per parameter, in
  // place. Bytes as the cost model counts them: 7 streams of parameters
  // (parameter, gradient and two moments read, three written).
  for (int64_t h : plan.optimizerWidths) {
    double parameterBytes = kF32 * 3 * double(h * h + h);
    std::vector<llvm::SmallVector<const metart_tensor *, 24>> sets(
        session.operandCopies(4 * parameterBytes));
    for (llvm::SmallVector<const metart_tensor *, 24> &tensors : sets)
      for (int layer = 0; layer < 3; ++layer)
        for (const llvm::SmallVector<int64_t, 2> &shape :
             {llvm::SmallVector<int64_t, 2>{h, h},
              llvm::SmallVector<int64_t, 2>{h}})
          for (int role = 0; role < 4; ++role) {
            llvm::Expected<DeviceTensor &> t =
                session.tensor(METART_F32, shape,
                               role == 1   ? 1e-3
                               : role == 3 ? 1e-6
                                           : 0.5);
            if (!t)
              return t.takeError();
            tensors.push_back(t->get());
          }
    size_t next = 0;
    llvm::Expected<DeviceTensor &> step = session.tensor(METART_I64, {}, 1);
    if (!step)
      return step.takeError();
    const metart_tensor *counter = step->get();
    llvm::Expected<double> seconds = session.slowestTime(
        [&]() -> metart_status {
          next = (next + 1) % sets.size();
          const llvm::SmallVector<const metart_tensor *, 24> &tensors =
              sets[next];
          if (metart_status s = metart_increment(c, counter, nullptr))
            return s;
          for (size_t i = 0; i < tensors.size(); i += 4)
            if (metart_status s =
                    metart_adam_update(c, tensors[i], tensors[i + 1],
                                       tensors[i + 2], tensors[i + 3], counter,
                                       1e-3, 0.9, 0.999, 1e-8, 0, 0, nullptr))
              return s;
          return METART_OK;
        },
        "metart_adam_update", policy);
    session.releaseTensors();
    if (!seconds)
      return seconds.takeError();
    adam.shapes.push_back("h=" + std::to_string(h));
    adam.bytes.push_back(7 * parameterBytes);
    adam.flops.push_back(0);
    adam.seconds.push_back(*seconds);
    adam.elements.push_back(0);
  }

  MeasuredKernels measured;
  // The cost of waking the loop threads: each elementwise function just
  // below the threshold and at it (the same bytes, give or take one
  // element), the median of the three steps.
  if (plan.wakesLoopThreads) {
    std::vector<KernelSeries> step = {named("metart_nn_binary add"),
                                      named("metart_nn_unary relu"),
                                      named("metart_nn_scale")};
    for (int64_t n : {kParallelMinElements - 1, kParallelMinElements}) {
      llvm::SmallVector<int64_t, 4> flat = {n};
      if (llvm::Error error =
              run(step[0], "metart_nn_binary", {flat, flat}, flat, flat,
                  [&](auto in, const metart_tensor *y) {
                    return metart_nn_binary(c, METART_ADD, in[0], in[1], y);
                  }))
        return std::move(error);
      if (llvm::Error error = run(step[1], "metart_nn_unary", {flat}, flat,
                                  flat, [&](auto in, const metart_tensor *y) {
                                    return metart_nn_unary(c, METART_RELU,
                                                           in[0], y);
                                  }))
        return std::move(error);
      if (llvm::Error error = run(step[2], "metart_nn_scale", {flat}, flat,
                                  flat, [&](auto in, const metart_tensor *y) {
                                    return metart_nn_scale(c, in[0], 0.5, y);
                                  }))
        return std::move(error);
    }
    llvm::SmallVector<double> steps;
    for (const KernelSeries &s : step)
      steps.push_back(s.seconds[1] - s.seconds[0]);
    double dispatch = median(steps);
    // A step within the noise of a serial loop is no step.
    if (dispatch > std::max(0.05e-6, 0.1 * step[0].seconds[0])) {
      measured.parallelMinElements = kParallelMinElements;
      measured.parallelDispatch = dispatch;
    }
    measured.step = std::move(step);
  }

  std::vector<MeasuredKernel> &kinds = measured.kinds;
  kinds.push_back(fitKind("elementwise", {add, relu, scale},
                          measured.parallelMinElements,
                          measured.parallelDispatch));
  kinds.push_back(fitKind("transcendental", {exp}, measured.parallelMinElements,
                          measured.parallelDispatch));
  kinds.push_back(fitKind("erf", {erf, gelu, tanh},
                          measured.parallelMinElements,
                          measured.parallelDispatch));
  kinds.push_back(fitKind("reduce", {sumLast, sumTasks}));
  kinds.push_back(fitKind("window", {pool, poolBackward}));
  kinds.push_back(fitKind("broadcast", {overTasks, alongLast}));
  kinds.push_back(fitKind("transpose", {swap}));
  kinds.push_back(fitKind("copy", {copy}));
  kinds.push_back(fitKind("optimizer", {adam}));
  return measured;
}
