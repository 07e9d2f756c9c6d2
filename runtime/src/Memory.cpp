//===- Memory.cpp - scratch memory, buffers, copies and statistics --------===//
//
// The memory entry points of the C API: they check their arguments and
// forward to the context's arena (allocation and accounting) or backend
// (copies, synchronisation).
//
//===----------------------------------------------------------------------===//

#include "Checker.h"
#include "Context.h"
#include "Tensor.h"
#include "comm/Communicator.h"

#include <algorithm>
#include <cstdlib>
#include <new>
#include <string>

using namespace metart;

/// Allocates through `method` (an arena method), recording failures.
template <typename Method>
static metart_status allocate(metart_context *context, const char *function,
                              size_t bytes, void **out_data, Method method) {
  Checker check(context, function);
  if (!check.ok())
    return check.result();
  if (!out_data)
    return check.invalid("out_data is null");
  *out_data = nullptr;
  std::string error;
  metart_status status;
  try {
    status = (context->arena.*method)(bytes, out_data, error);
  } catch (const std::bad_alloc &) {
    status = METART_ERROR_OUT_OF_MEMORY;
    error = "cannot allocate the bookkeeping of " + std::to_string(bytes) +
            " bytes";
  }
  if (status != METART_OK)
    return check.fail(status, error);
  return METART_OK;
}

metart_status metart_scratch_alloc(metart_context *context, size_t bytes,
                                   void **out_data) {
  return allocate(context, "metart_scratch_alloc", bytes, out_data,
                  &Arena::allocateScratch);
}

void metart_scratch_free(metart_context *context, void *data, size_t bytes) {
  if (context)
    context->arena.freeScratch(data, bytes);
}

void metart_scratch_reset(metart_context *context) {
  if (!context)
    return;
  // Sends still in flight read the last step's scratch memory.
  if (context->comm && context->comm->transport)
    if (KernelStatus s = context->comm->transport->completeSends(); s.failed())
      setLastError(context, "metart_scratch_reset: " + s.message);
  // A step that failed between a prefetch and its wait leaves it joined.
  for (void *destination : context->copiesInFlight)
    (void)context->backend->copyWait(destination);
  context->copiesInFlight.clear();
  context->arena.resetScratch();
}

metart_status metart_buffer_alloc(metart_context *context, size_t bytes,
                                  void **out_data) {
  return allocate(context, "metart_buffer_alloc", bytes, out_data,
                  &Arena::allocateBuffer);
}

void metart_buffer_free(metart_context *context, void *data) {
  if (!context || !data)
    return;
  if (!context->arena.freeBuffer(data))
    setLastError(context, "metart_buffer_free: the pointer is not a buffer "
                          "of this context (ignored)");
}

/// Copies `bytes` bytes in direction `kind`, after checking the pointers.
static metart_status copy(metart_context *context, const char *function,
                          void *destination, const void *source, size_t bytes,
                          CopyKind kind) {
  Checker check(context, function);
  if (!check.ok())
    return check.result();
  if (bytes > 0 && (!destination || !source))
    return check.invalid("copying ", bytes, " bytes with a null ",
                         destination ? "source" : "destination");
  if (bytes == 0)
    return METART_OK;
  return check.finish(context->backend->copy(destination, source, bytes, kind));
}

metart_status metart_copy_to_device(metart_context *context, void *device,
                                    const void *host, size_t bytes) {
  return copy(context, "metart_copy_to_device", device, host, bytes,
              CopyKind::HostToDevice);
}

metart_status metart_copy_to_host(metart_context *context, void *host,
                                  const void *device, size_t bytes) {
  return copy(context, "metart_copy_to_host", host, device, bytes,
              CopyKind::DeviceToHost);
}

metart_status metart_copy_device(metart_context *context, void *destination,
                                 const void *source, size_t bytes) {
  return copy(context, "metart_copy_device", destination, source, bytes,
              CopyKind::DeviceToDevice);
}

