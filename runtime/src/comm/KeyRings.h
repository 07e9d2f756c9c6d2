//===- KeyRings.h - ring attention's rings over mesh axes -------*- C++ -*-===//
//
// The ring of a group of the context's mesh: its ranks in group order, each
// rotation one exchange with the neighbours per buffer (counted, timed and
// watched as a collective of the group's mask).
//
//===----------------------------------------------------------------------===//

#ifndef METART_SRC_COMM_KEYRINGS_H
#define METART_SRC_COMM_KEYRINGS_H

#include "../KeyRing.h"
#include "metart/metart.h"

#include <memory>

namespace metart::comm {

/// The ring of the group of `mask` (checked by the caller); a ring of one
/// without a communicator or with a group of one.
std::unique_ptr<KeyRing> keyRingOf(metart_context *c, int32_t mask);

} // namespace metart::comm

#endif // METART_SRC_COMM_KEYRINGS_H
