//===- Harness.h - helpers of the collective tests --------------*- C++ -*-===//
//
// The collective tests run in every rank of a real MPI job (mpirun -np 4)
// and once without a launcher. Every rank runs the same collectives in the
// same order whatever fails, so a failure never hangs the job (EXPECT, not
// ASSERT, after the first collective of a test). Inputs are a pure function
// of (world rank, element), so each rank computes the naive reference of
// its group by itself.
//
//===----------------------------------------------------------------------===//

#ifndef METART_TEST_COMM_HARNESS_H
#define METART_TEST_COMM_HARNESS_H

#include "metart/comm.h"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

namespace metart::test {

using Mesh = std::array<int64_t, METART_NUM_AXES>;

/// Meshes with the world's number of ranks: every single axis, and 2x2
/// layouts when the world has 4 ranks.
std::vector<Mesh> meshesOfWorld();

/// "task=2 x data=2 x tensor=1 x pipeline=1".
std::string meshName(const Mesh &mesh);

/// A CPU context, destroyed at the end of the scope.
struct Context {
  metart_context *c = nullptr;
  Context();
  ~Context();
  operator metart_context *() const { return c; }
};

/// A CPU context with a communicator over `mesh` (expected to attach).
struct MeshContext : Context {
  explicit MeshContext(const Mesh &mesh);
};

/// The coordinates of world rank `rank` on `mesh`.
std::array<int64_t, METART_NUM_AXES> coordsOf(const Mesh &mesh, int64_t rank);

/// The world ranks of this rank's group of `mask`, in group order.
std::vector<int64_t> groupOf(const Mesh &mesh, int mask);

/// The input of world rank `rank`, element `i`: small integers, exact in
/// every element type, that differ between ranks and elements.
double inputValue(int64_t rank, int64_t i);

/// A host tensor of `dtype` with its descriptor (the CPU backend's memory
/// is host memory).
struct HostTensor {
  std::vector<int64_t> shape;
  int32_t dtype;
  std::vector<char> bytes;
  metart_tensor t;

  HostTensor(std::vector<int64_t> shape, int32_t dtype);
  int64_t size() const;
  double get(int64_t i) const;
  void set(int64_t i, double value);
  /// Fills with inputValue(rank, i).
  void fillInput(int64_t rank);
};

} // namespace metart::test

#endif // METART_TEST_COMM_HARNESS_H
