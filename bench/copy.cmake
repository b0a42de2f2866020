# copy_path: one copy method per process, timed beside cp by bench/run_all.sh
# (see the header of copy_path.cc). No library dependencies.
add_executable(copy_path ${CMAKE_CURRENT_LIST_DIR}/copy_path.cc)
target_compile_options(copy_path PRIVATE ${FLINKSTATE_WARNING_FLAGS})
