//===- ClusterCommand.cpp - `metac cluster FILE...` -----------------------===//
//
// Checks cluster descriptions (docs/planning.md) and says what they
// describe: the first thing a user does with a new cluster file.
//
//===----------------------------------------------------------------------===//

#include "metac/Driver/Driver.h"
#include "metac/Planner/ClusterDescription.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

int metac::clusterMain(int argc, char **argv) {
  if (argc < 2 || llvm::StringRef(argv[1]) == "--help") {
    (argc < 2 ? llvm::errs() : llvm::outs())
        << "usage: metac cluster FILE...\n"
           "  reads cluster descriptions (YAML, docs/planning.md) and prints "
           "what each describes\n";
    return argc < 2 ? 1 : 0;
  }
  int status = 0;
  for (int i = 1; i < argc; ++i) {
    std::optional<planner::ClusterDescription> cluster =
        planner::readClusterDescriptionFile(argv[i], llvm::errs());
    if (!cluster) {
      status = 1;
      continue;
    }
    planner::printClusterSummary(*cluster, llvm::outs());
  }
  return status;
}
