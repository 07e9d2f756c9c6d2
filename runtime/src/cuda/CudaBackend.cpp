//===- CudaBackend.cpp - device, stream, memory and copies of CUDA --------===//
//
// Creating the backend (device, stream, cuBLAS handle), its memory through
// the caching allocator, and copies. Copies from the host wait until the
// host memory has been read, copies to the host until the data has arrived
// (both wait for the work queued before them); copies within the device are
// queued like kernels and may overlap (they go through the workspace then).
//
//===----------------------------------------------------------------------===//

#include "CudaBackend.h"

#include "Status.h"

namespace metart {

int cudaDeviceCount(std::string *why) {
  int count = 0;
  cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    (void)cudaGetLastError();
    if (why)
      *why = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(error);
    return 0;
  }
  if (count == 0 && why)
    *why = "cudaGetDeviceCount reports no device";
  return count;
}

KernelStatus createCudaBackend(int device, size_t limitBytes,
                               std::unique_ptr<Backend> &out) {
  std::string why;
  int count = cudaDeviceCount(&why);
  if (count == 0)
    return {METART_ERROR_UNSUPPORTED,
            "no CUDA device is available (" + why + ")"};
  if (device < 0 || device >= count)
    return {METART_ERROR_INVALID_ARGUMENT,
            "CUDA device " + std::to_string(device) +
                " does not exist (devices: [0, " + std::to_string(count) +
                "))"};
  std::unique_ptr<cuda::CudaBackend> backend;
  KernelStatus status = cuda::CudaBackend::create(device, limitBytes, backend);
  if (!status.failed())
    out = std::move(backend);
  return status;
}

