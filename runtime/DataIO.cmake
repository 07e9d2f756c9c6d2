# Task distributions (src/data/) and safetensors files (src/io/): the part
# of the runtime that metart/data.h declares, and its tests. Included by
# runtime/CMakeLists.txt once the metart target exists.

set(METART_DATA_ROOT ${CMAKE_CURRENT_LIST_DIR})

target_sources(metart PRIVATE
  ${METART_DATA_ROOT}/src/data/Classification.cpp
  ${METART_DATA_ROOT}/src/data/Episodes.cpp
  ${METART_DATA_ROOT}/src/data/FashionMnist.cpp
  ${METART_DATA_ROOT}/src/data/ImageFolder.cpp
  ${METART_DATA_ROOT}/src/data/Png.cpp
  ${METART_DATA_ROOT}/src/data/Sequence.cpp
  ${METART_DATA_ROOT}/src/data/Sinusoid.cpp
  ${METART_DATA_ROOT}/src/data/Tasks.cpp
  ${METART_DATA_ROOT}/src/io/AtomicFile.cpp
  ${METART_DATA_ROOT}/src/io/Json.cpp
  ${METART_DATA_ROOT}/src/io/SafetensorsDtype.cpp
  ${METART_DATA_ROOT}/src/io/SafetensorsReader.cpp
  ${METART_DATA_ROOT}/src/io/SafetensorsWriter.cpp
  ${METART_DATA_ROOT}/src/io/ShardedIndex.cpp
)
target_include_directories(metart PRIVATE ${METART_DATA_ROOT}/src)

# Fashion-MNIST's gzipped idx files (zlib) and image folders (libpng):
# Debian's zlib1g-dev and libpng-dev, installed by scripts/setup.sh.
find_package(ZLIB REQUIRED)
find_package(PNG REQUIRED)
target_link_libraries(metart PRIVATE PNG::PNG ZLIB::ZLIB)
# Safetensors headers are read with nlohmann-json (header-only; Debian's
# nlohmann-json3-dev, installed by scripts/setup.sh).
find_package(nlohmann_json 3 REQUIRED)
target_link_libraries(metart PRIVATE nlohmann_json::nlohmann_json)
# Executables link libmetart.a by hand (lib/Runner): they need both too.
get_property(METART_LINK_FLAGS TARGET metart PROPERTY METART_LINK_FLAGS)
string(JOIN "|" METART_DATA_LINK_FLAGS ${PNG_LIBRARIES} ${ZLIB_LIBRARIES})
set_property(TARGET metart PROPERTY METART_LINK_FLAGS
  "${METART_LINK_FLAGS}|${METART_DATA_LINK_FLAGS}")

find_package(GTest REQUIRED)
include(GoogleTest)

# The C API's tests, plus the generator's (Random.h is internal); CApi.c
# calls the API from C.
add_executable(metart-data-test
  ${METART_DATA_ROOT}/test/data/AtomicWriteTest.cpp
  ${METART_DATA_ROOT}/test/data/CApi.c
  ${METART_DATA_ROOT}/test/data/CorruptFileTest.cpp
  ${METART_DATA_ROOT}/test/data/EpisodesTest.cpp
  ${METART_DATA_ROOT}/test/data/FashionMnistTest.cpp
  ${METART_DATA_ROOT}/test/data/ImageFolderTest.cpp
  ${METART_DATA_ROOT}/test/data/RandomTest.cpp
  ${METART_DATA_ROOT}/test/data/SafetensorsTest.cpp
  ${METART_DATA_ROOT}/test/data/SequenceTest.cpp
  ${METART_DATA_ROOT}/test/data/SinusoidTest.cpp
)
target_include_directories(metart-data-test PRIVATE ${METART_DATA_ROOT}/src)
# The image tests write PNGs and gzipped idx files themselves.
target_link_libraries(metart-data-test PRIVATE metart PNG::PNG ZLIB::ZLIB
  GTest::gtest_main)
gtest_discover_tests(metart-data-test TEST_PREFIX "metart.data.")

# Writes and dumps safetensors files for test/reference/check_safetensors.py,
# which checks them against a reader and a writer written in Python.
add_executable(metart-safetensors-tool
  ${METART_DATA_ROOT}/test/data/SafetensorsTool.cpp)
target_link_libraries(metart-safetensors-tool PRIVATE metart)
find_program(METART_SYSTEM_PYTHON python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(METART_SYSTEM_PYTHON)
  add_test(NAME metart.data.CheckSafetensors
    COMMAND ${METART_SYSTEM_PYTHON}
      ${METART_DATA_ROOT}/../test/reference/check_safetensors.py
      --tool $<TARGET_FILE:metart-safetensors-tool>)
endif()
