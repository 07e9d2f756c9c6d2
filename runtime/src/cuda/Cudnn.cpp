//===- Cudnn.cpp - convolutions through cuDNN -----------------------------===//
//
// The library is opened at run time, its legacy convolution API looked up
// by the declarations of its own headers: a metart built here runs where
// cuDNN is missing (im2col then computes everything).
//
//===----------------------------------------------------------------------===//

#include "Cudnn.h"

#include "Allocator.h"
#include "Status.h"
#include "SwapAxes.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <tuple>

#ifdef METART_HAVE_CUDNN
#include <cudnn.h>
#include <dlfcn.h>
#endif

namespace metart::cuda {

namespace {

enum class Choice { Measure, Cudnn, CudnnGrouped, Im2col };

Choice choiceFromEnvironment() {
  const char *choice = std::getenv("METART_CONVOLUTION");
  if (!choice || !*choice || std::strcmp(choice, "auto") == 0)
    return Choice::Measure;
  if (std::strcmp(choice, "cudnn") == 0)
    return Choice::Cudnn;
  // Tasks' convolutions as the groups of one call (operands transposed
  // around it); not yet run on a GPU, so only on request.
  if (std::strcmp(choice, "cudnn-grouped") == 0)
    return Choice::CudnnGrouped;
  if (std::strcmp(choice, "im2col") == 0)
    return Choice::Im2col;
  // oneDNN's choice names the CPU backend's library: cuDNN stands for it.
  if (std::strcmp(choice, "onednn") == 0)
    return Choice::Cudnn;
  std::fprintf(stderr,
               "metart: warning: ignoring METART_CONVOLUTION='%s' (expected "
               "auto, cudnn, cudnn-grouped or im2col)\n",
               choice);
  return Choice::Measure;
}

} // namespace

#ifdef METART_HAVE_CUDNN

namespace {

/// More weight slices than this would take as many small calls: im2col's
/// batched products do better.
constexpr int64_t kMostSlices = 16;
/// The workspace an algorithm may ask for.
constexpr size_t kMostWorkspace = size_t(256) << 20;

/// The entry points used, looked up in the loaded library.
struct Api {
#define METART_CUDNN_FUNCTIONS(X)                                              \
  X(cudnnCreate)                                                               \
  X(cudnnDestroy)                                                              \
  X(cudnnSetStream)                                                            \
  X(cudnnGetErrorString)                                                       \
  X(cudnnCreateTensorDescriptor)                                               \
  X(cudnnDestroyTensorDescriptor)                                              \
  X(cudnnSetTensor4dDescriptor)                                                \
  X(cudnnCreateFilterDescriptor)                                               \
  X(cudnnDestroyFilterDescriptor)                                              \
  X(cudnnSetFilter4dDescriptor)                                                \
  X(cudnnCreateConvolutionDescriptor)                                          \
  X(cudnnDestroyConvolutionDescriptor)                                         \
  X(cudnnSetConvolution2dDescriptor)                                           \
  X(cudnnSetConvolutionMathType)                                               \
  X(cudnnSetConvolutionGroupCount)                                             \
  X(cudnnGetConvolutionForwardAlgorithm_v7)                                    \
  X(cudnnConvolutionForward)                                                   \
  X(cudnnGetConvolutionBackwardDataAlgorithm_v7)                               \
  X(cudnnConvolutionBackwardData)                                              \
  X(cudnnGetConvolutionBackwardFilterAlgorithm_v7)                             \
  X(cudnnConvolutionBackwardFilter)
#define METART_CUDNN_POINTER(name) decltype(&::name) name = nullptr;
  METART_CUDNN_FUNCTIONS(METART_CUDNN_POINTER)
#undef METART_CUDNN_POINTER
};

enum class Direction { Forward, Input, Weight };

/// One slice's convolution: its descriptors and algorithm.
struct Plan {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  int algorithm = -1;
  size_t workspace = 0;
  bool usable = false;
};

using Key = std::tuple<int, int, int64_t, int64_t, int64_t, int64_t, int64_t,
                       int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                       int64_t, int64_t, int64_t>;

} // namespace

struct CudnnConvolutions::State {
  Choice choice = choiceFromEnvironment();
  bool tried = false;
  void *library = nullptr;
  Api api;
  cudnnHandle_t handle = nullptr;
  std::string why;
  std::map<Key, Plan> plans;