namespace cuda {

KernelStatus CudaBackend::create(int device, size_t limitBytes,
                                 std::unique_ptr<CudaBackend> &out) {
  std::unique_ptr<CudaBackend> backend(new CudaBackend(device, limitBytes));
  KernelStatus status = backend->activate();
  if (!status.failed())
    status = backend->stream.create();
  if (!status.failed())
    status = checkCublas(cublasCreate(&backend->blas), "cublasCreate");
  if (!status.failed())
    status = checkCublas(cublasSetStream(backend->blas, backend->stream.get()),
                         "cublasSetStream");
  // Full-precision products: no TF32 for f32, as on the CPU.
  if (!status.failed())
    status = checkCublas(cublasSetMathMode(backend->blas, CUBLAS_DEFAULT_MATH),
                         "cublasSetMathMode");
  // metac's generated kernels are PTX for sm_80: older GPUs run the groups
  // op by op.
  if (!status.failed())
    status = checkCuda(cudaDeviceGetAttribute(&backend->computeMajor,
                                              cudaDevAttrComputeCapabilityMajor,
                                              device),
                       "cudaDeviceGetAttribute");
  if (!status.failed()) {
    backend->rangeSlot = static_cast<RangeSlot *>(
        backend->allocator.allocate(sizeof(RangeSlot)));
    if (!backend->rangeSlot)
      status = {METART_ERROR_OUT_OF_MEMORY, backend->allocator.lastError()};
  }
  if (!status.failed())
    out = std::move(backend);
  return status;
}

CudaBackend::~CudaBackend() {
  // Nothing can be reported from here: finish the queued work, then free
  // (the members free the memory and the stream on this device).
  if (activate().failed())
    return;
  discardRecording();
  (void)cudaStreamSynchronize(stream.get());
  // A copy a failed step left in flight writes memory the allocator frees.
  sideCopies.synchronize();
  if (blas)
    (void)cublasDestroy(blas);
  allocator.deallocate(rangeSlot);
}

KernelStatus CudaBackend::activate() {
  return checkCuda(cudaSetDevice(device), "cudaSetDevice");
}

KernelStatus CudaBackend::launchGenerated(const char *ptx, const char *entry,
                                          int64_t blocks, int64_t threads,
                                          void **pointers, int64_t count) {
  if (KernelStatus status = activate(); status.failed())
    return status;
  return generated.launch(stream.get(), ptx, entry, blocks, threads, pointers,
                          count);
}

bool CudaBackend::loadsGenerated(const char *ptx, const char *entry) {
  return !activate().failed() && generated.loads(ptx, entry);
}

void *CudaBackend::allocate(size_t bytes) {
  if (activate().failed())
    return nullptr;
  return allocator.allocate(bytes);
}

void *CudaBackend::allocateHost(size_t bytes) {
  void *data = nullptr;
  if (activate().failed() || cudaMallocHost(&data, bytes) != cudaSuccess)
    return nullptr;
  return data;
}

void CudaBackend::deallocateHost(void *data) {
  if (!activate().failed())
    (void)cudaFreeHost(data);
}

void CudaBackend::deallocate(void *data) {
  if (!activate().failed())
    allocator.deallocate(data);
}

/// Whether [a, a + bytes) and [b, b + bytes) overlap.
static bool overlap(const void *a, const void *b, size_t bytes) {
  auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return x < y + bytes && y < x + bytes;
}

KernelStatus CudaBackend::copyStart(void *destination, const void *source,
                                    size_t bytes) {
  if (KernelStatus status = activate(); status.failed())
    return status;
  if (bytes == 0 || destination == source ||
      overlap(destination, source, bytes))
    return copy(destination, source, bytes, CopyKind::DeviceToDevice);
  return sideCopies.start(stream.get(), destination, source, bytes);
}

KernelStatus CudaBackend::copyWait(void *destination) {
  if (KernelStatus status = activate(); status.failed())
    return status;
  return sideCopies.wait(stream.get(), destination);
}

KernelStatus CudaBackend::copy(void *destination, const void *source,
                               size_t bytes, CopyKind kind) {
  if (KernelStatus status = activate(); status.failed())
    return status;
  if (capturing() && kind == CopyKind::DeviceToHost)
    return {METART_ERROR_UNSUPPORTED,
            "cannot copy to the host while recording a CUDA graph"};
  if (capturing() && kind == CopyKind::HostToDevice)
    return recordCopyFromHost(destination, source, bytes);
  // cudaMemcpyDefault: with unified addressing the pointers say where the
  // memory is, so host memory passed as device memory still copies.
  if (kind == CopyKind::DeviceToDevice) {
    if (destination == source)
      return KernelStatus::ok();
    if (!overlap(destination, source, bytes))
      return checkCuda(cudaMemcpyAsync(destination, source, bytes,
                                       cudaMemcpyDefault, stream.get()),
                       "cudaMemcpyAsync (device to device)");
    // Overlapping ranges: through the workspace.
    void *staging = workspace.get(bytes);
    if (!staging)
      return workspaceExhausted(bytes);
    KernelStatus status =
        checkCuda(cudaMemcpyAsync(staging, source, bytes, cudaMemcpyDefault,
                                  stream.get()),
                  "cudaMemcpyAsync (device to device)");
    if (status.failed())
      return status;
    return checkCuda(cudaMemcpyAsync(destination, staging, bytes,
                                     cudaMemcpyDefault, stream.get()),
                     "cudaMemcpyAsync (device to device)");
  }
  const char *call = kind == CopyKind::HostToDevice
                         ? "cudaMemcpyAsync (host to device)"
                         : "cudaMemcpyAsync (device to host)";
  KernelStatus status =
      checkCuda(cudaMemcpyAsync(destination, source, bytes, cudaMemcpyDefault,
                                stream.get()),
                call);
  // The host memory may be reused (or read) as soon as this returns.
  if (!status.failed())
    status = stream.synchronize();
  return status;
}

KernelStatus CudaBackend::synchronize() {
  if (KernelStatus status = activate(); status.failed())
    return status;
  if (capturing())
    return {METART_ERROR_UNSUPPORTED,
            "cannot wait for the device while recording a CUDA graph"};
  return stream.synchronize();
}

} // namespace cuda
} // namespace metart
