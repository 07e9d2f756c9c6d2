//===- CudaBackend.h - the CUDA backend -------------------------*- C++ -*-===//
//
// The backend that runs on one CUDA device: memory from a caching allocator,
// products through cuBLAS (strided-batched, so that the tasks of a
// meta-batch are one call), our kernels for the rest. All work of a context
// is queued on its stream; copies to and from the host wait for it, kernels
// do not. Its kernels are defined in the file of their concept
// (Elementwise.cu, Linear.cu, ...), with the semantics of the CPU backend.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_CUDA_CUDABACKEND_H
#define METART_SRC_CUDA_CUDABACKEND_H

#include "../Backend.h"
#include "Allocator.h"
#include "Cudnn.h"
#include "GeneratedKernels.h"
#include "Recording.h"
#include "SideCopies.h"
#include "Stream.h"

#include <cublas_v2.h>

#include <array>
#include <functional>
#include <map>
#include <memory>

namespace metart::cuda {

/// The CUDA backend.
class CudaBackend final : public Backend {
public:
  /// Creates a backend on `device` (an existing device index) whose
  /// allocator keeps the device memory it holds under `limitBytes` where
  /// it can (0: no bound).
  static KernelStatus create(int device, size_t limitBytes,
                             std::unique_ptr<CudaBackend> &out);
  ~CudaBackend() override;

  void *allocate(size_t bytes) override;
  void deallocate(void *data) override;
  /// Pinned: the copies of offloaded state run at PCIe speed, async.
  void *allocateHost(size_t bytes) override;
  void deallocateHost(void *data) override;
  KernelStatus copy(void *destination, const void *source, size_t bytes,
                    CopyKind kind) override;
  /// Prefetches on a second stream (SideCopies.h).
  KernelStatus copyStart(void *destination, const void *source,
                         size_t bytes) override;
  KernelStatus copyWait(void *destination) override;
  KernelStatus synchronize() override;
  bool hostMemory() const override { return false; }
  int getDevice() const { return device; }

  bool runsGeneratedKernels() const override { return computeMajor >= 8; }
  bool loadsGenerated(const char *ptx, const char *entry) override;
  KernelStatus launchGenerated(const char *ptx, const char *entry,
                               int64_t blocks, int64_t threads, void **pointers,
                               int64_t count) override;

  bool canRecord() const override { return true; }
  bool reducedFloatProducts() const override { return true; }
  bool reducedFloatElementwise() const override { return true; }
  KernelStatus beginRecording() override;
  KernelStatus endRecording() override;
  KernelStatus replay() override;
  void discardRecording() override;

  KernelStatus convert(metart_dtype from, metart_dtype to, int64_t count,
                       const void *x, void *y) override;
  KernelStatus fill(metart_dtype dtype, int64_t count, void *y,
                    double value) override;
  KernelStatus unary(metart_unary_op op, metart_dtype dtype, int64_t count,
                     const void *x, void *y) override;
  KernelStatus scale(metart_dtype dtype, int64_t count, const void *x,
                     double factor, void *y) override;
  KernelStatus binary(metart_binary_op op, metart_dtype dtype, int64_t count,
                      const void *a, const void *b, void *y) override;

  KernelStatus linear(metart_dtype dtype, const LinearSizes &sizes,
                      const void *x, const void *weight, const void *bias,
                      void *y) override;
  KernelStatus matmul(metart_dtype dtype, const MatmulSizes &sizes,
                      const void *a, const void *b, void *y) override;
  KernelStatus attention(metart_dtype dtype, const AttentionSizes &sizes,
                         const void *q, const void *k, const void *v,
                         void *y) override;
  KernelStatus attentionBackward(metart_dtype dtype,
                                 const AttentionSizes &sizes, const void *q,
                                 const void *k, const void *v, const void *dy,
                                 void *dq, void *dk, void *dv) override;
  KernelStatus attentionDoubleBackward(metart_dtype dtype,
                                       const AttentionSizes &sizes,
                                       const AttentionOperands &in,
                                       const AttentionCotangents &out) override;

  KernelStatus conv2d(metart_dtype dtype, const ConvSizes &sizes, const void *x,
                      const void *weight, const void *bias, void *y) override;
  KernelStatus conv2dBackwardInput(metart_dtype dtype, const ConvSizes &sizes,
                                   const void *grad, const void *weight,
                                   void *y) override;
  KernelStatus conv2dBackwardWeight(metart_dtype dtype, const ConvSizes &sizes,
                                    const void *x, const void *grad,
                                    void *y) override;

  KernelStatus maxPool2d(metart_dtype dtype, const PoolSizes &sizes,
                         const void *x, void *y) override;
  KernelStatus avgPool2d(metart_dtype dtype, const PoolSizes &sizes,
                         const void *x, void *y) override;
  KernelStatus maxPool2dBackward(metart_dtype dtype, const PoolSizes &sizes,
                                 const void *x, const void *grad,
                                 void *y) override;
  KernelStatus maxPool2dGather(metart_dtype dtype, const PoolSizes &sizes,
                               const void *x, const void *source,
                               void *y) override;
  KernelStatus avgPool2dBackward(metart_dtype dtype, const PoolSizes &sizes,
                                 const void *grad, void *y) override;

