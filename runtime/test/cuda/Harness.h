//===- Harness.h - a kernel on the CPU and the CUDA backend -----*- C++ -*-===//
//
// A case is a list of host tensors and a call of the C API over their
// descriptors. The harness copies the tensors into buffers of a CPU and of
// a CUDA context, makes the call on each, copies every tensor back and
// compares: both calls must return the same status (and message), integer
// tensors must be equal, float ones equal within a relative tolerance.
// Tensors that the call overwrites start as NaN on the device, so an
// element the CUDA kernel forgets to write cannot pass. Without a CUDA
// device every test of the fixture skips.
//
//===----------------------------------------------------------------------===//

#ifndef METART_TEST_CUDA_HARNESS_H
#define METART_TEST_CUDA_HARNESS_H

#include "metart/metart.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace metart::test {

/// A dense tensor in host memory.
struct HostTensor {
  metart_dtype dtype = METART_F32;
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;

  HostTensor() = default;
  /// Zeros of `dtype` and `shape`.
  HostTensor(metart_dtype dtype, std::vector<int64_t> shape);

  int64_t count() const;
  double at(int64_t i) const;
  void set(int64_t i, double value);
};

/// Relative tolerances by element type: |cuda - cpu| <= tol max(1, |cpu|).
/// bf16 and f16 (`reduced`): results rounded once from f32 on both sides
/// may differ by an ulp (2^-8 relative for bf16).
struct Tolerance {
  double f32 = 1e-5, f64 = 1e-12, reduced = 1e-2;
};
/// The tolerance of products (cuBLAS sums in another order than OpenBLAS).
inline constexpr Tolerance kGemmTolerance{1e-4, 1e-12, 1e-2};

/// The tensors of a call, its descriptors as the call sees them.
using Call = std::function<metart_status(metart_context *,
                                         const std::vector<metart_tensor> &)>;

/// What one backend made of a case.
struct Outcome {
  metart_status status = METART_OK;
  std::string error;
  std::vector<HostTensor> tensors;
};

/// A convolution case: input and weight shapes (tasks' weights when the
/// weight has 5 dimensions), strides and paddings.
struct ConvCase {
  std::vector<int64_t> x, weight;
  int64_t stride[2], padding[2];
};

/// The output shape of a convolution case.
std::vector<int64_t> convOutput(const ConvCase &c);

/// The fixture: a CPU and a CUDA context and random inputs.
class CudaVsCpu : public ::testing::Test {
protected:
  void SetUp() override;
  void TearDown() override;

  /// Uniform values in [lo, hi).
  HostTensor random(metart_dtype dtype, std::vector<int64_t> shape,
                    double lo = -1, double hi = 1);
  /// Uniform integers in [0, bound).
  HostTensor indices(metart_dtype dtype, std::vector<int64_t> shape,
                     int64_t bound);

  /// Runs `call` over `tensors` on `context`; the tensors listed in
  /// `overwritten` start as `poison` there.
  Outcome runOn(metart_context *context, const std::vector<HostTensor> &tensors,
                const std::vector<int> &overwritten, double poison,
                const Call &call);
  /// Runs `call` on both backends and expects the same outcome.
  void expectSame(const std::vector<HostTensor> &tensors,
                  const std::vector<int> &overwritten, const Call &call,
                  Tolerance tolerance = Tolerance());

  metart_context *cpu = nullptr;
  metart_context *cuda = nullptr;
  std::mt19937_64 rng{20261122};
};

} // namespace metart::test

#endif // METART_TEST_CUDA_HARNESS_H
