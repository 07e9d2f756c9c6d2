//===- HostInfo.h - facts about this machine from /proc ---------*- C++ -*-===//

#ifndef METAC_BENCH_HOSTINFO_H
#define METAC_BENCH_HOSTINFO_H

#include "llvm/ADT/StringRef.h"

#include <string>

namespace metac::bench {

/// The first value of `key` in a `key : value` file such as /proc/cpuinfo
/// ("model name") or /proc/meminfo ("MemTotal"); empty when absent.
std::string procField(llvm::StringRef path, llvm::StringRef key);

} // namespace metac::bench

#endif // METAC_BENCH_HOSTINFO_H
