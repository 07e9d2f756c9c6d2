//===- Harness.cpp - helpers of the collective tests ----------------------===//

#include "Harness.h"
#include "Precision.h"

#include <cstring>

using namespace metart::test;

std::vector<Mesh> metart::test::meshesOfWorld() {
  int64_t n = metart_world_size();
  std::vector<Mesh> meshes;
  for (int axis = 0; axis < METART_NUM_AXES; ++axis) {
    Mesh mesh = {1, 1, 1, 1, 1, 1};
    mesh[axis] = n;
    meshes.push_back(mesh);
    if (n == 1)
      return meshes;
  }
  if (n == 4)
    for (Mesh mesh : {Mesh{2, 2, 1, 1, 1, 1}, Mesh{1, 2, 2, 1, 1, 1},
                      Mesh{2, 1, 1, 2, 1, 1}, Mesh{1, 1, 2, 2, 1, 1},
                      Mesh{2, 1, 1, 1, 2, 1}, Mesh{1, 1, 1, 2, 2, 1},
                      Mesh{1, 1, 1, 1, 2, 2}, Mesh{1, 2, 1, 1, 1, 2}})
      meshes.push_back(mesh);
  return meshes;
}

std::string metart::test::meshName(const Mesh &mesh) {
  return "task=" + std::to_string(mesh[0]) +
         " x data=" + std::to_string(mesh[1]) +
         " x tensor=" + std::to_string(mesh[2]) +
         " x pipeline=" + std::to_string(mesh[3]) +
         " x expert=" + std::to_string(mesh[4]) +
         " x sequence=" + std::to_string(mesh[5]);
}

Context::Context() {
  metart_context_options options = {METART_BACKEND_CPU, 0, 0};
  EXPECT_EQ(metart_context_create(&options, &c), METART_OK);
}

Context::~Context() { metart_context_destroy(c); }

MeshContext::MeshContext(const Mesh &mesh) {
  EXPECT_EQ(metart_comm_attach(c, mesh.data()), METART_OK)
      << metart_context_last_error(c);
}

std::array<int64_t, METART_NUM_AXES> metart::test::coordsOf(const Mesh &mesh,
                                                            int64_t rank) {
  std::array<int64_t, METART_NUM_AXES> coords{};
  for (int axis = METART_NUM_AXES - 1; axis >= 0; --axis) {
    coords[axis] = rank % mesh[axis];
    rank /= mesh[axis];
  }
  return coords;
}

std::vector<int64_t> metart::test::groupOf(const Mesh &mesh, int mask) {
  std::array<int64_t, METART_NUM_AXES> mine =
      coordsOf(mesh, metart_world_rank());
  std::vector<int64_t> group;
  int64_t size = 1;
  for (int64_t axisSize : mesh)
    size *= axisSize;
  for (int64_t r = 0; r < size; ++r) {
    std::array<int64_t, METART_NUM_AXES> theirs = coordsOf(mesh, r);
    bool same = true;
    for (int axis = 0; axis < METART_NUM_AXES; ++axis)
      if (!(mask & (1 << axis)) && theirs[axis] != mine[axis])
        same = false;
    if (same)
      group.push_back(r);
  }
  return group;
}

double metart::test::inputValue(int64_t rank, int64_t i) {
  return double((rank * 7 + i * 5) % 13) - 4;
}

HostTensor::HostTensor(std::vector<int64_t> shape, int32_t dtype)
    : shape(std::move(shape)), dtype(dtype) {
  size_t element = dtype == METART_F32 || dtype == METART_I32    ? 4
                   : dtype == METART_BF16 || dtype == METART_F16 ? 2
                                                                 : 8;
  bytes.assign(size() * element, 0);
  t = {bytes.data(), dtype, static_cast<int32_t>(this->shape.size()),
       this->shape.data()};
}

int64_t HostTensor::size() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

double HostTensor::get(int64_t i) const {
  switch (dtype) {
  case METART_F32:
    return reinterpret_cast<const float *>(bytes.data())[i];
  case METART_F64:
    return reinterpret_cast<const double *>(bytes.data())[i];
  case METART_I32:
    return reinterpret_cast<const int32_t *>(bytes.data())[i];
  case METART_BF16:
    return bf16ToFloat(reinterpret_cast<const uint16_t *>(bytes.data())[i]);
  case METART_F16:
    return f16ToFloat(reinterpret_cast<const uint16_t *>(bytes.data())[i]);
  default:
    return double(reinterpret_cast<const int64_t *>(bytes.data())[i]);
  }
}

void HostTensor::set(int64_t i, double value) {
  switch (dtype) {
  case METART_F32:
    reinterpret_cast<float *>(bytes.data())[i] = float(value);
    break;
  case METART_F64:
    reinterpret_cast<double *>(bytes.data())[i] = value;
    break;
  case METART_I32:
    reinterpret_cast<int32_t *>(bytes.data())[i] = int32_t(value);
    break;
  case METART_BF16:
    reinterpret_cast<uint16_t *>(bytes.data())[i] = floatToBf16(float(value));
    break;
  case METART_F16:
    reinterpret_cast<uint16_t *>(bytes.data())[i] = floatToF16(float(value));
    break;
  default:
    reinterpret_cast<int64_t *>(bytes.data())[i] = int64_t(value);
    break;
  }
}

void HostTensor::fillInput(int64_t rank) {
  for (int64_t i = 0; i < size(); ++i)
    set(i, inputValue(rank, i));
}
