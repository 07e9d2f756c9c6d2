//===- FuzzClusterDescription.cpp - libFuzzer target for cluster files ----===//
//
// Every input is read as a cluster description (`metac plan --cluster`,
// `metac calibrate` output). Besides the sanitizers' checks, the target
// asserts:
//  - a refused file has an `error:` diagnostic;
//  - an accepted file written back (writeClusterDescription) reads again,
//    and writing that gives the same text (the round trip is stable).
//
//===----------------------------------------------------------------------===//

#include "metac/Planner/ClusterDescription.h"

#include "llvm/Support/MemoryBuffer.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

[[noreturn]] void fail(const char *what) {
  std::fprintf(stderr, "property violated: %s\n", what);
  std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  std::string diagnostics;
  llvm::raw_string_ostream errors(diagnostics);
  std::optional<metac::planner::ClusterDescription> cluster =
      metac::planner::readClusterDescription(
          llvm::MemoryBufferRef(text, "fuzz.yaml"), errors);
  if (!cluster) {
    if (diagnostics.find("error:") == std::string::npos)
      fail("a refused description has no error");
    return 0;
  }
  std::string first;
  llvm::raw_string_ostream firstOut(first);
  metac::planner::writeClusterDescription(*cluster, firstOut);
  std::string again;
  llvm::raw_string_ostream againErrors(again);
  std::optional<metac::planner::ClusterDescription> reread =
      metac::planner::readClusterDescription(
          llvm::MemoryBufferRef(first, "written.yaml"), againErrors);
  if (!reread) {
    std::fprintf(stderr, "%s\n---\n%s\n", first.c_str(), again.c_str());
    fail("a description written back does not read");
  }
  std::string second;
  llvm::raw_string_ostream secondOut(second);
  metac::planner::writeClusterDescription(*reread, secondOut);
  if (first != second) {
    std::fprintf(stderr, "%s\n---\n%s\n", first.c_str(), second.c_str());
    fail("writing a description read back changes it");
  }
  return 0;
}
