//===- Context.h - the runtime context --------------------------*- C++ -*-===//
//
// The definition of the opaque `metart_context`: the backend it runs on, the
// arena that holds its memory and the message of its last error.
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_CONTEXT_H
#define METART_SRC_CONTEXT_H

#include "Arena.h"
#include "Backend.h"

#include <memory>
#include <string>

struct metart_context {
  metart_context(std::unique_ptr<metart::Backend> backend, size_t limitBytes)
      : backend(std::move(backend)), arena(*this->backend, limitBytes) {}

  std::unique_ptr<metart::Backend> backend;
  metart::Arena arena;
  std::string lastError;
};

namespace metart {

/// Records `message` as the last error of `context`, or, for a null context,
/// as this thread's last error without a context.
void setLastError(metart_context *context, std::string message);

} // namespace metart

#endif // METART_SRC_CONTEXT_H
