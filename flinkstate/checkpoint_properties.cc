// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/checkpoint_properties.h"

#include "absl/strings/match.h"

namespace flinkstate {
namespace {

// True if `text` occurs in `b` as a complete TC_STRING body (u2 length + text),
// which is how class names and enum constant names are written.
bool HasJavaString(absl::string_view b, absl::string_view text) {
  std::string needle;
  needle.push_back(static_cast<char>(text.size() >> 8));
  needle.push_back(static_cast<char>(text.size() & 0xFF));
  needle.append(text.data(), text.size());
  return absl::StrContains(b, needle);
}

}  // namespace

CheckpointPropertiesSummary SummarizeCheckpointProperties(serde::ByteView stream) {
  CheckpointPropertiesSummary s;
  if (stream.empty()) return s;
  const absl::string_view b = serde::AsStringView(stream);
  if (b == absl::string_view("\xAC\xED\x00\x05\x70", 5)) {
    s.kind = "null";
    return s;
  }
  if (HasJavaString(b, "org.apache.flink.runtime.checkpoint.SavepointType")) {
    s.kind = "savepoint";
    for (const char* f : {"CANONICAL", "NATIVE"}) {
      if (HasJavaString(b, f)) s.format_type = f;
    }
    for (const char* a : {"NONE", "SUSPEND", "TERMINATE"}) {
      if (HasJavaString(b, a)) s.post_checkpoint_action = a;
    }
  } else if (HasJavaString(b, "org.apache.flink.runtime.checkpoint.CheckpointType")) {
    s.kind = "checkpoint";
    for (const char* f : {"FORWARD_BACKWARD", "FORWARD", "NO_SHARING"}) {
      if (HasJavaString(b, f)) {
        s.sharing_files_strategy = f;
        break;
      }
    }
  } else {
    s.kind = "unknown";
  }
  return s;
}

}  // namespace flinkstate
