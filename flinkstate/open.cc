// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.

#include "flinkstate/open.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "flinkstate/completed_checkpoint.h"
#include "flinkstate/metadata_reader.h"
#include "flinkstate/objstore/object_store.h"
#include "flinkstate/serde/endian.h"
#include "flinkstate/serde/status_macros.h"
#include "flinkstate/serde/error_location.h"

namespace flinkstate {
namespace {

bool StartsWith(serde::ByteView b, const uint8_t* magic, size_t n) {
  return b.size() >= n && std::memcmp(b.data(), magic, n) == 0;
}

// The leading 4 bytes of each kind, big-endian as on disk.
constexpr uint8_t kMetadataHead[4] = {
    static_cast<uint8_t>(kMetadataMagic >> 24), static_cast<uint8_t>(kMetadataMagic >> 16),
    static_cast<uint8_t>(kMetadataMagic >> 8), static_cast<uint8_t>(kMetadataMagic)};
constexpr uint8_t kJavaStreamHead[4] = {
    static_cast<uint8_t>(javaobj::kStreamMagic >> 8), static_cast<uint8_t>(javaobj::kStreamMagic),
    static_cast<uint8_t>(javaobj::kStreamVersion >> 8),
    static_cast<uint8_t>(javaobj::kStreamVersion)};

absl::Status WithPath(const std::string& path, const absl::Status& s) {
  return serde::InFile(s, path);
}

// What bytes of no known kind look like, for the error message.
std::string Describe(serde::ByteView b) {
  if (b.empty()) return "an empty file";
  if (b.size() < 4) {
    const char* what = std::memcmp(b.data(), kMetadataHead, b.size()) == 0 ? "_metadata file"
                       : std::memcmp(b.data(), kJavaStreamHead, b.size()) == 0 ? "Java stream"
                                                                               : nullptr;
    if (what != nullptr) {
      return absl::StrCat("only ", b.size(), " bytes (a truncated ", what, ")");
    }
  }
  if (StartsWith(b, kGzipMagic, 2)) {
    return "gzip data (decompress it first: gunzip -k FILE)";
  }
  if (StartsWith(b, kZipMagic, 4)) return "a zip archive (unpack it first)";
  const size_t n = std::min<size_t>(b.size(), 512);
  size_t text = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint8_t c = b[i];
    if (c == '\n' || c == '\r' || c == '\t' || (c >= 0x20 && c != 0x7F)) ++text;
  }
  if (text == n) {
    const bool json = b[0] == '{' || b[0] == '[';
    return json ? "JSON text (kubectl output? take the ConfigMap value out of it)"
                : "text, not a binary state file";
  }
  return absl::StrCat(b.size(), " bytes of unknown binary data");
}

// Unwraps and decodes `f.bytes()` into the model of its kind.
absl::Status Decode(LoadedFile& f, const OpenOptions& options) {
  serde::ByteView b = f.bytes();
  // The bytes as given, kept alive for the message below (OpenBytes holds
  // them in `f.decoded`, which the unwrapping replaces).
  const std::shared_ptr<const std::string> given_bytes = f.decoded;
  const serde::ByteView given = b;
  // Input-format step: wrapped forms are unwrapped into `f.decoded` before
  // sniffing. An empty input is left to `Describe` below.
  if (!b.empty()) {
    FLINKSTATE_ASSIGN_OR_RETURN(serde::DecodedInput d,
                                serde::DecodeInputFormat(b, options.input_format, options.limits));
    if (!d.layers.empty()) {
      f.encoding = d.layers.size() == 1 && d.layers[0] == serde::InputFormat::kBase64
                       ? Encoding::kBase64
                       : Encoding::kWrapped;
      f.layers = std::move(d.layers);
      f.decoded = std::make_shared<const std::string>(std::move(d.decoded));
      b = f.bytes();
    }
  }
  f.kind = SniffFileKind(b);
  switch (f.kind) {
    case FileKind::kMetadata:
    case FileKind::kOperatorSnapshot: {
      // Deferred: magic, version (u4) and checkpoint id (i8) lead every
      // version's header; anything shorter is decoded for its error.
      if (f.kind == FileKind::kMetadata && options.defer_metadata_model && !f.decoded &&
          b.size() >= 16) {
        f.metadata_deferred = true;
        f.model.kind = StateFileKind::kMetadata;
        f.model.size = b.size();
        f.model.metadata.version = serde::DecodeBigEndian32(b.data() + 4);
        f.model.metadata.checkpoint_id =
            static_cast<int64_t>(serde::DecodeBigEndian64(b.data() + 8));
        return absl::OkStatus();
      }
      FLINKSTATE_ASSIGN_OR_RETURN(f.model, ReadStateFile(b));
      return absl::OkStatus();
    }
    case FileKind::kCompletedCheckpoint: {
      if (options.defer_metadata_model) {
        f.completed_deferred = true;
        f.model.kind = StateFileKind::kCompletedCheckpoint;
        f.model.size = b.size();
        f.model.metadata.checkpoint_id = PeekCompletedCheckpointId(b).value_or(0);
        f.model.completed = std::make_shared<const CompletedCheckpointInfo>();
        return absl::OkStatus();
      }
      // One pass over the bytes, without decoding the stream into a model.
      ScanCompletedCheckpointOptions scan;
      scan.release_consumed_input = !f.decoded && serde::IsLocalFileMapping(b);
      FLINKSTATE_ASSIGN_OR_RETURN(f.model, ScanCompletedCheckpoint(b, nullptr, scan));
      return absl::OkStatus();
    }
    case FileKind::kJavaStream: {
      absl::StatusOr<HaPointer> p = DecodeHaPointer(b);
      if (p.ok()) {
        f.kind = FileKind::kHaPointer;
        f.pointer = *std::move(p);
      }
      return absl::OkStatus();
    }
    default:
      break;
  }
  // Detected text that happens to be valid hex or Base64 ("abcdefg" is 5
  // bytes of Base64) but decodes to no kind either: say what the file is as
  // given, and what the decoding gave (attack run 11: 7 ASCII bytes were
  // "5 bytes of unknown binary data").
  std::string what = Describe(b);
  if (!f.layers.empty() && options.input_format == serde::InputFormat::kAuto) {
    serde::DecodedInput d;
    d.layers = f.layers;
    what = absl::StrCat(Describe(given), " (read as ", d.Description(), ": ", what, ")");
  }
  return serde::DecodeError(
      absl::StatusCode::kInvalidArgument, "metadata", "header",
      absl::StrCat(what,
                   "; neither a Flink _metadata file (magic 49 60 67 2d), an operator snapshot "
                   "(header 0 or 3) nor a Java serialization stream (ac ed 00 05)"),
      0);
}

}  // namespace

