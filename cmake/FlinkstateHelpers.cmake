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
  # What the installed package must bring along (flinkstate_write_pkg_config).
  set_property(GLOBAL APPEND PROPERTY FLINKSTATE_EXTERNAL_DEPS ${A_DEPS} ${A_PRIVATE_DEPS})
  set_property(GLOBAL APPEND PROPERTY FLINKSTATE_LIBRARY_TARGETS ${target})
  # Public headers in the source tree, relative to it (tests/examples).
  foreach(h ${A_HDRS})
    if(NOT IS_ABSOLUTE "${h}")
      file(RELATIVE_PATH rel "${PROJECT_SOURCE_DIR}" "${CMAKE_CURRENT_SOURCE_DIR}/${h}")
      set_property(GLOBAL APPEND PROPERTY FLINKSTATE_PUBLIC_HEADERS ${rel})
    endif()
  endforeach()
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

# flinkstate_write_pkg_config(): configures cmake/flinkstate.pc.in into
# ${PROJECT_BINARY_DIR}/flinkstate.pc and installs it in <libdir>/pkgconfig.
# `Requires:` lists the pkg-config module of every external library a
# flinkstate_cc_library links, as Debian names them: absl::<x> -> absl_<x>,
# protobuf::libprotobuf -> protobuf, ZLIB::ZLIB -> zlib (`pkg-config
# --list-all`). They are
# public requirements, not Requires.private: the libraries are static and the
# public headers include Abseil's and protobuf's.
function(flinkstate_write_pkg_config)
  get_property(deps GLOBAL PROPERTY FLINKSTATE_EXTERNAL_DEPS)
  set(modules)
  foreach(d ${deps})
    if(d MATCHES "^absl::(.+)$")
      list(APPEND modules "absl_${CMAKE_MATCH_1}")
    elseif(d STREQUAL "protobuf::libprotobuf")
      list(APPEND modules protobuf)
    elseif(d STREQUAL "ZLIB::ZLIB")
      list(APPEND modules zlib)
    elseif(d STREQUAL "CURL::libcurl")
      list(APPEND modules libcurl)
    elseif(d STREQUAL "EXPAT::EXPAT")
      list(APPEND modules expat)
    elseif(d STREQUAL "Threads::Threads")
      # libc's: nothing to require
    elseif(d MATCHES "^flinkstate::" OR d MATCHES "^flinkstate_")
      # one of ours: in Libs
    else()
      message(FATAL_ERROR "flinkstate_write_pkg_config: no pkg-config module known for "
                          "'${d}'; map it in cmake/FlinkstateHelpers.cmake")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES modules)
  list(SORT modules)
  list(JOIN modules " " FLINKSTATE_PC_REQUIRES)
  # Relocatable: the prefix relative to the .pc file, unless the install
  # directories were given as absolute paths.
  set(pc_dir "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
  if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
    set(FLINKSTATE_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
    set(FLINKSTATE_PC_LIBDIR "${CMAKE_INSTALL_FULL_LIBDIR}")
    set(FLINKSTATE_PC_INCLUDEDIR "${CMAKE_INSTALL_FULL_INCLUDEDIR}")
  else()
    file(RELATIVE_PATH up "/root/${pc_dir}" "/root")
    string(REGEX REPLACE "/$" "" up "${up}")
    set(FLINKSTATE_PC_PREFIX "\${pcfiledir}/${up}")
    set(FLINKSTATE_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
    set(FLINKSTATE_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
  endif()
  configure_file(${PROJECT_SOURCE_DIR}/cmake/flinkstate.pc.in
                 ${PROJECT_BINARY_DIR}/flinkstate.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/flinkstate.pc DESTINATION ${pc_dir})
endfunction()
