// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/relocate.h"

#include <cstring>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/match.h"
#include "flinkstate/completed_checkpoint.h"
#include "flinkstate/inspect.h"
#include "flinkstate/report_diff.h"
#include "flinkstate/javaobj/layouts.h"
#include "flinkstate/javaobj/stream_cursor.h"
#include "flinkstate/javaobj/rewriter.h"
#include "flinkstate/javaobj/stream_reader.h"
#include "flinkstate/javaobj/stream_writer.h"
#include "flinkstate/handle_walker.h"
#include "flinkstate/metadata_writer.h"
#include "flinkstate/operator_id.h"
#include "flinkstate/serde/data_output.h"
#include "flinkstate/serde/error_location.h"
#include "flinkstate/serde/input_releaser.h"
#include "flinkstate/serde/modified_utf8.h"
#include "flinkstate/metadata_reader.h"
#include "flinkstate/serde/data_input.h"
#include "flinkstate/serde/endian.h"
#include "flinkstate/serde/mapped_file.h"
#include "flinkstate/serde/status_macros.h"
#include "flinkstate/streamed_edit.h"

namespace flinkstate {
namespace {

// The refusal of a new path that `CheckSafePath` rejected (`why`): the
// `what` at byte `offset` would become `after`. One wording for every file
// kind and mode.
absl::Status UnsafePathError(absl::string_view layer, absl::string_view what, uint64_t offset,
                             absl::string_view after, const absl::Status& why,
                             absl::string_view item_path = "") {
  return serde::WithLocation(
      absl::InvalidArgumentError(absl::StrCat(
          layer, ": ", item_path, item_path.empty() ? "" : ": ", what, " at byte ", offset,
          " would become '", absl::CHexEscape(after), "', which ", why.message(),
          " (--allow-unsafe-paths to write it anyway)")),
      layer, item_path, offset);
}

using javaobj::ItemId;
using javaobj::ItemKind;


// Visits the string items a relocation may rewrite: (defining string item,
// what it is).
template <typename Fn>
void ForEachPathString(const javaobj::Stream& s, Fn&& fn) {
  for (ItemId i = 0; i < s.num_items(); ++i) {
    const javaobj::Item& it = s.item(i);
    if (it.kind != ItemKind::kObject) continue;
    const std::string& cls = s.desc(it.desc).name;
    auto visit = [&](const char* field, const char* what) {
      const ItemId v = s.FieldValue(i, field);
      if (v == javaobj::kNoItem) return;
      const ItemId d = s.Resolve(v);
      if (s.item(d).kind == ItemKind::kString) fn(d, what);
    };
    if (cls == "java.net.URI") {
      visit("string", "Path URI");
    } else if (s.desc(it.desc).FindField("externalPointer") >= 0) {
      visit("externalPointer", "externalPointer");
    }
  }
}

// Calls `fn(what, utf)` for every relocatable string, in file order.
template <typename Fn>
class PathVisitor : public HandleVisitor {
 public:
  explicit PathVisitor(Fn fn) : fn_(std::move(fn)) {}
  void OnOperatorHandle(const HandleContext& c, const OperatorStateHandle& h) override {
    if (h.tag == static_cast<uint8_t>(HandleTag::kSegmentPartitionableOperator)) {
      fn_("task-owned directory", h.task_owned_directory, c);
      fn_("shared directory", h.shared_directory, c);
    }
  }
  void OnStream(const HandleContext& c, const StreamStateHandle& h) override {
    switch (static_cast<HandleTag>(h.tag)) {
      case HandleTag::kFileStream:
        fn_("FileStateHandle path", h.path, c);
        break;
      case HandleTag::kSegmentFile:
        fn_("SegmentFileStateHandle path", h.path, c);
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

// One path-bearing item of a file, as the relative modes compare them.
struct PathEntry {
  uint8_t tag = 0;
  int64_t state_size = 0;
  std::string path;
  bool operator==(const PathEntry& o) const {
    return tag == o.tag && state_size == o.state_size && path == o.path;
  }
};

// File and relative stream handles (tags 2, 6), segment files (15) and the
// directories of file-merging operator handles (17), in file order.
class PathEntryCollector : public HandleVisitor {
 public:
  void OnOperatorHandle(const HandleContext&, const OperatorStateHandle& h) override {
    if (h.tag == static_cast<uint8_t>(HandleTag::kSegmentPartitionableOperator)) {
      entries.push_back({h.tag, 0, h.task_owned_directory.value});
      entries.push_back({h.tag, 0, h.shared_directory.value});
    }
  }
  void OnStream(const HandleContext&, const StreamStateHandle& h) override {
    switch (static_cast<HandleTag>(h.tag)) {
      case HandleTag::kFileStream:
      case HandleTag::kRelativeStream:
        handles.push_back(&h);
        entries.push_back({h.tag, h.state_size, h.path.value});
        break;
      case HandleTag::kSegmentFile:
        entries.push_back({h.tag, h.state_size, h.path.value});
        break;
      default:
        break;
    }
  }
  std::vector<const StreamStateHandle*> handles;  // tags 2 and 6
  std::vector<PathEntry> entries;
};

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

absl::string_view WithoutTrailingSlash(absl::string_view dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.remove_suffix(1);
  return dir;
}

// The path of `path` relative to the directory `dir` if it lies inside it.
std::optional<std::string> PathInside(absl::string_view path, absl::string_view dir) {
  dir = WithoutTrailingSlash(dir);
  if (path.size() <= dir.size() + 1 || !absl::StartsWith(path, dir) ||
      path[dir.size()] != '/') {
    return std::nullopt;
  }
  return std::string(path.substr(dir.size() + 1));
}

std::string UnderDirectory(absl::string_view dir, absl::string_view relative) {
  return absl::StrCat(WithoutTrailingSlash(dir), "/", relative);
}

// OK for what Flink's `new Path(exclusiveDir, relativePath)` resolves inside
// the directory: non-empty segments other than '.' and '..', no scheme, no
// leading '/', no control characters.
absl::Status CheckRelativePath(absl::string_view rel) {
  if (rel.empty()) return absl::InvalidArgumentError("is empty");
  for (size_t i = 0; i < rel.size(); ++i) {
    if (IsControl(rel[i])) {
      return absl::InvalidArgumentError(absl::StrCat(
          "holds the control character 0x",
          absl::Hex(static_cast<uint8_t>(rel[i]), absl::kZeroPad2), " at position ", i));
    }
  }
  if (rel[0] == '/') return absl::InvalidArgumentError("is absolute");
  const size_t colon = rel.find(':');
  if (colon != absl::string_view::npos && colon < rel.find('/')) {
    return absl::InvalidArgumentError("starts with a URI scheme");
  }
  for (absl::string_view seg : absl::StrSplit(rel, '/')) {
    if (seg.empty()) return absl::InvalidArgumentError("has an empty segment");
    if (seg == "." || seg == "..") {
      return absl::InvalidArgumentError(absl::StrCat("has a '", seg, "' segment"));
    }
  }
  return absl::OkStatus();
}

absl::Status RequireRelativeCapable(const StateFile& file, const char* flag) {
  if (file.kind != StateFileKind::kMetadata) {
    return absl::FailedPreconditionError(absl::StrCat(
        "relocate ", flag, ": only a _metadata file can hold relative handles (Flink "
        "resolves them against the directory it reads the _metadata from); this is ",
        file.kind == StateFileKind::kOperatorSnapshot ? "an operator-snapshot file"
                                                      : "a completedCheckpoint",
        ", which has no such directory"));
  }
  if (file.metadata.version < kMinRelativeHandleVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        "relocate ", flag, ": metadata version ", file.metadata.version,
        " has no relative handles (RelativeFileStateHandle, tag 6, exists from version ",
        kMinRelativeHandleVersion, ", Flink 1.11); convert --to-version ",
        kMinRelativeHandleVersion, " first"));
  }
  return absl::OkStatus();
}

// The handle as the other type: tag 6 (`utf relativePath`, `i64 stateSize`)
// or tag 2 (`i64 stateSize`, `utf filePath`), as
// `MetadataV2V3SerializerBase.serializeStreamStateHandle` writes them.
absl::StatusOr<std::string> EncodePathHandle(HandleTag tag, int64_t state_size,
                                             absl::string_view path) {
  std::string bytes;
  serde::DataOutput out(&bytes);
  out.WriteUint8(static_cast<uint8_t>(tag));
  if (tag == HandleTag::kFileStream) out.WriteInt64(state_size);
  FLINKSTATE_RETURN_IF_ERROR(out.WriteModifiedUtf8(path));
  if (tag == HandleTag::kRelativeStream) out.WriteInt64(state_size);
  return bytes;
}

PathEntry ExpectedEntry(const PathEntry& e, const RelocateOptions& options) {
  if (options.mode == RelocateMode::kToRelative &&
      e.tag == static_cast<uint8_t>(HandleTag::kFileStream)) {
    if (std::optional<std::string> rel = PathInside(e.path, options.from_prefix)) {
      return {static_cast<uint8_t>(HandleTag::kRelativeStream), e.state_size, *rel};
    }
  }
  if (options.mode == RelocateMode::kToAbsolute &&
      e.tag == static_cast<uint8_t>(HandleTag::kRelativeStream)) {
    return {static_cast<uint8_t>(HandleTag::kFileStream), e.state_size,
            UnderDirectory(options.to_prefix, e.path)};
  }
  return e;
}

absl::StatusOr<RelocateResult> PlanRelativeMode(const StateFile& file,
                                                serde::ByteView input,
                                                const RelocateOptions& options) {
  const bool to_relative = options.mode == RelocateMode::kToRelative;
  const char* flag = to_relative ? "--to-relative" : "--to-absolute";
  const std::string layer = absl::StrCat("relocate ", flag);  // the edit, as its messages say
  FLINKSTATE_RETURN_IF_ERROR(RequireRelativeCapable(file, flag));
  PathEntryCollector collected;
  WalkStateFile(file, &collected);
  RelocateResult result;
  std::vector<serde::Replacement> edits;
  for (const StreamStateHandle* h : collected.handles) {
    const PathEntry before{h->tag, h->state_size, h->path.value};
    const PathEntry after = ExpectedEntry(before, options);
    if (after == before) continue;
    // The relative path is the one Flink joins to the directory: it must stay
    // inside it.
    const std::string& rel = to_relative ? after.path : before.path;
    // A refusal of this handle: "LAYER: <text>", located at the handle.
    const auto refuse = [&](auto&&... text) {
      return serde::WithLocation(
          absl::InvalidArgumentError(absl::StrCat(layer, ": ", text...)), layer, "",
          h->range.offset);
    };
    if (absl::Status s = CheckRelativePath(rel); !s.ok()) {
      return refuse("the relative path '", absl::CHexEscape(rel), "' of the handle at byte ",
                    h->range.offset, " ", s.message());
    }
    // Flink writes relative handles as bare file names beside `_metadata` and
    // joins them to the directory `_metadata` is read from. A nested one
    // means --from is above that directory (e.g. the job directory instead
    // of its chk-<n>): Flink would look for <chk-n>/<chk-n>/<file>.
    if (to_relative && absl::StrContains(rel, '/')) {
      const std::string sub(rel.substr(0, rel.rfind('/')));
      return refuse("the handle at byte ", h->range.offset, " would become '",
                    absl::CHexEscape(rel),
                    "', but Flink resolves a relative handle against the directory that holds "
                    "_metadata and writes only bare file names there; give --from the directory "
                    "of the _metadata file (",
                    WithoutTrailingSlash(options.from_prefix), "/", absl::CHexEscape(sub),
                    "?) (nothing was written)");
    }
    if (!to_relative && !options.allow_unsafe_paths) {
      if (absl::Status s = CheckSafePath(after.path); !s.ok()) {
        return UnsafePathError(layer, "the handle", h->range.offset, after.path, s);
      }
    }
    absl::StatusOr<std::string> bytes =
        EncodePathHandle(static_cast<HandleTag>(after.tag), after.state_size, after.path);
    if (!bytes.ok()) {
      return refuse("the handle at byte ", h->range.offset,
                    " cannot be written: ", bytes.status().message());
    }
    edits.push_back({h->range, *std::move(bytes)});
    result.changed.push_back({to_relative ? "FileStateHandle -> RelativeFileStateHandle"
                                          : "RelativeFileStateHandle -> FileStateHandle",
                              before.path, after.path, h->range.offset});
  }
  if (to_relative) {
    ForEachPath(file, [&](const char* what, const Utf& u, const HandleContext&) {
      if (absl::string_view(what) != "FileStateHandle path" &&
          PathInside(u.value, options.from_prefix)) {
        result.left_absolute.push_back({what, u.value, "", u.range.offset});
      }
    });
  }
  if (result.changed.empty()) {
    return absl::NotFoundError(
        to_relative ? absl::StrCat("relocate --to-relative: no FileStateHandle path lies inside '",
                                   absl::CHexEscape(options.from_prefix),
                                   "'; nothing was written")
                    : std::string("relocate --to-absolute: the file holds no relative handle; "
                                  "nothing was written"));
  }
  FLINKSTATE_ASSIGN_OR_RETURN(
      result.plan, serde::EditPlan::FromReplacements(input.size(), std::move(edits)));
  return result;
}

}  // namespace

absl::Status CheckSafePath(absl::string_view path) {
  // Eight bytes at a time (relocate checks every new path of a wide job): a
  // word holds no byte below 0x20 and no 0x7F unless the bytes with their
  // high bit clear say so (bytes of 0x80 and above are never control
  // characters here).
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHighs = 0x8080808080808080ULL;
  size_t clean = 0;
  for (; clean + 8 <= path.size(); clean += 8) {
    uint64_t w;
    std::memcpy(&w, path.data() + clean, 8);
    const uint64_t below_space = (w - 0x20 * kOnes) & ~w & kHighs;
    const uint64_t x = w ^ (0x7F * kOnes);
    const uint64_t del = (x - kOnes) & ~x & kHighs;
    if ((below_space | del) != 0) break;
  }
  for (size_t i = clean; i < path.size(); ++i) {
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
  // (Walked in place: relocate checks every new path of a wide job.)
  if (!rest.empty()) {
    size_t start = 1;  // of the current segment
    for (size_t i = 1; i <= rest.size(); ++i) {
      if (i < rest.size() && rest[i] != '/') continue;
      const absl::string_view segment = rest.substr(start, i - start);
      if (segment == "." || segment == "..") {
        return absl::InvalidArgumentError(absl::StrCat("has a '", segment, "' segment"));
      }
      if (i < rest.size() && segment.empty()) {
        return absl::InvalidArgumentError("has an empty segment ('//')");
      }
      start = i + 1;
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateRelocateOptions(const RelocateOptions& options) {
  if (options.mode != RelocateMode::kPrefix) {
    const bool to_relative = options.mode == RelocateMode::kToRelative;
    const char* mode = to_relative ? "--to-relative" : "--to-absolute";
    const char* given = to_relative ? "--from" : "--to";
    const std::string& dir = to_relative ? options.from_prefix : options.to_prefix;
    const std::string& other = to_relative ? options.to_prefix : options.from_prefix;
    if (dir.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "relocate: ", mode, " needs ", given, " DIR, the checkpoint directory ",
          to_relative ? "as the handles name it (e.g. file:/ckpt/JOB/chk-7)"
                      : "the relative paths are to resolve against"));
    }
    if (!other.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("relocate: ", mode, " takes ", given,
                                                     " only, not ",
                                                     to_relative ? "--to" : "--from"));
    }
    if (absl::Status s = serde::Utf8ToModifiedUtf8(dir).status(); !s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("relocate: ", given, " is not valid UTF-8: ", s.message()));
    }
    // The directory is matched (--to-relative) or written (--to-absolute) as
    // a whole: it must be a clean absolute path either way.
    if (absl::Status s = CheckSafePath(dir);
        !s.ok() && (to_relative || !options.allow_unsafe_paths)) {
      return absl::InvalidArgumentError(absl::StrCat("relocate: ", given, " '",
                                                     absl::CHexEscape(dir), "' ",
                                                     s.message()));
    }
    return absl::OkStatus();
  }
  if (options.from_prefix.empty()) {
    return absl::InvalidArgumentError("relocate: --from must not be empty");
  }
  if (options.to_prefix.empty()) {
    return absl::InvalidArgumentError(
        "relocate: --to must not be empty (it would leave bare file names, which "
        "Flink resolves against its working directory)");
  }
  if (options.from_prefix == options.to_prefix) {
    // It would write an identical file, a backup with --in-place, and report
    // every path as relocated (attack of 2026-12-03).
    return absl::InvalidArgumentError(absl::StrCat(
        "relocate: --from and --to are the same prefix '", absl::CHexEscape(options.from_prefix),
        "': nothing would change"));
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
  if (options.mode != RelocateMode::kPrefix) {
    return PlanRelativeMode(file, input, options);
  }
  RelocateResult result;
  std::vector<serde::Replacement> edits;
  absl::Status status;
  ForEachPath(file, [&](const char* what, const Utf& u, const HandleContext& c) {
    if (!status.ok()) return;
    std::optional<std::string> relocated = RelocatedPath(u.value, options);
    if (!relocated) return;
    std::string now = *std::move(relocated);
    if (!options.allow_unsafe_paths) {
      if (absl::Status s = CheckSafePath(now); !s.ok()) {
        status = UnsafePathError("relocate", what, u.range.offset, now, s, HandleItemPath(c));
        return;
      }
    }
    std::string bytes;
    absl::StatusOr<std::string> body = serde::Utf8ToModifiedUtf8(now);
    absl::Status s = body.ok() ? serde::DataOutput(&bytes).WriteModifiedUtf8Raw(
                                     serde::AsBytes(*body))
                               : body.status();
    if (!s.ok()) {
      status = serde::WithLocation(
          absl::InvalidArgumentError(absl::StrCat(
              "relocate: ", HandleItemPath(c), ": ", what, " at byte ", u.range.offset,
              body.ok() ? " would become too long: " : " cannot be written: ", s.message())),
          "relocate", HandleItemPath(c), u.range.offset);
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
  if (options.mode != RelocateMode::kPrefix) {
    PathEntryCollector b, a;
    WalkStateFile(before, &b);
    WalkStateFile(after, &a);
    std::vector<PathEntry> expected;
    for (const PathEntry& e : b.entries) expected.push_back(ExpectedEntry(e, options));
    if (expected != a.entries) {
      return absl::DataLossError(
          "relocate verify: the file and relative handles are not the expected ones");
    }
    if (before.metadata.operators.size() != after.metadata.operators.size() ||
        before.metadata.checkpoint_id != after.metadata.checkpoint_id) {
      return absl::DataLossError("relocate verify: operators changed");
    }
    return absl::OkStatus();
  }
  std::vector<std::string> expected, got;
  ForEachPath(before, [&](const char*, const Utf& u, const HandleContext&) {
    expected.push_back(RelocatedPath(u.value, options).value_or(u.value));
  });
  ForEachPath(after, [&](const char*, const Utf& u, const HandleContext&) {
    got.push_back(u.value);
  });
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

// --- completedCheckpoint files and HA pointers (the javaobj rewriter) -------------

absl::StatusOr<RelocateResult> PlanRelocateCompletedCheckpoint(
    const javaobj::Stream& s, const RelocateOptions& o) {
  FLINKSTATE_RETURN_IF_ERROR(ValidateRelocateOptions(o));
  javaobj::StreamRewriter rw(s);
  RelocateResult r;
  std::set<ItemId> done;
  absl::Status status;
  ForEachPathString(s, [&](ItemId d, const char* what) {
    if (!status.ok() || done.count(d) > 0) return;
    absl::StatusOr<std::string> v = s.StringValue(d);
    if (!v.ok()) return;
    const std::optional<std::string> relocated = RelocatedPath(*v, o);
    if (!relocated) return;
    done.insert(d);
    const std::string& after = *relocated;
    if (!o.allow_unsafe_paths) {
      if (absl::Status safe = CheckSafePath(after); !safe.ok()) {
        status = UnsafePathError("relocate", what, s.item(d).range.offset, after, safe);
        return;
      }
    }
    status = rw.ReplaceValue(d, javaobj::NewValue::String(after));
    r.changed.push_back({what, *v, after, s.item(d).range.offset});
  });
  FLINKSTATE_RETURN_IF_ERROR(status);
  if (r.changed.empty()) {
    return absl::NotFoundError(
        absl::StrCat("relocate: no path starts with '", absl::CHexEscape(o.from_prefix),
                     "' at a path boundary; nothing was written"));
  }
  FLINKSTATE_ASSIGN_OR_RETURN(r.plan, rw.BuildPlan());
  return r;
}

absl::Status VerifyRelocatedCompletedCheckpoint(const StateFile& before,
                                                serde::ByteView before_input,
                                                serde::ByteView output,
                                                const RelocateOptions& o) {
  // Decoded once for both checks (the round trip and the model).
  FLINKSTATE_ASSIGN_OR_RETURN(javaobj::Stream s, javaobj::DecodeStream(output));
  FLINKSTATE_RETURN_IF_ERROR(javaobj::VerifyRoundTrip(s));
  // The output's report is built one operator at a time (the same report as
  // from its whole model, without holding that model).
  absl::Status read;
  report::Report after = BuildCompletedCheckpointReport(s.input(), {}, &read);
  FLINKSTATE_RETURN_IF_ERROR(read);
  const std::vector<ReportDifference> d = DiffReports(BuildReport(before, before_input, {}), after);
  if (!d.empty()) {
    return absl::DataLossError(absl::StrCat("relocate verify: ", d[0].path, " changed from '",
                                            d[0].a, "' to '", d[0].b, "'"));
  }
  if (!absl::StartsWith(o.to_prefix, o.from_prefix)) {
    std::string left;
    uint64_t left_at = 0;
    ForEachPathString(s, [&](ItemId id, const char* what) {
      absl::StatusOr<std::string> v = s.StringValue(id);
      if (left.empty() && v.ok() && RelocatedPath(*v, o).has_value()) {
        left = absl::StrCat(what, " '", *v, "'");
        left_at = s.item(id).range.offset;
      }
    });
    if (!left.empty()) {
      return serde::DecodeError(absl::StatusCode::kDataLoss, "relocate verify", "",
                                absl::StrCat("still old: ", left), left_at);
    }
  }
  return absl::OkStatus();
}

// --- Streamed _metadata files (opened with defer_metadata_model) ----------------
//
// One pass over the input finds every path Flink opens (the walk of
// `ForEachPath`, one operator at a time) and compares its modified UTF-8 body
// with the prefix's: modified UTF-8 encodes every character on its own, so a
// body starts with the encoded `from_prefix` exactly when its text starts
// with `from_prefix`. The plan keeps, per relocated path, one varint (the
// distance to the previous one and what it is); its source re-reads each
// path's length from the input and emits "copy up to the path, insert the new
// length and `to_prefix`" (the rest of the path is copied with what follows).

struct StreamedRelocation {
  serde::ByteView input;
  RelocateOptions options;
  std::string from_body;  // modified UTF-8
  std::string to_body;
  // varint((offset - previous offset) << 2 | what); `offset` is the path's
  // u2 length (a completedCheckpoint's TC_STRING: its byte after the tag).
  std::vector<uint8_t> list;
  uint64_t count = 0;
  std::shared_ptr<const StreamedExpectation> expected;
  // A completedCheckpoint: the `what`s are kHaPathWhat, and a change's
  // offset is its string item's (one before the recorded offset).
  bool completed = false;
};

namespace {

// The new body of a path string `body` that starts with `st.from_body` at a
// path boundary, into `*now` (modified UTF-8): `st.to_body` and the rest.
// Unless unsafe paths are allowed, refused as `UnsafePathError` located at
// `offset` (what the string is: `what`). Shared by the streaming _metadata
// and completedCheckpoint passes.
absl::Status RelocatedBody(const StreamedRelocation& st, serde::ByteView body, const char* what,
                           uint64_t offset, std::string* now, absl::string_view item_path = "") {
  const serde::ByteView rest = body.subspan(st.from_body.size());
  now->assign(st.to_body);
  now->append(reinterpret_cast<const char*>(rest.data()), rest.size());
  if (st.options.allow_unsafe_paths) return absl::OkStatus();
  // Modified and standard UTF-8 differ in ASCII only for U+0000 (C0 80):
  // without it the check reads the same either way.
  const bool fast = std::memchr(rest.data(), 0xC0, rest.size()) == nullptr;
  if (fast && CheckSafePath(*now).ok()) return absl::OkStatus();
  absl::StatusOr<std::string> text = serde::ModifiedUtf8ToUtf8(rest);
  const std::string utf8 = absl::StrCat(st.options.to_prefix, text.ok() ? *text : "");
  if (absl::Status s = CheckSafePath(utf8); !s.ok()) {
    return UnsafePathError("relocate", what, offset, utf8, s, item_path);
  }
  return absl::OkStatus();
}

constexpr const char* kPathWhat[] = {"FileStateHandle path", "SegmentFileStateHandle path",
                                     "task-owned directory", "shared directory"};
// The strings a completedCheckpoint relocation rewrites (`ForEachPathString`).
constexpr const char* kHaPathWhat[] = {"Path URI", "externalPointer"};

uint8_t PathWhatCode(const char* what) {
  for (uint8_t i = 0; i < 4; ++i) {
    if (std::strcmp(kPathWhat[i], what) == 0) return i;
  }
  return 0;
}

void AppendVarint(uint64_t v, std::vector<uint8_t>* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<uint8_t>(v));
}

uint64_t ReadVarint(const std::vector<uint8_t>& in, size_t* at) {
  uint64_t v = 0;
  for (int shift = 0; *at < in.size(); shift += 7) {
    const uint8_t b = in[(*at)++];
    v |= uint64_t{b & 0x7Fu} << shift;
    if ((b & 0x80) == 0) break;
  }
  return v;
}

bool StartsAtBoundary(serde::ByteView body, const std::string& from) {
  if (body.size() < from.size() ||
      std::memcmp(body.data(), from.data(), from.size()) != 0) {
    return false;
  }
  return from.back() == '/' || body.size() == from.size() || body[from.size()] == '/';
}

// The plan of a streamed relocation: its source re-reads each listed path's
// length from the input and emits "copy up to the path's u2 length, insert
// the new length and `to_body`" (the rest of the path is copied with what
// follows).
serde::EditPlan StreamedRelocationPlan(std::shared_ptr<const StreamedRelocation> st,
                                       int64_t delta) {
  const uint64_t size = st->input.size();
  const uint64_t inserted = st->count * (2 + st->to_body.size());
  return serde::EditPlan::FromSource(
      static_cast<uint64_t>(static_cast<int64_t>(size) + delta), inserted,
      [st](serde::PieceSink* sink) -> absl::Status {
        const serde::ByteView in = st->input;
        std::string insert(2, '\0');
        insert += st->to_body;
        uint64_t cursor = 0;
        uint64_t offset = 0;
        size_t at = 0;
        while (at < st->list.size()) {
          offset += ReadVarint(st->list, &at) >> 2;
          if (offset + 2 + st->from_body.size() > in.size()) {
            return absl::FailedPreconditionError("relocate: a planned path lies outside the input");
          }
          const uint64_t length = serde::DecodeBigEndian16(in.data() + offset) -
                                  st->from_body.size() + st->to_body.size();
          insert[0] = static_cast<char>(length >> 8);
          insert[1] = static_cast<char>(length);
          FLINKSTATE_RETURN_IF_ERROR(sink->Copy(SourceRange{cursor, offset - cursor}));
          FLINKSTATE_RETURN_IF_ERROR(sink->Insert(serde::AsBytes(insert)));
          cursor = offset + 2 + st->from_body.size();
        }
        return sink->Copy(SourceRange{cursor, in.size() - cursor});
      });
}

struct RelocateScan {
  std::shared_ptr<StreamedRelocation> st;
  // A path string in a form only Java's readUTF accepts (a raw 0x00, a
  // longer form; Flink never writes one): its text may start with
  // `from_prefix` in other bytes than `from_body`, so the scan stopped and
  // the model-based planner and verify take the file.
  bool other_spelling = false;
  CheckpointMetadata header;
  int64_t delta = 0;  // output size - input size
};

// The scan; `relocate_error` receives the edit's own refusals (an unsafe or
// too long new path), which carry no file path, as the planner's do.
absl::StatusOr<RelocateScan> ScanForRelocate(serde::ByteView input, const RelocateOptions& o,
                                             absl::Status* relocate_error) {
  RelocateScan scan;
  scan.st = std::make_shared<StreamedRelocation>();
  StreamedRelocation& st = *scan.st;
  st.input = input;
  st.options = o;
  FLINKSTATE_ASSIGN_OR_RETURN(st.from_body, serde::Utf8ToModifiedUtf8(o.from_prefix));
  FLINKSTATE_ASSIGN_OR_RETURN(st.to_body, serde::Utf8ToModifiedUtf8(o.to_prefix));
  auto expected = std::make_shared<StreamedExpectation>();
  MetadataReadOptions read;
  read.decode_strings = false;
  read.release_consumed_input = serde::IsLocalFileMapping(input);
  uint64_t previous = 0;
  std::string now;  // the new body (modified UTF-8), reused
  bool other_spelling = false;
  absl::StatusOr<CheckpointMetadata> header = ReadCheckpointMetadataStreaming(
      input,
      [&](int index, OperatorState&& op) -> absl::Status {
        EditDigest d;
        absl::Status status;
        PathVisitor v([&](const char* what, const Utf& u, const HandleContext& c) {
          if (!status.ok()) return;
          const uint8_t code = PathWhatCode(what);
          d.AddU64(code);
          const serde::ByteView body = UtfBody(input, u);
          if (!serde::IsShortestModifiedUtf8(body)) {
            other_spelling = true;
            return;
          }
          if (!StartsAtBoundary(body, st.from_body)) {
            d.AddBytes(body);
            return;
          }
          status = RelocatedBody(st, body, what, u.range.offset, &now, HandleItemPath(c));
          if (!status.ok()) return;
          d.AddBytes(serde::AsBytes(now));
          if (now.size() > 0xFFFF) {
            std::string scratch;
            absl::Status s = serde::DataOutput(&scratch).WriteModifiedUtf8Raw(serde::AsBytes(now));
            status = serde::WithLocation(
                absl::InvalidArgumentError(absl::StrCat("relocate: ", HandleItemPath(c), ": ",
                                                        what, " at byte ",
                                                        u.range.offset,
                                                        " would become too long: ", s.message())),
                "relocate", HandleItemPath(c), u.range.offset);
            return;
          }
          AppendVarint(((u.range.offset - previous) << 2) | code, &st.list);
          previous = u.range.offset;
          ++st.count;
          scan.delta += static_cast<int64_t>(st.to_body.size()) -
                        static_cast<int64_t>(st.from_body.size());
        });
        WalkOperator(op, index, &v);
        if (other_spelling) return absl::CancelledError("relocate: a path in another spelling");
        if (!status.ok()) {
          *relocate_error = status;
          return status;
        }
        expected->operators.push_back(d.Finish());
        return absl::OkStatus();
      },
      read);
  if (other_spelling) {
    scan.other_spelling = true;
    return scan;
  }
  if (!relocate_error->ok()) return *relocate_error;
  FLINKSTATE_RETURN_IF_ERROR(header.status());
  expected->version = header->version;
  expected->checkpoint_id = header->checkpoint_id;
  expected->master_states = header->master_states.size();
  expected->properties_size = header->properties.size;
  st.list.shrink_to_fit();
  st.expected = std::move(expected);
  scan.header = *std::move(header);
  return scan;
}

absl::StatusOr<RelocateScan> ScanFile(const LoadedFile& file, const RelocateOptions& options) {
  absl::Status own;
  absl::StatusOr<RelocateScan> scan = ScanForRelocate(file.bytes(), options, &own);
  FLINKSTATE_RETURN_IF_ERROR(file.CheckIntact());
  if (!own.ok()) return own;
  if (!scan.ok()) {
    return serde::WithMessage(scan.status(),
                        absl::StrCat(file.path, ": ", scan.status().message()));
  }
  return scan;
}

absl::StatusOr<RelocateResult> PlanRelocateStreamed(const LoadedFile& file,
                                                    const RelocateOptions& options) {
  FLINKSTATE_RETURN_IF_ERROR(ValidateRelocateOptions(options));
  FLINKSTATE_ASSIGN_OR_RETURN(RelocateScan scan, ScanFile(file, options));
  if (scan.other_spelling) {
    FLINKSTATE_ASSIGN_OR_RETURN(StateFile model, ReadStateFile(file.bytes()));
    return PlanRelocate(model, file.bytes(), options);
  }
  if (scan.st->count == 0) {
    return absl::NotFoundError(absl::StrCat("relocate: no path starts with '",
                                            absl::CHexEscape(options.from_prefix),
                                            "' at a path boundary; nothing was written"));
  }
  std::shared_ptr<const StreamedRelocation> st = scan.st;
  RelocateResult result;
  result.plan = StreamedRelocationPlan(st, scan.delta);
  result.streamed = std::move(st);
  return result;
}

absl::Status VerifyRelocatedStreamed(const LoadedFile& before, serde::ByteView output,
                                     const RelocateOptions& options,
                                     const RelocateResult* planned) {
  std::shared_ptr<const StreamedExpectation> expected =
      planned != nullptr && planned->streamed != nullptr ? planned->streamed->expected : nullptr;
  if (expected == nullptr) {
    FLINKSTATE_ASSIGN_OR_RETURN(RelocateScan scan, ScanFile(before, options));
    if (scan.other_spelling) {
      FLINKSTATE_ASSIGN_OR_RETURN(StateFile model, ReadStateFile(before.bytes()));
      FLINKSTATE_ASSIGN_OR_RETURN(StateFile after, ReadStateFileRoundTrip(output));
      return VerifyRelocated(model, after, options);
    }
    expected = scan.st->expected;
  }
  const absl::Status paths =
      absl::DataLossError("relocate verify: the paths are not the expected ones");
  size_t ops = 0;
  absl::StatusOr<CheckpointMetadata> header = ReadMetadataRoundTripStreaming(
      output, [&](int index, OperatorState&& op) -> absl::Status {
        ++ops;
        if (static_cast<size_t>(index) >= expected->operators.size()) {
          return absl::DataLossError("relocate verify: operators changed");
        }
        EditDigest d;
        PathVisitor v([&](const char* what, const Utf& u, const HandleContext&) {
          d.AddU64(PathWhatCode(what));
          d.AddBytes(UtfBody(output, u));
        });
        WalkOperator(op, index, &v);
        return d.Finish() == expected->operators[index] ? absl::OkStatus() : paths;
      });
  FLINKSTATE_RETURN_IF_ERROR(header.status());
  if (ops != expected->operators.size() || header->checkpoint_id != expected->checkpoint_id) {
    return absl::DataLossError("relocate verify: operators changed");
  }
  return absl::OkStatus();
}

// --- completedCheckpoint files in one pass (javaobj::StreamCursor) ----------------
//
// The strings a completedCheckpoint relocation rewrites are those
// `ForEachPathString` visits over a decoded stream: the `string` of every
// java.net.URI object and the `externalPointer` of every object whose class
// declares one. A walk over every value of the stream with the cursor finds
// them in the same order; the plan is the `_metadata` streamed plan's (a
// TC_STRING's u2 length follows its tag byte), the verify walks the output
// and compares a digest of every visited string (new body where relocated).
// Rare forms the plan cannot express (a TC_LONGSTRING, a new path over
// 65535 bytes, items inside a class descriptor's annotation that the walk
// does not see, a string in a longer form than writeUTF's) go to the decoded
// stream's planner.

// Calls `fn(code, value)` for each string `ForEachPathString` visits (code:
// index into kHaPathWhat; `value` a string or a reference to one), in
// stream order; `fn` returns false to stop. `*whole` is false if the walk
// could not see every value (a class descriptor's annotation held items).
// Return values: the decoder's error for a malformed stream (canonical).
template <typename Fn>
absl::Status WalkHaPathStrings(serde::ByteView input, Fn&& fn, bool* whole) {
  javaobj::StreamCursor c(input);
  serde::InputReleaser release(input, serde::IsLocalFileMapping(input));
  c.set_releaser(&release);
  bool stopped = false;
  struct Walker {
    javaobj::StreamCursor& c;
    Fn& fn;
    bool& stopped;
    bool Value() {
      javaobj::CursorValue v;
      return c.ReadValue(&v) && Body(&v);
    }
    bool Body(javaobj::CursorValue* v) {
      if (v->end != 0) return true;
      if (v->tag != javaobj::kTcObject) return c.ReadElements(v, [this](uint64_t) { return Value(); });
      const javaobj::DescId d = v->desc;
      const javaobj::ClassDesc& cd = c.desc(d);
      const bool uri = cd.name == "java.net.URI";
      const int field = cd.FindField(uri ? "string" : "externalPointer");
      const uint8_t code = uri ? 0 : 1;
      struct Visit {
        Walker& w;
        javaobj::DescId d;
        int field;
        uint8_t code;
        void Class(javaobj::DescId, uint64_t) {}
        bool Field(javaobj::DescId cls, uint32_t f) {
          javaobj::CursorValue x;
          if (!w.c.ReadValue(&x)) return false;
          if (cls == d && static_cast<int>(f) == field &&
              (x.tag == javaobj::kTcString || x.tag == javaobj::kTcLongString)) {
            if (!w.fn(code, x)) {
              w.stopped = true;
              return false;
            }
          }
          return w.Body(&x);
        }
        bool Annotation(javaobj::DescId) {
          for (;;) {
            bool at_end = false;
            if (!w.c.NextAnnotationItem(&at_end)) return false;
            if (at_end) return true;
            if (!w.Value()) return false;
          }
        }
      } visit{*this, d, field >= 0 && !cd.fields[field].is_primitive() ? field : -1, code};
      return c.ReadObjectData(v, visit);
    }
  } walker{c, fn, stopped};
  if (c.ReadHeader()) {
    while (!c.AtStreamEnd() && c.ok()) {
      javaobj::CursorValue v;
      if (!c.ReadContent(&v) || !walker.Body(&v)) break;
    }
  }
  if (stopped) return absl::OkStatus();
  if (!c.ok()) {
    absl::Status canonical = c.CanonicalError();
    return canonical.ok() ? c.status() : canonical;
  }
  *whole = !c.annotated_descriptors();
  return absl::OkStatus();
}

// The streamed plan of a completedCheckpoint, or (`*unsupported`) a note
// that the decoded stream's planner must do it.
absl::StatusOr<RelocateResult> PlanRelocateCompletedStreamed(const LoadedFile& file,
                                                             const RelocateOptions& o,
                                                             bool* unsupported) {
  *unsupported = false;
  FLINKSTATE_RETURN_IF_ERROR(ValidateRelocateOptions(o));
  const serde::ByteView input = file.bytes();
  auto st = std::make_shared<StreamedRelocation>();
  st->input = input;
  st->options = o;
  st->completed = true;
  FLINKSTATE_ASSIGN_OR_RETURN(st->from_body, serde::Utf8ToModifiedUtf8(o.from_prefix));
  FLINKSTATE_ASSIGN_OR_RETURN(st->to_body, serde::Utf8ToModifiedUtf8(o.to_prefix));
  EditDigest digest;
  std::vector<std::pair<uint64_t, uint8_t>> defs;  // (string item offset, what)
  absl::Status status;
  std::string now;
  bool whole = true;
  absl::Status walked = WalkHaPathStrings(
      input,
      [&](uint8_t code, const javaobj::CursorValue& x) {
        const serde::ByteView body = input.subspan(x.payload.offset, x.payload.size);
        if (!serde::IsShortestModifiedUtf8(body)) {
          // Another spelling of a text (see RelocateScan::other_spelling).
          *unsupported = true;
          return false;
        }
        digest.AddU64(code);
        if (!StartsAtBoundary(body, st->from_body)) {
          digest.AddBytes(body);
          return true;
        }
        const char* what = kHaPathWhat[code];
        status = RelocatedBody(*st, body, what, x.def, &now);
        if (!status.ok()) return false;
        digest.AddBytes(serde::AsBytes(now));
        if (x.tag != javaobj::kTcString || now.size() > 0xFFFF) {
          *unsupported = true;  // the new string's form differs: the rewriter's
          return false;
        }
        defs.emplace_back(x.def, code);
        return true;
      },
      &whole);
  FLINKSTATE_RETURN_IF_ERROR(file.CheckIntact());
  FLINKSTATE_RETURN_IF_ERROR(status);
  if (!walked.ok()) return serde::InFile(walked, file.path);
  if (*unsupported || !whole) {
    *unsupported = true;
    return RelocateResult();
  }
  // A string shared by several places is rewritten once, at its definition.
  std::stable_sort(defs.begin(), defs.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  defs.erase(std::unique(defs.begin(), defs.end(),
                         [](const auto& a, const auto& b) { return a.first == b.first; }),
             defs.end());
  if (defs.empty()) {
    return absl::NotFoundError(absl::StrCat("relocate: no path starts with '",
                                            absl::CHexEscape(o.from_prefix),
                                            "' at a path boundary; nothing was written"));
  }
  uint64_t previous = 0;
  for (const auto& [def, code] : defs) {
    AppendVarint(((def + 1 - previous) << 2) | code, &st->list);
    previous = def + 1;
  }
  st->list.shrink_to_fit();
  st->count = defs.size();
  auto expected = std::make_shared<StreamedExpectation>();
  expected->checkpoint_id = file.model.metadata.checkpoint_id;
  expected->head = digest.Finish();
  st->expected = std::move(expected);
  const int64_t delta = static_cast<int64_t>(st->count) *
                        (static_cast<int64_t>(st->to_body.size()) -
                         static_cast<int64_t>(st->from_body.size()));
  RelocateResult result;
  result.plan = StreamedRelocationPlan(st, delta);
  result.streamed = std::move(st);
  return result;
}

absl::Status VerifyRelocatedCompletedStreamed(const LoadedFile& before, serde::ByteView output,
                                              const StreamedExpectation& expected) {
  if (!LooksLikeCompletedCheckpoint(output) ||
      PeekCompletedCheckpointId(output).value_or(-1) != expected.checkpoint_id) {
    return absl::DataLossError("relocate verify: the output is not the same CompletedCheckpoint");
  }
  EditDigest digest;
  bool whole = true;
  absl::Status walked = WalkHaPathStrings(
      output,
      [&](uint8_t code, const javaobj::CursorValue& x) {
        digest.AddU64(code);
        digest.AddBytes(output.subspan(x.payload.offset, x.payload.size));
        return true;
      },
      &whole);
  if (!walked.ok()) {
    return absl::DataLossError(
        absl::StrCat("relocate verify: the output does not decode: ", walked.message()));
  }
  if (digest.Finish() != expected.head) {
    return absl::DataLossError("relocate verify: the paths are not the expected ones");
  }
  // The graph is still a CompletedCheckpoint Flink reads (its operator
  // state; the paths were compared above).
  ScanCompletedCheckpointOptions scan;
  scan.decode_strings = false;
  scan.operator_state_only = true;
  scan.release_consumed_input = serde::IsLocalFileMapping(output);
  absl::StatusOr<StateFile> read = ScanCompletedCheckpoint(
      output, [](int, OperatorState&&) { return absl::OkStatus(); }, scan);
  if (!read.ok()) {
    return absl::DataLossError(
        absl::StrCat("relocate verify: the output does not read: ", read.status().message()));
  }
  return absl::OkStatus();
}

}  // namespace

uint64_t RelocateResult::changed_count() const {
  return streamed != nullptr ? streamed->count : changed.size();
}

absl::Status RelocateResult::ForEachChanged(
    const std::function<bool(const RelocatedString&)>& fn) const {
  if (streamed == nullptr) {
    for (const RelocatedString& c : changed) {
      if (!fn(c)) break;
    }
    return absl::OkStatus();
  }
  const StreamedRelocation& st = *streamed;
  uint64_t offset = 0;
  size_t at = 0;
  RelocatedString c;
  while (at < st.list.size()) {
    const uint64_t v = ReadVarint(st.list, &at);
    offset += v >> 2;
    serde::DataInput in(st.input);
    FLINKSTATE_RETURN_IF_ERROR(in.Seek(offset));
    FLINKSTATE_RETURN_IF_ERROR(in.ReadModifiedUtf8(&c.before));
    c.what = st.completed ? kHaPathWhat[(v & 3) % 2] : kPathWhat[v & 3];
    c.after = RelocatedPath(c.before, st.options).value_or(c.before);
    c.offset = st.completed ? offset - 1 : offset;
    if (!fn(c)) break;
  }
  return absl::OkStatus();
}

// --- One entry point for every kind ----------------------------------------------

absl::StatusOr<RelocateResult> PlanRelocate(const LoadedFile& file,
                                            const RelocateOptions& options) {
  if (file.encoding != Encoding::kRaw) {
    return absl::InvalidArgumentError(absl::StrCat(
        file.path, ": relocate: ", FileKindWithArticle(file.kind),
        " stored wrapped (e.g. Base64 as a Kubernetes value): decode it (base64 -d), "
        "relocate the raw bytes, and encode the result (base64 -w0)"));
  }
  switch (file.kind) {
    case FileKind::kMetadata:
      if (file.metadata_deferred) {
        if (options.mode == RelocateMode::kPrefix) return PlanRelocateStreamed(file, options);
        // The relative modes need the whole model.
        FLINKSTATE_ASSIGN_OR_RETURN(StateFile model, ReadStateFile(file.bytes()));
        return PlanRelocate(model, file.bytes(), options);
      }
      return PlanRelocate(file.model, file.bytes(), options);
    case FileKind::kOperatorSnapshot:
      return PlanRelocate(file.model, file.bytes(), options);
    case FileKind::kCompletedCheckpoint: {
      if (options.mode != RelocateMode::kPrefix) {
        return PlanRelocate(file.model, file.bytes(), options);  // refuses, saying why
      }
      if (file.completed_deferred) {
        bool unsupported = false;
        absl::StatusOr<RelocateResult> r =
            PlanRelocateCompletedStreamed(file, options, &unsupported);
        if (!r.ok() || !unsupported) return r;
      }
      FLINKSTATE_ASSIGN_OR_RETURN(CompletedTree tree, DecodeCompletedTree(file));
      return PlanRelocateCompletedCheckpoint(*tree.stream, options);
    }
    case FileKind::kHaPointer: {
      if (options.mode != RelocateMode::kPrefix) {
        return absl::FailedPreconditionError(absl::StrCat(
            file.path, ": relocate: only a _metadata file can hold relative handles; an HA "
                       "pointer names its completedCheckpoint absolutely"));
      }
      FLINKSTATE_ASSIGN_OR_RETURN(javaobj::Stream s, javaobj::DecodeStream(file.bytes()));
      return PlanRelocateCompletedCheckpoint(s, options);
    }
    default:
      break;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      file.path, ": relocate: ", FileKindWithArticle(file.kind), " names no paths Flink opens"));
}

absl::Status VerifyRelocated(const LoadedFile& before, serde::ByteView output,
                             const RelocateOptions& options, const RelocateResult* planned) {
  if (before.metadata_deferred) {
    if (options.mode == RelocateMode::kPrefix) {
      return VerifyRelocatedStreamed(before, output, options, planned);
    }
    FLINKSTATE_ASSIGN_OR_RETURN(StateFile model, ReadStateFile(before.bytes()));
    FLINKSTATE_ASSIGN_OR_RETURN(StateFile after, ReadStateFileRoundTrip(output));
    return VerifyRelocated(model, after, options);
  }
  switch (before.kind) {
    case FileKind::kCompletedCheckpoint: {
      if (!before.completed_deferred) {
        return VerifyRelocatedCompletedCheckpoint(before.model, before.bytes(), output, options);
      }
      std::shared_ptr<const StreamedExpectation> expected =
          planned != nullptr && planned->streamed != nullptr ? planned->streamed->expected
                                                             : nullptr;
      if (expected == nullptr && planned == nullptr) {
        bool unsupported = false;
        FLINKSTATE_ASSIGN_OR_RETURN(RelocateResult again,
                                    PlanRelocateCompletedStreamed(before, options, &unsupported));
        if (!unsupported) expected = again.streamed->expected;
      }
      if (expected != nullptr) return VerifyRelocatedCompletedStreamed(before, output, *expected);
      FLINKSTATE_ASSIGN_OR_RETURN(StateFile model, ScanCompletedCheckpoint(before.bytes()));
      return VerifyRelocatedCompletedCheckpoint(model, before.bytes(), output, options);
    }
    case FileKind::kHaPointer: {
      FLINKSTATE_RETURN_IF_ERROR(javaobj::VerifyRoundTrip(output));
      FLINKSTATE_ASSIGN_OR_RETURN(HaPointer after, DecodeHaPointer(output));
      const std::string want =
          RelocatedPath(before.pointer->path, options).value_or(before.pointer->path);
      if (after.path != want || after.format != before.pointer->format) {
        return absl::DataLossError(absl::StrCat("relocate verify: the pointer reads '",
                                                absl::CHexEscape(after.path), "', expected '",
                                                absl::CHexEscape(want), "'"));
      }
      return absl::OkStatus();
    }
    default: {
      FLINKSTATE_ASSIGN_OR_RETURN(StateFile after, ReadStateFileRoundTrip(output));
      return VerifyRelocated(before.model, after, options);
    }
  }
}

}  // namespace flinkstate
