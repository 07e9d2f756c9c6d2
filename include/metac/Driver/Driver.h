//===- Driver.h - the metac compiler driver ---------------------*- C++ -*-===//
//
// `metac`'s main as a library function, so the tool itself is a thin wrapper
// and tests and other tools can drive the compiler in-process.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_DRIVER_DRIVER_H
#define METAC_DRIVER_DRIVER_H

#include <cstdint>

namespace metac {

/// Runs the `metac` command line; returns the process exit code.
int metacMain(int argc, char **argv);

/// `metac cluster FILE...`: reads cluster descriptions and prints what each
/// describes, or the errors; returns the process exit code.
int clusterMain(int argc, char **argv);

/// `metac calibrate -o FILE ...` (argv[1] is "calibrate"): measures this
/// machine on every rank of the job and writes a cluster description;
/// returns the process exit code.
int calibrateMain(int argc, char **argv);

/// `metac bench MATRIX.yaml -o DIR`: runs a benchmark matrix and writes its
/// report (lib/Driver/BenchCommand.cpp).
int benchMain(int argc, char **argv);

/// Runs the command line `argv` again as `np` processes under mpirun on
/// this machine and returns its exit code; -1 when this process already is
/// one of `np` ranks (go on as that rank).
int launchWithMpirun(int argc, char **argv, int64_t np);

} // namespace metac

#endif // METAC_DRIVER_DRIVER_H
