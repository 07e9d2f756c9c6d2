//===- OneDnnConvolution.cpp - convolutions through oneDNN ----------------===//
//
// One primitive per direction and shape (images per slice, channels, image,
// kernel, stride, padding), created on first use and kept. A primitive's
// operands are described to oneDNN with `format_tag::any`, so that it picks
// its fastest layouts; an operand whose layout differs from metart's plain
// one is reordered through the workspace (inputs before the call, results
// after it). The primitive's scratchpad comes from the workspace too, so
// that nothing is allocated per call. Slices (tasks with their own weights)
// run one after another, each on its images.
//
//===----------------------------------------------------------------------===//

#include "OneDnn.h"

#include "../Arena.h"
#include "CpuBackend.h"
#include "Parallel.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <unordered_map>
#include <vector>

// oneDNN runs its loops on OpenMP threads (Debian's build); their number is
// set to the backend's so that ranks sharing a node do not oversubscribe it.
extern "C" void omp_set_num_threads(int);

namespace metart::cpu {

namespace {

using dnnl::memory;
using Tag = memory::format_tag;

enum class Direction { Forward, BackwardInput, BackwardWeight };

/// A primitive's operand: metart's plain layout and the one oneDNN chose.
struct Operand {
  int argument;
  memory::desc plain, chosen;
  bool input;
  bool reordered() const { return plain != chosen; }
};

/// A primitive with its operands and the reorders between layouts.
struct Kernel {
  dnnl::primitive primitive;
  std::string implementation;
  std::vector<Operand> operands;
  std::vector<dnnl::reorder> reorders; // one per operand (empty if none)
  memory::desc scratchpad;
};

using Key = std::array<int64_t, 15>;

Key keyOf(Direction direction, const ConvSizes &s, bool bias) {
  return {static_cast<int64_t>(direction),
          s.imagesPerSlice,
          s.channels,
          s.height,
          s.width,
          s.outChannels,
          s.kernelH,
          s.kernelW,
          s.strideH,
          s.strideW,
          s.padH,
          s.padW,
          bias ? 1 : 0,
          s.outHeight,
          s.outWidth};
}

/// The descriptions of one slice's operands in metart's layouts.
struct Shapes {
  memory::dims source, weights, bias, destination, strides, padding, paddingEnd;

  explicit Shapes(const ConvSizes &s)
      : source{s.imagesPerSlice, s.channels, s.height, s.width},
        weights{s.outChannels, s.channels, s.kernelH, s.kernelW},
        bias{s.outChannels}, destination{s.imagesPerSlice, s.outChannels,
                                         s.outHeight, s.outWidth},
        strides{s.strideH, s.strideW}, padding{s.padH, s.padW},
        // Rows of the padded input past the last window are not read; the
        // end padding oneDNN checks the output size against excludes them.
        paddingEnd{
            (s.outHeight - 1) * s.strideH + s.kernelH - s.height - s.padH,
            (s.outWidth - 1) * s.strideW + s.kernelW - s.width - s.padW} {}

  static memory::desc any(const memory::dims &dims) {
    return memory::desc(dims, memory::data_type::f32, Tag::any);
  }
  static memory::desc plain(const memory::dims &dims, Tag tag) {
    return memory::desc(dims, memory::data_type::f32, tag);
  }
};

size_t roundUp(size_t bytes) {
  return (bytes + Arena::kAlignment - 1) / Arena::kAlignment *
         Arena::kAlignment;
}

} // namespace

struct OneDnnConvolutions::State {
  bool enabled = true, forced = false;
  int threads = 0;
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  std::map<Key, std::unique_ptr<Kernel>> kernels;
  std::map<Key, bool> usable;

  dnnl::convolution_forward::primitive_desc
  forwardDescription(const ConvSizes &s, bool bias) {
    Shapes d(s);
    dnnl::primitive_attr attributes;
    attributes.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    auto description =
        bias ? dnnl::convolution_forward::desc(
                   dnnl::prop_kind::forward_training,
                   dnnl::algorithm::convolution_direct, Shapes::any(d.source),
                   Shapes::any(d.weights), Shapes::plain(d.bias, Tag::x),
                   Shapes::any(d.destination), d.strides, d.padding,
                   d.paddingEnd)
             : dnnl::convolution_forward::desc(
                   dnnl::prop_kind::forward_training,
                   dnnl::algorithm::convolution_direct, Shapes::any(d.source),
                   Shapes::any(d.weights), Shapes::any(d.destination),
                   d.strides, d.padding, d.paddingEnd);
    return {description, attributes, engine};
  }

  /// Makes `description`'s primitive `kernel`'s.
  template <typename Primitive, typename Description>
  static void adopt(Kernel &kernel, const Description &description) {
    kernel.primitive = Primitive(description);
    kernel.implementation = description.impl_info_str();
    kernel.scratchpad = description.scratchpad_desc();
  }

  /// The kernel of `direction` for these sizes, created on first use.
  Kernel &kernel(Direction direction, const ConvSizes &s, bool bias) {
    std::unique_ptr<Kernel> &slot = kernels[keyOf(direction, s, bias)];
    if (!slot)
      slot = create(direction, s, bias);
    return *slot;
  }

