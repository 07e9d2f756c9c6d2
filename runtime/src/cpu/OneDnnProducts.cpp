//===- OneDnnProducts.cpp - matrix products through oneDNN ----------------===//
//
// One matmul primitive per product shape, created on first use and kept
// with its memory objects, whose data pointers are set per call. Operands
// stay in metart's row-major layout: transposes are strides, a batch is
// the leading dimension, and a shared bias broadcasts over the batch and
// the rows.
//
//===----------------------------------------------------------------------===//

#include "OneDnnProducts.h"

#include "../Arena.h"
#include "Parallel.h"
#include "Workspace.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <unordered_map>

// As for convolutions (OneDnnConvolution.cpp): oneDNN's loops are OpenMP's.
extern "C" void omp_set_num_threads(int);

namespace metart::cpu {

namespace {

using dnnl::memory;

using Key = std::array<int64_t, 8>;

Key keyOf(const ProductSizes &s) {
  return {s.batch,      s.m,          s.n,    s.k,
          s.transposeA, s.transposeB, s.bias, s.biasPerEntry};
}

/// A `[batch, rows, cols]` operand stored row-major, or transposed (each
/// entry stored `[cols, rows]`).
memory::desc matrix(int64_t batch, int64_t rows, int64_t cols,
                    bool transposed) {
  memory::dims strides = transposed ? memory::dims{rows * cols, 1, rows}
                                    : memory::dims{rows * cols, cols, 1};
  return memory::desc({batch, rows, cols}, memory::data_type::f32, strides);
}

struct Kernel {
  dnnl::matmul primitive;
  std::string implementation;
  memory a, b, bias, y, scratchpad;
  std::unordered_map<int, memory> arguments;
};

/// y_i += bias_i over the rows of each entry.
void addBiasPerEntry(const ProductSizes &s, const float *bias, float *y) {
  for (int64_t entry = 0; entry < s.batch; ++entry) {
    const float *b = bias + entry * s.n;
    float *rows = y + entry * s.m * s.n;
    for (int64_t r = 0; r < s.m; ++r)
      for (int64_t j = 0; j < s.n; ++j)
        rows[r * s.n + j] += b[j];
  }
}

} // namespace

struct OneDnnProducts::State {
  bool enabled = true;
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  std::map<Key, std::unique_ptr<Kernel>> kernels;
  std::map<Key, bool> usable;

  dnnl::matmul::primitive_desc description(const ProductSizes &s) {
    memory::desc a = matrix(s.batch, s.m, s.k, s.transposeA),
                 b = matrix(s.batch, s.k, s.n, s.transposeB),
                 y = matrix(s.batch, s.m, s.n, false);
    dnnl::primitive_attr attributes;
    attributes.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    // A bias per batch entry is added after the product: oneDNN's JIT
    // kernels take only a bias shared by the batch (the reference kernel
    // takes more), and an added operand (a binary post-op) costs 1-4 us
    // more per call than the loop.
    if (!s.bias || s.biasPerEntry)
      return {dnnl::matmul::desc(a, b, y), attributes, engine};
    memory::desc bias({1, 1, s.n}, memory::data_type::f32,
                      memory::format_tag::abc);
    return {dnnl::matmul::desc(a, b, bias, y), attributes, engine};
  }

  Kernel &kernel(const ProductSizes &s) {
    std::unique_ptr<Kernel> &slot = kernels[keyOf(s)];
    if (slot)
      return *slot;
    auto pd = description(s);
    slot = std::make_unique<Kernel>();
    slot->primitive = dnnl::matmul(pd);
    slot->implementation = pd.impl_info_str();
    auto bind = [&](memory &m, int argument, const memory::desc &d) {
      m = memory(d, engine, DNNL_MEMORY_NONE);
      slot->arguments.insert({argument, m});
    };
    bind(slot->a, DNNL_ARG_SRC, pd.src_desc());
    bind(slot->b, DNNL_ARG_WEIGHTS, pd.weights_desc());
    bind(slot->y, DNNL_ARG_DST, pd.dst_desc());
    bind(slot->scratchpad, DNNL_ARG_SCRATCHPAD, pd.scratchpad_desc());
    if (s.bias && !s.biasPerEntry)
      bind(slot->bias, DNNL_ARG_BIAS, pd.bias_desc());
    return *slot;
  }
};

OneDnnProducts::OneDnnProducts() : state(std::make_unique<State>()) {
  const char *choice = std::getenv("METART_MATMUL");
  if (!choice || !*choice || std::strcmp(choice, "onednn") == 0)
    return;
  if (std::strcmp(choice, "blas") == 0)
    state->enabled = false;
  else
    std::fprintf(stderr,
                 "metart: warning: ignoring METART_MATMUL='%s' (expected "
                 "onednn or blas)\n",
                 choice);
}

OneDnnProducts::~OneDnnProducts() = default;

bool OneDnnProducts::handles(metart_dtype dtype, const ProductSizes &s) {
  if (!state->enabled || dtype != METART_F32 || s.batch == 0 || s.m == 0 ||
      s.n == 0 || s.k == 0)
    return false;
  Key key = keyOf(s);
  auto found = state->usable.find(key);
  if (found != state->usable.end())
    return found->second;
  bool usable = false;
  try {
    usable =
        std::string(state->description(s).impl_info_str()).rfind("ref", 0) != 0;
  } catch (const dnnl::error &) {
    // oneDNN rejects the product: OpenBLAS computes it.
  }
  state->usable[key] = usable;
  return usable;
}

std::string OneDnnProducts::implementation(const ProductSizes &s) {
  if (!handles(METART_F32, s))
    return "";
  return state->kernel(s).implementation;
}

KernelStatus OneDnnProducts::run(const ProductSizes &s, Workspace &workspace,
                                 const float *a, const float *b,
                                 const float *bias, float *y) {
  try {
    Kernel &k = state->kernel(s);
    size_t bytes = k.scratchpad.get_desc().get_size();
    void *scratch = bytes > 0 ? workspace.get(bytes) : nullptr;
    if (bytes > 0 && !scratch)
      return workspaceExhausted(bytes);
    k.a.set_data_handle(const_cast<float *>(a));
    k.b.set_data_handle(const_cast<float *>(b));
    k.y.set_data_handle(y);
    k.scratchpad.set_data_handle(scratch);
    if (s.bias && !s.biasPerEntry)
      k.bias.set_data_handle(const_cast<float *>(bias));
    int64_t work = s.batch * s.m * s.n * s.k;
    omp_set_num_threads(work < kSmallProduct ? 1 : parallelThreads());
    k.primitive.execute(state->stream, k.arguments);
    state->stream.wait();
    if (s.bias && s.biasPerEntry)
      addBiasPerEntry(s, bias, y);
  } catch (const dnnl::error &e) {
    return {METART_ERROR_BACKEND,
            std::string("oneDNN matrix product failed: ") + e.what()};
  }
  return KernelStatus::ok();
}

} // namespace metart::cpu
