# Workload generators (schedbench gen, workloads/README.md) and their test.
# Included from the top-level CMakeLists.txt, which then defines SB_HAVE_GEN so
# that the CLI dispatches `gen` to sb_gen_main.

target_sources(schedbench_core PRIVATE
  ${CMAKE_SOURCE_DIR}/workloads/gen/gen.c
  ${CMAKE_SOURCE_DIR}/workloads/gen/gen_graph.c
  ${CMAKE_SOURCE_DIR}/workloads/gen/llama.c
  ${CMAKE_SOURCE_DIR}/workloads/gen/moe.c
  ${CMAKE_SOURCE_DIR}/workloads/gen/pipeline.c
  ${CMAKE_SOURCE_DIR}/workloads/gen/ddp.c
  ${CMAKE_SOURCE_DIR}/workloads/gen/place.c
  ${CMAKE_SOURCE_DIR}/workloads/gen/ggml.c
  ${CMAKE_SOURCE_DIR}/workloads/gen/conc.c)

add_executable(test_gen ${CMAKE_SOURCE_DIR}/tests/test_gen.c)
target_link_libraries(test_gen PRIVATE schedbench_core)
target_include_directories(test_gen PRIVATE ${CMAKE_SOURCE_DIR}/workloads/gen)
target_compile_definitions(test_gen PRIVATE
  SB_CORPUS_DIR="${CMAKE_SOURCE_DIR}/workloads/corpus"
  SB_TEST_TMP="${CMAKE_BINARY_DIR}")
add_test(NAME gen COMMAND test_gen)
