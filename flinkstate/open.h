// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: open.h
// -----------------------------------------------------------------------------
// One call to open any file flinkstate understands, whatever its kind.
//
//   ```c++
//   FLINKSTATE_ASSIGN_OR_RETURN(flinkstate::LoadedFile f,
//                               flinkstate::Open("/ckpt/job/chk-7"));  // its _metadata
//   switch (f.kind) {
//     case flinkstate::FileKind::kMetadata:            // f.model.metadata
//     case flinkstate::FileKind::kOperatorSnapshot:    // f.model.snapshot
//     case flinkstate::FileKind::kCompletedCheckpoint: // f.model (+ f.stream)
//     case flinkstate::FileKind::kHaPointer:           // *f.pointer
//     case flinkstate::FileKind::kJavaStream:          // f.java_bytes()
//     case flinkstate::FileKind::kUnknown:             // never from Open
//       break;
//   }
//   ```
//
// First the on-disk wrapping is removed (serde/input_format.h: gzip, hex
// text, Base64 as a Kubernetes HA ConfigMap stores values, wrapped or not,
// and the value inside `kubectl get configmap -o json|yaml` output; or the
// one layer `OpenOptions::input_format` forces). Then the kind is sniffed from
// the first bytes by the named constants below; a directory opens its
// `_metadata`. Bytes that are none of these give
// `InvalidArgument` saying what they look like (empty, too short, gzip, zip,
// text, ...), so a user who downloaded the wrong thing sees why.
//
// Truncation under the reader: the file is mapped; if it shrinks while being
// decoded, the mapping's SIGBUS guard (serde/mapped_file.h) turns the lost
// pages into zeros and `Open` reports `DataLoss` after decoding instead of the
// process dying. Callers that keep reading a `LoadedFile` later call
// `CheckIntact()` before trusting what they read.
//
// Thread safety: `Open`/`OpenBytes` are thread-safe; a `LoadedFile` is
// immutable after it is returned and may be read from several threads.

#ifndef FLINKSTATE_FLINKSTATE_OPEN_H_
#define FLINKSTATE_FLINKSTATE_OPEN_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "flinkstate/checkpoint_metadata.h"
#include "flinkstate/format_constants.h"
#include "flinkstate/ha_pointer.h"
#include "flinkstate/javaobj/object_model.h"
#include "flinkstate/javaobj/stream_constants.h"
#include "flinkstate/serde/byte_view.h"
#include "flinkstate/serde/input_format.h"
#include "flinkstate/serde/mapped_file.h"

namespace flinkstate {

// Markers by which `SniffFileKind` tells the kinds apart, besides
// `kMetadataMagic` (format_constants.h, Flink's
// `Checkpoints.HEADER_MAGIC_NUMBER`) and javaobj's `kStreamMagic` and
// `kStreamVersion` (STREAM_MAGIC 0xACED, STREAM_VERSION 5), read big-endian.
// Operator-snapshot files (OperatorSnapshotUtil): an int header 0 or 3, then a
// handle tag at most this value.
inline constexpr uint8_t kMaxSnapshotHandleTag = kMaxHandleTag;
// gzip (RFC 1952) and zip (PKWARE) magics, recognised only to name them.
inline constexpr uint8_t kGzipMagic[2] = {0x1F, 0x8B};
inline constexpr uint8_t kZipMagic[4] = {0x50, 0x4B, 0x03, 0x04};
// The file a checkpoint or savepoint directory holds its metadata in
// (`AbstractFsCheckpointStorageAccess.METADATA_FILE_NAME`).
inline constexpr char kMetadataFileName[] = "_metadata";

enum class FileKind : uint8_t {
  kMetadata,             // 49 60 67 2D
  kOperatorSnapshot,     // i32 0 or 3, then a handle tag
  kCompletedCheckpoint,  // Java stream whose first class is CompletedCheckpoint
  kHaPointer,            // ZooKeeper node / Kubernetes value: a state handle pointer
  kJavaStream,           // any other Java serialization stream
  kUnknown,              // only from `SniffFileKind`; `Open` fails instead
};
const char* FileKindName(FileKind kind);
// The name with its indefinite article, for messages: "a Flink _metadata",
// "an operator snapshot".
std::string FileKindWithArticle(FileKind kind);

// How the bytes were wrapped on disk.
enum class Encoding : uint8_t {
  kRaw,
  kBase64,   // "rO0AB...": Base64 text, as a Kubernetes HA ConfigMap value holds it
  kWrapped,  // any other wrapping or several layers (gzip, hex, kubectl output): `layers`
};

// How `Open` reads what is on disk.
struct OpenOptions {
  // kAuto detects the wrapping (serde::DecodeInputFormat); another value
  // decodes exactly that layer (kRaw: none), as `--input-format` asks.
  serde::InputFormat input_format = serde::InputFormat::kAuto;
  serde::InputFormatLimits limits;
  // A raw `_metadata` file is mapped and sniffed but not decoded:
  // `LoadedFile::metadata_deferred` is set and `model.metadata` holds only
  // the version and checkpoint id. For the edits (strip-state, relocate,
  // drop-operator and their verifies), which then work in streaming passes
  // over the mapping with memory independent of the file's size. Errors in
  // the file are reported by those passes instead of by `Open`. Other uses
  // of the model need it decoded (the default).
  // A raw completedCheckpoint is likewise left unread
  // (`LoadedFile::completed_deferred`): `model` holds the kind, size and
  // checkpoint id, and `model.completed` an empty `CompletedCheckpointInfo`.
  bool defer_metadata_model = false;
};

// What the first bytes say, without decoding. A Java stream that is not a
// completedCheckpoint is `kJavaStream` here (telling a pointer apart needs a
// decode); Base64 text is `kUnknown` (see `Open`).
FileKind SniffFileKind(serde::ByteView bytes);

// An opened file. Owning and move-only; views into it (models, `stream`)
// stay valid while it lives, also after a move (the mapping does not move).
struct LoadedFile {
  std::string path;  // as given (a directory: its "<dir>/_metadata")
  FileKind kind = FileKind::kUnknown;
  Encoding encoding = Encoding::kRaw;
  // The wrappings removed, outermost first (empty for kRaw).
  std::vector<serde::InputFormat> layers;
  serde::MappedFile file;  // the file's bytes as on disk (empty for OpenBytes)
  // The bytes decoded from the on-disk form (Base64) or given to OpenBytes;
  // null when the file is used as is.
  std::shared_ptr<const std::string> decoded;
  // kMetadata, kOperatorSnapshot, kCompletedCheckpoint.
  StateFile model;
  // kMetadata opened with `OpenOptions::defer_metadata_model`: `model` holds
  // the kind, size, version and checkpoint id only (no operators, master
  // states or properties); the edits stream the file.
  bool metadata_deferred = false;
  // kCompletedCheckpoint opened with `OpenOptions::defer_metadata_model`:
  // see there; the edits read the file in streaming passes.
  bool completed_deferred = false;
  // kCompletedCheckpoint: null. The model is read in one pass without
  // decoding the stream (`ScanCompletedCheckpoint`); an edit that needs the
  // decoded stream gets it with `DecodeCompletedTree`.
  std::shared_ptr<const javaobj::Stream> stream;
  // kHaPointer.
  std::optional<HaPointer> pointer;

