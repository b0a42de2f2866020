// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
#include "fuzz/fuzz_entries.h"
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* d, size_t n) {
  return flinkstate::fuzz::RunTarget(flinkstate::fuzz::FuzzOperatorStateStream, d, n);
}