  ~State() {
    for (auto &[key, plan] : plans) {
      if (plan.x)
        api.cudnnDestroyTensorDescriptor(plan.x);
      if (plan.y)
        api.cudnnDestroyTensorDescriptor(plan.y);
      if (plan.w)
        api.cudnnDestroyFilterDescriptor(plan.w);
      if (plan.conv)
        api.cudnnDestroyConvolutionDescriptor(plan.conv);
    }
    if (handle)
      api.cudnnDestroy(handle);
    // The library stays loaded: its own threads and atexit handlers may
    // outlive this backend.
  }

  /// Loads cuDNN and creates the handle, once.
  bool load() {
    if (tried)
      return handle != nullptr;
    tried = true;
    const char *path = std::getenv("METART_CUDNN");
    library =
        dlopen(path && *path ? path : "libcudnn.so.9", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      why = std::string("cuDNN did not load: ") + dlerror();
      return false;
    }
#define METART_CUDNN_LOOKUP(name)                                              \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(library, #name));      \
  if (!api.name) {                                                             \
    why = "cuDNN lacks " #name;                                                \
    return false;                                                              \
  }
    METART_CUDNN_FUNCTIONS(METART_CUDNN_LOOKUP)
#undef METART_CUDNN_LOOKUP
    if (cudnnStatus_t status = api.cudnnCreate(&handle);
        status != CUDNN_STATUS_SUCCESS) {
      why =
          std::string("cudnnCreate failed: ") + api.cudnnGetErrorString(status);
      handle = nullptr;
      return false;
    }
    return true;
  }

  KernelStatus fail(const char *what, cudnnStatus_t status) {
    return {METART_ERROR_BACKEND, std::string("cuDNN ") + what + " failed: " +
                                      api.cudnnGetErrorString(status)};
  }