absl::StatusOr<CompletedTree> DecodeCompletedTree(const LoadedFile& file) {
  CompletedTree t;
  if (file.stream != nullptr) {
    t.stream = file.stream;
    FLINKSTATE_ASSIGN_OR_RETURN(t.model, ReadCompletedCheckpoint(*t.stream));
    return t;
  }
  auto stream = std::make_shared<javaobj::Stream>();
  absl::StatusOr<StateFile> model = ReadCompletedCheckpointBytes(file.bytes(), stream.get());
  if (!model.ok()) {
    return serde::WithMessage(model.status(),
                              absl::StrCat(file.path, ": ", model.status().message()));
  }
  t.model = *std::move(model);
  t.stream = std::move(stream);
  return t;
}

const char* FileKindName(FileKind kind) {
  switch (kind) {
    case FileKind::kMetadata:
      return "Flink _metadata";
    case FileKind::kOperatorSnapshot:
      return "operator snapshot";
    case FileKind::kCompletedCheckpoint:
      return "Flink HA completedCheckpoint";
    case FileKind::kHaPointer:
      return "Flink HA pointer (ZooKeeper node or Kubernetes value)";
    case FileKind::kJavaStream:
      return "Java serialization stream";
    case FileKind::kUnknown:
      break;
  }
  return "unknown";
}

std::string FileKindWithArticle(FileKind kind) {
  const absl::string_view name = FileKindName(kind);
  const bool vowel = absl::StrContains("aeiou", name.substr(0, 1));
  return absl::StrCat(vowel ? "an " : "a ", name);
}

FileKind SniffFileKind(serde::ByteView b) {
  if (StartsWith(b, kMetadataHead, 4)) return FileKind::kMetadata;
  if (StartsWith(b, kJavaStreamHead, 4)) {
    return LooksLikeCompletedCheckpoint(b) ? FileKind::kCompletedCheckpoint
                                           : FileKind::kJavaStream;
  }
  if (b.size() >= 5 && b[0] == 0 && b[1] == 0 && b[2] == 0 && (b[3] == 0 || b[3] == 3) &&
      b[4] <= kMaxSnapshotHandleTag) {
    return FileKind::kOperatorSnapshot;
  }
  return FileKind::kUnknown;
}

serde::ByteView LoadedFile::bytes() const {
  if (decoded) {
    return serde::ByteView(reinterpret_cast<const uint8_t*>(decoded->data()),
                           decoded->size());
  }
  return file.bytes();
}

