flinkstate_cc_benchmark(
  NAME metadata_benchmark
  SRCS ${CMAKE_CURRENT_LIST_DIR}/metadata_benchmark.cc
  DEPS flinkstate::flink flinkstate_test_fixtures)