  /// The plan of one slice's convolution in `direction` (of all `groups`
  /// slices' as the groups of one convolution), made on first use;
  /// `usable` is false where cuDNN has no algorithm for it.
  Plan &planOf(Direction direction, metart_dtype dtype, const ConvSizes &s,
               int64_t groups = 1) {
    Key key{static_cast<int>(direction),
            groups,
            static_cast<int>(dtype),
            s.imagesPerSlice,
            s.channels,
            s.height,
            s.width,
            s.outChannels,
            s.kernelH,
            s.kernelW,
            s.outHeight,
            s.outWidth,
            s.strideH,
            s.strideW,
            s.padH,
            s.padW};
    auto [found, fresh] = plans.try_emplace(key);
    Plan &plan = found->second;
    if (!fresh)
      return plan;
    cudnnDataType_t type =
        dtype == METART_F64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    auto ok = [](cudnnStatus_t status) {
      return status == CUDNN_STATUS_SUCCESS;
    };
    int n = static_cast<int>(s.imagesPerSlice);
    int channels = static_cast<int>(s.channels * groups),
        outChannels = static_cast<int>(s.outChannels * groups);
    if (!ok(api.cudnnCreateTensorDescriptor(&plan.x)) ||
        !ok(api.cudnnCreateTensorDescriptor(&plan.y)) ||
        !ok(api.cudnnCreateFilterDescriptor(&plan.w)) ||
        !ok(api.cudnnCreateConvolutionDescriptor(&plan.conv)) ||
        !ok(api.cudnnSetTensor4dDescriptor(plan.x, CUDNN_TENSOR_NCHW, type, n,
                                           channels, static_cast<int>(s.height),
                                           static_cast<int>(s.width))) ||
        !ok(api.cudnnSetTensor4dDescriptor(
            plan.y, CUDNN_TENSOR_NCHW, type, n, outChannels,
            static_cast<int>(s.outHeight), static_cast<int>(s.outWidth))) ||
        !ok(api.cudnnSetFilter4dDescriptor(
            plan.w, type, CUDNN_TENSOR_NCHW, outChannels,
            static_cast<int>(s.channels), static_cast<int>(s.kernelH),
            static_cast<int>(s.kernelW))) ||
        !ok(api.cudnnSetConvolution2dDescriptor(
            plan.conv, static_cast<int>(s.padH), static_cast<int>(s.padW),
            static_cast<int>(s.strideH), static_cast<int>(s.strideW), 1, 1,
            CUDNN_CROSS_CORRELATION, type)) ||
        !ok(api.cudnnSetConvolutionMathType(plan.conv, CUDNN_FMA_MATH)) ||
        !ok(api.cudnnSetConvolutionGroupCount(plan.conv,
                                              static_cast<int>(groups))))
      return plan;
    // The heuristics' first algorithm that runs, computes the same result
    // every time, in full precision (products summed directly: FFT and
    // Winograd transforms lose about 1e-4 in f32), within the workspace
    // allowed.
    auto direct = [&](int algorithm) {
      switch (direction) {
      case Direction::Forward:
        return algorithm == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM ||
               algorithm == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM ||
               algorithm == CUDNN_CONVOLUTION_FWD_ALGO_GEMM ||
               algorithm == CUDNN_CONVOLUTION_FWD_ALGO_DIRECT;
      case Direction::Input:
        return algorithm == CUDNN_CONVOLUTION_BWD_DATA_ALGO_0 ||
               algorithm == CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
      case Direction::Weight:
        return algorithm == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0 ||
               algorithm == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1 ||
               algorithm == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3;
      }
      return false;
    };
    auto choose = [&](const auto *perf, int count) {
      for (int i = 0; i < count; ++i)
        if (perf[i].status == CUDNN_STATUS_SUCCESS &&
            direct(static_cast<int>(perf[i].algo)) &&
            perf[i].determinism == CUDNN_DETERMINISTIC &&
            perf[i].mathType != CUDNN_TENSOR_OP_MATH &&
            perf[i].mathType != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION &&
            perf[i].memory <= kMostWorkspace) {
          plan.algorithm = static_cast<int>(perf[i].algo);
          plan.workspace = perf[i].memory;
          plan.usable = true;
          return;
        }
    };
    int count = 0;
    switch (direction) {
    case Direction::Forward: {
      cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
      if (ok(api.cudnnGetConvolutionForwardAlgorithm_v7(
              handle, plan.x, plan.w, plan.conv, plan.y,
              CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &count, perf)))
        choose(perf, count);
      break;
    }
    case Direction::Input: {
      cudnnConvolutionBwdDataAlgoPerf_t
          perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
      if (ok(api.cudnnGetConvolutionBackwardDataAlgorithm_v7(
              handle, plan.w, plan.y, plan.conv, plan.x,
              CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &count, perf)))
        choose(perf, count);
      break;
    }
    case Direction::Weight: {
      cudnnConvolutionBwdFilterAlgoPerf_t
          perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
      if (ok(api.cudnnGetConvolutionBackwardFilterAlgorithm_v7(
              handle, plan.x, plan.y, plan.conv, plan.w,
              CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &count, perf)))
        choose(perf, count);
      break;
    }
    }
    return plan;
  }

  /// Whether the slices of `s` run as the groups of one call.
  bool groupedFor(const ConvSizes &s) const {
    return choice == Choice::CudnnGrouped && s.slices > 1;
  }

  /// The plan of the slices as groups, and from the workspace two staging
  /// buffers (`first`, `second` bytes) and cuDNN's workspace.
  KernelStatus prepareGrouped(Direction direction, cudaStream_t stream,
                              DeviceWorkspace &workspace, metart_dtype dtype,
                              const ConvSizes &s, size_t first, size_t second,
                              Plan *&plan, char *&a, char *&b, void *&space) {
    plan = &planOf(direction, dtype, s, s.slices);
    if (!plan->usable)
      return {METART_ERROR_UNSUPPORTED,
              "cuDNN has no full-precision deterministic algorithm for this "
              "grouped convolution"};
    auto round = [](size_t n) { return (n + 255) / 256 * 256; };
    size_t total = round(first) + round(second) + plan->workspace;
    char *base = static_cast<char *>(workspace.get(total));
    if (!base)
      return workspaceExhausted(total);
    a = base;
    b = base + round(first);
    space = plan->workspace ? base + round(first) + round(second) : nullptr;
    if (cudnnStatus_t status = api.cudnnSetStream(handle, stream);
        status != CUDNN_STATUS_SUCCESS)
      return fail("cudnnSetStream", status);
    return KernelStatus::ok();
  }

