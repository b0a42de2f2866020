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
          include/flinkstate/report.proto
          include/flinkstate/repair.proto
          include/flinkstate/javaobj/stream_constants.h
          include/flinkstate/open.h
          include/flinkstate/repair.h
          include/flinkstate/repair.pb.h
          include/flinkstate/serde/file_transaction.h
          lib/pkgconfig/flinkstate.pc)
  if(NOT EXISTS "${prefix}/${f}")
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()

# Test-only code stays out of the package.
foreach(f include/flinkstate/metadata_generator.h
          include/flinkstate/completed_checkpoint_writer.h
          include/tests bin/flinkstate-gen-incident bin/flinkstate-gen-ha)
  if(EXISTS "${prefix}/${f}")
    message(FATAL_ERROR "installed, but test-only: ${f}")
  endif()
endforeach()

# 1. CMake: find_package(flinkstate CONFIG COMPONENTS ...) (consumer/CMakeLists.txt).
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
message(STATUS "find_package consumer printed '${printed}'")

# 2. pkg-config, the way a Makefile user builds: compiler, the source, and
# `pkg-config --cflags --libs flinkstate` from the installed .pc only.
set(ENV{PKG_CONFIG_PATH} "${prefix}/lib/pkgconfig")
run(pkg-config --print-errors --exists flinkstate)
run(pkg-config --modversion flinkstate)
string(STRIP "${RUN_OUTPUT}" pc_version)
if(NOT pc_version STREQUAL VERSION)
  message(FATAL_ERROR "pkg-config --modversion flinkstate is '${pc_version}', the project is ${VERSION}")
endif()
run(pkg-config --cflags flinkstate)
separate_arguments(pc_cflags UNIX_COMMAND "${RUN_OUTPUT}")
run(pkg-config --libs flinkstate)
separate_arguments(pc_libs UNIX_COMMAND "${RUN_OUTPUT}")
separate_arguments(extra UNIX_COMMAND "${CXX_FLAGS}")
run("${CXX}" -std=c++17 ${extra} ${pc_cflags} "${CONSUMER_DIR}/main.cc"
    -o "${WORK_DIR}/app-pkgconfig" ${pc_libs})
run("${WORK_DIR}/app-pkgconfig" "${SAMPLE}")
string(STRIP "${RUN_OUTPUT}" printed)
if(NOT printed STREQUAL EXPECTED)
  message(FATAL_ERROR "pkg-config consumer printed '${printed}', expected '${EXPECTED}'")
endif()
message(STATUS "pkg-config consumer printed '${printed}'")

# Both consumers (find_package and pkg-config builds) open every kind of file
# with one call and repair a job through the library.
foreach(app_name build/app app-pkgconfig)
set(app "${WORK_DIR}/${app_name}")
string(REPLACE "/" "-" app_name "${app_name}")
# One call opens every kind of file (real Flink 1.20.5 / 1.18.1 files, an
# operator snapshot of the Kafka connector's tests, and a Java stream that is
# nothing of Flink's, handed over as `xxd -p` text: TC_STRING "x").
set(d "${TESTDATA}/flink-1.20.5")
file(WRITE "${WORK_DIR}/string.hex" "aced0005740001" "78\n")
run("${app}" open "${d}/incident-gen3-checkpoint"
    "${d}/incident-gen3-completedCheckpoint/completedCheckpoint9bddd89110e7"
    "${d}/incident-gen3-completedCheckpoint/zk-node.bin"
    "${TESTDATA}/flink-1.18.1/incident-gen3-k8s/k8s-value.b64"
    "${CORPUS}/apache__flink-connector-kafka/flink-connector-kafka/src/test/resources/kafka-consumer-migration-test-flink1.15-snapshot"
    "${WORK_DIR}/string.hex")
set(want "Flink _metadata\nFlink HA completedCheckpoint\nFlink HA pointer (ZooKeeper node or Kubernetes value)\nFlink HA pointer (ZooKeeper node or Kubernetes value) (Base64)\noperator snapshot\nJava serialization stream (unwrapped)\n")
if(NOT RUN_OUTPUT STREQUAL want)
  message(FATAL_ERROR "consumer open printed '${RUN_OUTPUT}', expected '${want}'")
endif()

# A repair through the library: the checkpoint laid out as <jobId>/chk-9, as
# the HA file's external pointer names it.
set(job "${WORK_DIR}/job-${app_name}")
set(chk "${job}/ac421cbe43b90ca7b807f3429e265e7a/chk-9")
file(MAKE_DIRECTORY "${chk}" "${job}/ha")
file(COPY "${d}/incident-gen3-checkpoint/_metadata" DESTINATION "${chk}")
file(COPY "${d}/incident-gen3-completedCheckpoint/completedCheckpoint9bddd89110e7"
     DESTINATION "${job}/ha")
run("${app}" repair topic-partition-offset-states "${chk}" "${job}/ha")
if(NOT RUN_OUTPUT STREQUAL "repaired 2 file(s)\n")
  message(FATAL_ERROR "consumer repair printed '${RUN_OUTPUT}'")
endif()
foreach(f "${chk}/_metadata.bak" "${job}/ha/completedCheckpoint9bddd89110e7.bak")
  if(NOT EXISTS "${f}")
    message(FATAL_ERROR "the repair kept no backup ${f}")
  endif()
endforeach()
message(STATUS "${app_name}: opened every kind and repaired a job")
endforeach()
