//===- Context.cpp - contexts, errors, backends and the version -----------===//
//
// Creating and destroying contexts, the message of the last error (per
// context, or per thread when there is no context to hold it), which
// backends this build can run, and the runtime's version.
//
//===----------------------------------------------------------------------===//

#include "Context.h"

#include <new>

using namespace metart;

/// The last error of a call that had no context to record it on.
static thread_local std::string lastErrorWithoutContext;

void metart::setLastError(metart_context *context, std::string message) {
  if (context)
    context->lastError = std::move(message);
  else
    lastErrorWithoutContext = std::move(message);
}

const char *metart_version(void) { return "0.1.0"; }

int metart_backend_available(metart_backend backend) {
  switch (static_cast<int>(backend)) {
  case METART_BACKEND_CPU:
    return 1;
  case METART_BACKEND_CUDA:
#ifdef METART_HAVE_CUDA
    return cudaDeviceCount() > 0;
#else
    return 0;
#endif
  default:
    return 0;
  }
}

metart_status metart_context_create(const metart_context_options *options,
                                    metart_context **out_context) {
  auto fail = [](metart_status status, std::string message) {
    setLastError(nullptr, "metart_context_create: " + std::move(message));
    return status;
  };
  if (!out_context)
    return fail(METART_ERROR_INVALID_ARGUMENT, "out_context is null");
  *out_context = nullptr;
  metart_context_options defaults = {METART_BACKEND_CPU, 0, 0};
  if (!options)
    options = &defaults;
  try {
    std::unique_ptr<Backend> backend;
    switch (static_cast<int>(options->backend)) {
    case METART_BACKEND_CPU:
      backend = createCpuBackend();
      break;
    case METART_BACKEND_CUDA: {
#ifdef METART_HAVE_CUDA
      KernelStatus status = createCudaBackend(
          options->device, options->memory_limit_bytes, backend);
      if (status.failed())
        return fail(status.code, status.message);
      break;
#else
      return fail(METART_ERROR_UNSUPPORTED,
                  "the CUDA backend is not part of this build (only "
                  "METART_BACKEND_CPU is available)");
#endif
    }
    default:
      return fail(METART_ERROR_INVALID_ARGUMENT,
                  "unknown backend " + std::to_string(options->backend));
    }
    *out_context =
        new metart_context(std::move(backend), options->memory_limit_bytes);
  } catch (const std::bad_alloc &) {
    return fail(METART_ERROR_OUT_OF_MEMORY, "cannot allocate the context");
  }
  return METART_OK;
}

void metart_context_destroy(metart_context *context) { delete context; }

const char *metart_context_last_error(const metart_context *context) {
  return context ? context->lastError.c_str() : lastErrorWithoutContext.c_str();
}