  // The bytes the model describes: `decoded` if set, else the mapping.
  // Lifetime: while this object lives.
  serde::ByteView bytes() const;
  // Same as bytes(): the name the CLI's Java-stream commands use.
  serde::ByteView java_bytes() const { return bytes(); }
  // See serde::MappedFile::CheckIntact (OK for OpenBytes).
  [[nodiscard]] absl::Status CheckIntact() const { return file.CheckIntact(); }
  bool is_state_file() const {
    return kind == FileKind::kMetadata || kind == FileKind::kOperatorSnapshot ||
           kind == FileKind::kCompletedCheckpoint;
  }
};

// A completedCheckpoint decoded into a `javaobj::Stream` and the model read
// from it (with item ids in `OperatorHandleRef`), for the edits that work on
// the decoded stream (the `javaobj::StreamRewriter`).
struct CompletedTree {
  std::shared_ptr<const javaobj::Stream> stream;
  StateFile model;
};
// Decodes `file` (kCompletedCheckpoint; `file.stream` if it has one).
// Memory: the decoded stream, ~20 bytes per stream item. Errors: the
// decoder's and `ReadCompletedCheckpoint`'s, prefixed with the path.
// Lifetime: the tree refers to `file`'s bytes.
[[nodiscard]] absl::StatusOr<CompletedTree> DecodeCompletedTree(const LoadedFile& file);

// The file `Open(path)` reads: `path` itself, or for a local directory its
// `_metadata`. `InvalidArgument` (layer "open", the directory) for a
// directory without `_metadata`. A URL is returned as given (its object is
// resolved by the store). Thread-safe; stats the file system only.
[[nodiscard]] absl::StatusOr<std::string> CheckpointFilePath(const std::string& path);

// Opens `path` (a file, or a checkpoint/savepoint directory: its
// `_metadata`), sniffs and decodes it.
//
// Return values (messages start with the path):
//   `NotFound`/`PermissionDenied` from opening; `InvalidArgument` for bytes of
//   no known kind, naming what they are ("empty file", "3 bytes", "gzip
//   data", "text", ...), or a directory without `_metadata`; the decoders'
//   errors (`OutOfRange` truncated, `InvalidArgument` malformed, `DataLoss`
//   an aborted Java stream); `DataLoss` if the file was truncated while it was
//   being read.
//   The input-format errors (`InvalidArgument` naming the layer and byte
//   offset, `ResourceExhausted` past `options.limits`).
[[nodiscard]] absl::StatusOr<LoadedFile> Open(const std::string& path,
                                              const OpenOptions& options = {});

// As `Open`, for bytes in memory (moved into the result). `name` stands for
// the path in messages.
[[nodiscard]] absl::StatusOr<LoadedFile> OpenBytes(std::string bytes,
                                                   absl::string_view name = "<bytes>",
                                                   const OpenOptions& options = {});

// As `Open`, but fails unless the file is a metadata, operator-snapshot or
// completedCheckpoint file stored raw (the kinds and form the edits rewrite),
// saying what to do with the others.
[[nodiscard]] absl::StatusOr<LoadedFile> OpenStateFile(const std::string& path,
                                                       const OpenOptions& options = {});

}  // namespace flinkstate

#endif  // FLINKSTATE_FLINKSTATE_OPEN_H_
