flinkstate_cc_benchmark(
  NAME ha_benchmark
  SRCS ${CMAKE_CURRENT_LIST_DIR}/ha_benchmark.cc
  DEPS flinkstate::flink flinkstate::javaobj flinkstate_test_fixtures)
