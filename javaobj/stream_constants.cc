// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "javaobj/stream_constants.h"

namespace flinkstate::javaobj {

bool HasStreamHeader(const uint8_t* b, uint64_t size) {
  return size >= 4 && b[0] == 0xAC && b[1] == 0xED && b[2] == 0x00 &&
         b[3] == 0x05;
}

}  // namespace flinkstate::javaobj
