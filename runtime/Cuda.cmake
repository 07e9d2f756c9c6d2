# The CUDA backend (src/cuda/): compiled into metart when CMake finds nvcc and
# the CUDA toolkit with cuBLAS, unless METART_ENABLE_CUDA is OFF; otherwise
# metart is the CPU runtime alone. Included by runtime/CMakeLists.txt once the
# metart target exists; sets METART_HAVE_CUDA for the tests, and the metart
# property METART_LINK_FLAGS: what a program linked against libmetart.a by
# hand needs after it, separated by '|'.

option(METART_ENABLE_CUDA "Build the CUDA backend when CUDA is found" ON)
set(METART_HAVE_CUDA OFF)

if(METART_ENABLE_CUDA)
  include(CheckLanguage)
  # nvcc 13 rejects clang 22 as its host compiler: .cu files go through g++
  # (C++ files stay with the project's compiler). check_language ignores
  # CMAKE_CUDA_HOST_COMPILER but reads CUDAHOSTCXX, so the choice goes there.
  if(CMAKE_CUDA_HOST_COMPILER)
    set(ENV{CUDAHOSTCXX} "${CMAKE_CUDA_HOST_COMPILER}")
  elseif(NOT DEFINED ENV{CUDAHOSTCXX})
    find_program(METART_CUDA_HOST_COMPILER NAMES g++-12 g++)
    if(METART_CUDA_HOST_COMPILER)
      set(ENV{CUDAHOSTCXX} "${METART_CUDA_HOST_COMPILER}")
    endif()
  endif()
  # The toolkit's usual place, when nvcc is not on PATH.
  if(NOT DEFINED CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX}
     AND EXISTS /usr/local/cuda/bin/nvcc)
    set(ENV{CUDACXX} /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    find_package(CUDAToolkit)
  endif()
  if(CMAKE_CUDA_COMPILER AND CUDAToolkit_FOUND AND CUDA_cublas_LIBRARY
     AND CUDA_cudart_static_LIBRARY)
    set(METART_HAVE_CUDA ON)
  endif()
endif()

set(METART_LINK_FLAGS ${METART_OPENBLAS_LIBRARY})
if(METART_HAVE_DNNL)
  list(APPEND METART_LINK_FLAGS ${METART_DNNL_LIBRARY} ${METART_GOMP_LIBRARY})
endif()
if(NOT METART_HAVE_CUDA)
  if(METART_ENABLE_CUDA)
    message(STATUS "metart: CUDA not found, building without the CUDA backend")
  else()
    message(STATUS "metart: METART_ENABLE_CUDA is OFF, building without the "
                   "CUDA backend")
  endif()
else()
  # Machine code for A100 and H100, and PTX that newer devices compile.
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 80-real 90)
  endif()
  enable_language(CUDA)
  # metart exists already: its architectures do not come from the variable.
  set_property(TARGET metart PROPERTY CUDA_ARCHITECTURES
    ${CMAKE_CUDA_ARCHITECTURES})
  message(STATUS "metart: building the CUDA backend (CUDA "
    "${CUDAToolkit_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES}, nvcc "
    "host compiler ${CMAKE_CUDA_HOST_COMPILER})")

  target_sources(metart PRIVATE
    src/cuda/Allocator.cpp
    src/cuda/CudaBackend.cpp
    src/cuda/CudaGraphs.cpp
    src/cuda/Cudnn.cpp
    src/cuda/Gemm.cpp
    src/cuda/GeneratedKernels.cpp
    src/cuda/Recording.cpp
    src/cuda/SideCopies.cpp
    src/cuda/Status.cpp
    src/cuda/Stream.cpp
    src/cuda/Attention.cu
    src/cuda/AttentionDoubleBackward.cu
    src/cuda/Convolution.cu
    src/cuda/Convert.cu
    src/cuda/Elementwise.cu
    src/cuda/Hang.cu
    src/cuda/Indexing.cu
    src/cuda/Linear.cu
    src/cuda/Losses.cu
    src/cuda/Normalization.cu
    src/cuda/Optimizers.cu
    src/cuda/Pooling.cu
    src/cuda/Shape.cu
    src/cuda/SwapAxes.cu
  )
  target_compile_definitions(metart PRIVATE METART_HAVE_CUDA)
  # cuDNN's convolutions are compiled against its headers (the CUDA
  # toolkit's, or PyPI's nvidia-cudnn-cu13 via METART_CUDNN_INCLUDE_DIR) and
  # the library opened at run time: without it, im2col computes them all.
  find_path(METART_CUDNN_INCLUDE_DIR cudnn.h
    HINTS ${CUDAToolkit_INCLUDE_DIRS})
  if(METART_CUDNN_INCLUDE_DIR)
    target_compile_definitions(metart PRIVATE METART_HAVE_CUDNN)
    target_include_directories(metart PRIVATE ${METART_CUDNN_INCLUDE_DIR})
    message(STATUS "metart: cuDNN convolutions (headers in "
      "${METART_CUDNN_INCLUDE_DIR}; libcudnn.so.9 loaded at run time)")
  else()
    message(STATUS "metart: cuDNN's headers not found: convolutions on "
      "im2col only")
  endif()
  target_include_directories(metart PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
  target_compile_options(metart PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra,-Wno-unused-parameter>)
  set_target_properties(metart PROPERTIES
    CUDA_STANDARD 17
    CUDA_STANDARD_REQUIRED ON
    CUDA_RUNTIME_LIBRARY None
    POSITION_INDEPENDENT_CODE ON)
  # The CUDA libraries are linked as files: the imported targets of
  # find_package would not be visible to metart's users in other directories.
  target_link_libraries(metart PRIVATE ${CUDA_cudart_static_LIBRARY}
    ${CUDA_cublas_LIBRARY} ${CMAKE_DL_LIBS} rt pthread)
  list(APPEND METART_LINK_FLAGS ${CUDA_cudart_static_LIBRARY}
    ${CUDA_cublas_LIBRARY} "-Wl,-rpath,${CUDAToolkit_LIBRARY_DIR}" -ldl -lrt
    -lpthread)
endif()
list(APPEND METART_LINK_FLAGS -lstdc++ -lm)
string(JOIN "|" METART_LINK_FLAGS ${METART_LINK_FLAGS})
set_property(TARGET metart PROPERTY METART_LINK_FLAGS "${METART_LINK_FLAGS}")
