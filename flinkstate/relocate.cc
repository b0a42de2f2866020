// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/relocate.h"

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
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

bool IsControl(char ch) {
  const auto c = static_cast<uint8_t>(ch);
  return c < 0x20 || c == 0x7F;
}

// The length of a leading URI scheme and its ':' ("s3:" -> 3), or 0.
size_t SchemeLength(absl::string_view p) {
  if (p.empty() || !absl::ascii_isalpha(static_cast<unsigned char>(p[0]))) return 0;
  for (size_t i = 1; i < p.size(); ++i) {
    const auto c = static_cast<unsigned char>(p[i]);
    if (c == ':') return i + 1;
    if (!absl::ascii_isalnum(c) && c != '+' && c != '-' && c != '.') return 0;
  }
  return 0;
}

}  // namespace

absl::Status CheckSafePath(absl::string_view path) {
  for (size_t i = 0; i < path.size(); ++i) {
    if (IsControl(path[i])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "holds the control character 0x", absl::Hex(static_cast<uint8_t>(path[i]),
                                                       absl::kZeroPad2),
          " at position ", i));
    }
  }
  absl::string_view rest = path;
  const size_t scheme = SchemeLength(path);
  rest.remove_prefix(scheme);
  if (rest.empty() || rest[0] != '/') {
    return absl::InvalidArgumentError("is not absolute (neither '/...' nor 'scheme:/...')");
  }
  if (scheme != 0 && absl::StartsWith(rest, "//")) {
    // "s3://bucket/...", "file:///tmp/...": skip the authority.
    const size_t end = rest.find('/', 2);
    rest = end == absl::string_view::npos ? absl::string_view() : rest.substr(end);
  }
  // `rest` is "" or "/seg/seg...[/]"; only the last segment may be empty.
  if (!rest.empty()) {
    const std::vector<absl::string_view> segments = absl::StrSplit(rest.substr(1), '/');
    for (size_t i = 0; i < segments.size(); ++i) {
      if (segments[i] == "." || segments[i] == "..") {
        return absl::InvalidArgumentError(absl::StrCat("has a '", segments[i], "' segment"));
      }
      if (segments[i].empty() && i + 1 != segments.size()) {
        return absl::InvalidArgumentError("has an empty segment ('//')");
      }
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateRelocateOptions(const RelocateOptions& options) {
  if (options.from_prefix.empty()) {
    return absl::InvalidArgumentError("relocate: --from must not be empty");
  }
  if (options.to_prefix.empty()) {
    return absl::InvalidArgumentError(
        "relocate: --to must not be empty (it would leave bare file names, which "
        "Flink resolves against its working directory)");
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
  if (absl::EndsWith(options.from_prefix, "/") != absl::EndsWith(options.to_prefix, "/")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "relocate: --from '", absl::CHexEscape(options.from_prefix), "' and --to '",
        absl::CHexEscape(options.to_prefix),
        "' must both end in '/' or both not (prefixes end on a path boundary)"));
  }
  if (!options.allow_unsafe_paths) {
    if (absl::Status s = CheckSafePath(options.to_prefix); !s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("relocate: --to '", absl::CHexEscape(options.to_prefix), "' ",
                       s.message(), " (--allow-unsafe-paths to write it anyway)"));
    }
  }
  return absl::OkStatus();
}

std::optional<std::string> RelocatedPath(absl::string_view path,
                                         const RelocateOptions& options) {
  const std::string& from = options.from_prefix;
  if (from.empty() || !absl::StartsWith(path, from)) return std::nullopt;
  if (from.back() != '/' && path.size() > from.size() && path[from.size()] != '/') {
    return std::nullopt;  // "/data/flink" does not match "/data/flink2/x"
  }
  return absl::StrCat(options.to_prefix, path.substr(from.size()));
}

absl::StatusOr<RelocateResult> PlanRelocate(const StateFile& file,
                                            serde::ByteView input,
                                            const RelocateOptions& options) {
  FLINKSTATE_RETURN_IF_ERROR(ValidateRelocateOptions(options));
  RelocateResult result;
  std::vector<serde::Replacement> edits;
  absl::Status status;
  ForEachPath(file, [&](const char* what, const Utf& u) {
    if (!status.ok()) return;
    std::optional<std::string> relocated = RelocatedPath(u.value, options);
    if (!relocated) return;
    std::string now = *std::move(relocated);
    if (!options.allow_unsafe_paths) {
      if (absl::Status s = CheckSafePath(now); !s.ok()) {
        status = absl::InvalidArgumentError(absl::StrCat(
            "relocate: ", what, " at byte ", u.range.offset, " would become '",
            absl::CHexEscape(now), "', which ", s.message(),
            " (--allow-unsafe-paths to write it anyway)"));
        return;
      }
    }
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
                                            absl::CHexEscape(options.from_prefix),
                                            "' at a path boundary; nothing was written"));
  }
  FLINKSTATE_ASSIGN_OR_RETURN(
      result.plan, serde::EditPlan::FromReplacements(input.size(), std::move(edits)));
  return result;
}

absl::Status VerifyRelocated(const StateFile& before, const StateFile& after,
                             const RelocateOptions& options) {
  std::vector<std::string> expected, got;
  ForEachPath(before, [&](const char*, const Utf& u) {
    expected.push_back(RelocatedPath(u.value, options).value_or(u.value));
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
