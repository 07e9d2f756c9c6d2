//===- Sharding.cpp - this rank's slice of each meta-batch ----------------===//

#include "Sharding.h"

#include <cstring>

using namespace metart::train;

metart_status Sharding::layOut(metart_context *context,
                               const metart_program &program,
                               std::string &error) {
  const int64_t *mesh = program.mesh;
  bool meshGiven = false;
  for (int axis = 0; axis < METART_NUM_AXES; ++axis)
    meshGiven |= mesh[axis] > 1;
  if (meshGiven && !metart_comm_attached(context))
    if (metart_status s = metart_comm_attach(context, mesh)) {
      error = metart_context_last_error(context);
      return s;
    }
  int64_t shape[METART_NUM_AXES], coords[METART_NUM_AXES];
  metart_comm_mesh(context, shape, coords);
  for (int axis = 0; axis < METART_NUM_AXES; ++axis)
    if (meshGiven && shape[axis] != (mesh[axis] ? mesh[axis] : 1)) {
      error = "the context's communicator is not for the program's mesh";
      return METART_ERROR_INVALID_ARGUMENT;
    }
  taskParts = shape[0];
  // The expert axis splits samples as the data axis does (data outer).
  dataParts = shape[METART_AXIS_DATA] * shape[METART_AXIS_EXPERT];
  sequenceParts = shape[METART_AXIS_SEQUENCE];
  sequenceCoord = coords[METART_AXIS_SEQUENCE];
  pipelineCoord = coords[METART_AXIS_PIPELINE];
  taskCoord = coords[0];
  dataCoord = coords[METART_AXIS_DATA] * shape[METART_AXIS_EXPERT] +
              coords[METART_AXIS_EXPERT];
  writer = metart_world_rank() == 0;
  int64_t support = 0, query = 0;
  metart_tasks_sizes(program.tasks, &support, &query);
  if (program.meta_batch % taskParts) {
    error = "the meta-batch of " + std::to_string(program.meta_batch) +
            " tasks does not split over " + std::to_string(taskParts) +
            " ranks of the task axis";
    return METART_ERROR_INVALID_ARGUMENT;
  }
  if (support % dataParts || query % dataParts) {
    error = "support and query sets of " + std::to_string(support) + " and " +
            std::to_string(query) + " samples do not split over " +
            std::to_string(dataParts) + " ranks of the data and expert axes";
    return METART_ERROR_INVALID_ARGUMENT;
  }
  return METART_OK;
}

void Sharding::slice(const char *drawn, char *local, int64_t tasks,
                     int64_t samples, int64_t positions,
                     size_t rowBytes) const {
  int64_t mine = localSamples(samples);
  int64_t rows = positions / sequenceParts;
  size_t block = rows * rowBytes, sampleBytes = positions * rowBytes;
  for (int64_t t = 0; t < tasks; ++t)
    for (int64_t s = 0; s < mine; ++s)
      std::memcpy(local + (t * mine + s) * block,
                  drawn + (t * samples + dataCoord * mine + s) * sampleBytes +
                      sequenceCoord * block,
                  block);
}

std::string metart::train::commJson(const metart_comm_stats *perMask) {
  std::string json = "{";
  char entry[256];
  for (int mask = 1; mask < (1 << METART_NUM_AXES); ++mask) {
    const metart_comm_stats &s = perMask[mask];
    if (!s.calls)
      continue;
    std::snprintf(entry, sizeof(entry),
                  "%s\"%s\": {\"bytes\": %lld, \"seconds\": %.9g, "
                  "\"calls\": %lld",
                  json.size() > 1 ? ", " : "", metart_comm_axes_name(mask),
                  static_cast<long long>(s.bytes), s.seconds,
                  static_cast<long long>(s.calls));
    json += entry;
    // Only under --overlap: the part of `seconds` hidden behind compute.
    if (s.async_calls > 0) {
      std::snprintf(entry, sizeof(entry),
                    ", \"overlapped_seconds\": %.9g, \"overlapped_fraction\": "
                    "%.4f",
                    s.overlapped_seconds,
                    s.seconds > 0 ? s.overlapped_seconds / s.seconds : 0.0);
      json += entry;
    }
    json += "}";
  }
  return json + "}";
}