  std::unique_ptr<Kernel> create(Direction direction, const ConvSizes &s,
                                 bool bias) {
    Shapes d(s);
    memory::desc source = Shapes::plain(d.source, Tag::nchw),
                 weights = Shapes::plain(d.weights, Tag::oihw),
                 destination = Shapes::plain(d.destination, Tag::nchw);
    auto kernel = std::make_unique<Kernel>();
    dnnl::primitive_attr attributes;
    attributes.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    auto forward = forwardDescription(s, bias);
    switch (direction) {
    case Direction::Forward:
      adopt<dnnl::convolution_forward>(*kernel, forward);
      kernel->operands = {
          {DNNL_ARG_SRC, source, forward.src_desc(), true},
          {DNNL_ARG_WEIGHTS, weights, forward.weights_desc(), true},
          {DNNL_ARG_DST, destination, forward.dst_desc(), false}};
      if (bias) {
        memory::desc plainBias = Shapes::plain(d.bias, Tag::x);
        kernel->operands.push_back({DNNL_ARG_BIAS, plainBias, plainBias, true});
      }
      break;
    case Direction::BackwardInput: {
      dnnl::convolution_backward_data::primitive_desc backward(
          dnnl::convolution_backward_data::desc(
              dnnl::algorithm::convolution_direct, Shapes::any(d.source),
              Shapes::any(d.weights), Shapes::any(d.destination), d.strides,
              d.padding, d.paddingEnd),
          attributes, engine, forward);
      adopt<dnnl::convolution_backward_data>(*kernel, backward);
      kernel->operands = {
          {DNNL_ARG_DIFF_DST, destination, backward.diff_dst_desc(), true},
          {DNNL_ARG_WEIGHTS, weights, backward.weights_desc(), true},
          {DNNL_ARG_DIFF_SRC, source, backward.diff_src_desc(), false}};
      break;
    }
    case Direction::BackwardWeight: {
      dnnl::convolution_backward_weights::primitive_desc backward(
          dnnl::convolution_backward_weights::desc(
              dnnl::algorithm::convolution_direct, Shapes::any(d.source),
              Shapes::any(d.weights), Shapes::any(d.destination), d.strides,
              d.padding, d.paddingEnd),
          attributes, engine, forward);
      adopt<dnnl::convolution_backward_weights>(*kernel, backward);
      kernel->operands = {
          {DNNL_ARG_SRC, source, backward.src_desc(), true},
          {DNNL_ARG_DIFF_DST, destination, backward.diff_dst_desc(), true},
          {DNNL_ARG_DIFF_WEIGHTS, weights, backward.diff_weights_desc(),
           false}};
      break;
    }
    }
    for (const Operand &operand : kernel->operands) {
      if (!operand.reordered()) {
        kernel->reorders.emplace_back();
        continue;
      }
      memory::desc from = operand.input ? operand.plain : operand.chosen;
      memory::desc to = operand.input ? operand.chosen : operand.plain;
      kernel->reorders.emplace_back(
          dnnl::reorder::primitive_desc(engine, from, engine, to));
    }
    return kernel;
  }

  /// Runs `kernel` on one slice: `pointers[i]` holds operand i in metart's
  /// layout.
  KernelStatus run(Kernel &kernel, Workspace &workspace,
                   const std::vector<void *> &pointers) {
    size_t bytes = roundUp(kernel.scratchpad.get_size());
    for (const Operand &operand : kernel.operands)
      if (operand.reordered())
        bytes += roundUp(operand.chosen.get_size());
    char *space = static_cast<char *>(workspace.get(bytes));
    if (!space && bytes > 0)
      return workspaceExhausted(bytes);
    std::unordered_map<int, memory> arguments;
    std::vector<memory> plain(kernel.operands.size());
    size_t offset = 0;
    for (size_t i = 0; i < kernel.operands.size(); ++i) {
      const Operand &operand = kernel.operands[i];
      plain[i] = memory(operand.plain, engine, pointers[i]);
      if (!operand.reordered()) {
        arguments.insert({operand.argument, plain[i]});
        continue;
      }
      memory chosen(operand.chosen, engine, space + offset);
      offset += roundUp(operand.chosen.get_size());
      if (operand.input)
        kernel.reorders[i].execute(stream, plain[i], chosen);
      arguments.insert({operand.argument, chosen});
    }
    arguments.insert({DNNL_ARG_SCRATCHPAD,
                      memory(kernel.scratchpad, engine, space + offset)});
    kernel.primitive.execute(stream, arguments);
    for (size_t i = 0; i < kernel.operands.size(); ++i) {
      const Operand &operand = kernel.operands[i];
      if (operand.reordered() && !operand.input)
        kernel.reorders[i].execute(stream, arguments.at(operand.argument),
                                   plain[i]);
    }
    stream.wait();
    return KernelStatus::ok();
  }

