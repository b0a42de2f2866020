// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/relocate.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "flinkstate/handle_walker.h"
#include "flinkstate/serde/data_output.h"
#include "flinkstate/serde/modified_utf8.h"
#include "flinkstate/serde/status_macros.h"

namespace flinkstate {
namespace {

// Calls `fn(what, utf)` for every relocatable string, in file order.
template <typename Fn>
class PathVisitor : public HandleVisitor {
 public:
  explicit PathVisitor(Fn fn) : fn_(std::move(fn)) {}
  void OnOperatorHandle(const HandleContext&, const OperatorStateHandle& h) override {
    if (h.tag == static_cast<uint8_t>(HandleTag::kSegmentPartitionableOperator)) {
      fn_("task-owned directory", h.task_owned_directory);
      fn_("shared directory", h.shared_directory);
    }
  }
  void OnStream(const HandleContext&, const StreamStateHandle& h) override {
    switch (static_cast<HandleTag>(h.tag)) {
      case HandleTag::kFileStream:
        fn_("FileStateHandle path", h.path);
        break;
      case HandleTag::kSegmentFile:
        fn_("SegmentFileStateHandle path", h.path);
        break;
      case HandleTag::kByteStream:
        fn_("ByteStreamStateHandle name", h.name);
        break;
      default:
        break;
    }
  }

 private:
  Fn fn_;
};

template <typename Fn>
void ForEachPath(const StateFile& file, Fn fn) {
  PathVisitor<Fn> v(std::move(fn));
  WalkStateFile(file, &v);
}

}  // namespace

absl::StatusOr<RelocateResult> PlanRelocate(const StateFile& file,
                                            serde::ByteView input,
                                            const RelocateOptions& options) {
  if (options.from_prefix.empty()) {
    return absl::InvalidArgumentError("relocate: --from must not be empty");
  }
  // Both prefixes must be text: a prefix that ends inside a multi-byte
  // character would match byte-wise and leave a broken remainder.
  for (const auto& [flag, prefix] : {std::pair<const char*, const std::string*>{
                                         "--from", &options.from_prefix},
                                     {"--to", &options.to_prefix}}) {
    if (absl::Status s = serde::Utf8ToModifiedUtf8(*prefix).status(); !s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("relocate: ", flag, " is not valid UTF-8: ", s.message()));
    }
  }
  RelocateResult result;
  std::vector<serde::Replacement> edits;
  absl::Status status;
  ForEachPath(file, [&](const char* what, const Utf& u) {
    if (!status.ok() || !absl::StartsWith(u.value, options.from_prefix)) return;
    std::string now = options.to_prefix + u.value.substr(options.from_prefix.size());
    std::string bytes;
    absl::StatusOr<std::string> body = serde::Utf8ToModifiedUtf8(now);
    absl::Status s = body.ok() ? serde::DataOutput(&bytes).WriteModifiedUtf8Raw(
                                     serde::AsBytes(*body))
                               : body.status();
    if (!s.ok()) {
      status = absl::InvalidArgumentError(absl::StrCat(
          "relocate: ", what, " at byte ", u.range.offset,
          body.ok() ? " would become too long: " : " cannot be written: ",
          s.message()));
      return;
    }
    edits.push_back({u.range, std::move(bytes)});
    result.changed.push_back({what, u.value, std::move(now), u.range.offset});
  });
  FLINKSTATE_RETURN_IF_ERROR(status);
  if (result.changed.empty()) {
    return absl::NotFoundError(absl::StrCat("relocate: no path starts with '",
                                            options.from_prefix,
                                            "'; nothing was written"));
  }
  FLINKSTATE_ASSIGN_OR_RETURN(
      result.plan, serde::EditPlan::FromReplacements(input.size(), std::move(edits)));
  return result;
}

absl::Status VerifyRelocated(const StateFile& before, const StateFile& after,
                             const RelocateOptions& options) {
  std::vector<std::string> expected, got;
  ForEachPath(before, [&](const char*, const Utf& u) {
    expected.push_back(absl::StartsWith(u.value, options.from_prefix)
                           ? options.to_prefix + u.value.substr(options.from_prefix.size())
                           : u.value);
  });
  ForEachPath(after, [&](const char*, const Utf& u) { got.push_back(u.value); });
  if (expected != got) {
    return absl::DataLossError("relocate verify: the paths are not the expected ones");
  }
  if (before.kind == StateFileKind::kMetadata &&
      (before.metadata.operators.size() != after.metadata.operators.size() ||
       before.metadata.checkpoint_id != after.metadata.checkpoint_id)) {
    return absl::DataLossError("relocate verify: operators changed");
  }
  return absl::OkStatus();
}

}  // namespace flinkstate