  /// Runs `call(plan, workspace, slice)` for each weight slice.
  template <typename Call>
  KernelStatus perSlice(Direction direction, cudaStream_t stream,
                        DeviceWorkspace &workspace, metart_dtype dtype,
                        const ConvSizes &s, Call call) {
    Plan &plan = planOf(direction, dtype, s);
    if (!plan.usable)
      return {METART_ERROR_UNSUPPORTED,
              "cuDNN has no full-precision deterministic algorithm for this "
              "convolution"};
    void *space = nullptr;
    if (plan.workspace > 0 && !(space = workspace.get(plan.workspace)))
      return workspaceExhausted(plan.workspace);
    if (cudnnStatus_t status = api.cudnnSetStream(handle, stream);
        status != CUDNN_STATUS_SUCCESS)
      return fail("cudnnSetStream", status);
    for (int64_t slice = 0; slice < s.slices; ++slice)
      if (cudnnStatus_t status = call(plan, space, slice);
          status != CUDNN_STATUS_SUCCESS)
        return fail(direction == Direction::Forward ? "convolution"
                    : direction == Direction::Input
                        ? "convolution input derivative"
                        : "convolution weight derivative",
                    status);
    return KernelStatus::ok();
  }
};

namespace {

/// What each call of the three kernels needs besides its plan: the host
/// scalars cuDNN scales by (of the compute type: double for f64, float
/// for f32) and the elements of one image, one output and one weight
/// slice.
struct Operands {
  Operands(metart_dtype dtype, const ConvSizes &s)
      : wide(dtype == METART_F64), element(wide ? 8 : 4),
        imageSize(s.channels * s.height * s.width),
        outputSize(s.outChannels * s.outHeight * s.outWidth),
        sliceSize(s.outChannels * s.channels * s.kernelH * s.kernelW) {}
  const void *one() const {
    return wide ? static_cast<const void *>(&oneD)
                : static_cast<const void *>(&oneF);
  }
  const void *zero() const {
    return wide ? static_cast<const void *>(&zeroD)
                : static_cast<const void *>(&zeroF);
  }
  bool wide;
  size_t element;
  int64_t imageSize, outputSize, sliceSize;
  double oneD = 1, zeroD = 0;
  float oneF = 1, zeroF = 0;
};

} // namespace

CudnnConvolutions::CudnnConvolutions() : state(std::make_unique<State>()) {}
CudnnConvolutions::~CudnnConvolutions() = default;

bool CudnnConvolutions::handles(metart_dtype dtype, const ConvSizes &s,
                                cudaStream_t stream) {
  if (state->choice == Choice::Im2col ||
      (dtype != METART_F32 && dtype != METART_F64) || s.images == 0 ||
      s.slices > kMostSlices || s.imagesPerSlice > INT32_MAX ||
      s.channels > INT32_MAX || s.outChannels > INT32_MAX)
    return false;
  if (!state->tried) {
    // Loading allocates and synchronises: not while a graph records.
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(stream, &capture) != cudaSuccess ||
        capture != cudaStreamCaptureStatusNone)
      return false;
  }
  return state->load();
}

bool CudnnConvolutions::forced() const {
  return state->choice == Choice::Cudnn ||
         state->choice == Choice::CudnnGrouped;
}

std::string CudnnConvolutions::unavailable() const { return state->why; }

template <typename T> static const T *at(const void *base, int64_t offset) {
  return static_cast<const T *>(base) + offset;
}

