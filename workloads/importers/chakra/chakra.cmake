# Chakra execution traces (.et): C from et_def.proto, generated at build time
# with protoc-c and linked against libprotobuf-c (Debian: protobuf-c-compiler,
# libprotobuf-c-dev).
find_program(PROTOC_C protoc-c REQUIRED)
find_library(PROTOBUF_C_LIBRARY protobuf-c REQUIRED)
set(_et_dir ${CMAKE_BINARY_DIR}/chakra)
file(MAKE_DIRECTORY ${_et_dir})
add_custom_command(
  OUTPUT ${_et_dir}/et_def.pb-c.c ${_et_dir}/et_def.pb-c.h
  COMMAND ${PROTOC_C} --c_out=${_et_dir} -I${CMAKE_CURRENT_LIST_DIR} ${CMAKE_CURRENT_LIST_DIR}/et_def.proto
  DEPENDS ${CMAKE_CURRENT_LIST_DIR}/et_def.proto
  COMMENT "protoc-c et_def.proto")
# generated code is not ours to hold to -Werror
set_source_files_properties(${_et_dir}/et_def.pb-c.c PROPERTIES COMPILE_OPTIONS "-w")
target_sources(schedbench_core PRIVATE ${_et_dir}/et_def.pb-c.c)
target_include_directories(schedbench_core PRIVATE ${_et_dir})
target_link_libraries(schedbench_core PUBLIC ${PROTOBUF_C_LIBRARY})
