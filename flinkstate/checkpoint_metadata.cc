// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/checkpoint_metadata.h"

#include "absl/strings/escaping.h"

namespace flinkstate {

static_assert(kMaxHandleTag == static_cast<uint8_t>(HandleTag::kSegmentPartitionableOperator),
              "kMaxHandleTag (format_constants.h) must be the last HandleTag");

const char* HandleTagName(uint8_t tag) {
  static constexpr const char* kNames[] = {
      "NULL_HANDLE",
      "BYTE_STREAM_STATE_HANDLE",
      "FILE_STREAM_STATE_HANDLE",
      "KEY_GROUPS_HANDLE",
      "PARTITIONABLE_OPERATOR_STATE_HANDLE",
      "INCREMENTAL_KEY_GROUPS_HANDLE",
      "RELATIVE_STREAM_STATE_HANDLE",
      "SAVEPOINT_KEY_GROUPS_HANDLE",
      "CHANGELOG_HANDLE",
      "CHANGELOG_BYTE_INCREMENT_HANDLE",
      "CHANGELOG_FILE_INCREMENT_HANDLE",
      "INCREMENTAL_KEY_GROUPS_HANDLE_V2",
      "KEY_GROUPS_HANDLE_V2",
      "CHANGELOG_FILE_INCREMENT_HANDLE_V2",
      "CHANGELOG_HANDLE_V2",
      "SEGMENT_FILE_HANDLE",
      "EMPTY_SEGMENT_FILE_HANDLE",
      "SEGMENT_PARTITIONABLE_OPERATOR_STATE_HANDLE",
  };
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == kMaxHandleTag + 1);
  return tag < sizeof(kNames) / sizeof(kNames[0]) ? kNames[tag] : "UNKNOWN";
}

const char* DistributionModeName(uint8_t mode) {
  switch (mode) {
    case 0:
      return "SPLIT_DISTRIBUTE";
    case 1:
      return "UNION";
    case 2:
      return "BROADCAST";
    default:
      return "UNKNOWN";
  }
}

std::string OperatorState::IdHex() const {
  return absl::BytesToHexString(absl::string_view(
      reinterpret_cast<const char*>(id.data()), id.size()));
}

}  // namespace flinkstate