KernelStatus CudnnConvolutions::forward(cudaStream_t stream,
                                        DeviceWorkspace &workspace,
                                        metart_dtype dtype, const ConvSizes &s,
                                        const void *x, const void *weight,
                                        void *y, bool accumulate) {
  Operands o(dtype, s);
  const void *alpha = o.one(), *scale = accumulate ? o.one() : o.zero();
  size_t element = o.element;
  int64_t imageSize = o.imageSize, outputSize = o.outputSize,
          sliceSize = o.sliceSize;
  if (state->groupedFor(s)) {
    // [tasks, images, ...] to [images, tasks x channels, ...], one call,
    // and back (added to the bias when accumulating).
    int64_t tasks = s.slices, images = s.imagesPerSlice;
    const void *none = o.zero();
    Plan *plan = nullptr;
    char *xt = nullptr, *yt = nullptr;
    void *space = nullptr;
    if (KernelStatus status = state->prepareGrouped(
            Direction::Forward, stream, workspace, dtype, s,
            tasks * images * imageSize * element,
            tasks * images * outputSize * element, plan, xt, yt, space);
        status.failed())
      return status;
    if (KernelStatus status = swapLeadingAxes(stream, dtype, x, xt, tasks,
                                              images, imageSize, false);
        status.failed())
      return status;
    if (cudnnStatus_t status = state->api.cudnnConvolutionForward(
            state->handle, alpha, plan->x, xt, plan->w, weight, plan->conv,
            static_cast<cudnnConvolutionFwdAlgo_t>(plan->algorithm), space,
            plan->workspace, none, plan->y, yt);
        status != CUDNN_STATUS_SUCCESS)
      return state->fail("grouped convolution", status);
    return swapLeadingAxes(stream, dtype, yt, y, images, tasks, outputSize,
                           accumulate);
  }
  return state->perSlice(
      Direction::Forward, stream, workspace, dtype, s,
      [&](Plan &plan, void *space, int64_t slice) {
        return state->api.cudnnConvolutionForward(
            state->handle, alpha, plan.x,
            at<char>(x, slice * s.imagesPerSlice * imageSize * element), plan.w,
            at<char>(weight, slice * sliceSize * element), plan.conv,
            static_cast<cudnnConvolutionFwdAlgo_t>(plan.algorithm), space,
            plan.workspace, scale, plan.y,
            static_cast<char *>(y) +
                slice * s.imagesPerSlice * outputSize * element);
      });
}

KernelStatus CudnnConvolutions::backwardInput(
    cudaStream_t stream, DeviceWorkspace &workspace, metart_dtype dtype,
    const ConvSizes &s, const void *grad, const void *weight, void *y) {
  Operands o(dtype, s);
  const void *alpha = o.one(), *beta = o.zero();
  size_t element = o.element;
  int64_t imageSize = o.imageSize, outputSize = o.outputSize,
          sliceSize = o.sliceSize;
  if (state->groupedFor(s)) {
    int64_t tasks = s.slices, images = s.imagesPerSlice;
    Plan *plan = nullptr;
    char *gradT = nullptr, *yT = nullptr;
    void *space = nullptr;
    if (KernelStatus status = state->prepareGrouped(
            Direction::Input, stream, workspace, dtype, s,
            tasks * images * outputSize * element,
            tasks * images * imageSize * element, plan, gradT, yT, space);
        status.failed())
      return status;
    if (KernelStatus status = swapLeadingAxes(stream, dtype, grad, gradT, tasks,
                                              images, outputSize, false);
        status.failed())
      return status;
    if (cudnnStatus_t status = state->api.cudnnConvolutionBackwardData(
            state->handle, alpha, plan->w, weight, plan->y, gradT, plan->conv,
            static_cast<cudnnConvolutionBwdDataAlgo_t>(plan->algorithm), space,
            plan->workspace, beta, plan->x, yT);
        status != CUDNN_STATUS_SUCCESS)
      return state->fail("grouped convolution input derivative", status);
    return swapLeadingAxes(stream, dtype, yT, y, images, tasks, imageSize,
                           false);
  }
  return state->perSlice(
      Direction::Input, stream, workspace, dtype, s,
      [&](Plan &plan, void *space, int64_t slice) {
        return state->api.cudnnConvolutionBackwardData(
            state->handle, alpha, plan.w,
            at<char>(weight, slice * sliceSize * element), plan.y,
            at<char>(grad, slice * s.imagesPerSlice * outputSize * element),
            plan.conv,
            static_cast<cudnnConvolutionBwdDataAlgo_t>(plan.algorithm), space,
            plan.workspace, beta, plan.x,
            static_cast<char *>(y) +
                slice * s.imagesPerSlice * imageSize * element);
      });
}