  KernelStatus batchNorm(metart_dtype dtype, const BatchNormSizes &sizes,
                         const void *x, const void *weight, const void *bias,
                         double epsilon, void *y) override;
  KernelStatus layerNorm(metart_dtype dtype, const LayerNormSizes &sizes,
                         const void *x, const void *weight, const void *bias,
                         double epsilon, void *y) override;
  KernelStatus softmax(metart_dtype dtype, const AxisSizes &sizes,
                       bool logarithm, const void *x, void *y) override;

  KernelStatus embedding(metart_dtype dtype, metart_dtype idType,
                         const LookupSizes &sizes, const void *ids,
                         const void *table, void *y) override;
  KernelStatus embeddingBackward(metart_dtype dtype, metart_dtype idType,
                                 const LookupSizes &sizes, const void *ids,
                                 const void *grad, void *y) override;
  KernelStatus oneHot(metart_dtype dtype, metart_dtype labelType, int64_t count,
                      int64_t classes, const void *labels, void *y) override;
  KernelStatus moeDispatch(metart_dtype dtype, const RoutingSizes &sizes,
                           int64_t topK, const void *probs, void *y) override;

  KernelStatus copyStrided(metart_dtype dtype, const StridedSpace<2> &space,
                           const void *x, void *y) override;
  KernelStatus reduceSum(metart_dtype dtype, const StridedSpace<2> &space,
                         int64_t resultCount, double divisor, const void *x,
                         void *y) override;

  KernelStatus mseLoss(metart_dtype dtype, const LossSizes &sizes,
                       const void *prediction, const void *target,
                       void *y) override;
  KernelStatus crossEntropyLoss(metart_dtype dtype, metart_dtype labelType,
                                const LossSizes &sizes, const void *logits,
                                const void *labels, void *y) override;
  KernelStatus accuracy(metart_dtype dtype, metart_dtype labelType,
                        const LossSizes &sizes, const void *logits,
                        const void *labels, void *y) override;

  KernelStatus sgdUpdate(metart_dtype dtype, int64_t count, void *param,
                         const void *grad, void *momentumBuffer,
                         const SgdOptions &options) override;
  KernelStatus increment(int64_t *counter, const double *gate) override;
  KernelStatus updateGuard(const GuardInputs &inputs, double *norms,
                           double *gate) override;
  KernelStatus adamUpdate(metart_dtype dtype, int64_t count, void *param,
                          const void *grad, void *expAvg, void *expAvgSq,
                          const AdamOptions &options) override;

  /// The allocator's counts (for tests and reports).
  const CachingAllocator::Stats &allocatorStats() const {
    return allocator.stats();
  }
  Stream &getStream() { return stream; }
  /// Called with the stream after each replay's launch (the NCCL
  /// transport's watchdog marks the graph's completion); null: none.
  void setGraphLaunchHook(std::function<void(cudaStream_t)> hook) {
    graphLaunched = std::move(hook);
  }

private:
  CudaBackend(int device, size_t limitBytes)
      : device(device), allocator(limitBytes), workspace(allocator) {}

  /// Makes the backend's device the calling thread's current one.
  KernelStatus activate();
  /// Checks that the `count` indices (of `type`) lie in [0, bound), as the
  /// CPU backend does and with its message; `what` names them ("id").
  /// Waits for the device; while recording, the check is recorded and its
  /// finding read after each replay.
  KernelStatus checkRange(const char *what, metart_dtype type,
                          const void *indices, int64_t count, int64_t bound);
  /// Queues the check of `checkRange`, its finding into `slot`.
  KernelStatus queueRangeCheck(metart_dtype type, const void *indices,
                               int64_t count, int64_t bound, RangeSlot *slot);
  /// Records a copy from the host: the graph copies a pinned snapshot of
  /// the host memory as it is now.
  KernelStatus recordCopyFromHost(void *destination, const void *source,
                                  size_t bytes);
  bool capturing() const { return recording && recording->capturing; }

  int device;
  /// The device's compute capability (major).
  int computeMajor = 0;
  // Declared in the order of construction; destroyed in reverse, the
  // workspace before the allocator before the stream.
  Stream stream;
  /// Destroyed before the stream whose work its copies follow.
  SideCopies sideCopies;
  CachingAllocator allocator;
  DeviceWorkspace workspace;
  cublasHandle_t blas = nullptr;
  /// Device memory for the finding of `checkRange`.
  RangeSlot *rangeSlot = nullptr;
  /// The PTX modules of metac's fused groups, loaded on first launch;
  /// unloaded after the recorded graph that launches them is destroyed.
  GeneratedKernels generated;
  /// cuDNN's convolutions, and which of cuDNN (true) and im2col computes
  /// each measured shape (ConvolutionChoice.h).
  CudnnConvolutions cudnn;
  std::map<std::array<int64_t, 17>, bool> convolutionChoices;
  std::unique_ptr<Recording> recording;
  std::function<void(cudaStream_t)> graphLaunched;
};

} // namespace metart::cuda

#endif // METART_SRC_CUDA_CUDABACKEND_H
