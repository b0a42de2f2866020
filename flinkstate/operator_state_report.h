// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// File: operator_state_report.h
// -----------------------------------------------------------------------------
// Opens every operator-state stream a state file's handles point to and
// reports what is inside (the `state` command): per operator and subtask the
// stream's header meta infos (operator_state_stream.h) and per state name the
// elements, their bytes, and how many are byte-identical copies (a grown union
// state is mostly copies).
//
//   ```c++ (const flinkstate::LoadedFile& f)
//   flinkstate::StateStreamSources src;
//   src.base_dir = "/ckpt/chk-7";
//   flinkstate::report::OperatorStateStreamReport r =
//       flinkstate::BuildOperatorStateStreamReport(f.model, f.bytes(), src);
//   ```
//
// Where a stream comes from (the handle's delegate):
//   `ByteStreamStateHandle`   inline bytes of the file itself;
//   `RelativeFileStateHandle` a file in `base_dir`;
//   `FileStateHandle`         an absolute path: `file:` URIs and plain paths are
//                             opened as they are; `s3://`, `s3a://`, `s3p://`
//                             paths in the object store when
//                             `read_object_store` is set (an input that lies
//                             there); other schemes only through a
//                             `state_roots` mapping (which also wins over the
//                             object store);
//   `SegmentFileStateHandle`  the segment [startPos, startPos + stateSize) of
//                             its physical file, resolved as above.
// A stream that cannot be opened or decoded is reported with its error (the
// other streams are still reported).
//
// Thread safety: pure functions; the result is a plain message.

#ifndef FLINKSTATE_FLINKSTATE_OPERATOR_STATE_REPORT_H_
#define FLINKSTATE_FLINKSTATE_OPERATOR_STATE_REPORT_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "flinkstate/checkpoint_metadata.h"
#include "flinkstate/report.pb.h"
#include "flinkstate/serde/byte_view.h"
#include "flinkstate/serde/mapped_file.h"

namespace flinkstate {

// Where to find the files streams live in.
struct StateStreamSources {
  // Directory of the checkpoint (RELATIVE handles are resolved here).
  std::string base_dir;
  // (prefix, local directory): a path starting with prefix is read from the
  // directory instead, e.g. ("s3://bucket/ckpts", "/mnt/copy/ckpts"). The
  // longest matching prefix wins.
  std::vector<std::pair<std::string, std::string>> state_roots;
  // An object-store path (objstore::IsObjectUrl) that no `state_roots` prefix
  // maps is read from the store itself (by ranges, as any input): set for an
  // input that lies in the store, whose streams lie there beside it. Off, such
  // a path is refused, naming `--state-root`.
  bool read_object_store = false;
};

// The bytes of one stream. `bytes` points into `file` when the stream lives
// in a state file, else into the caller's input.
// Lifetime: `bytes` is valid while this object (for files) or the input (for
// inline streams) lives.
struct ResolvedStream {
  bool is_inline = false;
  std::string source;       // "inline" or the local path read
  serde::MappedFile file;   // empty for inline streams
  serde::ByteView bytes;
  uint64_t base_offset = 0; // offset of `bytes[0]` in its file
};

// The path to open for a handle path (scheme `file:` stripped, `state_roots`
// applied, relative paths under `base_dir`; with `read_object_store` an
// object-store URL as it is).
// Return values: `FailedPrecondition` for a remote scheme (s3://, hdfs://,
// ...) that neither a `state_roots` prefix nor `read_object_store` maps, and
// for a relative path that leaves the checkpoint directory (empty, absolute,
// or holding "..").
[[nodiscard]] absl::StatusOr<std::string> LocalStatePath(
    const std::string& path, bool relative, const StateStreamSources& sources);

// The directory the relative handles of `file` (read from `path`) resolve
// in: for a `_metadata` or operator snapshot its own directory; for an HA
// completedCheckpoint the checkpoint's directory, `exclusiveCheckpointDir`
// as a local path (a `file:` URI, or mapped by `sources.state_roots`), "" if
// neither applies (Flink opens such a handle by its absolute `filePath`,
// which names that directory).
std::string RelativeHandleDir(const StateFile& file, const std::string& path,
                              const StateStreamSources& sources);

// Opens the stream of `delegate`. `input` is the file the handle was decoded
// from (inline bytes are ranges into it).
// Return values: `Unimplemented` for a delegate kind that holds no stream
// (e.g. key groups); `OutOfRange` for a segment past its file's end; the
// errors of `LocalStatePath` and of opening the file.
[[nodiscard]] absl::StatusOr<ResolvedStream> ResolveStateStream(
    const StreamStateHandle& delegate, serde::ByteView input,
    const StateStreamSources& sources);

// What the report decodes beyond meta infos and extents.
struct StateReportOptions {
  // Decode every element of `topic-partition-offset-states` (the legacy
  // Kafka consumer's union state) into `kafka_offsets` (kafka_state.h).
  bool kafka_legacy_offsets = true;
  // Decode `SourceReaderState` elements as `KafkaPartitionSplit`s (only right
  // for KafkaSource operators; other sources' splits fail to decode and are
  // listed in `kafka_errors`).
  bool kafka_source_splits = false;
};

// The report over all operator-state handles of `file` (decoded from
// `input`). Never fails: unreadable streams carry their error.
report::OperatorStateStreamReport BuildOperatorStateStreamReport(
    const StateFile& file, serde::ByteView input, const StateStreamSources& sources,
    const StateReportOptions& options = {});

// Human text of the report (the `state` command's output).
std::string RenderOperatorStateStreamText(const report::OperatorStateStreamReport& r);

}  // namespace flinkstate

#endif  // FLINKSTATE_FLINKSTATE_OPERATOR_STATE_REPORT_H_