metart_status metart_copy_device_start(metart_context *context,
                                       void *destination, const void *source,
                                       size_t bytes) {
  Checker check(context, "metart_copy_device_start");
  if (!check.ok())
    return check.result();
  if (!destination || (bytes > 0 && !source))
    return check.invalid("copying ", bytes, " bytes with a null ",
                         destination ? "source" : "destination");
  std::vector<void *> &inFlight = context->copiesInFlight;
  if (std::find(inFlight.begin(), inFlight.end(), destination) !=
      inFlight.end())
    return check.invalid("a copy to this destination is already in flight "
                         "(metart_copy_wait first)");
  // METART_OFFLOAD_PREFETCH=off: the copy is made now, in stream order
  // (what the overlap buys is then measurable).
  static const bool now = [] {
    const char *prefetch = std::getenv("METART_OFFLOAD_PREFETCH");
    return prefetch && std::string(prefetch) == "off";
  }();
  if (bytes > 0)
    if (metart_status s = check.finish(
            now ? context->backend->copy(destination, source, bytes,
                                         CopyKind::DeviceToDevice)
                : context->backend->copyStart(destination, source, bytes)))
      return s;
  inFlight.push_back(destination);
  return METART_OK;
}

metart_status metart_copy_wait(metart_context *context, void *destination) {
  Checker check(context, "metart_copy_wait");
  if (!check.ok())
    return check.result();
  std::vector<void *> &inFlight = context->copiesInFlight;
  auto it = std::find(inFlight.begin(), inFlight.end(), destination);
  if (it == inFlight.end())
    return check.invalid("no copy to this destination is in flight "
                         "(metart_copy_device_start)");
  inFlight.erase(it);
  return check.finish(context->backend->copyWait(destination));
}

metart_status metart_synchronize(metart_context *context) {
  Checker check(context, "metart_synchronize");
  if (!check.ok())
    return check.result();
  return check.finish(context->backend->synchronize());
}

void metart_memory_stats_get(const metart_context *context,
                             metart_memory_stats *out_stats) {
  if (!out_stats)
    return;
  *out_stats =
      context ? context->arena.stats() : metart_memory_stats{0, 0, 0, 0};
  if (context)
    for (const auto &[data, bytes] : context->hostBuffers)
      out_stats->host_buffer_bytes += bytes;
}

metart_status metart_host_buffer_alloc(metart_context *context, size_t bytes,
                                       void **out_data) {
  Checker check(context, "metart_host_buffer_alloc");
  if (!check.ok())
    return check.result();
  if (!out_data)
    return check.invalid("out_data is null");
  *out_data = nullptr;
  // Whole cache lines, and never an empty block.
  size_t rounded = ((bytes ? bytes : 1) + 63) / 64 * 64;
  void *data = context->backend->allocateHost(rounded);
  if (!data)
    return check.fail(METART_ERROR_OUT_OF_MEMORY, "cannot allocate ", rounded,
                      " bytes of host memory");
  context->hostBuffers.emplace_back(data, rounded);
  *out_data = data;
  return METART_OK;
}

void metart_host_buffer_free(metart_context *context, void *data) {
  if (!context || !data)
    return;
  auto &buffers = context->hostBuffers;
  for (auto it = buffers.begin(); it != buffers.end(); ++it)
    if (it->first == data) {
      context->backend->deallocateHost(data);
      buffers.erase(it);
      return;
    }
  setLastError(context, "metart_host_buffer_free: the pointer is not a host "
                        "buffer of this context (ignored)");
}

void *metart::Backend::allocateHost(size_t bytes) {
  return std::aligned_alloc(64, bytes);
}

void metart::Backend::deallocateHost(void *data) { std::free(data); }

metart_context::~metart_context() {
  for (const auto &[data, bytes] : hostBuffers)
    backend->deallocateHost(data);
}