KernelStatus CudnnConvolutions::backwardWeight(
    cudaStream_t stream, DeviceWorkspace &workspace, metart_dtype dtype,
    const ConvSizes &s, const void *x, const void *grad, void *y) {
  Operands o(dtype, s);
  const void *alpha = o.one(), *beta = o.zero();
  size_t element = o.element;
  int64_t imageSize = o.imageSize, outputSize = o.outputSize,
          sliceSize = o.sliceSize;
  if (state->groupedFor(s)) {
    // The tasks' filters are the groups' filters, in place.
    int64_t tasks = s.slices, images = s.imagesPerSlice;
    Plan *plan = nullptr;
    char *xT = nullptr, *gradT = nullptr;
    void *space = nullptr;
    if (KernelStatus status = state->prepareGrouped(
            Direction::Weight, stream, workspace, dtype, s,
            tasks * images * imageSize * element,
            tasks * images * outputSize * element, plan, xT, gradT, space);
        status.failed())
      return status;
    if (KernelStatus status = swapLeadingAxes(stream, dtype, x, xT, tasks,
                                              images, imageSize, false);
        status.failed())
      return status;
    if (KernelStatus status = swapLeadingAxes(stream, dtype, grad, gradT, tasks,
                                              images, outputSize, false);
        status.failed())
      return status;
    if (cudnnStatus_t status = state->api.cudnnConvolutionBackwardFilter(
            state->handle, alpha, plan->x, xT, plan->y, gradT, plan->conv,
            static_cast<cudnnConvolutionBwdFilterAlgo_t>(plan->algorithm),
            space, plan->workspace, beta, plan->w, y);
        status != CUDNN_STATUS_SUCCESS)
      return state->fail("grouped convolution weight derivative", status);
    return KernelStatus::ok();
  }
  return state->perSlice(
      Direction::Weight, stream, workspace, dtype, s,
      [&](Plan &plan, void *space, int64_t slice) {
        return state->api.cudnnConvolutionBackwardFilter(
            state->handle, alpha, plan.x,
            at<char>(x, slice * s.imagesPerSlice * imageSize * element), plan.y,
            at<char>(grad, slice * s.imagesPerSlice * outputSize * element),
            plan.conv,
            static_cast<cudnnConvolutionBwdFilterAlgo_t>(plan.algorithm), space,
            plan.workspace, beta, plan.w,
            static_cast<char *>(y) + slice * sliceSize * element);
      });
}

#else // !METART_HAVE_CUDNN

struct CudnnConvolutions::State {
  Choice choice = choiceFromEnvironment();
};

CudnnConvolutions::CudnnConvolutions() : state(std::make_unique<State>()) {}
CudnnConvolutions::~CudnnConvolutions() = default;

bool CudnnConvolutions::handles(metart_dtype, const ConvSizes &, cudaStream_t) {
  return false;
}
bool CudnnConvolutions::forced() const { return false; }
std::string CudnnConvolutions::unavailable() const {
  return "metart was built without cuDNN's headers";
}

static KernelStatus withoutCudnn() {
  return {METART_ERROR_UNSUPPORTED, "metart was built without cuDNN"};
}
KernelStatus CudnnConvolutions::forward(cudaStream_t, DeviceWorkspace &,
                                        metart_dtype, const ConvSizes &,
                                        const void *, const void *, void *,
                                        bool) {
  return withoutCudnn();
}
KernelStatus CudnnConvolutions::backwardInput(cudaStream_t, DeviceWorkspace &,
                                              metart_dtype, const ConvSizes &,
                                              const void *, const void *,
                                              void *) {
  return withoutCudnn();
}
KernelStatus CudnnConvolutions::backwardWeight(cudaStream_t, DeviceWorkspace &,
                                               metart_dtype, const ConvSizes &,
                                               const void *, const void *,
                                               void *) {
  return withoutCudnn();
}

#endif // METART_HAVE_CUDNN

} // namespace metart::cuda
