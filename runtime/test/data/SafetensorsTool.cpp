//===- SafetensorsTool.cpp - safetensors files for the Python check -------===//
//
// test/reference/check_safetensors.py runs this to compare the C API with
// a reader and a writer written in Python:
//   metart-safetensors-tool write PATH        writes the fixed tensors below
//   metart-safetensors-tool dump PATH NAME... prints the named tensors as
//                                             JSON {name: {dtype, shape,
//                                             values}}
// A failure prints the runtime's message to stderr and exits with 1.
//
//===----------------------------------------------------------------------===//

#include "metart/data.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

/// The tensors `write` writes; check_safetensors.py knows the same values.
int writeFixed(const char *path) {
  std::vector<float> weight(12);
  for (size_t j = 0; j < weight.size(); ++j)
    weight[j] = (static_cast<float>(j) - 5.0f) * 0.25f;
  std::vector<double> bias(4);
  for (size_t j = 0; j < bias.size(); ++j)
    bias[j] = 1.0 / (static_cast<double>(j) + 3.0);
  std::vector<int32_t> labels(6);
  for (size_t j = 0; j < labels.size(); ++j)
    labels[j] = static_cast<int32_t>(j * j) - 7;
  int64_t step = 123456789012345;
  double avogadro = 6.02214076e23;
  int64_t weightShape[] = {3, 4}, biasShape[] = {4}, labelShape[] = {2, 3},
          emptyShape[] = {0, 5}, cubeShape[] = {1, 1, 1};
  metart_named_tensor tensors[] = {
      {"fc1.weight", METART_F32, 2, weightShape, weight.data()},
      {"fc1.bias", METART_F64, 1, biasShape, bias.data()},
      {"step", METART_I64, 0, nullptr, &step},
      {"labels", METART_I32, 2, labelShape, labels.data()},
      {"empty", METART_F32, 2, emptyShape, nullptr},
      {"z.last", METART_F64, 3, cubeShape, &avogadro},
  };
  char error[1024];
  if (metart_safetensors_write(path, tensors, 6, error, sizeof(error)) !=
      METART_OK) {
    std::fprintf(stderr, "%s\n", error);
    return 1;
  }
  return 0;
}

/// Prints element `j` of `data` of `dtype` exactly.
void printValue(int32_t dtype, const void *data, int64_t j) {
  switch (dtype) {
  case METART_F32:
    std::printf("%.17g",
                static_cast<double>(static_cast<const float *>(data)[j]));
    break;
  case METART_F64:
    std::printf("%.17g", static_cast<const double *>(data)[j]);
    break;
  case METART_I32:
    std::printf("%" PRId32, static_cast<const int32_t *>(data)[j]);
    break;
  default:
    std::printf("%" PRId64, static_cast<const int64_t *>(data)[j]);
  }
}

/// Prints tensors `names` of the file at `path` as one JSON object.
int dump(const char *path, char **names, int count) {
  char error[1024];
  metart_safetensors *file = nullptr;
  if (metart_safetensors_open(path, &file, error, sizeof(error)) != METART_OK) {
    std::fprintf(stderr, "%s\n", error);
    return 1;
  }
  static const char *const dtypeNames[] = {"F32", "F64", "I32", "I64"};
  std::printf("{");
  for (int i = 0; i < count; ++i) {
    int32_t dtype, rank;
    const int64_t *shape;
    const void *data;
    if (metart_safetensors_find(file, names[i], &dtype, &rank, &shape, &data) !=
        METART_OK) {
      std::fprintf(stderr, "no tensor %s\n", names[i]);
      metart_safetensors_close(file);
      return 1;
    }
    // Names are printed raw: the check only passes names JSON keeps as is.
    std::printf("%s\"%s\": {\"dtype\": \"%s\", \"shape\": [", i ? ", " : "",
                names[i], dtypeNames[dtype]);
    int64_t elements = 1;
    for (int32_t d = 0; d < rank; ++d) {
      std::printf("%s%" PRId64, d ? ", " : "", shape[d]);
      elements *= shape[d];
    }
    std::printf("], \"values\": [");
    for (int64_t j = 0; j < elements; ++j) {
      std::printf("%s", j ? ", " : "");
      printValue(dtype, data, j);
    }
    std::printf("]}");
  }
  std::printf("}\n");
  metart_safetensors_close(file);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc == 3 && std::strcmp(argv[1], "write") == 0)
    return writeFixed(argv[2]);
  if (argc >= 3 && std::strcmp(argv[1], "dump") == 0)
    return dump(argv[2], argv + 3, argc - 3);
  std::fprintf(stderr, "usage: %s write PATH | dump PATH NAME...\n", argv[0]);
  return 2;
}
