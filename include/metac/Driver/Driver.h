//===- Driver.h - the metac compiler driver ---------------------*- C++ -*-===//
//
// `metac`'s main as a library function, so the tool itself is a thin wrapper
// and tests and other tools can drive the compiler in-process.
//
//===----------------------------------------------------------------------===//

#ifndef METAC_DRIVER_DRIVER_H
#define METAC_DRIVER_DRIVER_H

namespace metac {

/// Runs the `metac` command line; returns the process exit code.
int metacMain(int argc, char **argv);

/// `metac cluster FILE...`: reads cluster descriptions and prints what each
/// describes, or the errors; returns the process exit code.
int clusterMain(int argc, char **argv);

} // namespace metac

#endif // METAC_DRIVER_DRIVER_H
