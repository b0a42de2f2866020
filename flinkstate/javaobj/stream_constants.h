// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: stream_constants.h
// -----------------------------------------------------------------------------
// Constants of the Java Object Serialization Stream Protocol (Java Object
// Serialization Specification, section 6.4.2 "Terminal Symbols and
// Constants"; `java.io.ObjectStreamConstants`).
//
//   ```c++ (const uint8_t* b, uint64_t n)
//   if (!HasStreamHeader(b, n)) return absl::InvalidArgumentError("not a Java stream");
//   if (n > 4 && b[4] == kTcReference) return absl::InvalidArgumentError("a reference first");
//   ```
//
// Thread safety: constants and pure functions only; safe from any thread.

#ifndef FLINKSTATE_JAVAOBJ_STREAM_CONSTANTS_H_
#define FLINKSTATE_JAVAOBJ_STREAM_CONSTANTS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace flinkstate::javaobj {

inline constexpr uint16_t kStreamMagic = 0xACED;
inline constexpr uint16_t kStreamVersion = 5;
// First handle number; a TC_REFERENCE carries `kBaseWireHandle + index`.
inline constexpr int32_t kBaseWireHandle = 0x7E0000;

// Type codes (TC_*), one byte each.
inline constexpr uint8_t kTcBase = 0x70;
inline constexpr uint8_t kTcNull = 0x70;
inline constexpr uint8_t kTcReference = 0x71;
inline constexpr uint8_t kTcClassDesc = 0x72;
inline constexpr uint8_t kTcObject = 0x73;
inline constexpr uint8_t kTcString = 0x74;
inline constexpr uint8_t kTcArray = 0x75;
inline constexpr uint8_t kTcClass = 0x76;
inline constexpr uint8_t kTcBlockData = 0x77;
inline constexpr uint8_t kTcEndBlockData = 0x78;
inline constexpr uint8_t kTcReset = 0x79;
inline constexpr uint8_t kTcBlockDataLong = 0x7A;
inline constexpr uint8_t kTcException = 0x7B;
inline constexpr uint8_t kTcLongString = 0x7C;
inline constexpr uint8_t kTcProxyClassDesc = 0x7D;
inline constexpr uint8_t kTcEnum = 0x7E;

// Class-descriptor flags (SC_*), one byte.
inline constexpr uint8_t kScWriteMethod = 0x01;
inline constexpr uint8_t kScSerializable = 0x02;
inline constexpr uint8_t kScExternalizable = 0x04;
inline constexpr uint8_t kScBlockData = 0x08;
inline constexpr uint8_t kScEnum = 0x10;

// Largest block the JDK writer emits (`ObjectOutputStream.MAX_BLOCK_SIZE`),
// and the largest payload of the short TC_BLOCKDATA form.
inline constexpr uint32_t kMaxJdkBlockSize = 1024;
inline constexpr uint32_t kMaxShortBlockSize = 255;

// True if `b` starts with the stream header `AC ED 00 05`.
bool HasStreamHeader(const uint8_t* b, uint64_t size);

// "TC_OBJECT" etc. for a type code; "unknown" for other bytes.
const char* TypeCodeName(uint8_t tc);

// What is wrong with type code `tc` where an object must start
// (`ObjectInputStream.readObject0`): block data, TC_ENDBLOCKDATA, TC_RESET
// at `depth` > 0, or no type code. The problem the tree decoder and the
// cursor report alike. Precondition: `tc` starts no object.
std::string NotAnObjectProblem(uint8_t tc, uint32_t depth);

// "reference 0x<wire handle> to a <found> where <expected> is expected": a
// TC_REFERENCE to an item of the wrong kind, as both readers say it.
std::string WrongReferenceProblem(uint32_t wire_handle, absl::string_view found,
                                  absl::string_view expected);

// The length `len` of a block data or string header (`what`: "block data",
// "string") checked as both readers check it: `InvalidArgument` if negative,
// `ResourceExhausted` above `limit`, `OutOfRange` above the `remaining`
// bytes; OK otherwise. The status carries no location: the reader adds the
// header's.
absl::Status CheckItemLength(absl::string_view what, int64_t len, uint64_t limit,
                             uint64_t remaining);

// Wire size of a primitive field type code (B C D F I J S Z); 0 otherwise.
inline int PrimitiveSize(char type_code) {
  switch (type_code) {
    case 'B': case 'Z': return 1;
    case 'C': case 'S': return 2;
    case 'I': case 'F': return 4;
    case 'J': case 'D': return 8;
    default: return 0;
  }
}

}  // namespace flinkstate::javaobj

#endif  // FLINKSTATE_JAVAOBJ_STREAM_CONSTANTS_H_
