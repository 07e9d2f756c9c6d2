//===- Checkpoint.cpp - parameters and state to and from files ------------===//
//
// Safetensors files of the parameters (--init-params, --save-params) and
// checkpoints (the optimizer state, the iteration and, with dynamic loss
// scaling, the scale as well). ZeRO's state parts are gathered into whole
// tensors for a checkpoint and sliced again when it is resumed, so a
// checkpoint is the same file with or without sharding.
//
//===----------------------------------------------------------------------===//

#include "Trainer.h"
#include "metart/comm.h"
#include "metart/metart.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>

namespace metart::train {

std::string Trainer::stateName(size_t k) const {
  size_t n = program.num_params;
  if (k < n * program.state_per_param)
    return "optimizer." + std::to_string(k / n) + "." +
           program.params[k % n].name;
  return "optimizer.step";
}

Trainer::Holding Trainer::holdingOf(size_t t) const {
  size_t n = static_cast<size_t>(program.num_params);
  if (t >= n + n * static_cast<size_t>(program.state_per_param))
    return {}; // the step count
  const metart_param_spec &param = program.params[t % n];
  Holding holding;
  if (param.staged)
    holding.stage = param.stage;
  if (param.parts > 1) {
    holding.parts = param.parts;
    holding.mask = param.part_mask;
    holding.dim = param.part_dim;
  } else if (t >= n && program.zero_parts > 1 && program.zero_sharded &&
             program.zero_sharded[t % n]) {
    holding.parts = program.zero_parts;
    holding.mask = program.zero_mask;
    holding.flat = true;
  }
  return holding;
}

DeviceTensor Trainer::wholeOf(size_t t) const {
  size_t n = static_cast<size_t>(program.num_params);
  if (t >= n + n * static_cast<size_t>(program.state_per_param)) {
    DeviceTensor counter = state[t - n];
    counter.descriptor = {};
    return counter;
  }
  const metart_param_spec &param = program.params[t % n];
  DeviceTensor whole;
  whole.shape.assign(param.shape, param.shape + param.rank);
  whole.dtype = param.dtype;
  whole.bytes =
      static_cast<size_t>(whole.numElements()) * elementSize(param.dtype);
  return whole;
}

bool Trainer::contiguousPart(size_t t) const {
  Holding holding = holdingOf(t);
  if (holding.flat)
    return true;
  DeviceTensor whole = wholeOf(t);
  for (int32_t d = 0; d < holding.dim; ++d)
    if (whole.shape[d] != 1)
      return false;
  return true;
}

metart_status
Trainer::partRanges(size_t t,
                    std::vector<std::pair<int64_t, int64_t>> &ranges) {
  ranges.clear();
  DeviceTensor whole = wholeOf(t);
  Holding holding = holdingOf(t);
  if (!heldHere(t))
    return METART_OK;
  if (holding.parts <= 1) {
    ranges.push_back({0, whole.numElements()});
    return METART_OK;
  }
  int64_t position = 0, size = 1;
  if (metart_status s =
          metart_comm_group(context, holding.mask, &position, &size))
    return fail(s, "%s", metart_context_last_error(context));
  if (size != holding.parts)
    return fail(METART_ERROR_INVALID_ARGUMENT,
                "'%s' is held in %lld parts, but the group of its axes has "
                "%lld ranks",
                tensorName(t).c_str(), static_cast<long long>(holding.parts),
                static_cast<long long>(size));
  if (holding.flat) {
    ranges.push_back({position * partElements(t), partElements(t)});
    return METART_OK;
  }
  // Rows of the dimensions before the split one, each holding the part's
  // stretch of the split dimension and those after it.
  int64_t rows = 1, row = 1;
  for (int32_t d = 0; d < holding.dim; ++d)
    rows *= whole.shape[d];
  for (size_t d = holding.dim; d < whole.shape.size(); ++d)
    row *= whole.shape[d];
  int64_t stretch = row / holding.parts;
  for (int64_t r = 0; r < rows; ++r)
    ranges.push_back({r * row + position * stretch, stretch});
  return METART_OK;
}

metart_status Trainer::writeScale() {
  double wide = scaler.scale();
  float narrow = static_cast<float>(wide);
  const void *host = scaleInput.dtype == METART_F32
                         ? static_cast<const void *>(&narrow)
                         : static_cast<const void *>(&wide);
  if (metart_status s = metart_copy_to_device(
          context, scaleInput.descriptor.data, host, scaleInput.bytes))
    return fail(s, "%s", metart_context_last_error(context));
  return METART_OK;
}

metart_status Trainer::loadParams(const char *path, bool withState,
                                  int64_t *iteration,
                                  std::vector<std::string> *missing) {
  char message[512] = "";
  metart_safetensors *file = nullptr;
  if (metart_status s =
          metart_safetensors_open(path, &file, message, sizeof(message)))
    return fail(s, "%s", message);
  // `whole`: the tensor in the file, of which `t` holds the stretches
  // `ranges` (a part).
  auto load = [&](const std::string &name, DeviceTensor &t,
                  const DeviceTensor *whole = nullptr,
                  const std::vector<std::pair<int64_t, int64_t>> *ranges =
                      nullptr) -> metart_status {
    int32_t dtype = 0, rank = 0;
    const int64_t *shape = nullptr;
    const void *data = nullptr;
    if (metart_safetensors_find(file, name.c_str(), &dtype, &rank, &shape,
                                &data))
      return fail(METART_ERROR_IO, "'%s' has no tensor '%s'", path,
                  name.c_str());
    const DeviceTensor &expected = whole ? *whole : t;
    if (dtype != expected.dtype ||
        rank != static_cast<int32_t>(expected.shape.size()) ||
        !std::equal(expected.shape.begin(), expected.shape.end(), shape)) {
      // Both sides named, as the sharded format does.
      auto text = [](int32_t type, const int64_t *dims, int32_t count) {
        std::string out = type == METART_F32   ? "F32"
                          : type == METART_F64 ? "F64"
                          : type == METART_I64 ? "I64"
                          : type == METART_I32 ? "I32"
                                               : "?";
        out += "[";
        for (int32_t i = 0; i < count; ++i)
          out += (i ? "," : "") + std::to_string(dims[i]);
        return out + "]";
      };
      return fail(METART_ERROR_IO,
                  "tensor '%s' is %s in '%s', the model's is %s: it was "
                  "written for another spec",
                  name.c_str(), text(dtype, shape, rank).c_str(), path,
                  text(expected.dtype, expected.shape.data(),
                       static_cast<int32_t>(expected.shape.size()))
                      .c_str());
    }
    // Adam reads the count where it lives (on a device, in its kernel):
    // a corrupt one is caught here.
    if (name == "optimizer.step") {
      int64_t count = 0;
      std::memcpy(&count, data, sizeof(count));
      if (count < 0)
        return fail(METART_ERROR_IO,
                    "tensor 'optimizer.step' in '%s' is negative (%lld)", path,
                    static_cast<long long>(count));
    }
    if (!ranges)
      return metart_copy_to_device(context, t.descriptor.data, data, t.bytes);
    // A part: its stretches of the whole, one after another.
    size_t element = elementSize(t.dtype);
    std::vector<char> host(t.bytes);
    size_t at = 0;
    for (auto [first, count] : *ranges) {
      std::memcpy(host.data() + at,
                  static_cast<const char *>(data) + first * element,
                  count * element);
      at += count * element;
    }
    return metart_copy_to_device(context, t.descriptor.data, host.data(),
                                 t.bytes);
  };
  metart_status status = METART_OK;
  auto inFile = [&](const char *name) {
    int32_t dtype = 0, rank = 0;
    const int64_t *shape = nullptr;
    const void *data = nullptr;
    return metart_safetensors_find(file, name, &dtype, &rank, &shape, &data) ==
           METART_OK;
  };
  // A part is loaded from its stretch of the whole in the file (nothing,
  // on a stage that does not hold it: the whole is checked all the same,
  // so that every rank agrees on the file).
  auto loadHeld = [&](size_t t) -> metart_status {
    if (!heldElsewhere(t))
      return load(tensorName(t), held(t));
    std::vector<std::pair<int64_t, int64_t>> ranges;
    if (metart_status s = partRanges(t, ranges))
      return s;
    DeviceTensor whole = wholeOf(t);
    return load(tensorName(t), held(t), &whole, &ranges);
  };
  for (int64_t i = 0; i < program.num_params && !status; ++i) {
    const char *name = program.params[i].name;
    if (missing && !inFile(name))
      missing->push_back(name);
    else
      status = loadHeld(i);
  }
  if (!status && missing &&
      static_cast<int64_t>(missing->size()) == program.num_params &&
      program.num_params > 0)
    status = fail(METART_ERROR_IO,
                  "'%s' has none of the model's parameters (the first is "
                  "'%s')",
                  path, program.params[0].name);
  if (withState) {
    for (size_t k = 0; k < state.size() && !status; ++k)
      status = loadHeld(program.num_params + k);
    DeviceTensor counter;
    counter.shape = {};
    counter.dtype = METART_I64;
    counter.bytes = 8;
    int32_t dtype = 0, rank = 0;
    const int64_t *shape = nullptr;
    const void *data = nullptr;
    // The loss scale where the run left it (a checkpoint of a run without
    // scaling has none: the scale starts afresh).
    if (!status && program.loss_scaling &&
        !metart_safetensors_find(file, "meta.loss_scale", &dtype, &rank, &shape,
                                 &data)) {
      double saved[2] = {0, 0};
      if (dtype != METART_F64 || rank != 1 || shape[0] != 2)
        status = fail(METART_ERROR_IO,
                      "tensor 'meta.loss_scale' in '%s' is not f64[2]", path);
      else
        std::memcpy(saved, data, sizeof(saved));
      if (!status &&
          !(saved[0] > 0 && std::isfinite(saved[0]) && saved[1] >= 0))
        status = fail(METART_ERROR_IO,
                      "tensor 'meta.loss_scale' in '%s' holds no valid scale "
                      "(%g, %g)",
                      path, saved[0], saved[1]);
      if (!status) {
        scaler.restore(saved[0], static_cast<int64_t>(saved[1]));
        status = writeScale();
      }
    }
    if (!status &&
        !metart_safetensors_find(file, "meta.iteration", &dtype, &rank, &shape,
                                 &data) &&
        dtype == METART_I64 && rank == 0)
      std::memcpy(iteration, data, 8);
    else if (!status)
      status = fail(METART_ERROR_IO, "'%s' has no iteration count", path);
  }
  metart_safetensors_close(file);
  return status;
}

metart_status Trainer::gatherWhole(size_t t, DeviceTensor &whole) {
  Holding holding = holdingOf(t);
  DeviceTensor shape = wholeOf(t);
  if (holding.stage >= 0) {
    // The stage that holds it (gathering its parts first) sends it to the
    // others of its pipeline.
    GatheredTensors parts(context);
    const metart_tensor *source = nullptr;
    if (heldHere(t) && holding.parts > 1) {
      DeviceTensor &gathered = parts.tensors.emplace_back();
      if (metart_status s = gatherParts(t, holding, gathered))
        return s;
      source = &gathered.descriptor;
    } else if (heldHere(t)) {
      source = &held(t).descriptor;
    }
    if (metart_status s = allocate(whole, shape.shape, shape.dtype))
      return s;
    if (!source)
      source = &whole.descriptor; // not read off the root
    if (metart_status s =
            metart_broadcast(context, source, &whole.descriptor,
                             1 << METART_AXIS_PIPELINE, holdingOf(t).stage))
      return fail(s, "gathering '%s' from pipeline stage %d: %s",
                  tensorName(t).c_str(), holdingOf(t).stage,
                  metart_context_last_error(context));
    return METART_OK;
  }
  return gatherParts(t, holding, whole);
}

metart_status Trainer::gatherParts(size_t t, const Holding &holding,
                                   DeviceTensor &whole) {
  DeviceTensor shape = wholeOf(t);
  // A ZeRO part is a stretch of the flattened whole: both sides flat.
  std::vector<int64_t> gatheredShape = shape.shape;
  if (holding.flat)
    gatheredShape = {shape.numElements()};
  if (metart_status s = allocate(whole, gatheredShape, shape.dtype))
    return s;
  int64_t partCount = partElements(t);
  metart_tensor part = held(t).descriptor;
  if (holding.flat) {
    part.rank = 1;
    part.shape = &partCount;
  }
  if (metart_status s = metart_all_gather(context, &part, &whole.descriptor,
                                          holding.mask, holding.dim))
    return fail(s, "gathering '%s': %s", tensorName(t).c_str(),
                metart_context_last_error(context));
  whole.shape = shape.shape;
  whole.descriptor.rank = static_cast<int32_t>(whole.shape.size());
  whole.descriptor.shape = whole.shape.data();
  return METART_OK;
}

metart_status Trainer::saveParams(const char *path, bool withState,
                                  int64_t iteration) {
  size_t count =
      static_cast<size_t>(program.num_params) + (withState ? state.size() : 0);
  std::vector<std::vector<char>> host(count);
  std::vector<std::string> names;
  std::vector<DeviceTensor> shapes;
  std::vector<metart_named_tensor> entries;
  // Tensors held in parts or by one pipeline stage are gathered into
  // their wholes on every rank (a collective: every rank saves), one at a
  // time, each freed once the writer has its copy.
  for (size_t t = 0; t < count; ++t) {
    names.push_back(tensorName(t));
    const DeviceTensor *source = &held(t);
    GatheredTensors gathered(context);
    if (heldElsewhere(t)) {
      DeviceTensor &whole = gathered.tensors.emplace_back();
      if (metart_status s = gatherWhole(t, whole))
        return s;
      source = &whole;
    }
    shapes.push_back(*source);
    if (!sharding.writer)
      continue;
    host[t].resize(source->bytes);
    if (metart_status s = metart_copy_to_host(
            context, host[t].data(), source->descriptor.data, source->bytes))
      return fail(s, "%s", metart_context_last_error(context));
  }
  if (!sharding.writer)
    return METART_OK;
  for (size_t t = 0; t < count; ++t)
    entries.push_back({names[t].c_str(), shapes[t].dtype,
                       static_cast<int32_t>(shapes[t].shape.size()),
                       shapes[t].shape.data(), host[t].data()});
  int64_t iterationValue = iteration;
  if (withState)
    entries.push_back(
        {"meta.iteration", METART_I64, 0, nullptr, &iterationValue});
  double scaleValue[2] = {scaler.scale(),
                          static_cast<double>(scaler.healthyInRow())};
  static const int64_t kTwo = 2;
  if (withState && program.loss_scaling)
    entries.push_back({"meta.loss_scale", METART_F64, 1, &kTwo, scaleValue});
  char message[512] = "";
  if (metart_status s = metart_safetensors_write(
          path, entries.data(), entries.size(), message, sizeof(message)))
    return fail(s, "%s", message);
  return METART_OK;
}

} // namespace metart::train