absl::StatusOr<std::string> CheckpointFilePath(const std::string& path) {
  struct stat st;
  if (serde::IsUrl(path) || ::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return path;
  std::string file =
      absl::StrCat(path, path.empty() || path.back() == '/' ? "" : "/", kMetadataFileName);
  auto refuse = [&](absl::string_view what) {
    return serde::LocatedIn(absl::InvalidArgumentError(absl::StrCat(path, ": ", what)), "open",
                            path);
  };
  if (::stat(file.c_str(), &st) != 0) {
    const int err = errno;
    struct stat lst;
    if (err == ENOENT && ::lstat(file.c_str(), &lst) == 0) {
      return refuse(absl::StrCat(kMetadataFileName, " is a symbolic link to nothing"));
    }
    if (err != ENOENT) {
      // Not "without _metadata" when it is only unreadable (attack of
      // 2026-12-03: a directory of mode 000 was said to have none).
      return serde::LocatedIn(
          absl::ErrnoToStatus(err, absl::StrCat(path, ": cannot look for ", kMetadataFileName,
                                                " in it")),
          "open", path);
    }
    return refuse(absl::StrCat("a directory without ", kMetadataFileName,
                               " (give a checkpoint or savepoint directory, or a file)"));
  }
  // Resolved once: a _metadata that is itself a directory is not opened as
  // one in its turn (attack of 2026-12-03: DIR/_metadata/_metadata was edited).
  if (!S_ISREG(st.st_mode)) {
    return refuse(absl::StrCat(kMetadataFileName, " in it is not a regular file"));
  }
  return file;
}

absl::StatusOr<LoadedFile> Open(const std::string& path, const OpenOptions& options) {
  LoadedFile f;
  f.path = path;
  // s3:// URLs (and prefixes, for a checkpoint "directory"): a sparse
  // mapping of the object; its path is the object it resolved to.
  if (serde::IsUrl(path)) {
    objstore::InstallObjectStore();
    FLINKSTATE_ASSIGN_OR_RETURN(f.file, serde::MappedFile::Open(path));
    f.path = f.file.path();
    absl::Status s = Decode(f, options);
    if (absl::Status intact = f.file.CheckIntact(); !intact.ok()) return intact;
    if (!s.ok()) return WithPath(f.path, s);
    return f;
  }
  FLINKSTATE_ASSIGN_OR_RETURN(f.path, CheckpointFilePath(path));
  FLINKSTATE_ASSIGN_OR_RETURN(f.file, serde::MappedFile::Open(f.path));
  absl::Status s = Decode(f, options);
  // Checked after decoding either way: an error caused by lost pages is
  // reported as the truncation it is.
  if (absl::Status intact = f.file.CheckIntact(); !intact.ok()) return intact;
  if (!s.ok()) return WithPath(f.path, s);
  return f;
}

absl::StatusOr<LoadedFile> OpenBytes(std::string bytes, absl::string_view name,
                                     const OpenOptions& options) {
  LoadedFile f;
  f.path = std::string(name);
  f.decoded = std::make_shared<const std::string>(std::move(bytes));
  absl::Status s = Decode(f, options);
  if (!s.ok()) return WithPath(f.path, s);
  return f;
}

absl::StatusOr<LoadedFile> OpenStateFile(const std::string& path, const OpenOptions& options) {
  FLINKSTATE_ASSIGN_OR_RETURN(LoadedFile f, Open(path, options));
  if (f.is_state_file() && f.encoding == Encoding::kRaw) return f;
  if (!f.is_state_file()) {
    // Whatever its wrapping: no command that needs a state file reads it.
    return serde::LocatedIn(absl::InvalidArgumentError(absl::StrCat(
        f.path, ": ", f.encoding == Encoding::kBase64 ? "Base64 text of " : "",
        FileKindWithArticle(f.kind),
        "; this command works on _metadata, operator-snapshot and completedCheckpoint files "
        "(see `flinkstate dump`)")), "open", f.path);
  }
  if (f.encoding == Encoding::kBase64) {
    return serde::LocatedIn(absl::InvalidArgumentError(absl::StrCat(
        f.path, ": Base64 text of ", FileKindWithArticle(f.kind),
        " (a Kubernetes HA value?); this command does not rewrite Base64: decode it "
        "(base64 -d), run the command on the raw bytes, and encode the result (base64 -w0)")),
        "open", f.path);
  }
  serde::DecodedInput d;  // Encoding::kWrapped
  d.layers = f.layers;
  return serde::LocatedIn(
      absl::InvalidArgumentError(absl::StrCat(
          f.path, ": ", FileKindWithArticle(f.kind), " stored as ", d.Description(),
          "; this command rewrites only raw files: decode it first and run it on the raw bytes")),
      "open", f.path);
}

}  // namespace flinkstate
