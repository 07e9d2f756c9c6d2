//===- Backend.h - the interface every backend implements -------*- C++ -*-===//
//
// A backend owns a device's memory and computes the kernels. The dispatch
// layer (src/ops/) has already checked every operand against the op's rules
// and reduced the shapes to the sizes of KernelSizes.h, so a backend only
// computes; what it reports (KernelStatus) is what the checks could not see:
// ids or labels out of range, sizes its libraries cannot take, failures of
// the device. Float operands of one call share `dtype` (f32 or f64; bf16
// and f16 reach only `convert`); ids and labels have their own element
// type (i32 or i64). Results never overlap
// operands, except for the elementwise kernels, whose result may be exactly
// an operand.
//
// The CPU backend is in src/cpu/; the CUDA backend, in src/cuda/, is built
// when CMake finds CUDA (METART_HAVE_CUDA).
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_BACKEND_H
#define METART_SRC_BACKEND_H

#include "Arena.h"
#include "KernelSizes.h"
#include "KeyRing.h"

#include <memory>
#include <string>

namespace metart {

/// What a backend without ring attention reports.
constexpr const char *kNoRingAttention =
    "ring attention runs on the CPU backend only";

/// The direction of a copy between host and device memory.
enum class CopyKind { HostToDevice, DeviceToHost, DeviceToDevice };

/// A device's memory, copies and kernels.
class Backend : public DeviceAllocator {
public:
  /// Copies `bytes` bytes (`DeviceToDevice` copies may overlap).
  /// Host memory that copies to and from the device move at full speed
  /// (pinned on a GPU), outside the device's accounting: where offloaded
  /// state lives. Null when there is none to give.
  virtual void *allocateHost(size_t bytes);
  virtual void deallocateHost(void *data);
  virtual KernelStatus copy(void *destination, const void *source, size_t bytes,
                            CopyKind kind) = 0;
  /// Starts a copy (as `copy`, device to device) behind the work queued so
  /// far; a backend with a second queue runs it there, overlapping the
  /// work queued after it until `copyWait(destination)`, which orders what
  /// follows behind it. By default the copy is made now.
  virtual KernelStatus copyStart(void *destination, const void *source,
                                 size_t bytes) {
    return copy(destination, source, bytes, CopyKind::DeviceToDevice);
  }
  virtual KernelStatus copyWait(void *) { return KernelStatus::ok(); }
  /// Waits for all queued work.
  virtual KernelStatus synchronize() = 0;
  /// Whether the host can read the backend's memory directly (collectives
  /// through MPI stage device memory through the host).
  virtual bool hostMemory() const { return true; }

  // Recording (CUDA graphs). Between `beginRecording` and `endRecording`
  // the backend records the work it is given instead of doing it; `replay`
  // then does that work again, on the same memory with its current
  // contents. While recording, copies to the host and waits fail, and a
  // copy from the host copies what the host memory holds then. A backend
  // that cannot record says so (METART_ERROR_UNSUPPORTED).
  /// Launches a kernel metac generated (PTX) on the backend's device.
  virtual bool runsGeneratedKernels() const { return false; }
  /// Whether `entry` of the PTX module `ptx` loads on the device.
  virtual bool loadsGenerated(const char *ptx, const char *entry) {
    return false;
  }
  virtual KernelStatus launchGenerated(const char *ptx, const char *entry,
                                       int64_t blocks, int64_t threads,
                                       void **pointers, int64_t count) {
    return {METART_ERROR_UNSUPPORTED,
            "this backend does not run generated device kernels"};
  }

  virtual bool canRecord() const { return false; }
  virtual KernelStatus beginRecording() { return cannotRecord(); }
  /// Ends the recording; when recording failed, drops it and says why.
  virtual KernelStatus endRecording() { return cannotRecord(); }
  virtual KernelStatus replay() { return cannotRecord(); }
  /// Drops the recording and the memory only it uses.
  virtual void discardRecording() {}

  /// Converts `count` floats from `from` to `to` (f32, f64, bf16, f16),
  /// rounding to nearest, ties to even (f64 to a 16-bit type through f32).
  /// Kernels on bf16 and f16 operands compute on f32 copies (ops/Widen.h).
  virtual KernelStatus convert(metart_dtype from, metart_dtype to,
                               int64_t count, const void *x, void *y) {
    return {METART_ERROR_UNSUPPORTED,
            "this backend has no bf16 or f16 conversion yet"};
  }

  /// Whether `linear`, `matmul` and the attention kernels take bf16 and f16
  /// operands as they are (tensor-core products accumulating in f32)
  /// instead of f32 copies.
  virtual bool reducedFloatProducts() const { return false; }
  /// Whether fill, the unary and binary maps, scale, transposes, broadcasts
  /// and sums take bf16 and f16 operands as they are (computing in f32 and
  /// rounding once, as on f32 copies).
  virtual bool reducedFloatElementwise() const { return false; }

