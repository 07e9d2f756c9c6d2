//===- CudaVsCpuAttentionTest.cpp - fused attention, CUDA vs CPU ----------===//
//
// The CUDA attention kernels (chunks of queries through cuBLAS) against
// the CPU's tiled ones, which are checked against the interpreter and by
// finite differences: forward, backward and double backward, with and
// without the causal mask, every subset of cotangents asked for and given,
// in f64, f32 and bf16, in one chunk and in many (rows and batch items
// split by a small METART_ATTENTION_CHUNK_BYTES).
//
//===----------------------------------------------------------------------===//

#include "Harness.h"

#include <cmath>
#include <cstdlib>
#include <string>

using namespace metart::test;

namespace {

struct Shape {
  int64_t batch, length, keys, width, values;
  bool causal;
};

/// bf16: P and the other query x key terms are rounded to bf16 before
/// their products on CUDA (as FlashAttention does), kept in f32 on the CPU.
constexpr Tolerance kAttentionTolerance{2e-4, 1e-11, 3e-2};

class CudaVsCpuAttention : public CudaVsCpu {
protected:
  void TearDown() override {
    unsetenv("METART_ATTENTION_CHUNK_BYTES");
    CudaVsCpu::TearDown();
  }

  std::vector<HostTensor> operands(metart_dtype dtype, const Shape &s) {
    return {random(dtype, {s.batch, s.length, s.width}),
            random(dtype, {s.batch, s.keys, s.width}),
            random(dtype, {s.batch, s.keys, s.values}),
            random(dtype, {s.batch, s.length, s.values})};
  }

  void forward(metart_dtype dtype, const Shape &s) {
    std::vector<HostTensor> t = operands(dtype, s);
    t[3] = HostTensor(dtype, {s.batch, s.length, s.values});
    double scale = 1 / std::sqrt(double(s.width));
    expectSame(
        t, {3},
        [&](metart_context *c, const std::vector<metart_tensor> &d) {
          return metart_nn_attention(c, &d[0], &d[1], &d[2], scale, s.causal,
                                     &d[3]);
        },
        kAttentionTolerance);
  }

  /// The cotangents in `wanted` (bits: dq, dk, dv).
  void backward(metart_dtype dtype, const Shape &s, int wanted) {
    std::vector<HostTensor> t = operands(dtype, s);
    t.push_back(HostTensor(dtype, {s.batch, s.length, s.width}));
    t.push_back(HostTensor(dtype, {s.batch, s.keys, s.width}));
    t.push_back(HostTensor(dtype, {s.batch, s.keys, s.values}));
    double scale = 0.7;
    // Only what is asked for is written: the rest stays zero on both.
    std::vector<int> written;
    for (int i = 0; i < 3; ++i)
      if (wanted & (1 << i))
        written.push_back(4 + i);
    expectSame(
        t, written,
        [&](metart_context *c, const std::vector<metart_tensor> &d) {
          return metart_nn_attention_backward(
              c, &d[0], &d[1], &d[2], &d[3], scale, s.causal,
              wanted & 1 ? &d[4] : nullptr, wanted & 2 ? &d[5] : nullptr,
              wanted & 4 ? &d[6] : nullptr);
        },
        kAttentionTolerance);
  }

  /// Given the cotangents in `given` (bits: gq, gk, gv), every result.
  void doubleBackward(metart_dtype dtype, const Shape &s, int given) {
    std::vector<HostTensor> t = operands(dtype, s);
    t.push_back(random(dtype, {s.batch, s.length, s.width}));
    t.push_back(random(dtype, {s.batch, s.keys, s.width}));
    t.push_back(random(dtype, {s.batch, s.keys, s.values}));
    t.push_back(HostTensor(dtype, {s.batch, s.length, s.width}));
    t.push_back(HostTensor(dtype, {s.batch, s.keys, s.width}));
    t.push_back(HostTensor(dtype, {s.batch, s.keys, s.values}));
    t.push_back(HostTensor(dtype, {s.batch, s.length, s.values}));
    double scale = 0.7;
    expectSame(
        t, {7, 8, 9, 10},
        [&](metart_context *c, const std::vector<metart_tensor> &d) {
          return metart_nn_attention_double_backward(
              c, &d[0], &d[1], &d[2], &d[3], given & 1 ? &d[4] : nullptr,
              given & 2 ? &d[5] : nullptr, given & 4 ? &d[6] : nullptr, scale,
              s.causal, &d[7], &d[8], &d[9], &d[10]);
        },
        kAttentionTolerance);
  }

  void everyKernel(metart_dtype dtype, const Shape &s) {
    SCOPED_TRACE("dtype " + std::to_string(dtype) + ", causal " +
                 std::to_string(s.causal));
    forward(dtype, s);
    for (int wanted : {7, 1, 2, 4})
      backward(dtype, s, wanted);
    for (int given : {7, 1, 2, 4, 3})
      doubleBackward(dtype, s, given);
  }
};

const Shape kShapes[] = {{3, 70, 70, 16, 24, true}, {3, 70, 45, 16, 24, false}};

TEST_F(CudaVsCpuAttention, OneChunk) {
  for (metart_dtype dtype : {METART_F64, METART_F32, METART_BF16})
    for (const Shape &s : kShapes)
      everyKernel(dtype, s);
}

// 20 KB: chunks of 64 query rows (the causal first one sees 64 keys, the
// second all 70) of one batch item each; 150 KB: the f32 double backward
// (16 bytes per query and key) in chunks of 64 rows of two batch items
// and one of the third, its forward in one chunk.
TEST_F(CudaVsCpuAttention, ManyChunks) {
  setenv("METART_ATTENTION_CHUNK_BYTES", "20000", 1);
  for (metart_dtype dtype : {METART_F64, METART_F32, METART_BF16})
    for (const Shape &s : kShapes)
      everyKernel(dtype, s);
  setenv("METART_ATTENTION_CHUNK_BYTES", "150000", 1);
  for (const Shape &s : kShapes)
    everyKernel(METART_F32, s);
}

} // namespace
