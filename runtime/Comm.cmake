# Collectives between the ranks of a job (src/comm/, include/metart/comm.h):
# MPI (Debian's libopenmpi-dev, installed by scripts/setup.sh) for the CPU
# backend and for bootstrapping, NCCL on CUDA devices when the CUDA backend
# is built and nccl.h and libnccl are found. Without MPI the world is always
# one process. Included by runtime/CMakeLists.txt after Cuda.cmake; adds to
# the METART_LINK_FLAGS of metart what executables then need.

target_sources(metart PRIVATE
  src/comm/Attach.cpp
  src/comm/Comm.cpp
  src/comm/Combine.cpp
  src/comm/CommQueue.cpp
  src/comm/KeyRings.cpp
  src/comm/Compression.cpp
  src/comm/Mpi.cpp
  src/comm/Placement.cpp
  src/comm/ServerEntry.cpp
  src/comm/Stats.cpp
  src/comm/CommStats.cpp
  src/comm/Tcp.cpp
  src/comm/TcpTransport.cpp
  src/comm/Trace.cpp
  src/comm/Watchdog.cpp
  src/comm/World.cpp
  src/comm/WorldLifetime.cpp
)

find_package(Threads REQUIRED)
find_package(MPI COMPONENTS C)
set(METART_HAVE_MPI OFF)
set(METART_COMM_LINK_FLAGS -lpthread)
if(MPI_C_FOUND)
  set(METART_HAVE_MPI ON)
  message(STATUS "metart: collectives through MPI ${MPI_C_VERSION}")
  target_sources(metart PRIVATE src/comm/AllReduceAlgorithms.cpp
    src/comm/MpiTransport.cpp src/comm/ParameterServer.cpp
    src/comm/ServerClient.cpp src/comm/ServerCheckpoint.cpp)
  # The C API only: the C++ bindings are deprecated and warn.
  target_compile_definitions(metart PRIVATE METART_HAVE_MPI OMPI_SKIP_MPICXX
    MPICH_SKIP_MPICXX)
  target_include_directories(metart SYSTEM PRIVATE ${MPI_C_INCLUDE_DIRS})
  # Linked as files, as the CUDA libraries are (imported targets would not
  # be visible to metart's users in other directories).
  target_link_libraries(metart PRIVATE ${MPI_C_LIBRARIES})
  list(APPEND METART_COMM_LINK_FLAGS ${MPI_C_LIBRARIES})
else()
  message(STATUS "metart: MPI not found, every job is one process")
endif()
target_link_libraries(metart PRIVATE Threads::Threads)

set(METART_HAVE_NCCL OFF)
if(METART_HAVE_CUDA AND METART_HAVE_MPI)
  find_path(METART_NCCL_INCLUDE_DIR nccl.h
    HINTS ${CUDAToolkit_INCLUDE_DIRS} /usr/local/cuda/include)
  find_library(METART_NCCL_LIBRARY nccl
    HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64)
  if(METART_NCCL_INCLUDE_DIR AND METART_NCCL_LIBRARY)
    set(METART_HAVE_NCCL ON)
    message(STATUS "metart: collectives on CUDA devices through NCCL "
      "(${METART_NCCL_LIBRARY})")
    target_sources(metart PRIVATE src/comm/NcclTransport.cpp
      src/comm/NcclWatch.cpp)
    target_compile_definitions(metart PRIVATE METART_HAVE_NCCL)
    target_include_directories(metart PRIVATE ${METART_NCCL_INCLUDE_DIR})
    target_link_libraries(metart PRIVATE ${METART_NCCL_LIBRARY})
    get_filename_component(METART_NCCL_DIR ${METART_NCCL_LIBRARY} DIRECTORY)
    list(APPEND METART_COMM_LINK_FLAGS ${METART_NCCL_LIBRARY}
      "-Wl,-rpath,${METART_NCCL_DIR}")
  else()
    message(STATUS "metart: NCCL not found, collectives of CUDA contexts go "
      "through MPI and host memory")
  endif()
endif()

get_property(METART_LINK_FLAGS TARGET metart PROPERTY METART_LINK_FLAGS)
string(JOIN "|" METART_COMM_LINK_FLAGS ${METART_COMM_LINK_FLAGS})
set_property(TARGET metart PROPERTY METART_LINK_FLAGS
  "${METART_LINK_FLAGS}|${METART_COMM_LINK_FLAGS}")

# bench/collectives.sh: the bandwidth of each collective and all-reduce
# algorithm, as nccl-tests reports it.
add_executable(metart-collectives ${CMAKE_CURRENT_SOURCE_DIR}/tools/CollectivesBench.cpp)
target_link_libraries(metart-collectives PRIVATE metart)
