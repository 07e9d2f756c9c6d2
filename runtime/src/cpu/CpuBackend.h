//===- CpuBackend.h - the CPU backend ---------------------------*- C++ -*-===//
//
// The backend that runs on the host: memory from the C++ allocator, products
// through OpenBLAS, loops for the rest. Its kernels are defined in the file
// of their concept (Elementwise.cpp, Linear.cpp, ...); each dispatches on
// the element type to a template over float and double.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_CPU_CPUBACKEND_H
#define METART_SRC_CPU_CPUBACKEND_H

#include "../Backend.h"
#include "OneDnn.h"
#include "OneDnnProducts.h"
#include "Parallel.h"
#include "Workspace.h"

#include <array>
#include <map>

namespace metart::cpu {

/// The CPU backend.
class CpuBackend final : public Backend {
public:
  /// Starts the thread pool now, so that its size (and a warning about a
  /// bad METART_NUM_THREADS) is settled when the context is created.
  CpuBackend() { parallelThreads(); }

  void *allocate(size_t bytes) override;
  void deallocate(void *data) override;
  KernelStatus copy(void *destination, const void *source, size_t bytes,
                    CopyKind kind) override;
  KernelStatus synchronize() override;

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
  KernelStatus ringAttention(metart_dtype dtype, const AttentionSizes &sizes,
                             const void *q, const void *k, const void *v,
                             void *y, KeyRing &ring) override;
  KernelStatus ringAttentionBackward(metart_dtype dtype,
                                     const AttentionSizes &sizes, const void *q,
                                     const void *k, const void *v,
                                     const void *dy, void *dq, void *dk,
                                     void *dv, KeyRing &ring) override;
  KernelStatus ringAttentionDoubleBackward(metart_dtype dtype,
                                           const AttentionSizes &sizes,
                                           const AttentionOperands &in,
                                           const AttentionCotangents &out,
                                           KeyRing &ring) override;
  KernelStatus matmul(metart_dtype dtype, const MatmulSizes &sizes,
                      const void *a, const void *b, void *y) override;

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

private:
  Workspace workspace;
  /// Convolutions of the shapes oneDNN computes faster than im2col.
  OneDnnConvolutions convolutions;
  /// The f32 products oneDNN computes (OneDnnProducts.h).
  OneDnnProducts products;
  /// The kernel measured fastest for each convolution direction and shape
  /// (Convolution.cpp).
  std::map<std::array<int64_t, 15>, int> convolutionChoices;
};

} // namespace metart::cpu

#endif // METART_SRC_CPU_CPUBACKEND_H
