// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/javaobj/stream_constants.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace flinkstate::javaobj {

bool HasStreamHeader(const uint8_t* b, uint64_t size) {
  return size >= 4 && b[0] == (kStreamMagic >> 8) && b[1] == (kStreamMagic & 0xFF) &&
         b[2] == (kStreamVersion >> 8) && b[3] == (kStreamVersion & 0xFF);
}

std::string NotAnObjectProblem(uint8_t tc, uint32_t depth) {
  switch (tc) {
    case kTcBlockData:
    case kTcBlockDataLong:
      return "unexpected block data where an object is expected";
    case kTcEndBlockData:
      return "unexpected TC_ENDBLOCKDATA where an object is expected";
    case kTcReset:
      return absl::StrCat("unexpected TC_RESET inside an object (depth ", depth, ")");
    default:
      return absl::StrFormat("invalid type code 0x%02X", tc);
  }
}

std::string WrongReferenceProblem(uint32_t wire_handle, absl::string_view found,
                                  absl::string_view expected) {
  return absl::StrFormat("reference 0x%08X to a %s where %s is expected", wire_handle, found,
                         expected);
}

absl::Status CheckItemLength(absl::string_view what, int64_t len, uint64_t limit,
                             uint64_t remaining) {
  if (len < 0) return absl::InvalidArgumentError(absl::StrCat("negative ", what, " length ", len));
  const uint64_t n = static_cast<uint64_t>(len);
  if (n > limit) {
    return absl::ResourceExhaustedError(absl::StrCat(what, " of ", n, " bytes exceeds the limit"));
  }
  if (n > remaining) {
    return absl::OutOfRangeError(
        absl::StrCat(what, " length ", n, " exceeds the ", remaining, " remaining bytes"));
  }
  return absl::OkStatus();
}

const char* TypeCodeName(uint8_t tc) {
  switch (tc) {
    case kTcNull: return "TC_NULL";
    case kTcReference: return "TC_REFERENCE";
    case kTcClassDesc: return "TC_CLASSDESC";
    case kTcObject: return "TC_OBJECT";
    case kTcString: return "TC_STRING";
    case kTcArray: return "TC_ARRAY";
    case kTcClass: return "TC_CLASS";
    case kTcBlockData: return "TC_BLOCKDATA";
    case kTcEndBlockData: return "TC_ENDBLOCKDATA";
    case kTcReset: return "TC_RESET";
    case kTcBlockDataLong: return "TC_BLOCKDATALONG";
    case kTcException: return "TC_EXCEPTION";
    case kTcLongString: return "TC_LONGSTRING";
    case kTcProxyClassDesc: return "TC_PROXYCLASSDESC";
    case kTcEnum: return "TC_ENUM";
    default: return "unknown";
  }
}

}  // namespace flinkstate::javaobj