  // Elementwise.
  virtual KernelStatus fill(metart_dtype dtype, int64_t count, void *y,
                            double value) = 0;
  virtual KernelStatus unary(metart_unary_op op, metart_dtype dtype,
                             int64_t count, const void *x, void *y) = 0;
  virtual KernelStatus scale(metart_dtype dtype, int64_t count, const void *x,
                             double factor, void *y) = 0;
  virtual KernelStatus binary(metart_binary_op op, metart_dtype dtype,
                              int64_t count, const void *a, const void *b,
                              void *y) = 0;

  // Linear layers and products. `bias` may be null.
  virtual KernelStatus linear(metart_dtype dtype, const LinearSizes &sizes,
                              const void *x, const void *weight,
                              const void *bias, void *y) = 0;
  virtual KernelStatus matmul(metart_dtype dtype, const MatmulSizes &sizes,
                              const void *a, const void *b, void *y) = 0;

  /// Fused attention (metart_nn_attention).
  virtual KernelStatus attention(metart_dtype dtype,
                                 const AttentionSizes &sizes, const void *q,
                                 const void *k, const void *v, void *y) {
    return {METART_ERROR_UNSUPPORTED,
            "this backend has no fused attention kernel yet"};
  }
  /// Its derivative (metart_nn_attention_backward): the cotangents whose
  /// pointers are not null.
  virtual KernelStatus attentionBackward(metart_dtype dtype,
                                         const AttentionSizes &sizes,
                                         const void *q, const void *k,
                                         const void *v, const void *dy,
                                         void *dq, void *dk, void *dv) {
    return {METART_ERROR_UNSUPPORTED,
            "this backend has no fused attention kernel yet"};
  }
  /// The derivative of that (metart_nn_attention_double_backward).
  virtual KernelStatus attentionDoubleBackward(metart_dtype dtype,
                                               const AttentionSizes &sizes,
                                               const AttentionOperands &in,
                                               const AttentionCotangents &out) {
    return {METART_ERROR_UNSUPPORTED,
            "this backend has no fused attention kernel yet"};
  }

  /// Ring attention: the three kernels above for this rank's block of
  /// queries over every block of keys and values as they pass around
  /// `ring` (the key-side cotangents delivered to their block's rank).
  virtual KernelStatus ringAttention(metart_dtype, const AttentionSizes &,
                                     const void *, const void *, const void *,
                                     void *, KeyRing &) {
    return {METART_ERROR_UNSUPPORTED, kNoRingAttention};
  }
  virtual KernelStatus ringAttentionBackward(metart_dtype,
                                             const AttentionSizes &,
                                             const void *, const void *,
                                             const void *, const void *, void *,
                                             void *, void *, KeyRing &) {
    return {METART_ERROR_UNSUPPORTED, kNoRingAttention};
  }
  virtual KernelStatus ringAttentionDoubleBackward(metart_dtype,
                                                   const AttentionSizes &,
                                                   const AttentionOperands &,
                                                   const AttentionCotangents &,
                                                   KeyRing &) {
    return {METART_ERROR_UNSUPPORTED, kNoRingAttention};
  }

  // Convolution. `bias` may be null.
  virtual KernelStatus conv2d(metart_dtype dtype, const ConvSizes &sizes,
                              const void *x, const void *weight,
                              const void *bias, void *y) = 0;
  virtual KernelStatus conv2dBackwardInput(metart_dtype dtype,
                                           const ConvSizes &sizes,
                                           const void *grad, const void *weight,
                                           void *y) = 0;
  virtual KernelStatus conv2dBackwardWeight(metart_dtype dtype,
                                            const ConvSizes &sizes,
                                            const void *x, const void *grad,
                                            void *y) = 0;

  // Pooling.
  virtual KernelStatus maxPool2d(metart_dtype dtype, const PoolSizes &sizes,
                                 const void *x, void *y) = 0;
  virtual KernelStatus avgPool2d(metart_dtype dtype, const PoolSizes &sizes,
                                 const void *x, void *y) = 0;
  virtual KernelStatus maxPool2dBackward(metart_dtype dtype,
                                         const PoolSizes &sizes, const void *x,
                                         const void *grad, void *y) = 0;
  virtual KernelStatus maxPool2dGather(metart_dtype dtype,
                                       const PoolSizes &sizes, const void *x,
                                       const void *source, void *y) = 0;
  virtual KernelStatus avgPool2dBackward(metart_dtype dtype,
                                         const PoolSizes &sizes,
                                         const void *grad, void *y) = 0;