  /// Runs the kernel of `direction` on every slice with images;
  /// `pointersOf(slice)` gives the slice's operands.
  template <typename PointersOf>
  KernelStatus runSlices(Direction direction, const ConvSizes &s, bool bias,
                         Workspace &workspace, PointersOf pointersOf) {
    if (s.imagesPerSlice == 0)
      return KernelStatus::ok();
    omp_set_num_threads(threads > 0 ? threads : parallelThreads());
    try {
      Kernel &k = kernel(direction, s, bias);
      for (int64_t slice = 0; slice < s.slices; ++slice) {
        KernelStatus status = run(k, workspace, pointersOf(slice));
        if (status.failed())
          return status;
      }
    } catch (const dnnl::error &e) {
      return {METART_ERROR_BACKEND,
              std::string("oneDNN convolution failed: ") + e.what()};
    }
    return KernelStatus::ok();
  }
};

OneDnnConvolutions::OneDnnConvolutions() : state(std::make_unique<State>()) {
  const char *choice = std::getenv("METART_CONVOLUTION");
  if (!choice || !*choice || std::strcmp(choice, "auto") == 0)
    return;
  if (std::strcmp(choice, "onednn") == 0)
    state->forced = true;
  else if (std::strcmp(choice, "im2col") == 0)
    state->enabled = false;
  else if (std::strcmp(choice, "cudnn") == 0)
    return; // the CUDA backend's library: measured here
  else
    std::fprintf(stderr,
                 "metart: warning: ignoring METART_CONVOLUTION='%s' (expected "
                 "auto, onednn, cudnn or im2col)\n",
                 choice);
}

bool OneDnnConvolutions::forced() const { return state->forced; }

void OneDnnConvolutions::setThreads(int threads) { state->threads = threads; }

OneDnnConvolutions::~OneDnnConvolutions() = default;

bool OneDnnConvolutions::handles(metart_dtype dtype, const ConvSizes &sizes) {
  if (!state->enabled || dtype != METART_F32 || sizes.imagesPerSlice == 0)
    return false;
  Key key = keyOf(Direction::Forward, sizes, false);
  auto found = state->usable.find(key);
  if (found != state->usable.end())
    return found->second;
  bool usable = false;
  try {
    std::string name = state->forwardDescription(sizes, false).impl_info_str();
    usable = name.rfind("ref", 0) != 0;
  } catch (const dnnl::error &) {
    // oneDNN rejects the shape: im2col computes it.
  }
  state->usable[key] = usable;
  return usable;
}

std::string OneDnnConvolutions::implementation(const ConvSizes &sizes) {
  if (!handles(METART_F32, sizes))
    return "";
  return state->kernel(Direction::Forward, sizes, false).implementation;
}

KernelStatus OneDnnConvolutions::forward(const ConvSizes &s,
                                         Workspace &workspace, const float *x,
                                         const float *weight, const float *bias,
                                         float *y) {
  int64_t image = s.channels * s.height * s.width;
  int64_t output = s.outChannels * s.outHeight * s.outWidth;
  int64_t filters = s.outChannels * s.channels * s.kernelH * s.kernelW;
  return state->runSlices(
      Direction::Forward, s, bias != nullptr, workspace, [&](int64_t slice) {
        std::vector<void *> pointers = {
            const_cast<float *>(x + slice * s.imagesPerSlice * image),
            const_cast<float *>(weight + slice * filters),
            y + slice * s.imagesPerSlice * output};
        if (bias)
          pointers.push_back(const_cast<float *>(bias + slice * s.outChannels));
        return pointers;
      });
}

KernelStatus OneDnnConvolutions::backwardInput(const ConvSizes &s,
                                               Workspace &workspace,
                                               const float *grad,
                                               const float *weight, float *y) {
  int64_t image = s.channels * s.height * s.width;
  int64_t output = s.outChannels * s.outHeight * s.outWidth;
  int64_t filters = s.outChannels * s.channels * s.kernelH * s.kernelW;
  return state->runSlices(
      Direction::BackwardInput, s, false, workspace, [&](int64_t slice) {
        return std::vector<void *>{
            const_cast<float *>(grad + slice * s.imagesPerSlice * output),
            const_cast<float *>(weight + slice * filters),
            y + slice * s.imagesPerSlice * image};
      });
}

KernelStatus OneDnnConvolutions::backwardWeight(const ConvSizes &s,
                                                Workspace &workspace,
                                                const float *x,
                                                const float *grad, float *y) {
  int64_t image = s.channels * s.height * s.width;
  int64_t output = s.outChannels * s.outHeight * s.outWidth;
  int64_t filters = s.outChannels * s.channels * s.kernelH * s.kernelW;
  // Slices without images (an empty batch) get a zero gradient.
  if (s.imagesPerSlice == 0) {
    std::fill(y, y + s.slices * filters, 0.0f);
    return KernelStatus::ok();
  }
  return state->runSlices(
      Direction::BackwardWeight, s, false, workspace, [&](int64_t slice) {
        return std::vector<void *>{
            const_cast<float *>(x + slice * s.imagesPerSlice * image),
            const_cast<float *>(grad + slice * s.imagesPerSlice * output),
            y + slice * filters};
      });
}

} // namespace metart::cpu
