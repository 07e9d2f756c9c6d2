//===- Main.cpp - GoogleTest in every rank of an MPI job ------------------===//
//
// Joins the world before the tests and leaves it after. The exit code is
// this rank's; mpirun fails when any rank does.
//
//===----------------------------------------------------------------------===//

#include "metart/comm.h"

#include <gtest/gtest.h>

#include <cstdio>

int main(int argc, char **argv) {
  testing::InitGoogleTest(&argc, argv);
  if (metart_world_init() != METART_OK) {
    std::fprintf(stderr, "%s\n", metart_context_last_error(nullptr));
    return 1;
  }
  int result = RUN_ALL_TESTS();
  metart_world_finalize();
  return result;
}
