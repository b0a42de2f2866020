// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/checkpoint_properties.h"

#include "absl/strings/str_cat.h"
#include "flinkstate/javaobj/stream_reader.h"

namespace flinkstate {
namespace {

constexpr char kPropertiesClass[] =
    "org.apache.flink.runtime.checkpoint.CheckpointProperties";
constexpr char kCheckpointType[] = "org.apache.flink.runtime.checkpoint.CheckpointType";
constexpr char kSavepointType[] = "org.apache.flink.runtime.checkpoint.SavepointType";

bool BoolField(const javaobj::Stream& s, javaobj::ItemId object, const char* name) {
  absl::StatusOr<int64_t> v = s.PrimFieldInt(object, name);
  return v.ok() && *v != 0;
}

std::string EnumField(const javaobj::Stream& s, javaobj::ItemId object, const char* name) {
  javaobj::ItemId v = s.FieldValue(object, name);
  if (v == javaobj::kNoItem) return "";
  absl::StatusOr<std::string> e = s.EnumName(v);
  return e.ok() ? *e : "";
}

}  // namespace

CheckpointPropertiesSummary SummarizeCheckpointPropertiesObject(
    const javaobj::Stream& s, javaobj::ItemId object, bool check_class) {
  CheckpointPropertiesSummary p;
  object = s.Resolve(object);
  if (s.item(object).kind == javaobj::ItemKind::kNull) {
    p.kind = "null";
    return p;
  }
  if (check_class ? !s.IsInstanceOf(object, kPropertiesClass)
                  : s.item(object).kind != javaobj::ItemKind::kObject) {
    p.kind = "unknown";
    p.error = absl::StrCat("expected ", kPropertiesClass, ", found ", s.ClassNameOf(object));
    return p;
  }
  p.forced = BoolField(s, object, "forced");
  p.has_unclaimed = !s.PrimFieldBytes(object, "unclaimed").empty();  // 1.15+
  p.unclaimed = BoolField(s, object, "unclaimed");
  p.discard_subsumed = BoolField(s, object, "discardSubsumed");
  p.discard_finished = BoolField(s, object, "discardFinished");
  p.discard_cancelled = BoolField(s, object, "discardCancelled");
  p.discard_failed = BoolField(s, object, "discardFailed");
  p.discard_suspended = BoolField(s, object, "discardSuspended");
  javaobj::ItemId type = s.FieldValue(object, "checkpointType");
  if (type != javaobj::kNoItem) type = s.Resolve(type);  // Resolve needs a real item
  if (type == javaobj::kNoItem) {
    p.kind = "unknown";
    p.error = "CheckpointProperties without a checkpointType";
    return p;
  }
  if (s.item(type).kind == javaobj::ItemKind::kEnum) {
    // Flink 1.13/1.14: `CheckpointType` is an enum; its display name and
    // post-checkpoint action are fields of the constant, not in the stream.
    absl::StatusOr<std::string> constant = s.EnumName(type);
    if (!constant.ok()) {
      p.kind = "unknown";
      p.error = std::string(constant.status().message());
      return p;
    }
    SetLegacyCheckpointType(*constant, &p);
    return p;
  }
  const javaobj::ItemId name = s.FieldValue(type, "name");
  if (name != javaobj::kNoItem) {
    absl::StatusOr<std::string> n = s.StringValue(name);
    if (n.ok()) p.type_name = *n;
  }
  if (s.IsInstanceOf(type, kSavepointType)) {
    p.kind = "savepoint";
    p.format_type = EnumField(s, type, "formatType");
    p.post_checkpoint_action = EnumField(s, type, "postCheckpointAction");
  } else if (s.IsInstanceOf(type, kCheckpointType)) {
    p.kind = "checkpoint";
    p.sharing_files_strategy = EnumField(s, type, "sharingFilesStrategy");
  } else {
    p.kind = "unknown";
    p.error = absl::StrCat("unexpected checkpoint type class ", s.ClassNameOf(type));
  }
  return p;
}

void SetLegacyCheckpointType(absl::string_view constant, CheckpointPropertiesSummary* p) {
  static constexpr struct {
    const char* constant;
    const char* kind;
    const char* name;
    const char* action;
  } kLegacyTypes[] = {
      {"CHECKPOINT", "checkpoint", "Checkpoint", ""},
      {"SAVEPOINT", "savepoint", "Savepoint", "NONE"},
      {"SAVEPOINT_SUSPEND", "savepoint", "Suspend Savepoint", "SUSPEND"},
      {"SAVEPOINT_TERMINATE", "savepoint", "Terminate Savepoint", "TERMINATE"},
      {"SYNC_SAVEPOINT", "savepoint", "Synchronous Savepoint", "SUSPEND"},
  };
  for (const auto& t : kLegacyTypes) {
    if (constant == t.constant) {
      p->kind = t.kind;
      p->type_name = t.name;
      p->post_checkpoint_action = t.action;
      p->error.clear();
      return;
    }
  }
  p->kind = "unknown";
  p->error = absl::StrCat("unknown CheckpointType constant ", constant);
}

CheckpointPropertiesSummary SummarizeCheckpointProperties(serde::ByteView stream) {
  CheckpointPropertiesSummary p;
  if (stream.empty()) return p;
  absl::StatusOr<javaobj::Stream> s = javaobj::DecodeStream(stream);
  if (!s.ok()) {
    p.kind = "unknown";
    p.error = std::string(s.status().message());
    return p;
  }
  if (s->top_level().size() != 1) {
    p.kind = "unknown";
    p.error = absl::StrCat("expected one object, the stream holds ", s->top_level().size(),
                           " top-level items");
    return p;
  }
  return SummarizeCheckpointPropertiesObject(*s, s->top_level()[0]);
}

}  // namespace flinkstate
