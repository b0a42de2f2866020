# Helper functions so that flags, labels and install rules live in one place
# (after Abseil's absl_cc_* and Arrow's add_arrow_* helpers).

set(FLINKSTATE_WARNING_FLAGS -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare)
if(FLINKSTATE_WERROR)
  list(APPEND FLINKSTATE_WARNING_FLAGS -Werror)
endif()

# A libFuzzer build instruments every object for coverage and, unless told
# otherwise, runs under ASan and UBSan (fuzz/README.md).
if(FLINKSTATE_FUZZ_ENGINE STREQUAL "libfuzzer")
  add_compile_options(-fsanitize=fuzzer-no-link)
  if(NOT FLINKSTATE_SANITIZERS)
    set(FLINKSTATE_SANITIZERS "address;undefined")
  endif()
endif()

if(FLINKSTATE_SANITIZERS)
  string(REPLACE ";" "," _fs_san "${FLINKSTATE_SANITIZERS}")
  add_compile_options(-fsanitize=${_fs_san} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${_fs_san})
endif()

# flinkstate_cc_library(NAME <n> [EXPORT_NAME <e>] HDRS ... SRCS ... DEPS ... [PRIVATE_DEPS ...])
# Creates static library flinkstate_<n> with alias flinkstate::<export name>, and
# installs it with its headers under include/<folder>/ (every folder is
# below flinkstate/, so consumers write #include "flinkstate/...").
function(flinkstate_cc_library)
  cmake_parse_arguments(A "" "NAME;EXPORT_NAME;HEADER_DIR" "HDRS;SRCS;DEPS;PRIVATE_DEPS" ${ARGN})
  if(NOT A_EXPORT_NAME)
    set(A_EXPORT_NAME ${A_NAME})
  endif()
  set(target flinkstate_${A_NAME})
  add_library(${target} STATIC ${A_SRCS} ${A_HDRS})
  add_library(flinkstate::${A_EXPORT_NAME} ALIAS ${target})
  set_target_properties(${target} PROPERTIES
    EXPORT_NAME ${A_EXPORT_NAME}
    POSITION_INDEPENDENT_CODE ON)
  target_compile_features(${target} PUBLIC cxx_std_17)
  target_compile_options(${target} PRIVATE ${FLINKSTATE_WARNING_FLAGS})
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(${target} PUBLIC ${A_DEPS} PRIVATE ${A_PRIVATE_DEPS})
  if(FLINKSTATE_INSTALL)
    install(TARGETS ${target} EXPORT flinkstateTargets
            ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
    foreach(h ${A_HDRS})
      if(IS_ABSOLUTE "${h}")
        file(RELATIVE_PATH rel "${PROJECT_BINARY_DIR}" "${h}")
      else()
        file(RELATIVE_PATH rel "${PROJECT_SOURCE_DIR}" "${CMAKE_CURRENT_SOURCE_DIR}/${h}")
      endif()
      get_filename_component(dir "${rel}" DIRECTORY)
      install(FILES ${h} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/${dir})
    endforeach()
  endif()
endfunction()

# flinkstate_cc_test(NAME <n> SRCS ... DEPS ... [LABELS ...])
function(flinkstate_cc_test)
  cmake_parse_arguments(A "" "NAME" "SRCS;DEPS;LABELS" ${ARGN})
  add_executable(${A_NAME} ${A_SRCS})
  target_compile_options(${A_NAME} PRIVATE ${FLINKSTATE_WARNING_FLAGS})
  target_link_libraries(${A_NAME} PRIVATE ${A_DEPS} GTest::gmock GTest::gtest_main)
  target_compile_definitions(${A_NAME} PRIVATE
    FLINKSTATE_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    FLINKSTATE_SHARED_DIR="${PROJECT_SOURCE_DIR}/../shared")
  if(NOT A_LABELS)
    set(A_LABELS unit)
  endif()
  gtest_discover_tests(${A_NAME} PROPERTIES LABELS "${A_LABELS}" DISCOVERY_TIMEOUT 60)
endfunction()

# flinkstate_cc_benchmark(NAME <n> SRCS ... DEPS ...)
function(flinkstate_cc_benchmark)
  cmake_parse_arguments(A "" "NAME" "SRCS;DEPS" ${ARGN})
  add_executable(${A_NAME} ${A_SRCS})
  target_compile_options(${A_NAME} PRIVATE ${FLINKSTATE_WARNING_FLAGS})
  target_link_libraries(${A_NAME} PRIVATE ${A_DEPS} benchmark::benchmark)
endfunction()
