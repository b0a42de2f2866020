# cmake -P script behind the `install` ctest; see CMakeLists.txt.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(RUN_OUTPUT "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
run(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}")

# Everything the package promises must be there.
foreach(f lib/cmake/flinkstate/flinkstateConfig.cmake
          lib/cmake/flinkstate/flinkstateConfigVersion.cmake
          lib/cmake/flinkstate/flinkstateTargets.cmake
          include/flinkstate/serde/data_input.h
          include/flinkstate/metadata_reader.h
          include/flinkstate/report.pb.h
          include/flinkstate/javaobj/stream_constants.h)
  if(NOT EXISTS "${prefix}/${f}")
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()

run(${CMAKE_COMMAND} -S "${CONSUMER_DIR}" -B "${WORK_DIR}/build" -G "${GENERATOR}"
    "-DCMAKE_CXX_COMPILER=${CXX}" "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}"
    "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" "-DCMAKE_PREFIX_PATH=${prefix}"
    # Only the installed copy may be found, never this build tree.
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
run(${CMAKE_COMMAND} --build "${WORK_DIR}/build")
run("${WORK_DIR}/build/app" "${SAMPLE}")
string(STRIP "${RUN_OUTPUT}" printed)
if(NOT printed STREQUAL EXPECTED)
  message(FATAL_ERROR "consumer printed '${printed}', expected '${EXPECTED}'")
endif()
message(STATUS "consumer printed '${printed}'")