  // Normalisation.
  virtual KernelStatus batchNorm(metart_dtype dtype,
                                 const BatchNormSizes &sizes, const void *x,
                                 const void *weight, const void *bias,
                                 double epsilon, void *y) = 0;
  virtual KernelStatus layerNorm(metart_dtype dtype,
                                 const LayerNormSizes &sizes, const void *x,
                                 const void *weight, const void *bias,
                                 double epsilon, void *y) = 0;
  /// Softmax, or log-softmax with `logarithm`.
  virtual KernelStatus softmax(metart_dtype dtype, const AxisSizes &sizes,
                               bool logarithm, const void *x, void *y) = 0;

  // Indexing.
  virtual KernelStatus embedding(metart_dtype dtype, metart_dtype idType,
                                 const LookupSizes &sizes, const void *ids,
                                 const void *table, void *y) = 0;
  virtual KernelStatus embeddingBackward(metart_dtype dtype,
                                         metart_dtype idType,
                                         const LookupSizes &sizes,
                                         const void *ids, const void *grad,
                                         void *y) = 0;
  virtual KernelStatus oneHot(metart_dtype dtype, metart_dtype labelType,
                              int64_t count, int64_t classes,
                              const void *labels, void *y) = 0;
  /// nn.moe_dispatch on `groups` groups of `tokens` x `experts`
  /// probabilities: y [groups, tokens, experts, capacity].
  virtual KernelStatus moeDispatch(metart_dtype dtype,
                                   const RoutingSizes &sizes, int64_t topK,
                                   const void *probs, void *y) = 0;

  // Shape. `copyStrided` walks `space` with the result as operand 0
  // (contiguous) and the input as operand 1 (transpose, broadcast);
  // `reduceSum` walks it with the input as operand 0 and the result (of
  // `resultCount` elements) as operand 1, then divides the sums by
  // `divisor` (1 for a sum, the number of reduced elements for a mean).
  virtual KernelStatus copyStrided(metart_dtype dtype,
                                   const StridedSpace<2> &space, const void *x,
                                   void *y) = 0;
  virtual KernelStatus reduceSum(metart_dtype dtype,
                                 const StridedSpace<2> &space,
                                 int64_t resultCount, double divisor,
                                 const void *x, void *y) = 0;

  // Losses.
  virtual KernelStatus mseLoss(metart_dtype dtype, const LossSizes &sizes,
                               const void *prediction, const void *target,
                               void *y) = 0;
  virtual KernelStatus crossEntropyLoss(metart_dtype dtype,
                                        metart_dtype labelType,
                                        const LossSizes &sizes,
                                        const void *logits, const void *labels,
                                        void *y) = 0;
  virtual KernelStatus accuracy(metart_dtype dtype, metart_dtype labelType,
                                const LossSizes &sizes, const void *logits,
                                const void *labels, void *y) = 0;

  // Optimizers, in place. `momentumBuffer` may be null when momentum is 0.
  virtual KernelStatus sgdUpdate(metart_dtype dtype, int64_t count, void *param,
                                 const void *grad, void *momentumBuffer,
                                 const SgdOptions &options) = 0;
  /// Adds one to the i64 at `counter` (the optimizer's step count), unless
  /// `gate` (null: always) says to skip the update.
  virtual KernelStatus increment(int64_t *counter, const double *gate) = 0;
  /// metart_update_guard: `norms[i]` the squared norm of gradient i,
  /// `gate` [apply, scale].
  virtual KernelStatus updateGuard(const GuardInputs &inputs, double *norms,
                                   double *gate) = 0;
  virtual KernelStatus adamUpdate(metart_dtype dtype, int64_t count,
                                  void *param, const void *grad, void *expAvg,
                                  void *expAvgSq,
                                  const AdamOptions &options) = 0;

private:
  static KernelStatus cannotRecord() {
    return {METART_ERROR_UNSUPPORTED, "this backend does not record"};
  }
};

/// The CPU backend (OpenBLAS for products, loops for the rest).
std::unique_ptr<Backend> createCpuBackend();

#ifdef METART_HAVE_CUDA
/// The number of CUDA devices this process sees: 0 without a driver or
/// without a device, and then `why` (when not null) says which.
int cudaDeviceCount(std::string *why = nullptr);
/// The CUDA backend (cuBLAS for products, our kernels for the rest) on
/// `device`, whose cached device memory stays under `limitBytes` where it
/// can: METART_ERROR_UNSUPPORTED without a device,
/// METART_ERROR_INVALID_ARGUMENT when `device` names none.
KernelStatus createCudaBackend(int device, size_t limitBytes,
                               std::unique_ptr<Backend> &out);
#endif

} // namespace metart

#endif // METART_SRC_BACKEND_H
