// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: stream_constants.h
// -----------------------------------------------------------------------------
// Constants of the Java Object Serialization Stream Protocol (Java Object
// Serialization Specification, section 6.4.2 "Terminal Symbols and Constants").

#ifndef FLINKSTATE_JAVAOBJ_STREAM_CONSTANTS_H_
#define FLINKSTATE_JAVAOBJ_STREAM_CONSTANTS_H_

#include <cstdint>

namespace flinkstate::javaobj {

inline constexpr uint16_t kStreamMagic = 0xACED;
inline constexpr uint16_t kStreamVersion = 5;

// True if `b` starts with the stream header `AC ED 00 05`.
bool HasStreamHeader(const uint8_t* b, uint64_t size);

}  // namespace flinkstate::javaobj

#endif  // FLINKSTATE_JAVAOBJ_STREAM_CONSTANTS_H_
