//===- Harness.cpp - running a kernel on the CPU and CUDA backends --------===//

#include "Harness.h"

#include "Precision.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace metart::test {

static size_t sizeOf(metart_dtype dtype) {
  if (dtype == METART_BF16 || dtype == METART_F16)
    return 2;
  return dtype == METART_F64 || dtype == METART_I64 ? 8 : 4;
}

HostTensor::HostTensor(metart_dtype dtype, std::vector<int64_t> shape)
    : dtype(dtype), shape(std::move(shape)) {
  bytes.assign(static_cast<size_t>(count()) * sizeOf(dtype), 0);
}

int64_t HostTensor::count() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

double HostTensor::at(int64_t i) const {
  const unsigned char *p = bytes.data() + i * sizeOf(dtype);
  switch (dtype) {
  case METART_F32: {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
  case METART_F64: {
    double v;
    std::memcpy(&v, p, 8);
    return v;
  }
  case METART_I32: {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  case METART_I64: {
    int64_t v;
    std::memcpy(&v, p, 8);
    return static_cast<double>(v);
  }
  case METART_BF16:
  case METART_F16: {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return dtype == METART_BF16 ? bf16ToFloat(v) : f16ToFloat(v);
  }
  }
  return 0;
}

void HostTensor::set(int64_t i, double value) {
  unsigned char *p = bytes.data() + i * sizeOf(dtype);
  switch (dtype) {
  case METART_F32: {
    float v = static_cast<float>(value);
    std::memcpy(p, &v, 4);
    return;
  }
  case METART_F64:
    std::memcpy(p, &value, 8);
    return;
  case METART_I32: {
    int32_t v = static_cast<int32_t>(value);
    std::memcpy(p, &v, 4);
    return;
  }
  case METART_I64: {
    int64_t v = static_cast<int64_t>(value);
    std::memcpy(p, &v, 8);
    return;
  }
  case METART_BF16:
  case METART_F16: {
    float f = static_cast<float>(value);
    uint16_t v = dtype == METART_BF16 ? floatToBf16(f) : floatToF16(f);
    std::memcpy(p, &v, 2);
    return;
  }
  }
}

void CudaVsCpu::SetUp() {
  if (!metart_backend_available(METART_BACKEND_CUDA))
    GTEST_SKIP() << "no CUDA device";
  metart_context_options cpuOptions = {METART_BACKEND_CPU, 0, 0};
  metart_context_options cudaOptions = {METART_BACKEND_CUDA, 0, 0};
  ASSERT_EQ(metart_context_create(&cpuOptions, &cpu), METART_OK);
  ASSERT_EQ(metart_context_create(&cudaOptions, &cuda), METART_OK)
      << metart_context_last_error(nullptr);
}

void CudaVsCpu::TearDown() {
  metart_context_destroy(cuda);
  metart_context_destroy(cpu);
}

HostTensor CudaVsCpu::random(metart_dtype dtype, std::vector<int64_t> shape,
                             double lo, double hi) {
  HostTensor t(dtype, std::move(shape));
  std::uniform_real_distribution<double> uniform(lo, hi);
  for (int64_t i = 0; i < t.count(); ++i)
    t.set(i, uniform(rng));
  return t;
}

HostTensor CudaVsCpu::indices(metart_dtype dtype, std::vector<int64_t> shape,
                              int64_t bound) {
  HostTensor t(dtype, std::move(shape));
  std::uniform_int_distribution<int64_t> uniform(0, bound - 1);
  for (int64_t i = 0; i < t.count(); ++i)
    t.set(i, static_cast<double>(uniform(rng)));
  return t;
}

Outcome CudaVsCpu::runOn(metart_context *context,
                         const std::vector<HostTensor> &tensors,
                         const std::vector<int> &overwritten, double poison,
                         const Call &call) {
  Outcome outcome;
  outcome.tensors = tensors;
  std::vector<void *> buffers;
  std::vector<metart_tensor> descriptors;
  for (size_t i = 0; i < tensors.size(); ++i) {
    HostTensor initial = tensors[i];
    bool overwrite = false;
    for (int k : overwritten)
      overwrite |= k == static_cast<int>(i);
    if (overwrite && initial.dtype != METART_I32 && initial.dtype != METART_I64)
      for (int64_t e = 0; e < initial.count(); ++e)
        initial.set(e, poison);
    void *data = nullptr;
    EXPECT_EQ(metart_buffer_alloc(context, initial.bytes.size() + 1, &data),
              METART_OK);
    EXPECT_EQ(metart_copy_to_device(context, data, initial.bytes.data(),
                                    initial.bytes.size()),
              METART_OK);
    buffers.push_back(data);
    descriptors.push_back({data, initial.dtype,
                           static_cast<int32_t>(initial.shape.size()),
                           tensors[i].shape.data()});
  }
  outcome.status = call(context, descriptors);
  outcome.error = metart_context_last_error(context);
  EXPECT_EQ(metart_synchronize(context), METART_OK)
      << metart_context_last_error(context);
  for (size_t i = 0; i < tensors.size(); ++i) {
    HostTensor &t = outcome.tensors[i];
    EXPECT_EQ(metart_copy_to_host(context, t.bytes.data(), buffers[i],
                                  t.bytes.size()),
              METART_OK)
        << metart_context_last_error(context);
    metart_buffer_free(context, buffers[i]);
  }
  return outcome;
}

void CudaVsCpu::expectSame(const std::vector<HostTensor> &tensors,
                           const std::vector<int> &overwritten,
                           const Call &call, Tolerance tolerance) {
  Outcome expected = runOn(cpu, tensors, overwritten, 0.0, call);
  Outcome actual = runOn(cuda, tensors, overwritten,
                         std::numeric_limits<double>::quiet_NaN(), call);
  ASSERT_EQ(actual.status, expected.status)
      << "CUDA: " << actual.error << "\nCPU: " << expected.error;
  if (expected.status != METART_OK) {
    EXPECT_EQ(actual.error, expected.error);
    return;
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    const HostTensor &want = expected.tensors[i], &got = actual.tensors[i];
    bool reduced = want.dtype == METART_BF16 || want.dtype == METART_F16;
    bool isFloat =
        reduced || want.dtype == METART_F32 || want.dtype == METART_F64;
    double tol = want.dtype == METART_F64 ? tolerance.f64
                 : reduced                ? tolerance.reduced
                                          : tolerance.f32;
    int reported = 0;
    for (int64_t e = 0; e < want.count() && reported < 5; ++e) {
      double a = got.at(e), b = want.at(e);
      bool same = a == b || (std::isnan(a) && std::isnan(b));
      if (!same && isFloat)
        same = std::abs(a - b) <= tol * std::max(1.0, std::abs(b));
      if (!same) {
        ++reported;
        ADD_FAILURE() << "tensor " << i << " element " << e << ": CUDA " << a
                      << ", CPU " << b << " (difference " << a - b << ")";
      }
    }
  }
}

} // namespace metart::test

std::vector<int64_t> metart::test::convOutput(const ConvCase &c) {
  size_t r = c.x.size(), w = c.weight.size();
  std::vector<int64_t> y(c.x.begin(), c.x.end() - 3);
  y.push_back(c.weight[w - 4]);
  y.push_back((c.x[r - 2] + 2 * c.padding[0] - c.weight[w - 2]) / c.stride[0] +
              1);
  y.push_back((c.x[r - 1] + 2 * c.padding[1] - c.weight[w - 1]) / c.stride[1] +
              1);
  return y;
}
