# javaobj decoder / rewriter benchmarks (see the header of javaobj_benchmark.cc
# for the JDK baseline).
flinkstate_cc_benchmark(
  NAME javaobj_benchmark
  SRCS ${CMAKE_CURRENT_LIST_DIR}/javaobj_benchmark.cc
  DEPS flinkstate::javaobj)
